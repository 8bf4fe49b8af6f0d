// The depthwise pixel kernel of dw_rows.h as portable C++, included once by each per-ISA source file
// (dw_rows_autovec.cc, dw_rows_avx2.cc, dw_rows_avx512.cc), which compiles it with that ISA's flags
// (-O3 -fopenmp-simd -ffp-contract=fast): each tap is one unit-stride multiply-add over the channels
// into an accumulator row that stays in L1. Internal linkage: each file holds its own copy.
#ifndef TESSEL_KERNELS_CONV_INTERNAL_DW_ROWS_IMPL_H_
#define TESSEL_KERNELS_CONV_INTERNAL_DW_ROWS_IMPL_H_

#include <cstdint>

#include "kernels/conv/internal/dw_rows.h"

namespace tessel {
namespace dw_internal {
namespace {

void DwPixel(int64_t c, int64_t n_taps, const float* const* taps, const float* w, const float* __restrict__ bias,
             const float* r, float lo, float hi, float* __restrict__ acc, float* y) {
#pragma omp simd
  for (int64_t i = 0; i < c; ++i) acc[i] = bias[i];
  for (int64_t t = 0; t < n_taps; ++t) {
    const float* __restrict__ x = taps[t];
    if (x == nullptr) continue;
    const float* __restrict__ wt = w + t * c;
#pragma omp simd
    for (int64_t i = 0; i < c; ++i) acc[i] += x[i] * wt[i];
  }
  // r may alias y: each element's residual is read before that element is written.
  if (r != nullptr) {
#pragma omp simd
    for (int64_t i = 0; i < c; ++i) acc[i] += r[i];
  }
#pragma omp simd
  for (int64_t i = 0; i < c; ++i) {
    const float v = acc[i] < lo ? lo : acc[i];
    y[i] = v > hi ? hi : v;
  }
}

}  // namespace
}  // namespace dw_internal
}  // namespace tessel

#endif  // TESSEL_KERNELS_CONV_INTERNAL_DW_ROWS_IMPL_H_
