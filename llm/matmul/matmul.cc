// GEMV/GEMM drivers: task partitioning over the pool, panel packing, the f32 GEMM microkernel.
#include "llm/matmul/matmul.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>

#include "kernels/gemm/gemm.h"
#include "kernels/registry/registry.h"
#include "llm/matmul/row_dot.h"

namespace tessel::llm {
namespace {

constexpr int kNR = Matmul::kPanelRows;
constexpr int kMR = Matmul::kTileTokens;

// out[t, j] = sum_k x[t, k] * panel[k, j] for t < MR, j < nr (panel is K-major, kNR wide).
template <int MR>
void GemmTile(const float* x, int64_t ldx, const float* panel, int64_t k, float* y, int64_t ldy, int nr) {
  float acc[MR][kNR] = {};
  for (int64_t kk = 0; kk < k; ++kk) {
    const float* p = panel + kk * kNR;
    for (int t = 0; t < MR; ++t) {
      const float a = x[t * ldx + kk];
      for (int j = 0; j < kNR; ++j) acc[t][j] += a * p[j];
    }
  }
  for (int t = 0; t < MR; ++t) {
    for (int j = 0; j < nr; ++j) y[t * ldy + j] = acc[t][j];
  }
}

// Dequantizes rows [r0, r0 + nr) of w into a K-major panel, zero-padding missing rows.
void PackPanel(const WeightMatrix& w, int64_t r0, int nr, float* panel, float* row) {
  for (int j = 0; j < kNR; ++j) {
    if (j < nr) {
      RowToF32(w, r0 + j, row);
    } else {
      std::memset(row, 0, w.cols * sizeof(float));
    }
    for (int64_t k = 0; k < w.cols; ++k) panel[k * kNR + j] = row[k];
  }
}

void GemmPanel(const WeightMatrix& w, const float* x, int64_t n, float* y, int64_t panel_index, float* scratch) {
  const int64_t r0 = panel_index * kNR;
  const int nr = static_cast<int>(std::min<int64_t>(kNR, w.rows - r0));
  float* panel = scratch;
  float* row = scratch + w.cols * kNR;
  PackPanel(w, r0, nr, panel, row);
  int64_t t = 0;
  for (; t + kMR <= n; t += kMR) GemmTile<kMR>(x + t * w.cols, w.cols, panel, w.cols, y + t * w.rows + r0, w.rows, nr);
  const float* xt = x + t * w.cols;
  float* yt = y + t * w.rows + r0;
  switch (n - t) {
    case 3: GemmTile<3>(xt, w.cols, panel, w.cols, yt, w.rows, nr); break;
    case 2: GemmTile<2>(xt, w.cols, panel, w.cols, yt, w.rows, nr); break;
    case 1: GemmTile<1>(xt, w.cols, panel, w.cols, yt, w.rows, nr); break;
    default: break;
  }
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Below this many multiply-adds a product runs on the calling thread: waking the pool costs more
// than it saves (several microseconds, far more when the other cores are busy).
constexpr int64_t kMinParallelWork = 1 << 16;

// The int8-input kernel for a Q4_0 / Q8_0 matrix on this CPU, or nullptr.
const GemvKernel* Q8KernelFor(GgmlType type) {
  if (type == GgmlType::kQ4_0) return FastGemvQ8Kernel(GemvFormat::kQ4_0);
  if (type == GgmlType::kQ8_0) return FastGemvQ8Kernel(GemvFormat::kQ8_0);
  return nullptr;
}

// The multi-token int8-input kernel for a Q4_0 / Q8_0 matrix on this CPU, or nullptr. Panel16
// matrices always have one (they are only repacked where it exists), and use it for decode too.
const GemmQ8Kernel* GemmQ8KernelFor(const WeightMatrix& w) {
  if (w.layout == WeightLayout::kPanel16) return Panel16Kernel(w.type);
  if (w.type != GgmlType::kQ4_0 && w.type != GgmlType::kQ8_0) return nullptr;
  return FastGemmQ8Kernel(w.type == GgmlType::kQ4_0 ? GemvFormat::kQ4_0 : GemvFormat::kQ8_0);
}

// Rows per task for the row-split kernels: enough tasks to balance threads, few enough that handing
// them out stays cheap; whole 16-row steps, and no two threads writing one cache line of y.
int64_t RowsPerTask(int64_t rows, int threads) {
  return CeilDiv(std::max<int64_t>(16, CeilDiv(rows, threads * 8)), 16) * 16;
}

}  // namespace

Matmul::Matmul(int64_t max_cols, ThreadPool* pool) : pool_(pool), max_cols_(max_cols) {
  {
    absl::StatusOr<const GemmKernel*> g =
        GemmKernels().Select("gemm", "f32", "row_major", {kF32ChunkRows, kF32TokenBlock, max_cols, 0});
    if (g.ok() && (*g)->backend != "reference") {
      f32_gemm_ = *g;
      for (int t = 0; t < pool_->num_threads(); ++t) {
        f32_rows_.emplace_back(new float[kF32ChunkRows * max_cols]);
        f32_out_.emplace_back(new float[kF32ChunkRows * kF32TokenBlock]);
        f32_workspace_.emplace_back(static_cast<char*>(std::malloc(std::max<size_t>(f32_gemm_->workspace_bytes, 64))),
                                    std::free);
      }
    }
  }
  for (int t = 0; t < pool_->num_threads(); ++t) {
    scratch_.emplace_back(new float[max_cols * (kNR + 1)]);
  }
  const GemvFormat formats[2] = {GemvFormat::kQ4_0, GemvFormat::kQ8_0};
  for (int i = 0; i < 2; ++i) {
    if (FastGemvQ8Kernel(formats[i]) == nullptr) continue;
    Q8Buffers& b = q8_input_[i];
    b.q.resize(GemvQ8PaddedCols(formats[i], max_cols));
    b.bias.resize(GemvQ8Lanes(formats[i], max_cols));
    b.scale.resize(GemvQ8Lanes(formats[i], max_cols));
  }
}

void Matmul::EnableTypeTiming(bool on) {
  type_seconds_.clear();
  if (on) type_seconds_.assign(pool_->num_threads(), std::vector<double>(2 * kTimedTypes, 0.0));
}

double Matmul::TypeSeconds(GgmlType type, bool decode) const {
  const uint32_t id = static_cast<uint32_t>(type);
  double s = 0;
  for (const std::vector<double>& t : type_seconds_) s += id < kTimedTypes ? t[(decode ? 0 : kTimedTypes) + id] : 0;
  return s;
}

void Matmul::Run(const WeightMatrix& w, const float* x, int64_t n, float* y) {
  const MatmulJob job{&w, y};
  RunGroup(absl::MakeConstSpan(&job, 1), x, n);
}

void Matmul::RunGroup(absl::Span<const MatmulJob> jobs, const float* x, int64_t n) {
  constexpr int kMaxJobs = 8;
  if (n > 1 && n < kF32MinTokens && f32_gemm_ != nullptr) {
    // A few tokens of a type without an int8 GEMM: converting every weight to f32 for the GEMM costs
    // more than streaming the weights once per token through the decode kernels.
    bool f32_path = false;
    for (const MatmulJob& job : jobs) f32_path = f32_path || GemmQ8KernelFor(*job.w) == nullptr;
    if (f32_path && static_cast<int>(jobs.size()) <= kMaxJobs) {
      MatmulJob one[kMaxJobs];
      for (int64_t t = 0; t < n; ++t) {
        for (size_t j = 0; j < jobs.size(); ++j) one[j] = {jobs[j].w, jobs[j].y + t * jobs[j].w->rows};
        RunGroup(absl::MakeConstSpan(one, jobs.size()), x + t * jobs[0].w->cols, 1);
      }
      return;
    }
  }
  int64_t first_task[kMaxJobs + 1];
  int64_t rows_per_task[kMaxJobs];
  RowDotFn dot[kMaxJobs];
  RowMatrixView dot_view[kMaxJobs];
  GemvFn gemv[kMaxJobs];
  GemvArgs gemv_args[kMaxJobs];
  GemmQ8Fn gemm[kMaxJobs];
  GemmQ8Args gemm_args[kMaxJobs];
  bool quantized[2] = {false, false};       // q8_input_ holds x, per format
  bool quantized_gemm[2] = {false, false};  // gemm_input_ holds x, per format
  bool transposed = false;                  // xt_ holds x^T
  std::optional<PackedGemmF32> packed_x;    // xt_ packed (the f32 path), when the packer takes it
  const int num_jobs = static_cast<int>(jobs.size());
  first_task[0] = 0;
  for (int j = 0; j < num_jobs; ++j) {
    const WeightMatrix& w = *jobs[j].w;
    const bool panel16 = w.layout == WeightLayout::kPanel16;
    if (n == 1 && !panel16) {
      // Enough tasks to balance threads, few enough that handing them out stays cheap; whole 16-row
      // steps of the GEMV kernels, and no two threads writing one cache line of y.
      rows_per_task[j] = RowsPerTask(w.rows, pool_->num_threads());
      const GemvKernel* q8 = Q8KernelFor(w.type);
      gemv[j] = q8 ? q8->fn : nullptr;
      dot[j] = q8 ? nullptr : GetRowDot(w.type, pool_->num_threads());
      dot_view[j] = w.view();
      // One thread: the whole matrix in one call, so that the row-dot kernel's parallel streams run its
      // full length instead of restarting per task.
      if (!q8 && pool_->num_threads() == 1) rows_per_task[j] = CeilDiv(w.rows, 16) * 16;
      if (q8) {
        const int layout = w.type == GgmlType::kQ4_0 ? 0 : 1;
        const GemvFormat format = layout == 0 ? GemvFormat::kQ4_0 : GemvFormat::kQ8_0;
        // Once per call and format, before the parallel loop: every task reads the same int8 x.
        if (!quantized[layout]) QuantizeGemvInput(format, x, w.cols, q8_input_[layout].view());
        quantized[layout] = true;
        GemvArgs& a = gemv_args[j];
        a = GemvArgs();
        a.w = w.data;
        a.y = jobs[j].y;
        a.rows = w.rows;
        a.cols = w.cols;
        SetGemvQ8Input(q8_input_[layout].view(), a);
      }
    } else if (const GemmQ8Kernel* k = GemmQ8KernelFor(w)) {
      // Prefill on int8 hardware: every token row quantized once per call and format, then register
      // tiles of weight rows x tokens. INT4 groups read x in the Q4_0 layout.
      const int layout = w.type == GgmlType::kQ8_0 ? 1 : 0;
      const GemvFormat format = layout == 0 ? GemvFormat::kQ4_0 : GemvFormat::kQ8_0;
      Q8Buffers& b = gemm_input_[layout];
      const int64_t xq_stride = GemvQ8PaddedCols(format, w.cols), lane_stride = GemvQ8Lanes(format, w.cols);
      if (!quantized_gemm[layout]) {
        // Grown to the largest token count seen, then reused: no allocation in steady state.
        if (static_cast<int64_t>(b.q.size()) < n * xq_stride) b.q.resize(n * xq_stride);
        if (static_cast<int64_t>(b.bias.size()) < n * lane_stride) {
          b.bias.resize(n * lane_stride);
          b.scale.resize(n * lane_stride);
        }
        const int64_t nb = w.cols / 32;
        if (static_cast<int64_t>(gemm_block_bias_[layout].size()) < n * nb) {
          gemm_block_bias_[layout].resize(n * nb);
          gemm_block_scale_[layout].resize(n * nb);
        }
        if (layout == 0 && static_cast<int64_t>(gemm_half_bias_.size()) < n * 2 * nb) {
          gemm_half_bias_.resize(n * 2 * nb);
        }
        for (int64_t t = 0; t < n; ++t) {
          const GemvQ8Input in{b.q.data() + t * xq_stride, b.bias.data() + t * lane_stride,
                               b.scale.data() + t * lane_stride};
          QuantizeGemvInput(format, x + t * w.cols, w.cols, in);
          GemmQ8BlockTerms(format, in, w.cols, gemm_block_bias_[layout].data() + t * nb,
                           gemm_block_scale_[layout].data() + t * nb);
          if (layout == 0) GemmQ8HalfBias(in, w.cols, gemm_half_bias_.data() + t * 2 * nb);
        }
        quantized_gemm[layout] = true;
      }
      gemm[j] = k->fn;
      GemmQ8Args& a = gemm_args[j];
      a = GemmQ8Args();
      a.w = w.data;
      a.rows = w.rows;
      a.cols = w.cols;
      a.n = n;
      a.xq = b.q.data();
      a.xbias = b.bias.data();
      a.xscale = b.scale.data();
      a.xq_stride = xq_stride;
      a.lane_stride = lane_stride;
      a.block_bias = gemm_block_bias_[layout].data();
      a.block_scale = gemm_block_scale_[layout].data();
      a.block_stride = w.cols / 32;
      if (layout == 0) {
        a.half_bias = gemm_half_bias_.data();
        a.half_stride = 2 * a.block_stride;
      }
      a.y = jobs[j].y;
      a.ldy = w.rows;
      if (w.layout == WeightLayout::kPanel16) Panel16GroupShape(w, &a);
      // Decode on one thread: the whole matrix in one call, so that the kernel's parallel streams
      // (gemv_gemm_avx512vnni.cc) run the full length of the matrix instead of restarting per task.
      // On several threads, two tasks per thread: long streams, and still some balancing on a shared
      // host (random TinyLlama Q4_0, 2 threads: 8 tasks per thread 50.7 GB/s, 2 tasks 55.3, 1 task 56.0;
      // Q8_0 53.8 -> 54.9).
      const int64_t decode_tasks = pool_->num_threads() == 1 ? 1 : 2 * pool_->num_threads();
      rows_per_task[j] = n == 1 ? CeilDiv(CeilDiv(w.rows, decode_tasks), 16) * 16
                                : RowsPerTask(w.rows, pool_->num_threads());
    } else {
      gemm[j] = nullptr;
      rows_per_task[j] = f32_gemm_ != nullptr ? kF32ChunkRows : kNR;
      if (f32_gemm_ != nullptr && !transposed) {
        // x^T [cols, n] once per call: the GEMM's B operand.
        if (static_cast<int64_t>(xt_.size()) < n * w.cols) xt_.resize(n * w.cols);
        for (int64_t t = 0; t < n; ++t) {
          for (int64_t k = 0; k < w.cols; ++k) xt_[k * n + t] = x[t * w.cols + k];
        }
        transposed = true;
        // Packing x^T once here instead of in every chunk's GEMM call: the packing had taken more time
        // than the multiplications (random TinyLlama F16 prefill on Zen 3).
        absl::StatusOr<PackedGemmF32> p = PackedGemmF32::Create(n, w.cols, xt_.data(), n, kF32ChunkRows);
        if (p.ok()) {
          packed_x = *std::move(p);
          for (int t = 0; t < pool_->num_threads(); ++t) {
            if (static_cast<int>(packed_workspace_.size()) <= t) {
              packed_workspace_.emplace_back();
              packed_workspace_bytes_.push_back(0);
              packed_out_.emplace_back();
            }
            if (packed_workspace_bytes_[t] < packed_x->workspace_bytes()) {
              packed_workspace_[t].reset(new char[packed_x->workspace_bytes()]);
              packed_workspace_bytes_[t] = packed_x->workspace_bytes();
            }
            if (static_cast<int64_t>(packed_out_[t].size()) < kF32ChunkRows * n) packed_out_[t].resize(kF32ChunkRows * n);
          }
        }
      }
    }
    first_task[j + 1] = first_task[j] + CeilDiv(w.rows, rows_per_task[j]);
  }
  auto run_one_task = [&](int64_t task, int thread, int j) {
    const WeightMatrix& w = *jobs[j].w;
    const int64_t local = task - first_task[j];
    if (n == 1 && w.layout != WeightLayout::kPanel16) {
      const int64_t r0 = local * rows_per_task[j];
      const int64_t r1 = std::min(w.rows, r0 + rows_per_task[j]);
      if (gemv[j]) {
        gemv[j](gemv_args[j], r0, r1);
      } else {
        dot[j](dot_view[j], x, r0, r1, jobs[j].y + r0);
      }
    } else if (gemm[j]) {
      const int64_t r0 = local * rows_per_task[j];
      gemm[j](gemm_args[j], r0, std::min(w.rows, r0 + rows_per_task[j]));
    } else if (f32_gemm_ != nullptr) {
      // Rows [r0, r0 + m) dequantized once; C^T [m, tokens] = W_chunk [m, cols] x^T [cols, tokens].
      const int64_t r0 = local * kF32ChunkRows;
      const int64_t m = std::min<int64_t>(kF32ChunkRows, w.rows - r0);
      const float* rows = reinterpret_cast<const float*>(w.row(r0));  // F32: the weights themselves
      if (w.type != GgmlType::kF32) {
        float* buf = f32_rows_[thread].get();
        for (int64_t i = 0; i < m; ++i) RowToF32(w, r0 + i, buf + i * w.cols);
        rows = buf;
      }
      if (packed_x.has_value()) {
        float* c = packed_out_[thread].data();
        packed_x->Run(m, rows, w.cols, c, n, GemmEpilogue(), 0, n, packed_workspace_[thread].get());
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t t = 0; t < n; ++t) jobs[j].y[t * w.rows + r0 + i] = c[i * n + t];
        }
        return;
      }
      const auto gemm_fn = f32_gemm_->fn;
      float* c = f32_out_[thread].get();
      for (int64_t t0 = 0; t0 < n; t0 += kF32TokenBlock) {
        const int64_t nt = std::min<int64_t>(kF32TokenBlock, n - t0);
        gemm_fn(m, nt, w.cols, rows, w.cols, xt_.data() + t0, n, c, nt, f32_workspace_[thread].get());
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t t = 0; t < nt; ++t) jobs[j].y[(t0 + t) * w.rows + r0 + i] = c[i * nt + t];
        }
      }
    } else {
      GemmPanel(w, x, n, jobs[j].y, local, scratch_[thread].get());
    }
  };
  auto run_task = [&](int64_t task, int thread) {
    int j = 0;
    while (task >= first_task[j + 1]) ++j;
    if (type_seconds_.empty()) {
      run_one_task(task, thread, j);
      return;
    }
    const auto t0 = std::chrono::steady_clock::now();
    run_one_task(task, thread, j);
    const uint32_t id = static_cast<uint32_t>(jobs[j].w->type);
    if (id < kTimedTypes) {
      type_seconds_[thread][(n == 1 ? 0 : kTimedTypes) + id] +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
  };
  int64_t work = 0;
  for (const MatmulJob& job : jobs) work += job.w->rows * job.w->cols * n;
  if (work < kMinParallelWork) {
    for (int64_t t = 0; t < first_task[num_jobs]; ++t) run_task(t, 0);
  } else {
    pool_->Run(first_task[num_jobs], run_task);
  }
}

