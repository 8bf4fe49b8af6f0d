// Channels-first Conv (1 to 3 spatial dimensions) as blocked im2col + GEMM; see conv_nd.h.
#include "kernels/conv/conv_nd.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/ops/nn_params.h"
#include "kernels/activation/act_rows.h"
#include "kernels/conv/internal/activation.h"
#include "kernels/conv/internal/select_gemm.h"
#include "kernels/gemm/gemm.h"
#include "pthreadpool.h"

namespace tessel {
namespace {

// Output positions per column block: the block's unfolded input (rows x block floats) stays within
// about 512 KiB, half of a Zen 4/5 L2, and the block is a whole number of 32-wide GEMM panels.
constexpr int64_t kBlockFloats = 128 * 1024;
constexpr int64_t kPanel = 32;
// Output channels per group from which the weights are packed once, as the GEMM's B (see
// ConvNdKernel): below it a 32-wide panel of output channels would be mostly padding.
constexpr int64_t kPackedMinChannels = 16;

// The geometry with the spatial dimensions padded to three (leading extent-1 dimensions), as the
// reference kernel loops over them.
struct ConvNd {
  int64_t batch = 0, c_in = 0, m_out = 0, group = 1, cg = 0, mg = 0;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, d[3] = {1, 1, 1};
  int64_t pb[3] = {0, 0, 0};
  int64_t in_plane = 0, out_plane = 0, k_vol = 0;
  int64_t block = 0;  // output positions per column block

