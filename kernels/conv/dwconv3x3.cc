// The depthwise 3x3 operator kernel over the NEON / SVE microkernels (internal/dwconv3x3_ukernels.h):
// weights repacked tap-major once at creation, output rows spread over the thread pool, and each row split
// into border pixels (some tap outside the image: the pixel kernel over 9 tap pointers) and runs of interior
// pixels (the row kernel over 3 input row pointers; rows above or below the image read a zero row).
#include "kernels/conv/dwconv3x3.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/conv/internal/nhwc_legal.h"
#include "kernels/conv/internal/dwconv3x3_ukernels.h"
#include "kernels/registry/conv_geometry.h"
#include "pthreadpool.h"

namespace tessel {

#if defined(__aarch64__)
namespace {

bool IsDepthwise3x3(const Conv2dGeometry& g) {
  return g.groups == g.c && g.m == g.c && g.kh == 3 && g.kw == 3 && g.dh == 1 && g.dw == 1 &&
         (g.sh == 1 || g.sh == 2) && (g.sw == 1 || g.sw == 2);
}

class DwConv3x3Kernel : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelArgs& args, DwConv3x3RowFn row,
                                                          DwConv3x3PixelFn pixel) {
    absl::StatusOr<Conv2dGeometry> g = ResolveConv2dNhwc(args.node, args.inputs[0]->type(), args.inputs[1]->type());
    if (!g.ok()) return g.status();
    if (!IsDepthwise3x3(*g)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "node '", args.node.name(), "' is not a depthwise 3x3 convolution with stride 1 or 2 and no dilation"));
    }
    std::unique_ptr<DwConv3x3Kernel> k(new DwConv3x3Kernel);
    k->g_ = *g;
    k->row_ = row;
    k->pixel_ = pixel;
    k->pool_ = PoolForWork(args.threadpool, g->flops() / 2);
    k->flags_ = ParallelFlags(args);
    k->x_ = args.inputs[0]->data<float>();
    k->y_ = args.outputs[0].data<float>();
    const Tensor* residual = args.inputs.size() > 3 ? args.inputs[3] : nullptr;
    // In place (residual == y) is fine: each element's residual is read just before it is written.
    k->residual_ = residual ? residual->data<float>() : nullptr;
    const int64_t c = g->c;
    // Weights [C, 3, 3, 1] -> tap-major [9][C]; a missing bias reads as zeros.
    k->weights_.resize(9 * c);
    const float* w = args.inputs[1]->data<float>();
    for (int64_t ch = 0; ch < c; ++ch) {
      for (int t = 0; t < 9; ++t) k->weights_[t * c + ch] = w[ch * 9 + t];
    }
    k->bias_.assign(c, 0.0f);
    const Tensor* bias = args.inputs.size() > 2 ? args.inputs[2] : nullptr;
    if (bias) std::memcpy(k->bias_.data(), bias->data<float>(), c * sizeof(float));
    k->zeros_.assign((kDwConv3x3RunPixels * g->sw + 3) * c, 0.0f);
    const ClampActivation act = ReadClampActivation(args.node, "");
    k->params_ = {c, g->sw, k->weights_.data(), k->bias_.data(), act.lo, act.hi};
    k->interior_ = DwConv3x3InteriorColumns(g->w, g->ow, g->sw, g->pad_left);
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Run() override {
    pthreadpool_parallelize_1d(pool_, &DwConv3x3Kernel::Task, this, g_.n * g_.oh, flags_.get());
    return absl::OkStatus();
  }

 private:
  static void Task(void* self, size_t row) { static_cast<const DwConv3x3Kernel*>(self)->RunRow(row); }

  // Output row `row` of n * oh.
  void RunRow(int64_t row) const {
    const Conv2dGeometry& g = g_;
    const int64_t b = row / g.oh, oy = row % g.oh;
    const float* rows[3];  // input rows ky = 0..2 at pixel 0, or null outside the image
    for (int ky = 0; ky < 3; ++ky) {
      const int64_t iy = oy * g.sh - g.pad_top + ky;
      rows[ky] = iy >= 0 && iy < g.h ? x_ + (b * g.h + iy) * g.w * g.c : nullptr;
    }
    const int64_t off = row * g.ow * g.c;
    DwConv3x3Columns(row_, pixel_, params_, interior_, g.w, g.pad_left, rows, zeros_.data(), 0, g.ow,
                     residual_ != nullptr ? residual_ + off : nullptr, y_ + off);
  }

  Conv2dGeometry g_;
  DwConv3x3RowFn row_ = nullptr;
  DwConv3x3PixelFn pixel_ = nullptr;
  pthreadpool_t pool_ = nullptr;
  PoolFlags flags_;
  const float* x_ = nullptr;
  const float* residual_ = nullptr;
  float* y_ = nullptr;
  std::vector<float> weights_, bias_, zeros_;
  DwConv3x3Params params_;
  DwConv3x3Interior interior_;
};

template <DwConv3x3RowFn kRow, DwConv3x3PixelFn kPixel>
absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelArgs& args) {
  return DwConv3x3Kernel::Create(args, kRow, kPixel);
}

bool Legal(const OpQuery& q) { return conv_internal::LegalF32FusedConvNhwc(q, IsDepthwise3x3); }

// Not timed on Arm hardware (qemu timings mean nothing). By instruction count the row kernels should at
// least match XNNPACK's depthwise microkernels (weights stay in registers across pixels, input columns are
// shared between neighbouring windows, where XNNPACK's unipass kernels reload weights for every pixel), but
// until that is measured they rank just behind XNNPACK's own estimate for depthwise layers
// (kernels/xnnpack/xnnpack_kernels.cc: flops / 30e9 + bytes / 20e9): default selection keeps XNNPACK, and
// --tune or TESSEL_FORCE_BACKEND=neon|sve choose these. SVE ranks ahead of NEON: its predicated channel
// tail needs no scalar remainder.
template <int kPercentAboveXnnpack>
double Cost(const OpQuery& q) {
  absl::StatusOr<Conv2dGeometry> g = ResolveConv2dNhwc(q.node, q.input(0), q.input(1));
  if (!g.ok()) return 1e9;
  return (g->flops() / 30e9 + conv_internal::DepthwiseNhwcBytes(*g) / 20e9) * (1.0 + kPercentAboveXnnpack / 100.0);
}

}  // namespace

void RegisterDwConv3x3OpKernels(OpKernelRegistry& r) {
  r.Register(MakeOpKernelEntry("tessel_f32_dwconv2d_3x3_nhwc__neon", "tessel.FusedConv", "f32", "nhwc", Isa::kNeon,
                               "neon", Legal, Cost<5>,
                               Create<tessel_f32_dwconv3x3_row__neon, tessel_f32_dwconv3x3_pixel__neon>));
  r.Register(MakeOpKernelEntry("tessel_f32_dwconv2d_3x3_nhwc__sve", "tessel.FusedConv", "f32", "nhwc", Isa::kSve,
                               "sve", Legal, Cost<3>,
                               Create<tessel_f32_dwconv3x3_row__sve, tessel_f32_dwconv3x3_pixel__sve>));
}

#else

void RegisterDwConv3x3OpKernels(OpKernelRegistry&) {}

#endif

}  // namespace tessel
