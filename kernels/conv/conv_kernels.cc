// im2col / 1x1 / fully connected kernels over GEMM microkernels, and the layout kernels. Work is split
// into one task per thread, each with its own packing workspace and im2col block, so tasks never share
// scratch and a run allocates nothing.
#include "kernels/conv/conv_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/registry/conv_geometry.h"
#include "kernels/conv/fc_gemv.h"
#include "kernels/activation/act_rows.h"
#include "kernels/conv/internal/activation.h"
#include "kernels/gemm/gemm.h"
#include "kernels/gemm/gemm_direct.h"
#include "pthreadpool.h"

namespace tessel {
namespace {

bool AllF32(const OpQuery& q) {
  for (const OperandInfo& o : q.inputs) {
    if (o.present && o.type.dtype != DType::kF32) return false;
  }
  for (const OperandInfo& o : q.outputs) {
    if (o.type.dtype != DType::kF32 || !o.type.is_static()) return false;
  }
  return true;
}

// 64-byte aligned float scratch owned by a kernel.
class Floats {
 public:
  explicit Floats(size_t n = 0) : buf_(n ? Buffer::Allocate(n * sizeof(float)) : nullptr) {}
  float* data() const { return buf_ ? static_cast<float*>(buf_->data()) : nullptr; }

 private:
  std::shared_ptr<Buffer> buf_;
};

int Tasks(const OpKernelArgs& args) { return std::max(1, args.num_threads); }

// ---- convolution ----------------------------------------------------------------------------------------

// Rows [r0, r0 + nr) of the im2col matrix of group `grp` of channels-last input x: one row per output
// pixel, columns (kh, kw, c) in the weights' order; padding reads as zero.
void Im2colRows(const Conv2dGeometry& g, const float* x, int64_t r0, int64_t nr, int64_t grp, float* out) {
  const int64_t cg = g.group_in();
  for (int64_t i = 0; i < nr; ++i) {
    const int64_t r = r0 + i;
    const int64_t ox = r % g.ow, oy = (r / g.ow) % g.oh, b = r / (g.ow * g.oh);
    float* dst = out + i * g.kh * g.kw * cg;
    for (int64_t ky = 0; ky < g.kh; ++ky) {
      const int64_t iy = oy * g.sh - g.pad_top + ky * g.dh;
      for (int64_t kx = 0; kx < g.kw; ++kx, dst += cg) {
        const int64_t ix = ox * g.sw - g.pad_left + kx * g.dw;
        if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) {
          std::memset(dst, 0, cg * sizeof(float));
        } else {
          std::memcpy(dst, x + ((b * g.h + iy) * g.w + ix) * g.c + grp * cg, cg * sizeof(float));
        }
      }
    }
  }
}

// Whether `tasks` tasks balance better over the output channels (whole panels of `panel` columns)
// than over the rows (whole tiles of `tile` rows): the late layers' few pixels (ResNet-18's 7x7 = 49
// rows in 24-row steps left one task 48 rows and the other 1).
bool SplitColumnsBalancesBetter(int64_t rows, int64_t tile, int64_t columns, int64_t panel, int64_t tasks) {
  if (tasks <= 1) return false;
  auto balance = [tasks](int64_t items, int64_t step) {
    const int64_t units = (items + step - 1) / step;
    const int64_t per_task = (units + tasks - 1) / tasks;
    return static_cast<double>(units) / static_cast<double>(per_task * tasks);
  };
  return balance(columns, panel) > balance(rows, tile) + 0.05;
}

// Convolution as a GEMM over prepacked weights (PackedGemmF32, packed once per group at load) with
// bias, residual and clamp fused into the tiles. Rows (output pixels) go in blocks of the kernel's row
// block, so each block streams the weights once; a 1x1 stride-1 layer reads its input in place, others
// gather im2col rows for the block first. Tasks split the rows, or the output channels when there are
// too few rows to share (the late layers, where the weights are largest).
class GemmConvKernel : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelArgs& args) {
    absl::StatusOr<Conv2dGeometry> g = ResolveConv2dNhwc(args.node, args.inputs[0]->type(), args.inputs[1]->type());
    if (!g.ok()) return g.status();
    std::unique_ptr<GemmConvKernel> k(new GemmConvKernel);
    k->g_ = *g;
    k->pool_ = PoolForWork(args.threadpool, g->flops() / 2);
    k->flags_ = ParallelFlags(args);
    k->x_ = args.inputs[0]->data<float>();
    k->bias_ = args.inputs.size() > 2 && args.inputs[2] ? args.inputs[2]->data<float>() : nullptr;
    const Tensor* residual = args.inputs.size() > 3 ? args.inputs[3] : nullptr;
    k->residual_ = residual ? residual->data<float>() : nullptr;
    k->y_ = args.outputs[0].data<float>();
    conv_internal::Act act;
    conv_internal::ReadActivation(args.node, &act, &k->lo_, &k->hi_);
    // A clamp fuses into the GEMM's store; the others run on the widest activation rows this CPU has
    // (EfficientNet-B0's SiLU expansions at the AVX2 level: the plain loop had cost 0.9 ms of a 1x1
    // convolution whose GEMM takes 0.05).
    const ActRowKernels rows_for_cpu = ActRowsForCpu();
    k->activate_ = act == conv_internal::Act::kHardSwish ? rows_for_cpu.hardswish
                   : act == conv_internal::Act::kSigmoid ? rows_for_cpu.sigmoid
                   : act == conv_internal::Act::kSiLU    ? rows_for_cpu.silu
                                                         : nullptr;
    k->direct_ = g->is_1x1_direct();
    const int64_t kg = g->kh * g->kw * g->group_in();
    const int64_t mg = g->group_out();
    const int64_t rows = g->n * g->oh * g->ow;
    // Weights [M, KH, KW, C/g] -> per group a [K_g, M_g] row-major B matrix, packed for the microkernel.
    const float* w = args.inputs[1]->data<float>();
    std::vector<float> b(kg * mg);
    for (int64_t grp = 0; grp < g->groups; ++grp) {
      for (int64_t o = 0; o < mg; ++o) {
        for (int64_t p = 0; p < kg; ++p) b[p * mg + o] = w[(grp * mg + o) * kg + p];
      }
      absl::StatusOr<PackedGemmF32> packed = PackedGemmF32::Create(mg, kg, b.data(), mg, rows);
      if (!packed.ok()) return packed.status();
      k->packed_.push_back(*std::move(packed));
    }
    const PackedGemmF32& p0 = k->packed_[0];
    k->block_rows_ = p0.row_block();
    k->tasks_ = Tasks(args);
    // Too few rows for every task to get whole blocks: split the output channels instead.
    k->split_columns_ = g->groups == 1 && rows < k->tasks_ * k->block_rows_ && mg >= k->tasks_ * p0.panel_width();
    for (int t = 0; t < k->tasks_; ++t) {
      k->workspace_.emplace_back((p0.workspace_bytes() + 3) / 4);
      k->cols_.emplace_back(k->direct_ ? 0 : k->block_rows_ * kg);
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Run() override {
    RunTasks(pool_, this, tasks_, flags_);
    return absl::OkStatus();
  }

 private:

  template <typename K>
  friend void tessel::RunTasks(pthreadpool_t, K*, int64_t, PoolFlags);  // calls RunTask
  void RunTask(int t) {
    const Conv2dGeometry& g = g_;
    const int64_t rows = g.n * g.oh * g.ow;
    const int64_t kg = g.kh * g.kw * g.group_in();
    const int64_t mg = g.group_out();
    int64_t begin = 0, end = rows, n_begin = 0, n_end = mg;
    if (split_columns_) {
      const TaskRange cols = SplitForTask(mg, tasks_, t, packed_[0].panel_width());  // whole panels
      n_begin = cols.begin, n_end = cols.end;
      if (n_begin >= n_end) return;
    } else {
      const TaskRange r = SplitForTask(rows, tasks_, t);
      begin = r.begin, end = r.end;
    }
    for (int64_t r0 = begin; r0 < end; r0 += block_rows_) {
      const int64_t nr = std::min(block_rows_, end - r0);
      for (int64_t grp = 0; grp < g.groups; ++grp) {
        const float* a;
        int64_t lda;
        if (direct_) {
          a = x_ + r0 * g.c + grp * g.group_in();
          lda = g.c;
        } else {
          Im2colRows(g, x_, r0, nr, grp, cols_[t].data());
          a = cols_[t].data();
          lda = kg;
        }
        GemmEpilogue ep;
        ep.bias = bias_ ? bias_ + grp * mg : nullptr;
        ep.residual = residual_ ? residual_ + r0 * g.m + grp * mg : nullptr;
        ep.ldr = g.m;
        ep.lo = lo_;
        ep.hi = hi_;
        float* y = y_ + r0 * g.m + grp * mg;
        packed_[grp].Run(nr, a, lda, y, g.m, ep, n_begin, n_end, workspace_[t].data());
        // Hardswish, sigmoid and SiLU on the block just stored, while it is in cache.
        if (activate_ != nullptr) {
          for (int64_t i = 0; i < nr; ++i) activate_(n_end - n_begin, y + i * g.m + n_begin, y + i * g.m + n_begin);
        }
      }
    }
  }

  Conv2dGeometry g_;
  pthreadpool_t pool_ = nullptr;
  PoolFlags flags_;
  const float* x_ = nullptr;
  const float* bias_ = nullptr;
  const float* residual_ = nullptr;
  float* y_ = nullptr;
  float lo_ = 0, hi_ = 0;
  ActRowFn activate_ = nullptr;  // a non-clamp activation, after the store
  bool direct_ = false;
  bool split_columns_ = false;
  std::vector<PackedGemmF32> packed_;  // one per group
  int64_t block_rows_ = 64;
  int tasks_ = 1;
  std::vector<Floats> workspace_;
  std::vector<Floats> cols_;
};

// Convolution on the direct-A GEMM (DirectGemmF32): a 1x1 stride-1 layer's input rows are the GEMM's
// A as they lie in the arena, so nothing is packed per run; other layers gather im2col rows for a block
// of output pixels into the task's buffer first. Bias, residual (also in place) and clamp are fused
// into the store. Tasks split the rows in whole register tiles.
class DirectGemmConvKernel : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelArgs& args) {
    absl::StatusOr<Conv2dGeometry> g = ResolveConv2dNhwc(args.node, args.inputs[0]->type(), args.inputs[1]->type());
    if (!g.ok()) return g.status();
    if (g->groups != 1) {
      return absl::InvalidArgumentError(absl::StrCat("node '", args.node.name(), "': grouped convolution"));
    }
    std::unique_ptr<DirectGemmConvKernel> k(new DirectGemmConvKernel);
    k->g_ = *g;
    k->rows_ = g->n * g->oh * g->ow;
    k->k_ = g->kh * g->kw * g->c;
    k->direct_ = g->is_1x1_direct();
    // Weights [M, KH, KW, C] are B^T with K in the im2col column order (kh, kw, c).
    const float* bias = args.inputs.size() > 2 && args.inputs[2] ? args.inputs[2]->data<float>() : nullptr;
    absl::StatusOr<DirectGemmF32> op =
        DirectGemmF32::CreateFromTransposed(g->m, k->k_, args.inputs[1]->data<float>(), bias, k->rows_);
    if (!op.ok()) return op.status();
    k->op_ = *std::move(op);
    k->x_ = args.inputs[0]->data<float>();
    const Tensor* residual = args.inputs.size() > 3 ? args.inputs[3] : nullptr;
    k->residual_ = residual ? residual->data<float>() : nullptr;
    k->y_ = args.outputs[0].data<float>();
    const ClampActivation act = ReadClampActivation(args.node, "");
    k->lo_ = act.lo;
    k->hi_ = act.hi;
    k->pool_ = PoolForWork(args.threadpool, g->flops() / 2);
    k->flags_ = ParallelFlags(args);
    k->tasks_ = Tasks(args);
    k->split_columns_ = SplitColumnsBalancesBetter(k->rows_, k->op_.tile_rows(), g->m, k->op_.panel_width(), k->tasks_);
    for (int64_t t = 0; t < k->tasks_; ++t) k->cols_.emplace_back(k->direct_ ? 0 : kBlockRows * k->k_);
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Run() override {
    RunTasks(pool_, this, tasks_, flags_);
    return absl::OkStatus();
  }