const char* MatmulPathName(MatmulPath path) {
  switch (path) {
    case MatmulPath::kInt8: return "int8";
    case MatmulPath::kF32Vector: return "f32 vector";
    case MatmulPath::kF32Dequant: return "f32 after portable dequantization";
    case MatmulPath::kPortable: return "portable";
  }
  return "";
}

MatmulKernel DescribeMatmul(const WeightMatrix& w, int64_t n, int threads) {
  const GemmQ8Kernel* int8 = GemmQ8KernelFor(w);
  const GemmKernel* f32_gemm = nullptr;
  {
    absl::StatusOr<const GemmKernel*> g =
        GemmKernels().Select("gemm", "f32", "row_major", {Matmul::kF32ChunkRows, Matmul::kF32TokenBlock, w.cols, 0});
    if (g.ok() && (*g)->backend != "reference") f32_gemm = *g;
  }
  // A few tokens of a type without an int8 GEMM run the decode kernels token by token (RunGroup).
  if (n > 1 && n < Matmul::kF32MinTokens && f32_gemm != nullptr && int8 == nullptr) n = 1;
  const bool float_type = w.type == GgmlType::kF32 || w.type == GgmlType::kF16 || w.type == GgmlType::kBF16;
  if (n == 1 && w.layout != WeightLayout::kPanel16) {
    if (const GemvKernel* q8 = Q8KernelFor(w.type)) return {q8->name, MatmulPath::kInt8};
    const std::string name = RowDotName(w.type, threads);
    // Portable row kernels end in __portable; the others run per-ISA code (their own, or kernels/gemv's
    // selected f32-input kernel, whose name is in parentheses).
    const bool portable = name.empty() || name.find("__portable") != std::string::npos ||
                          name.find("__reference") != std::string::npos;
    if (portable) return {name, float_type ? MatmulPath::kPortable : MatmulPath::kF32Dequant};
    return {name, float_type ? MatmulPath::kF32Vector : MatmulPath::kF32Dequant};
  }
  if (int8 != nullptr) return {int8->name, int8->isa == Isa::kPortable ? MatmulPath::kPortable : MatmulPath::kInt8};
  if (f32_gemm == nullptr) return {"GemmTile (portable)", MatmulPath::kPortable};
  // Rows converted by RowToF32: the ISA conversions for F16 / BF16 where the row kernels have them,
  // ggml's portable dequantization for the quantized types.
  const std::string row_kernel = RowDotName(w.type, threads);
  const bool vector_rows = w.type == GgmlType::kF32 || (float_type && row_kernel.find("__portable") == std::string::npos);
  return {f32_gemm->name, vector_rows ? MatmulPath::kF32Vector : MatmulPath::kF32Dequant};
}

void MatmulReference(const WeightMatrix& w, const float* x, int64_t n, float* y) {
  std::vector<float> row(w.cols);
  std::vector<uint8_t> blocks(w.row_bytes());
  for (int64_t r = 0; r < w.rows; ++r) {
    DequantizeRow(w.type, w.RowBlocks(r, blocks.data()), row.data(), w.cols);
    for (int64_t t = 0; t < n; ++t) {
      double s = 0;
      for (int64_t k = 0; k < w.cols; ++k) s += static_cast<double>(row[k]) * x[t * w.cols + k];
      y[t * w.rows + r] = static_cast<float>(s);
    }
  }
}

}  // namespace tessel::llm
