// The large-window depthwise operator kernel (dwconv_kxk.h): weights repacked tap-major once, output rows
// spread over the thread pool, each output pixel from its taps' input pixels (null for padding).
#include "kernels/conv/dwconv_kxk.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/conv/internal/nhwc_legal.h"
#include "kernels/conv/internal/dw_rows.h"
#include "kernels/registry/conv_geometry.h"
#include "pthreadpool.h"

namespace tessel {
namespace {

using dw_internal::DwPixelFn;

// Windows of 26 to kMaxTaps taps (9x9): the tap pointers of a pixel live on the stack.
constexpr int64_t kMinTaps = 26;
constexpr int64_t kMaxTaps = 81;

bool IsLargeDepthwise(const Conv2dGeometry& g) {
  const int64_t taps = g.kh * g.kw;
  return g.groups == g.c && g.m == g.c && taps >= kMinTaps && taps <= kMaxTaps;
}

class DwConvKxkKernel : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelArgs& args, DwPixelFn pixel) {
    absl::StatusOr<Conv2dGeometry> g = ResolveConv2dNhwc(args.node, args.inputs[0]->type(), args.inputs[1]->type());
    if (!g.ok()) return g.status();
    const ClampActivation act = ReadClampActivation(args.node, "");
    if (!IsLargeDepthwise(*g) || !act.is_clamp) {
      return absl::InvalidArgumentError(absl::StrCat("node '", args.node.name(), "' is not a depthwise convolution of ",
                                                     kMinTaps, " to ", kMaxTaps, " taps with a clamp activation"));
    }
    std::unique_ptr<DwConvKxkKernel> k(new DwConvKxkKernel);
    k->g_ = *g;
    k->pixel_ = pixel;
    k->lo_ = act.lo;
    k->hi_ = act.hi;
    k->pool_ = PoolForWork(args.threadpool, g->flops() / 2);
    k->flags_ = ParallelFlags(args);
    k->x_ = args.inputs[0]->data<float>();
    k->y_ = args.outputs[0].data<float>();
    const Tensor* residual = args.inputs.size() > 3 ? args.inputs[3] : nullptr;
    k->residual_ = residual ? residual->data<float>() : nullptr;
    const int64_t c = g->c, taps = g->kh * g->kw;
    // Weights [C, KH, KW, 1] -> tap-major [taps][C]; a missing bias reads as zeros.
    k->weights_.resize(taps * c);
    const float* w = args.inputs[1]->data<float>();
    for (int64_t ch = 0; ch < c; ++ch) {
      for (int64_t t = 0; t < taps; ++t) k->weights_[t * c + ch] = w[ch * taps + t];
    }
    k->bias_.assign(c, 0.0f);
    const Tensor* bias = args.inputs.size() > 2 ? args.inputs[2] : nullptr;
    if (bias) std::memcpy(k->bias_.data(), bias->data<float>(), c * sizeof(float));
    k->tasks_ = std::max(1, args.num_threads);
    k->scratch_.Bind(args, k->tasks_, c * sizeof(float));
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Run() override {
    RunTasks(pool_, this, tasks_, flags_);
    return absl::OkStatus();
  }

 private:
  template <typename K>
  friend void tessel::RunTasks(pthreadpool_t, K*, int64_t, PoolFlags);  // calls RunTask

  // Task t's share of the n * oh output rows.
  void RunTask(int t) {
    const Conv2dGeometry& g = g_;
    float* acc = static_cast<float*>(scratch_.Get(t));
    const TaskRange rows = SplitForTask(g.n * g.oh, tasks_, t);
    const float* taps[kMaxTaps];
    for (int64_t row = rows.begin; row < rows.end; ++row) {
      const int64_t b = row / g.oh, oy = row % g.oh;
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        for (int64_t ky = 0; ky < g.kh; ++ky) {
          const int64_t iy = oy * g.sh - g.pad_top + ky * g.dh;
          for (int64_t kx = 0; kx < g.kw; ++kx) {
            const int64_t ix = ox * g.sw - g.pad_left + kx * g.dw;
            const bool inside = iy >= 0 && iy < g.h && ix >= 0 && ix < g.w;
            taps[ky * g.kw + kx] = inside ? x_ + ((b * g.h + iy) * g.w + ix) * g.c : nullptr;
          }
        }
        const int64_t off = (row * g.ow + ox) * g.c;
        pixel_(g.c, g.kh * g.kw, taps, weights_.data(), bias_.data(), residual_ ? residual_ + off : nullptr, lo_, hi_,
               acc, y_ + off);
      }
    }
  }

  Conv2dGeometry g_;
  DwPixelFn pixel_ = nullptr;
  float lo_ = 0, hi_ = 0;
  pthreadpool_t pool_ = nullptr;
  PoolFlags flags_;
  const float* x_ = nullptr;
  const float* residual_ = nullptr;
  float* y_ = nullptr;
  std::vector<float> weights_, bias_;
  int tasks_ = 1;
  KernelScratch scratch_;
};

template <DwPixelFn (*kPixel)()>
absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelArgs& args) {
  return DwConvKxkKernel::Create(args, kPixel());
}

bool Legal(const OpQuery& q) { return conv_internal::LegalF32FusedConvNhwc(q, IsLargeDepthwise); }

// One multiply-add per tap and channel at `kGflops` GFLOP/s (AVX-512: 16 lanes per multiply-add with
// three loads and a store, about 10 multiply-adds a cycle), plus one pass over input and output. Against
// XNNPACK's depthwise estimate (flops / 30e9 + bytes / 20e9), which ConvNeXt's 7x7 layers missed by far
// (16x16x96: 0.6 ms, about 4 GFLOP/s, through its grouped convolution), the AVX2 and AVX-512 entries
// win and the baseline one loses.
template <int kGflops>
double Cost(const OpQuery& q) {
  absl::StatusOr<Conv2dGeometry> g = ResolveConv2dNhwc(q.node, q.input(0), q.input(1));
  if (!g.ok()) return 1e9;
  return g->flops() / (kGflops * 1e9) + conv_internal::DepthwiseNhwcBytes(*g) / 20e9;
}

}  // namespace

void RegisterDwConvKxkOpKernels(OpKernelRegistry& r) {
  r.Register(MakeOpKernelEntry("tessel_f32_dwconv2d_kxk_nhwc__autovec", "tessel.FusedConv", "f32", "nhwc",
                               Isa::kPortable, "portable", Legal, Cost<12>, Create<dw_internal::DwPixelAutovec>));
#if defined(__x86_64__)
  r.Register(MakeOpKernelEntry("tessel_f32_dwconv2d_kxk_nhwc__avx2", "tessel.FusedConv", "f32", "nhwc", Isa::kAvx2,
                               "x86", Legal, Cost<35>, Create<dw_internal::DwPixelAvx2>));
  r.Register(MakeOpKernelEntry("tessel_f32_dwconv2d_kxk_nhwc__avx512", "tessel.FusedConv", "f32", "nhwc",
                               Isa::kAvx512, "x86", Legal, Cost<60>, Create<dw_internal::DwPixelAvx512>));
#endif
}

}  // namespace tessel