 private:
  // Rows per im2col block: a multiple of the AVX-512 tiles' rows (8 and 12) and the AVX2 tile's (6).
  static constexpr int64_t kBlockRows = 48;


  template <typename K>
  friend void tessel::RunTasks(pthreadpool_t, K*, int64_t, PoolFlags);  // calls RunTask
  void RunTask(int64_t t) {
    const int64_t m = g_.m;
    if (split_columns_) {
      const auto [n_begin, n_end] = SplitForTask(m, tasks_, t, op_.panel_width());
      if (n_begin >= n_end) return;
      float* cols = cols_[t].data();
      for (int64_t r0 = 0; r0 < rows_; r0 += kBlockRows) {
        const int64_t nr = std::min(kBlockRows, rows_ - r0);
        const float* a = x_ + r0 * g_.c;
        if (!direct_) {
          Im2colRows(g_, x_, r0, nr, 0, cols);
          a = cols;
        }
        op_.RunColumns(nr, a, direct_ ? g_.c : k_, y_ + r0 * m, m, residual_ ? residual_ + r0 * m : nullptr, m, lo_, hi_,
                       n_begin, n_end);
      }
      return;
    }
    const auto [begin, end] = SplitForTask(rows_, tasks_, t, op_.tile_rows());
    if (begin >= end) return;
    if (direct_) {
      op_.Run(end - begin, x_ + begin * g_.c, g_.c, y_ + begin * m, m, residual_ ? residual_ + begin * m : nullptr, m,
              lo_, hi_);
      return;
    }
    float* cols = cols_[t].data();
    for (int64_t r0 = begin; r0 < end; r0 += kBlockRows) {
      const int64_t nr = std::min(kBlockRows, end - r0);
      Im2colRows(g_, x_, r0, nr, 0, cols);
      op_.Run(nr, cols, k_, y_ + r0 * m, m, residual_ ? residual_ + r0 * m : nullptr, m, lo_, hi_);
    }
  }