  int64_t rows() const { return cg * k_vol; }  // the GEMM's K: (input channel, kernel tap) in weight order
  int64_t blocks() const { return (out_plane + block - 1) / block; }
  int64_t items() const { return batch * group * blocks(); }
  // A 1x1 window at stride 1 without padding reads the input planes as they are.
  bool direct() const {
    return k_vol == 1 && in_plane == out_plane && s[0] == 1 && s[1] == 1 && s[2] == 1 && pb[0] == 0 && pb[1] == 0 &&
           pb[2] == 0;
  }
  double macs() const { return static_cast<double>(batch) * m_out * out_plane * rows(); }
};

// The geometry of an f32 Conv over static shapes x [N, C, spatial...] (1 to 3 spatial dimensions),
// weights [M, C/group, kernel...], optional bias [M] and output y; false for anything else.
bool ResolveConvNd(const OpQuery& q, ConvNd* g) {
  const bool fused = q.op() == "tessel.FusedConv";
  if ((q.op() != "Conv" && !fused) || !q.has_input(0) || !q.has_input(1) || q.outputs.size() != 1) return false;
  if (fused && q.node.GetString("layout", "nchw") != "nchw") return false;
  if (fused && q.has_input(3) && !(q.input(3) == q.output(0))) return false;
  for (int i = 0; i < 4; ++i) {
    if (i < 2 || q.has_input(i)) {
      if (q.input(i).dtype != DType::kF32 || !q.input(i).is_static()) return false;
    }
  }
  const TensorType& x = q.input(0);
  const TensorType& w = q.input(1);
  const TensorType& y = q.output(0);
  if (y.dtype != DType::kF32 || !y.is_static() || x.rank() < 3 || x.rank() > 5 || w.rank() != x.rank() ||
      y.rank() != x.rank()) {
    return false;
  }
  absl::StatusOr<ConvParams> p = ResolveConvParams(q.node, x.dims, w.dims);
  if (!p.ok() || p->group < 1) return false;
  const int ns = p->num_spatial(), lead = 3 - ns;
  g->batch = x.dims[0].value();
  g->c_in = x.dims[1].value();
  g->m_out = w.dims[0].value();
  g->group = p->group;
  if (g->c_in % g->group != 0 || g->m_out % g->group != 0 || y.dims[1].value() != g->m_out) return false;
  g->cg = g->c_in / g->group;
  g->mg = g->m_out / g->group;
  for (int i = 0; i < ns; ++i) {
    const int j = lead + i;
    g->in[j] = x.dims[2 + i].value();
    g->out[j] = y.dims[2 + i].value();
    g->k[j] = p->kernel[i];
    g->s[j] = p->strides[i];
    g->d[j] = p->dilations[i];
    g->pb[j] = p->pads_begin[i];
    if (!p->output[i].is_static() || p->output[i].value() != g->out[j]) return false;
  }
  g->in_plane = g->in[0] * g->in[1] * g->in[2];
  g->out_plane = g->out[0] * g->out[1] * g->out[2];
  g->k_vol = g->k[0] * g->k[1] * g->k[2];
  if (g->batch < 1 || g->cg < 1 || g->mg < 1 || g->out_plane < 1) return false;
  if (q.has_input(2) && q.input(2).NumElements() != g->m_out) return false;
  const int64_t fit = kBlockFloats / g->rows() / kPanel * kPanel;
  g->block = std::min(g->out_plane, std::max(kPanel, fit));
  return true;
}

// Columns [j0, j0 + cols) of the unfolded input of one (image, group): row r = (channel, tap) holds the
// input value each output position reads through that tap, 0 where it reads padding.
void Im2colBlock(const ConvNd& g, const float* x, int64_t j0, int64_t cols, float* col) {
  for (int64_t c = 0; c < g.cg; ++c) {
    const float* xp = x + c * g.in_plane;
    for (int64_t k0 = 0; k0 < g.k[0]; ++k0) {
      for (int64_t k1 = 0; k1 < g.k[1]; ++k1) {
        for (int64_t k2 = 0; k2 < g.k[2]; ++k2, col += cols) {
          int64_t o2 = j0 % g.out[2], o1 = j0 / g.out[2] % g.out[1], o0 = j0 / (g.out[2] * g.out[1]);
          for (int64_t t = 0; t < cols;) {
            const int64_t i0 = o0 * g.s[0] - g.pb[0] + k0 * g.d[0];
            const int64_t i1 = o1 * g.s[1] - g.pb[1] + k1 * g.d[1];
            const bool inside = i0 >= 0 && i0 < g.in[0] && i1 >= 0 && i1 < g.in[1];
            const float* row = inside ? xp + (i0 * g.in[1] + i1) * g.in[2] : nullptr;
            // The rest of this output row, within the block.
            const int64_t run = std::min(cols - t, g.out[2] - o2);
            for (int64_t e = 0; e < run; ++e) {
              const int64_t i2 = (o2 + e) * g.s[2] - g.pb[2] + k2 * g.d[2];
              col[t + e] = inside && i2 >= 0 && i2 < g.in[2] ? row[i2] : 0.0f;
            }
            t += run;
            o2 = 0;
            if (++o1 == g.out[1]) o1 = 0, ++o0;
          }
        }
      }
    }
  }
}

// Per spatial axis, the kernel offsets that read inside the input for at least one output position. A
// tap outside these reads only padding (r3d_18's late layers: 1-frame inputs under a 3-frame kernel
// leave 9 of 27 taps), so the packed path leaves it out of the GEMM's K.
struct LiveTaps {
  std::vector<int64_t> offsets[3];
  int64_t count() const {
    return static_cast<int64_t>(offsets[0].size() * offsets[1].size() * offsets[2].size());
  }
};

LiveTaps FindLiveTaps(const ConvNd& g) {
  LiveTaps live;
  for (int axis = 0; axis < 3; ++axis) {
    for (int64_t k = 0; k < g.k[axis]; ++k) {
      bool inside = false;
      for (int64_t o = 0; o < g.out[axis] && !inside; ++o) {
        const int64_t i = o * g.s[axis] - g.pb[axis] + k * g.d[axis];
        inside = i >= 0 && i < g.in[axis];
      }
      if (inside) live.offsets[axis].push_back(k);
    }
  }
  return live;
}

// Rows [j0, j0 + rows) of the channels-last unfolded input of one (image, group), from xt, that
// group's input transposed to [position][channel]: row j = output position j, columns (live tap,
// channel), cg contiguous floats per tap, zeros where the tap reads padding.
void UnfoldRowsChannelsLast(const ConvNd& g, const LiveTaps& live, const float* xt, int64_t j0, int64_t rows,
                            float* a) {
  for (int64_t j = j0; j < j0 + rows; ++j) {
    const int64_t o2 = j % g.out[2], o1 = j / g.out[2] % g.out[1], o0 = j / (g.out[2] * g.out[1]);
    for (int64_t k0 : live.offsets[0]) {
      const int64_t i0 = o0 * g.s[0] - g.pb[0] + k0 * g.d[0];
      for (int64_t k1 : live.offsets[1]) {
        const int64_t i1 = o1 * g.s[1] - g.pb[1] + k1 * g.d[1];
        const bool inside = i0 >= 0 && i0 < g.in[0] && i1 >= 0 && i1 < g.in[1];
        for (int64_t k2 : live.offsets[2]) {
          const int64_t i2 = o2 * g.s[2] - g.pb[2] + k2 * g.d[2];
          if (inside && i2 >= 0 && i2 < g.in[2]) {
            std::memcpy(a, xt + ((i0 * g.in[1] + i1) * g.in[2] + i2) * g.cg, g.cg * sizeof(float));
          } else {
            std::memset(a, 0, g.cg * sizeof(float));
          }
          a += g.cg;
        }
      }
    }
  }
}

class ConvNdKernel : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelArgs& args) {
    std::vector<OperandInfo> inputs(args.inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (args.inputs[i] != nullptr) inputs[i] = {true, false, args.inputs[i]->type()};
    }
    const std::vector<OperandInfo> outputs = {{true, false, args.outputs[0].type()}};
    std::unique_ptr<ConvNdKernel> k(new ConvNdKernel);
    if (!ResolveConvNd(OpQuery{args.node, inputs, outputs}, &k->g_)) {
      return absl::InvalidArgumentError(absl::StrCat("node '", args.node.name(),
                                                     "' is not an f32 Conv with 1 to 3 static spatial dimensions"));
    }
    ConvNd& g = k->g_;
    k->x_ = args.inputs[0]->data<float>();
    k->w_ = args.inputs[1]->data<float>();
    k->bias_ = args.inputs.size() > 2 && args.inputs[2] ? args.inputs[2]->data<float>() : nullptr;
    k->residual_ = args.inputs.size() > 3 && args.inputs[3] ? args.inputs[3]->data<float>() : nullptr;
    k->y_ = args.outputs[0].data<float>();
    conv_internal::Act act;
    conv_internal::ReadActivation(args.node, &act, &k->lo_, &k->hi_);
    // Bias, residual and clamp in one pass; hardswish / sigmoid / SiLU after it on the widest activation
    // rows this CPU has, as the 2-D GEMM convolution does.
    k->epilogue_ = conv_internal::ActivateRow<conv_internal::Act::kClamp>;
    const ActRowKernels rows_for_cpu = ActRowsForCpu();
    k->activate_ = act == conv_internal::Act::kHardSwish ? rows_for_cpu.hardswish
                   : act == conv_internal::Act::kSigmoid ? rows_for_cpu.sigmoid
                   : act == conv_internal::Act::kSiLU    ? rows_for_cpu.silu
                                                         : nullptr;
    // A plain Conv (no bias, no residual, no clamp) needs no pass over its output.
    k->epilogue_needed_ = k->bias_ || k->residual_ || k->lo_ > -std::numeric_limits<float>::infinity() ||
                          k->hi_ < std::numeric_limits<float>::infinity() ||
                          args.node.GetString("activation", "none") != "none";
    k->pool_ = PoolForWork(args.threadpool, g.macs());
    k->flags_ = ParallelFlags(args);
    const int threads = std::max(1, args.num_threads);
    size_t scratch_bytes = 0;
    if (g.mg >= kPackedMinChannels && !g.direct()) {
      k->live_ = FindLiveTaps(g);
      k->k_rows_ = g.cg * k->live_.count();
      // Output positions per block: the unfolded rows (block x K floats) within kBlockFloats.
      const int64_t fit = kBlockFloats / std::max<int64_t>(k->k_rows_, 1) / 16 * 16;
      g.block = std::min(g.out_plane, std::max<int64_t>(16, fit));
      absl::Status packed = k->PackWeights();
      if (!packed.ok()) return packed;
      // Few blocks (the late layers of a video network: 1x2x2 outputs): tasks split the output channels.
      const int64_t panels = (g.mg + k->packed_[0].panel_width() - 1) / k->packed_[0].panel_width();
      k->channel_splits_ = g.items() >= threads ? 1 : std::min<int64_t>(threads, panels);
      k->xt_floats_ = (g.cg * g.in_plane + 15) / 16 * 16;
      k->col_floats_ = (g.block * k->k_rows_ + 15) / 16 * 16;
      k->out_floats_ = (g.block * g.mg + 15) / 16 * 16;
      scratch_bytes =
          (k->xt_floats_ + k->col_floats_ + k->out_floats_) * sizeof(float) + k->packed_[0].workspace_bytes();
    } else {
      absl::StatusOr<const GemmKernel*> gemm = conv_internal::SelectGemm(g.mg, g.block, g.rows());
      if (!gemm.ok()) return gemm.status();
      k->gemm_ = *gemm;
      k->col_floats_ = g.direct() ? 0 : (g.rows() * g.block + 15) / 16 * 16;
      scratch_bytes = k->col_floats_ * sizeof(float) + k->gemm_->workspace_bytes;
    }
    k->tasks_ = static_cast<int>(std::min<int64_t>(threads, g.items() * k->channel_splits_));
    k->scratch_.Bind(args, k->tasks_, scratch_bytes);
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Run() override {
    RunTasks(pool_, this, tasks_, flags_);
    return absl::OkStatus();
  }

