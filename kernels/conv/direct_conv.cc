// The operator kernel around DirectConvRows__avx512 / __avx2: weights packed once, output rows split
// across the threads, each with a strip for its border chunks' zero-padded taps.
#include "kernels/conv/direct_conv.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/conv/internal/nhwc_legal.h"
#include "kernels/registry/conv_geometry.h"
#include "pthreadpool.h"

namespace tessel {
namespace {

#if defined(__x86_64__)
constexpr int64_t kMaxChannels = 8;   // input channels: beyond this a GEMM's packing pays for itself
constexpr int64_t kMaxOutputs = 64;   // 4 zmm of output channels per pixel

using DirectConvRowsFn = void (*)(const DirectConvParams&, const float*, int64_t, int64_t, float*, float*);

class DirectConvKernel : public OpKernel {
 public:
  template <DirectConvRowsFn kRows>
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelArgs& args) {
    absl::StatusOr<Conv2dGeometry> g = ResolveConv2dNhwc(args.node, args.inputs[0]->type(), args.inputs[1]->type());
    if (!g.ok()) return g.status();
    if (g->groups != 1 || g->c > kMaxChannels || g->m > kMaxOutputs || g->dh != 1 || g->dw != 1 ||
        g->kh > kDirectConvMaxKernel || g->kw > kDirectConvMaxKernel) {
      return absl::InvalidArgumentError(absl::StrCat(
          "node '", args.node.name(), "': the direct convolution takes groups 1, at most ", kMaxChannels, " input and ",
          kMaxOutputs, " output channels, kernels up to ", kDirectConvMaxKernel, "x", kDirectConvMaxKernel,
          ", no dilation"));
    }
    std::unique_ptr<DirectConvKernel> k(new DirectConvKernel);
    k->rows_ = kRows;
    DirectConvParams& p = k->p_;
    p.n = g->n, p.h = g->h, p.w = g->w, p.c = g->c, p.oh = g->oh, p.ow = g->ow, p.m = g->m;
    p.m_pad = (g->m + 15) / 16 * 16;
    p.kh = g->kh, p.kw = g->kw, p.sh = g->sh, p.sw = g->sw;
    p.pad_top = g->pad_top, p.pad_left = g->pad_left, p.pad_bottom = g->pad_bottom, p.pad_right = g->pad_right;
    // Weights [M, KH, KW, C] -> [KH][KW][C][M_pad].
    const float* w = args.inputs[1]->data<float>();
    k->weights_.assign(p.kh * p.kw * p.c * p.m_pad, 0.0f);
    for (int64_t o = 0; o < p.m; ++o) {
      for (int64_t t = 0; t < p.kh * p.kw * p.c; ++t) k->weights_[t * p.m_pad + o] = w[o * p.kh * p.kw * p.c + t];
    }
    p.packed_weights = k->weights_.data();
    if (args.inputs.size() > 2 && args.inputs[2]) {
      k->bias_.assign(p.m_pad, 0.0f);
      std::memcpy(k->bias_.data(), args.inputs[2]->data<float>(), p.m * sizeof(float));
      p.bias = k->bias_.data();
    }
    p.residual = args.inputs.size() > 3 && args.inputs[3] ? args.inputs[3]->data<float>() : nullptr;
    const ClampActivation act = ReadClampActivation(args.node, "");
    p.lo = act.lo, p.hi = act.hi;
    k->x_ = args.inputs[0]->data<float>();
    k->y_ = args.outputs[0].data<float>();
    k->zeros_.assign(DirectConvZeroFloats(p), 0.0f);
    p.zeros = k->zeros_.data();
    // Per task, a border chunk's strip: in the session's shared scratch where there is one.
    k->strip_floats_ = (DirectConvStripFloats(p) + 15) / 16 * 16;
    k->pool_ = PoolForWork(args.threadpool, g->flops() / 2);
    k->flags_ = ParallelFlags(args);
    k->tasks_ = std::max(1, args.num_threads);
    k->scratch_.Bind(args, k->tasks_, k->strip_floats_ * sizeof(float));
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
    const TaskRange rows = SplitForTask(p_.n * p_.oh, tasks_, t);
    float* strip = static_cast<float*>(scratch_.Get(t));
    if (rows.begin < rows.end) rows_(p_, x_, rows.begin, rows.end, strip, y_);
  }

  DirectConvRowsFn rows_ = nullptr;
  DirectConvParams p_;
  std::vector<float> weights_, bias_, zeros_;
  int64_t strip_floats_ = 0;  // per task, a multiple of 16
  KernelScratch scratch_;     // one strip per task
  const float* x_ = nullptr;
  float* y_ = nullptr;
  pthreadpool_t pool_ = nullptr;
  PoolFlags flags_;
  int tasks_ = 1;
};

bool DirectGeometry(const Conv2dGeometry& g) {
  return g.groups == 1 && g.c <= kMaxChannels && g.m <= kMaxOutputs && g.dh == 1 && g.dw == 1 &&
         g.kh <= kDirectConvMaxKernel && g.kw <= kDirectConvMaxKernel && g.oh > 0 && g.ow > 0;
}

bool DirectLegal(const OpQuery& q) { return conv_internal::LegalF32FusedConvNhwc(q, DirectGeometry); }

// FMA-bound on full tiles: 6 pixels x kLanes-channel vectors, partial ones computed whole.
template <int kLanes>
double DirectCost(const OpQuery& q) {
  absl::StatusOr<Conv2dGeometry> g = ResolveConv2dNhwc(q.node, q.input(0), q.input(1));
  if (!g.ok()) return 1e9;
  // AVX-512 ~180 GFLOP/s; AVX2 ~90-100 (Zen 4 capped at AVX2: ResNet-18's 7x7 stem 2.33 ms, 101 GFLOP/s;
  // MobileNetV2's 3x3 one 0.24 ms, against 5.76 and 0.50 on XNNPACK's convolution there).
  const double rate = kLanes == 16 ? 180e9 : 90e9;
  const double pixel_use = g->ow / (std::ceil(g->ow / 6.0) * 6.0);
  const double channel_use = g->m / (std::ceil(g->m / static_cast<double>(kLanes)) * kLanes);
  const double copy_bytes = 8.0 * g->n * g->h * g->w * g->c;
  return g->flops() / (rate * pixel_use * channel_use) + copy_bytes / 20e9;
}
#endif  // defined(__x86_64__)

}  // namespace

void RegisterDirectConvOpKernels(OpKernelRegistry& r) {
#if defined(__x86_64__)
  r.Register(MakeOpKernelEntry("tessel_f32_conv2d_nhwc__direct_avx512", "tessel.FusedConv", "f32", "nhwc",
                               Isa::kAvx512, "direct", DirectLegal, DirectCost<16>,
                               DirectConvKernel::Create<DirectConvRows__avx512>));
  r.Register(MakeOpKernelEntry("tessel_f32_conv2d_nhwc__direct_avx2", "tessel.FusedConv", "f32", "nhwc", Isa::kAvx2,
                               "direct", DirectLegal, DirectCost<8>, DirectConvKernel::Create<DirectConvRows__avx2>));
#else
  (void)r;
#endif
}

}  // namespace tessel