  Conv2dGeometry g_;
  DirectGemmF32 op_;
  int64_t rows_ = 0, k_ = 0;
  bool direct_ = false;
  const float* x_ = nullptr;
  const float* residual_ = nullptr;
  float* y_ = nullptr;
  float lo_ = 0, hi_ = 0;
  pthreadpool_t pool_ = nullptr;
  PoolFlags flags_;
  int64_t tasks_ = 1;
  bool split_columns_ = false;  // tasks share the output channels instead of the rows
  std::vector<Floats> cols_;
};

// Any activation: a clamp fuses into the GEMM's store, the others run over each stored block.
bool ConvLegal(const OpQuery& q, bool direct) {
  if (!AllF32(q) || !q.has_input(1) || !q.inputs[1].constant) return false;
  if (q.has_input(2) && !q.inputs[2].constant) return false;
  absl::StatusOr<Conv2dGeometry> g = ResolveConv2dNhwc(q.node, q.input(0), q.input(1));
  return g.ok() && g->is_1x1_direct() == direct;
}

bool Im2colLegal(const OpQuery& q) { return ConvLegal(q, false); }
bool DirectLegal(const OpQuery& q) { return ConvLegal(q, true); }

// The direct-A GEMM serves dense convolutions whose K (kh * kw * c) keeps an 8-row block of A in L1
// and a 32-column weight panel in L2; stems with a handful of input channels belong to the direct
// stem kernel (short im2col rows).
bool DirectGemmLegal(const OpQuery& q) {
  if (!AllF32(q) || !q.has_input(1) || !q.inputs[1].constant) return false;
  if (q.has_input(2) && !q.inputs[2].constant) return false;
  if (!ReadClampActivation(q.node, "").is_clamp) return false;
  absl::StatusOr<Conv2dGeometry> g = ResolveConv2dNhwc(q.node, q.input(0), q.input(1));
  if (!g.ok() || g->groups != 1) return false;
  const int64_t k = g->kh * g->kw * g->c;
  return g->is_1x1_direct() || (g->c >= 16 && k <= 2304);
}