 private:
  template <typename K>
  friend void tessel::RunTasks(pthreadpool_t, K*, int64_t, PoolFlags);  // calls RunTask

  // Weights of each group as the GEMM's B [K x mg], K in the channels-last unfold's (live tap, channel)
  // order, packed once (the unpacked path repacks them for every column block of every run).
  absl::Status PackWeights() {
    const ConvNd& g = g_;
    std::vector<int64_t> taps;  // weight tap index of each live tap, in unfold order
    for (int64_t k0 : live_.offsets[0]) {
      for (int64_t k1 : live_.offsets[1]) {
        for (int64_t k2 : live_.offsets[2]) taps.push_back((k0 * g.k[1] + k1) * g.k[2] + k2);
      }
    }
    std::vector<float> wt(static_cast<size_t>(k_rows_ * g.mg));
    constexpr int64_t kRowsPerPass = 16;  // output channels read side by side: sequential reads, short writes
    for (int64_t grp = 0; grp < g.group; ++grp) {
      for (int64_t m0 = 0; m0 < g.mg; m0 += kRowsPerPass) {
        const int64_t m1 = std::min(g.mg, m0 + kRowsPerPass);
        for (int64_t c = 0; c < g.cg; ++c) {
          for (size_t t = 0; t < taps.size(); ++t) {
            float* dst = wt.data() + (static_cast<int64_t>(t) * g.cg + c) * g.mg;
            for (int64_t m = m0; m < m1; ++m) dst[m] = w_[(grp * g.mg + m) * g.rows() + c * g.k_vol + taps[t]];
          }
        }
      }
      absl::StatusOr<PackedGemmF32> packed = PackedGemmF32::Create(g.mg, k_rows_, wt.data(), g.mg, g.block);
      if (!packed.ok()) return packed.status();
      packed_.push_back(*std::move(packed));
    }
    return absl::OkStatus();
  }

