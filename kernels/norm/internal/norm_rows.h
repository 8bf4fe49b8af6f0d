// The row kernels of the normalization operator kernels (LayerNormalization, InstanceNormalization,
// GroupNormalization): a block's mean and reciprocal standard deviation, then the affine output stage
// with per-element (LayerNormalization) or per-plane (instance and group) scale and bias. One set per
// ISA, all compiled from the same portable C++ (norm_rows_impl.h) with that ISA's flags; they never
// allocate and never fail.
#ifndef TESSEL_KERNELS_NORM_INTERNAL_NORM_ROWS_H_
#define TESSEL_KERNELS_NORM_INTERNAL_NORM_ROWS_H_

#include <cstdint>

namespace tessel {
namespace norm_internal {

// mean = sum(x) / n and rstd = 1 / sqrt(sum((x - mean)^2) / n + eps) over x[0, n), n >= 1 (two passes:
// no cancellation where the mean is large against the spread).
using MomentsFn = void (*)(int64_t n, const float* x, float eps, float* mean, float* rstd);
// y[i] = (x[i] - mean) * rstd * scale[i] + bias[i] for i < n.
using AffineRowFn = void (*)(int64_t n, const float* x, float mean, float rstd, const float* scale,
                             const float* bias, float* y);
// y[i] = (x[i] - mean) * a + b for i < n (a plane of one channel: a = rstd * scale, b = bias). Not
// x * a + (b - mean * a): with a small variance, a is large and that form cancels.
using AffinePlaneFn = void (*)(int64_t n, const float* x, float mean, float a, float b, float* y);

// Channels-last instance norm of one image ([pixels, channels]): each channel's mean and rstd as
// Moments computes them (two passes over the pixels, every channel's sums side by side), then
// y[p, c] = (x[p, c] - mean[c]) * a[c] + b[c].
using ChannelMomentsFn = void (*)(int64_t pixels, int64_t channels, const float* x, float eps, float* mean,
                                  float* rstd);
using ChannelAffineFn = void (*)(int64_t pixels, int64_t channels, const float* x, const float* mean, const float* a,
                                 const float* b, float* y);

struct NormRowKernels {
  MomentsFn moments;
  AffineRowFn affine_row;
  AffinePlaneFn affine_plane;
  ChannelMomentsFn channel_moments;
  ChannelAffineFn channel_affine;
};

// GCC's auto-vectorizer at the baseline ISA (SSE2, NEON), and with AVX2 or AVX-512 enabled on x86-64
// (those two exist only in x86-64 builds).
NormRowKernels NormRowsAutovec();
NormRowKernels NormRowsAvx2();
NormRowKernels NormRowsAvx512();

}  // namespace norm_internal
}  // namespace tessel

#endif  // TESSEL_KERNELS_NORM_INTERNAL_NORM_ROWS_H_