double DirectGemmConvCost(const OpQuery& q) {
  absl::StatusOr<Conv2dGeometry> g = ResolveConv2dNhwc(q.node, q.input(0), q.input(1));
  if (!g.ok()) return 1e9;
  const int64_t rows = g->n * g->oh * g->ow;
  const int64_t k = g->kh * g->kw * g->c;
  // The family's cost counts the multiplications and the output; the input rows are read once more
  // per panel of 32 output channels, from L2; im2col writes and rereads its rows (gemm_benchmark,
  // ResNet-18 shapes: 0.88-0.96 of peak warm for K <= 2304, weights re-streamed per 8-row block
  // beyond K ~1280, hence the lower rate there).
  const double im2col_bytes = g->is_1x1_direct() ? 0.0 : 8.0 * rows * k;
  const double scale = k <= 1280 ? 1.0 : 1.25;
  return DirectGemmF32::Cost(rows, g->m, k) * scale + 4.0 * rows * k / 40e9 + im2col_bytes / 20e9;
}

double GemmConvCost(const OpQuery& q) {
  absl::StatusOr<Conv2dGeometry> g = ResolveConv2dNhwc(q.node, q.input(0), q.input(1));
  if (!g.ok()) return 1e9;
  const double rows = g->n * g->oh * g->ow;
  const double kg = g->kh * g->kw * g->group_in();
  const double mg = g->group_out();
  // The AVX-512 tile is 14 rows x 32 channels: a partial tile computes in full. Short K spends its time
  // packing A (transposed into the tile's order) rather than multiplying: kg / (kg + 96) fits the
  // measured rates (gemm_benchmark prepacked rows: K = 147 ~95 GFLOP/s, K >= 1152 ~175). The AVX2 tile
  // (6 x 16) loses less to short K: MobileNetV2's 1x1 convolutions at K = 24, 32, 64, 96, 160, 320 ran
  // at 46, 53, 69, 79, 73, 79 GFLOP/s (Zen 4 capped at AVX2), about 80 x kg / (kg + 12).
  const bool avx2_tile = CpuSupports(Isa::kAvx2) && !CpuSupports(Isa::kAvx512);
  const double tile_rows = avx2_tile ? 6.0 : 14.0, tile_cols = avx2_tile ? 16.0 : 32.0;
  const double tile_use =
      (rows / (std::ceil(rows / tile_rows) * tile_rows)) * (mg / (std::ceil(mg / tile_cols) * tile_cols));
  const double k_use = kg / (kg + (avx2_tile ? 12.0 : 96.0));
  const double im2col_bytes = g->is_1x1_direct() ? 0.0 : 8.0 * rows * kg * g->groups;
  // im2col copies each tap's run of group_in channels: a stem's 3 channels are a short copy per tap,
  // ~3.4 ns each (MobileNetV2's 3x3 stride-2 stem: 0.91 ms measured, 0.53 ms from the terms below;
  // ResNet-18's 7x7 stem 5.9 ms against 3.9), which XNNPACK's stem convolution does not pay.
  const double short_taps = !g->is_1x1_direct() && g->group_in() < 16 ? rows * g->kh * g->kw * g->groups : 0.0;
  // The packed weights stream once per block of 168 rows: from memory when they are large. A 32-channel
  // panel past L2 (K beyond ~8000: FCN-ResNet50's 2048-channel 3x3 head, K = 18432) streams again for
  // every 14-row tile instead (that head: 13.7 ms measured against 9.3 estimated with one pass, 15 with
  // one per tile; Zen 4, 2026-11-28).
  const double weight_bytes = 4.0 * kg * g->m;
  const double panel_bytes = 4.0 * kg * 32;
  const double weight_passes = panel_bytes > (1 << 20) ? std::ceil(rows / 14.0) : std::ceil(rows / 168.0);
  const double weight_rate = weight_bytes > (2 << 20) ? 25e9 : 100e9;
  // The rates above are the AVX-512 kernels'. The AVX2 6x16 runs MobileNetV2's 1x1 and ResNet-18's
  // stride-2 3x3 convolutions at 75-86 GFLOP/s (Zen 4 capped at AVX2), about twice what XNNPACK's f32
  // GEMM gives on such a CPU (XnnpackF32GemmIsSlow).
  const double gflops = CpuSupports(Isa::kAvx512) ? 180e9 : CpuSupports(Isa::kAvx2) ? 80e9 : 100e9;
  return g->flops() / (gflops * tile_use * k_use) + im2col_bytes / 20e9 + short_taps * 3.4e-9 +
         weight_bytes * weight_passes / weight_rate;
}

absl::StatusOr<std::unique_ptr<OpKernel>> CreateGemmConv(const OpKernelArgs& args) {
  const Tensor* residual = args.inputs.size() > 3 ? args.inputs[3] : nullptr;
  if (residual && residual->raw_data() == args.outputs[0].raw_data()) {
    return absl::FailedPreconditionError(absl::StrCat("node '", args.node.name(),
                                                      "': the gemm convolution cannot add a residual stored in place "
                                                      "of its output; recompile"));
  }
  return GemmConvKernel::Create(args);
}

// ---- fully connected: Gemm / MatMul with constant 2-D weights ---------------------------------------------

struct FcShape {
  int64_t batch = 0, k = 0, n = 0;
  bool weights_nk = false;
  int bias = -1;
  bool gelu = false;  // tessel.MatMulBiasGelu
};