  void RunTask(int t) {
    if (packed_.empty()) {
      RunTaskUnpacked(t);
    } else {
      RunTaskPacked(t);
    }
  }

  // Task t's share of the (image, group, column block) items.
  void RunTaskUnpacked(int t) {
    const ConvNd& g = g_;
    float* col = static_cast<float*>(scratch_.Get(t));
    void* workspace = col + col_floats_;
    const TaskRange range = SplitForTask(g.items(), tasks_, t);
    for (int64_t item = range.begin; item < range.end; ++item) {
      const int64_t blk = item % g.blocks(), grp = item / g.blocks() % g.group, n = item / (g.blocks() * g.group);
      const int64_t j0 = blk * g.block, cols = std::min(g.block, g.out_plane - j0);
      const float* x = x_ + (n * g.c_in + grp * g.cg) * g.in_plane;
      float* y = y_ + (n * g.m_out + grp * g.mg) * g.out_plane + j0;
      const float* b = x + j0;
      int64_t ldb = g.in_plane;
      if (!g.direct()) {
        Im2colBlock(g, x, j0, cols, col);
        b = col;
        ldb = cols;
      }
      gemm_->fn(g.mg, cols, g.rows(), w_ + grp * g.mg * g.rows(), g.rows(), b, ldb, y, g.out_plane, workspace);
      if (!epilogue_needed_) continue;
      const int64_t offset = (n * g.m_out + grp * g.mg) * g.out_plane + j0;
      for (int64_t m = 0; m < g.mg; ++m) {
        epilogue_(cols, bias_ ? bias_[grp * g.mg + m] : 0.0f, residual_ ? residual_ + offset + m * g.out_plane : nullptr,
                  lo_, hi_, y + m * g.out_plane);
        if (activate_ != nullptr) activate_(cols, y + m * g.out_plane, y + m * g.out_plane);
      }
    }
  }

