// The row kernels of norm_rows.h as portable C++, included once by each per-ISA source file
// (norm_rows_autovec.cc, norm_rows_avx2.cc, norm_rows_avx512.cc), which compiles them with that ISA's
// flags (-O3 -fopenmp-simd -ffp-contract=fast): the sums vectorize as `omp simd` reductions, so each
// lane keeps its own partial sum. Internal linkage: each file holds its own copy.
#ifndef TESSEL_KERNELS_NORM_INTERNAL_NORM_ROWS_IMPL_H_
#define TESSEL_KERNELS_NORM_INTERNAL_NORM_ROWS_IMPL_H_

#include <cmath>
#include <cstdint>

#include "kernels/norm/internal/norm_rows.h"

namespace tessel {
namespace norm_internal {
namespace {

void Moments(int64_t n, const float* __restrict__ x, float eps, float* mean, float* rstd) {
  float sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < n; ++i) sum += x[i];
  const float m = sum / static_cast<float>(n);
  float sq = 0;
#pragma omp simd reduction(+ : sq)
  for (int64_t i = 0; i < n; ++i) sq += (x[i] - m) * (x[i] - m);
  *mean = m;
  *rstd = 1.0f / std::sqrt(sq / static_cast<float>(n) + eps);
}

void AffineRow(int64_t n, const float* __restrict__ x, float mean, float rstd, const float* __restrict__ scale,
               const float* __restrict__ bias, float* __restrict__ y) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * rstd * scale[i] + bias[i];
}

void AffinePlane(int64_t n, const float* __restrict__ x, float mean, float a, float b, float* __restrict__ y) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * a + b;
}

void ChannelMoments(int64_t pixels, int64_t channels, const float* __restrict__ x, float eps, float* __restrict__ mean,
                    float* __restrict__ rstd) {
  for (int64_t c = 0; c < channels; ++c) mean[c] = rstd[c] = 0.0f;
  for (int64_t p = 0; p < pixels; ++p) {
    const float* __restrict__ xp = x + p * channels;
#pragma omp simd
    for (int64_t c = 0; c < channels; ++c) mean[c] += xp[c];
  }
  const float inv = 1.0f / static_cast<float>(pixels);
#pragma omp simd
  for (int64_t c = 0; c < channels; ++c) mean[c] = mean[c] * inv;
  for (int64_t p = 0; p < pixels; ++p) {
    const float* __restrict__ xp = x + p * channels;
#pragma omp simd
    for (int64_t c = 0; c < channels; ++c) rstd[c] += (xp[c] - mean[c]) * (xp[c] - mean[c]);
  }
  for (int64_t c = 0; c < channels; ++c) rstd[c] = 1.0f / std::sqrt(rstd[c] * inv + eps);
}

void ChannelAffine(int64_t pixels, int64_t channels, const float* __restrict__ x, const float* __restrict__ mean,
                   const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ y) {
  for (int64_t p = 0; p < pixels; ++p) {
    const float* __restrict__ xp = x + p * channels;
    float* __restrict__ yp = y + p * channels;
#pragma omp simd
    for (int64_t c = 0; c < channels; ++c) yp[c] = (xp[c] - mean[c]) * a[c] + b[c];
  }
}

constexpr NormRowKernels kRowKernels = {Moments, AffineRow, AffinePlane, ChannelMoments, ChannelAffine};

}  // namespace
}  // namespace norm_internal
}  // namespace tessel

#endif  // TESSEL_KERNELS_NORM_INTERNAL_NORM_ROWS_IMPL_H_