bool ResolveFc(const OpQuery& q, FcShape* fc) {
  if (!AllF32(q) || !q.has_input(1) || !q.inputs[1].constant || q.input(1).rank() != 2) return false;
  const TensorType& a = q.input(0);
  const TensorType& w = q.input(1);
  if (a.rank() < 2 || !a.is_static() || !w.is_static()) return false;
  if (q.op() == "Gemm") {
    if (a.rank() != 2 || q.node.GetInt("transA", 0) != 0 || q.node.GetFloat("alpha", 1.0f) != 1.0f) return false;
    fc->weights_nk = q.node.GetInt("transB", 0) != 0;
    if (q.has_input(2)) {
      if (!q.inputs[2].constant || q.node.GetFloat("beta", 1.0f) != 1.0f) return false;
      fc->bias = 2;
    }
  } else if (q.op() == "tessel.MatMulBiasGelu" || q.op() == "tessel.MatMulBias") {
    if (!q.has_input(2) || !q.inputs[2].constant) return false;
    fc->bias = 2;
    fc->gelu = q.op() == "tessel.MatMulBiasGelu";
  } else if (q.op() != "MatMul") {
    return false;
  }
  fc->k = a.dims.back().value();
  fc->batch = a.NumElements() / std::max<int64_t>(fc->k, 1);
  fc->n = fc->weights_nk ? w.dims[0].value() : w.dims[1].value();
  if ((fc->weights_nk ? w.dims[1].value() : w.dims[0].value()) != fc->k) return false;
  if (fc->bias >= 0) {
    const TensorType& b = q.input(fc->bias);
    if (!b.is_static() || b.NumElements() != fc->n || b.dims.back().value() != fc->n) return false;
  }
  return true;
}

// The fully connected shape of a kernel's bound operands (weights constant), or why it is none.
absl::StatusOr<FcShape> ResolveFcArgs(const OpKernelArgs& args) {
  std::vector<OperandInfo> info(args.inputs.size());
  for (size_t i = 0; i < info.size(); ++i) {
    if (args.inputs[i]) info[i] = {true, true, args.inputs[i]->type()};
  }
  std::vector<OperandInfo> out_info = {{true, false, args.outputs[0].type()}};
  FcShape fc;
  if (!ResolveFc(OpQuery{args.node, info, out_info}, &fc)) {
    return absl::InvalidArgumentError(absl::StrCat("node '", args.node.name(), "' is not a fully connected layer"));
  }
  return fc;
}

// Weights packed once at creation (PackedGemmF32) with the bias fused into the GEMM's output stage; the
// GELU of tessel.MatMulBiasGelu runs on each task's columns right after, on the widest activation rows
// this CPU has (kernels/activation).
class GemmFcKernel : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelArgs& args) {
    absl::StatusOr<FcShape> shape = ResolveFcArgs(args);
    if (!shape.ok()) return shape.status();
    const FcShape& fc = *shape;
    std::unique_ptr<GemmFcKernel> k(new GemmFcKernel);
    k->fc_ = fc;
    k->pool_ = PoolForWork(args.threadpool, static_cast<double>(fc.batch) * fc.k * fc.n);
    k->flags_ = ParallelFlags(args);
    k->x_ = args.inputs[0];
    k->a_ = args.inputs[0]->data<float>();
    k->y_ = args.outputs[0].data<float>();
    k->epilogue_.bias = fc.bias >= 0 ? args.inputs[fc.bias]->data<float>() : nullptr;
    if (fc.gelu) {
      const ActRowKernels rows = ActRowsForCpu();
      k->gelu_ = args.node.GetString("approximate", "none") == "tanh" ? rows.gelu_tanh : rows.gelu_erf;
    }
    const float* w = args.inputs[1]->data<float>();
    Floats wt;
    if (fc.weights_nk) {
      wt = Floats(fc.k * fc.n);
      for (int64_t o = 0; o < fc.n; ++o) {
        for (int64_t p = 0; p < fc.k; ++p) wt.data()[p * fc.n + o] = w[o * fc.k + p];
      }
      w = wt.data();
    }
    absl::StatusOr<PackedGemmF32> packed = PackedGemmF32::Create(fc.n, fc.k, w, fc.n, fc.batch);
    if (!packed.ok()) return packed.status();
    k->gemm_ = *std::move(packed);
    const int64_t panels = (fc.n + k->gemm_.panel_width() - 1) / k->gemm_.panel_width();
    k->tasks_ = static_cast<int>(std::min<int64_t>(Tasks(args), panels));
    k->scratch_.Bind(args, k->tasks_, k->gemm_.workspace_bytes());
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  // The rows are the run's (a detection head's regions, planned at their bound, come out fewer).
  absl::Status Run() override {
    rows_ = fc_.k > 0 ? x_->num_elements() / fc_.k : 0;
    if (rows_ > 0) RunTasks(pool_, this, tasks_, flags_);
    return absl::OkStatus();
  }

 private:
  template <typename K>
  friend void tessel::RunTasks(pthreadpool_t, K*, int64_t, PoolFlags);  // calls RunTask
  // Tasks split the output columns in whole packed panels: batch-1 layers have one row.
  void RunTask(int t) {
    const FcShape& fc = fc_;
    const TaskRange r = SplitForTask(fc.n, tasks_, t, gemm_.panel_width());
    const int64_t cols = r.end - r.begin;
    if (cols <= 0) return;
    gemm_.Run(rows_, a_, fc.k, y_, fc.n, epilogue_, r.begin, r.end, scratch_.Get(t));
    if (gelu_ != nullptr) {
      for (int64_t row = 0; row < rows_; ++row) gelu_(cols, y_ + row * fc.n + r.begin, y_ + row * fc.n + r.begin);
    }
  }