  // Task t's share of the (image, group, position block, channel range) items: the group's input
  // transposed to channels-last once per (image, group) a task meets, each block unfolded into rows
  // of (live tap, channel), multiplied by the packed weights into [position][channel] and transposed into
  // the NC[D]HW output, then bias, residual and activation as in the unpacked path.
  void RunTaskPacked(int t) {
    const ConvNd& g = g_;
    float* xt = static_cast<float*>(scratch_.Get(t));
    float* a = xt + xt_floats_;
    float* out = a + col_floats_;
    void* workspace = out + out_floats_;
    const int64_t panel = packed_[0].panel_width();
    const int64_t per_split = ((g.mg + panel - 1) / panel + channel_splits_ - 1) / channel_splits_ * panel;
    const TaskRange range = SplitForTask(g.items() * channel_splits_, tasks_, t);
    int64_t transposed = -1;  // the (image, group) now in xt
    for (int64_t item = range.begin; item < range.end; ++item) {
      const int64_t split = item % channel_splits_, rest = item / channel_splits_;
      const int64_t blk = rest % g.blocks(), ng = rest / g.blocks(), grp = ng % g.group, n = ng / g.group;
      const int64_t m0 = std::min(g.mg, split * per_split), m1 = std::min(g.mg, m0 + per_split);
      if (m0 >= m1) continue;
      const int64_t j0 = blk * g.block, cols = std::min(g.block, g.out_plane - j0);
      if (ng != transposed) {
        const float* x = x_ + (n * g.c_in + grp * g.cg) * g.in_plane;
        for (int64_t c = 0; c < g.cg; ++c) {
          for (int64_t p = 0; p < g.in_plane; ++p) xt[p * g.cg + c] = x[c * g.in_plane + p];
        }
        transposed = ng;
      }
      UnfoldRowsChannelsLast(g, live_, xt, j0, cols, a);
      packed_[grp].Run(cols, a, k_rows_, out, g.mg, GemmEpilogue{}, m0, m1, workspace);
      const int64_t offset = (n * g.m_out + grp * g.mg) * g.out_plane + j0;
      for (int64_t m = m0; m < m1; ++m) {
        float* y = y_ + offset + m * g.out_plane;
        for (int64_t j = 0; j < cols; ++j) y[j] = out[j * g.mg + m];
        if (epilogue_needed_) {
          const float* r = residual_ ? residual_ + offset + m * g.out_plane : nullptr;
          epilogue_(cols, bias_ ? bias_[grp * g.mg + m] : 0.0f, r, lo_, hi_, y);
          if (activate_ != nullptr) activate_(cols, y, y);
        }
      }
    }
  }

  ConvNd g_;
  const GemmKernel* gemm_ = nullptr;
  const float* x_ = nullptr;
  const float* w_ = nullptr;
  const float* bias_ = nullptr;
  const float* residual_ = nullptr;
  float* y_ = nullptr;
  float lo_ = 0, hi_ = 0;
  conv_internal::ActivateRowFn epilogue_ = nullptr;  // bias, residual, clamp
  ActRowFn activate_ = nullptr;                      // a non-clamp activation, after the epilogue
  bool epilogue_needed_ = false;
  pthreadpool_t pool_ = nullptr;
  PoolFlags flags_;
  int tasks_ = 1;
  int64_t col_floats_ = 0;
  KernelScratch scratch_;
  // The packed path (output channels per group >= kPackedMinChannels): one packed B per group.
  std::vector<PackedGemmF32> packed_;
  LiveTaps live_;
  int64_t k_rows_ = 0;  // the GEMM's K: input channels per group x live taps
  int64_t channel_splits_ = 1;
  int64_t xt_floats_ = 0, out_floats_ = 0;
};

bool ConvNdLegal(const OpQuery& q) {
  ConvNd g;
  return ResolveConvNd(q, &g);
}

// The GEMM microkernel's own estimate per column block, and the unfolding: one read and one write of
// each unfolded element.
double ConvNdCost(const OpQuery& q) {
  ConvNd g;
  if (!ResolveConvNd(q, &g)) return 1e9;
  absl::StatusOr<const GemmKernel*> gemm = conv_internal::SelectGemm(g.mg, g.block, g.rows());
  if (!gemm.ok()) return 1e9;
  const double per_block = GemmKernels().Cost(**gemm, {g.mg, g.block, g.rows(), 0});
  const double unfold_bytes = g.direct() ? 0.0 : 8.0 * g.rows() * g.out_plane * g.group * g.batch;
  return per_block * g.items() + unfold_bytes / 20e9;
}

}  // namespace

void RegisterConvNdOpKernels(OpKernelRegistry& r) {
  // The same kernel for both ops: tessel.FusedConv in nchw adds residual and activation to Conv.
  for (const char* op : {"Conv", "tessel.FusedConv"}) {
    r.Register(MakeOpKernelEntry(absl::StrCat("tessel_f32_", op[0] == 'C' ? "conv" : "fusedconv", "_ncx__im2col_gemm"),
                                 op, "f32", "nchw", Isa::kPortable, "gemm", ConvNdLegal, ConvNdCost,
                                 ConvNdKernel::Create));
  }
}

}  // namespace tessel