  FcShape fc_;
  const Tensor* x_ = nullptr;
  int64_t rows_ = 0;
  pthreadpool_t pool_ = nullptr;
  PoolFlags flags_;
  const float* a_ = nullptr;
  float* y_ = nullptr;
  GemmEpilogue epilogue_;
  ActRowFn gelu_ = nullptr;
  PackedGemmF32 gemm_;
  int tasks_ = 1;
  KernelScratch scratch_;
};

bool FcLegal(const OpQuery& q) {
  FcShape fc;
  return ResolveFc(q, &fc);
}

double FcCost(const OpQuery& q) {
  FcShape fc;
  if (!ResolveFc(q, &fc)) return 1e9;
  // Weights packed once, as XNNPACK's are; priced a little above XNNPACK's fully connected operator,
  // which keeps the Gemm, MatMul and tessel.MatMulBias layers it serves (no measurement here says this
  // kernel is faster there), while tessel.MatMulBiasGelu, which XNNPACK lacks, runs here. With AVX2 and
  // no AVX-512 the 6x16 tile runs ~80 GFLOP/s, XNNPACK's GEMM about half that (XnnpackF32GemmIsSlow).
  const double rate = !CpuSupports(Isa::kAvx512) && CpuSupports(Isa::kAvx2) ? 80e9 : 150e9;
  return 2.0 * fc.batch * fc.n * fc.k / rate + 4.4 * fc.n * fc.k / 20e9;
}

#if defined(__x86_64__)
// Batch-1 fully connected on the multi-stream GEMV (fc_gemv.h): weights packed once into 16-output
// panels; tasks split the panels.
class FcGemvKernel : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelArgs& args) {
    absl::StatusOr<FcShape> shape = ResolveFcArgs(args);
    if (!shape.ok()) return shape.status();
    const FcShape& fc = *shape;
    if (fc.batch != 1) {
      return absl::InvalidArgumentError(absl::StrCat("node '", args.node.name(), "' has batch ", fc.batch,
                                                     ": the GEMV serves batch-1 fully connected layers"));
    }
    std::unique_ptr<FcGemvKernel> k(new FcGemvKernel);
    k->fc_ = fc;
    k->panels_ = (fc.n + 15) / 16;
    k->packed_ = Floats(k->panels_ * 16 * fc.k);  // zero-filled: the last panel's padding
    k->bias_ = Floats(k->panels_ * 16);
    const float* w = args.inputs[1]->data<float>();
    PackFcGemvPanels(w, fc.n, fc.k, fc.weights_nk, k->packed_.data());
    if (fc.bias >= 0) std::memcpy(k->bias_.data(), args.inputs[fc.bias]->data<float>(), fc.n * sizeof(float));
    k->x_ = args.inputs[0]->data<float>();
    k->y_ = args.outputs[0].data<float>();
    k->pool_ = PoolForWork(args.threadpool, static_cast<double>(fc.batch) * fc.k * fc.n);
    k->flags_ = ParallelFlags(args);
    k->tasks_ = static_cast<int>(std::min<int64_t>(Tasks(args), k->panels_));
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Run() override {
    RunTasks(pool_, this, tasks_, flags_);
    return absl::OkStatus();
  }

 private:
  template <typename K>
  friend void tessel::RunTasks(pthreadpool_t, K*, int64_t, PoolFlags);  // calls RunTask
  void RunTask(int t) {
    const TaskRange panels = SplitForTask(panels_, tasks_, t);
    tessel_f32_gemv_panel16__avx512(packed_.data(), fc_.k, x_, bias_.data(), fc_.n, panels.begin, panels.end, y_);
  }

  FcShape fc_;
  int64_t panels_ = 0;
  Floats packed_, bias_;
  const float* x_ = nullptr;
  float* y_ = nullptr;
  pthreadpool_t pool_ = nullptr;
  PoolFlags flags_;
  int tasks_ = 1;
};

bool FcGemvLegal(const OpQuery& q) {
  FcShape fc;
  return ResolveFc(q, &fc) && fc.batch == 1;
}

// Bound by reading the packed weights once: ~28 GB/s from 4 streams on one core (Zen 4), where the
// fully connected kernels' costs assume 20 GB/s.
double FcGemvCost(const OpQuery& q) {
  FcShape fc;
  if (!ResolveFc(q, &fc)) return 1e9;
  return 4.0 * (fc.n + 15) / 16 * 16 * fc.k / 28e9 + 1e-6;
}
#endif  // defined(__x86_64__)

// ---- layout: Transpose, and reshapes that only copy ---------------------------------------------------------

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TESSEL_TRANSPOSE_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define TESSEL_TRANSPOSE_CLONES
#endif

// y[f * kC + g] = x[f + g * s5] for f < n: kC unit-stride rows of X interleaved (a row of NCHW ->
// NHWC). Compiled per x86 vector width: the AVX-512 clone interleaves 16 pixels at a time with
// permutes, where the baseline build stays scalar.
template <int kC>
TESSEL_TRANSPOSE_CLONES void InterleaveRows(int64_t n, int64_t s5, const uint32_t* __restrict x,
                                            uint32_t* __restrict y) {
  for (int64_t f = 0; f < n; ++f) {
#pragma GCC unroll 4
    for (int g = 0; g < kC; ++g) y[f * kC + g] = x[f + g * s5];
  }
}

class TransposeKernel : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelArgs& args) {
    const Tensor& x = *args.inputs[0];
    std::unique_ptr<TransposeKernel> k(new TransposeKernel);
    const int rank = x.rank();
    std::vector<int64_t> perm = args.node.GetInts("perm");
    if (perm.empty()) {
      for (int d = rank - 1; d >= 0; --d) perm.push_back(d);
    }
    std::vector<bool> seen(static_cast<size_t>(std::max(rank, 0)), false);
    bool permutation = static_cast<int>(perm.size()) == rank && rank <= kMaxRank;
    for (int64_t p : perm) {
      permutation = permutation && p >= 0 && p < rank && !seen[p];
      if (permutation) seen[p] = true;
    }
    if (!permutation) {
      return absl::InvalidArgumentError(absl::StrCat("node '", args.node.name(), "': bad perm for rank ", rank));
    }
    std::vector<int64_t> in_strides(rank, 1);
    for (int d = rank - 2; d >= 0; --d) in_strides[d] = in_strides[d + 1] * x.dim(d + 1);
    // Pad to kMaxRank leading unit dimensions so the loop nest is fixed.
    for (int d = 0; d < kMaxRank; ++d) {
      const int src = d - (kMaxRank - rank);
      k->extent_[d] = src < 0 ? 1 : args.outputs[0].dim(src);
      k->stride_[d] = src < 0 ? 0 : in_strides[perm[src]];
    }
    k->x_ = static_cast<const uint32_t*>(x.raw_data());
    k->y_ = static_cast<uint32_t*>(args.outputs[0].raw_data());
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Run() override {
    const int64_t* e = extent_;
    const int64_t* s = stride_;
    // NCHW -> NHWC and the like: a few channels (innermost, far apart in X) over a unit-stride row. The
    // row loop runs innermost (unit-stride loads, the channels' stores interleaved in registers).
    if (s[4] == 1 && e[5] >= 1 && e[5] <= 4 && e[4] >= 16) {
      switch (e[5]) {
        case 1: return Rows<1>();
        case 2: return Rows<2>();
        case 3: return Rows<3>();
        case 4: return Rows<4>();
      }
    }
    // Many channels (NCHW <-> NHWC of feature maps): the output's innermost axis strided in X against
    // another axis that is unit-stride in X: a 2-D transpose between the two, in tiles that stay in L1.
    for (int u = 0; u < kMaxRank - 1; ++u) {
      if (s[u] == 1 && s[5] != 1 && e[u] >= 8 && e[5] >= 8) return Tiled(u);
    }
    uint32_t* y = y_;
    for (int64_t a = 0; a < e[0]; ++a)
      for (int64_t b = 0; b < e[1]; ++b)
        for (int64_t c = 0; c < e[2]; ++c)
          for (int64_t d = 0; d < e[3]; ++d)
            for (int64_t f = 0; f < e[4]; ++f) {
              const uint32_t* x = x_ + a * s[0] + b * s[1] + c * s[2] + d * s[3] + f * s[4];
              for (int64_t g = 0; g < e[5]; ++g) *y++ = x[g * s[5]];
            }
    return absl::OkStatus();
  }

 private:
  // Y[..., f, g] = X[... + f + g * s5] for kC values of g; f runs over a unit-stride row of X.
  template <int kC>
  absl::Status Rows() {
    const int64_t* e = extent_;
    const int64_t* s = stride_;
    const int64_t n = e[4], s5 = s[5];
    uint32_t* __restrict y = y_;
    for (int64_t a = 0; a < e[0]; ++a)
      for (int64_t b = 0; b < e[1]; ++b)
        for (int64_t c = 0; c < e[2]; ++c)
          for (int64_t d = 0; d < e[3]; ++d) {
            InterleaveRows<kC>(n, s5, x_ + a * s[0] + b * s[1] + c * s[2] + d * s[3], y);
            y += n * kC;
          }
    return absl::OkStatus();
  }

  // Axis u (unit stride in X) against axis 5 (the output's innermost), 8 x 8 tiles: each tile reads 8
  // runs of 8 contiguous values of X and writes 8 of Y. Eight, not 16: a feature map's planes are a
  // power of two apart, so a tile's lines share one L1 set (16 rows overflowed its 8 ways: 0.32 ms for a
  // 2 x 32 x 64 x 64 map against 0.18). RAFT's 64 boundary Transposes around its instance norms: 4.6 ->
  // 2.4 ms, the model 18.0 -> 16.4 ms (Zen 4, full ISA).
  absl::Status Tiled(int u) {
    constexpr int64_t kT = 8;
    const int64_t* e = extent_;
    const int64_t* s = stride_;
    int64_t ystride[kMaxRank];
    ystride[kMaxRank - 1] = 1;
    for (int d = kMaxRank - 2; d >= 0; --d) ystride[d] = ystride[d + 1] * e[d + 1];
    // The other axes (at most four), outermost first.
    int other[kMaxRank];
    int n_other = 0;
    for (int d = 0; d < kMaxRank - 1; ++d) {
      if (d != u) other[n_other++] = d;
    }
    int64_t idx[kMaxRank] = {};
    const int64_t eu = e[u], e5 = e[5], s5 = s[5], yu = ystride[u];
    while (true) {
      const uint32_t* xb = x_;
      uint32_t* yb = y_;
      for (int i = 0; i < n_other; ++i) {
        xb += idx[other[i]] * s[other[i]];
        yb += idx[other[i]] * ystride[other[i]];
      }
      for (int64_t u0 = 0; u0 < eu; u0 += kT) {
        const int64_t u1 = std::min(u0 + kT, eu);
        for (int64_t g0 = 0; g0 < e5; g0 += kT) {
          const int64_t g1 = std::min(g0 + kT, e5);
          for (int64_t i = u0; i < u1; ++i) {
            const uint32_t* __restrict xi = xb + i;
            uint32_t* __restrict yi = yb + i * yu;
            for (int64_t g = g0; g < g1; ++g) yi[g] = xi[g * s5];
          }
        }
      }
      // Next index of the other axes (row-major, the last fastest).
      int k = n_other - 1;
      for (; k >= 0; --k) {
        if (++idx[other[k]] < e[other[k]]) break;
        idx[other[k]] = 0;
      }
      if (k < 0) break;
    }
    return absl::OkStatus();
  }

  static constexpr int kMaxRank = 6;
  int64_t extent_[kMaxRank];
  int64_t stride_[kMaxRank];
  const uint32_t* x_ = nullptr;
  uint32_t* y_ = nullptr;
};

bool TransposeLegal(const OpQuery& q) {
  return q.has_input(0) && DTypeStorageBytes(q.input(0).dtype, 1) == 4 && q.input(0).is_static() &&
         q.input(0).rank() <= 6;
}

class CopyKernel : public OpKernel {
 public:
  CopyKernel(const void* x, void* y, size_t bytes) : x_(x), y_(y), bytes_(bytes) {}
  absl::Status Run() override {
    if (x_ != y_) std::memmove(y_, x_, bytes_);
    return absl::OkStatus();
  }

 private:
  const void* x_;
  void* y_;
  size_t bytes_;
};

bool CopyLegal(const OpQuery& q) {
  return q.has_input(0) && q.input(0).is_static() && q.output(0).is_static() &&
         q.input(0).NumElements() == q.output(0).NumElements() && q.input(0).dtype == q.output(0).dtype;
}

absl::StatusOr<std::unique_ptr<OpKernel>> CreateCopy(const OpKernelArgs& args) {
  return std::unique_ptr<OpKernel>(
      new CopyKernel(args.inputs[0]->raw_data(), args.outputs[0].raw_data(), args.outputs[0].byte_size()));
}

double CopyCost(const OpQuery& q) { return 8.0 * q.output(0).NumElements() / 20e9; }

OpKernelEntry Entry(const char* name, const char* op, const char* layout, const char* backend,
                    bool (*legal)(const OpQuery&), double (*cost)(const OpQuery&),
                    absl::StatusOr<std::unique_ptr<OpKernel>> (*create)(const OpKernelArgs&)) {
  return MakeOpKernelEntry(name, op, "f32", layout, Isa::kPortable, backend, legal, cost, create);
}

}  // namespace

void RegisterGemmOpKernels(OpKernelRegistry& r) {
  r.Register(Entry("tessel_f32_conv2d_nhwc__im2col_gemm", "tessel.FusedConv", "nhwc", "gemm", Im2colLegal, GemmConvCost,
                   CreateGemmConv));
  r.Register(Entry("tessel_f32_conv2d_1x1_nhwc__gemm", "tessel.FusedConv", "nhwc", "gemm", DirectLegal, GemmConvCost,
                   CreateGemmConv));
  r.Register(MakeOpKernelEntry("tessel_f32_conv2d_nhwc__direct_gemm", "tessel.FusedConv", "f32", "nhwc", Isa::kAvx2,
                               "gemm", DirectGemmLegal, DirectGemmConvCost, DirectGemmConvKernel::Create));
  r.Register(Entry("tessel_f32_fully_connected_gemm__gemm", "Gemm", "row_major", "gemm", FcLegal, FcCost,
                   GemmFcKernel::Create));
  r.Register(Entry("tessel_f32_fully_connected_matmul__gemm", "MatMul", "row_major", "gemm", FcLegal, FcCost,
                   GemmFcKernel::Create));
  r.Register(Entry("tessel_f32_fully_connected_matmul_bias_gelu__gemm", "tessel.MatMulBiasGelu", "row_major", "gemm",
                   FcLegal, FcCost, GemmFcKernel::Create));
  r.Register(Entry("tessel_f32_fully_connected_matmul_bias__gemm", "tessel.MatMulBias", "row_major", "gemm", FcLegal,
                   FcCost, GemmFcKernel::Create));
#if defined(__x86_64__)
  r.Register(MakeOpKernelEntry("tessel_f32_fully_connected_gemm__gemv_avx512", "Gemm", "f32", "row_major",
                               Isa::kAvx512, "gemm", FcGemvLegal, FcGemvCost, FcGemvKernel::Create));
  r.Register(MakeOpKernelEntry("tessel_f32_fully_connected_matmul__gemv_avx512", "MatMul", "f32", "row_major",
                               Isa::kAvx512, "gemm", FcGemvLegal, FcGemvCost, FcGemvKernel::Create));
#endif
}

void RegisterLayoutOpKernels(OpKernelRegistry& r) {
  r.Register(Entry("tessel_x32_transpose__portable", "Transpose", "any", "portable", TransposeLegal, CopyCost,
                   TransposeKernel::Create));
  for (const char* op : {"Flatten", "Reshape", "Squeeze", "Unsqueeze", "Identity"}) {
    r.Register(Entry(absl::StrCat("tessel_copy_", op, "__portable").c_str(), op, "any", "portable", CopyLegal, CopyCost,
                     CreateCopy));
    // The quantized graphs' u8 / i8 reshapes (a Flatten before the classifier).
    for (const char* dtype : {"u8", "i8"}) {
      r.Register(MakeOpKernelEntry(absl::StrCat("tessel_", dtype, "_copy_", op, "__portable"), op, dtype, "any",
                                   Isa::kPortable, "portable", CopyLegal, CopyCost, CreateCopy));
    }
  }
}

}  // namespace tessel
