// The Resize row kernels of resize_rows.h as portable C++, included by resize_rows_autovec.cc (a per-ISA
// build adds one file beside it) and compiled with -O3 -fopenmp-simd -ffp-contract=fast. The column maps
// are 32-bit so that AVX2 and AVX-512 can gather. kernels/portable/check_vectorized.py -I . --flags
// "-x c++ -std=c++17 -O3 -fopenmp-simd -fno-trapping-math -ffp-contract=fast -fkeep-static-functions" on
// this file: both hot loops vectorize for x86 (AVX2), avx512, neon and sve, and with -march=x86-64 (SSE2).
#ifndef TESSEL_KERNELS_RESIZE_INTERNAL_RESIZE_ROWS_IMPL_H_
#define TESSEL_KERNELS_RESIZE_INTERNAL_RESIZE_ROWS_IMPL_H_

#include <cstdint>

#include "kernels/resize/internal/resize_rows.h"

namespace tessel {
namespace resize_internal {
namespace {

void LinearRow(int64_t n, const float* __restrict__ r0, const float* __restrict__ r1, float wy,
               const int32_t* __restrict__ x0, const int32_t* __restrict__ x1, const float* __restrict__ wx,
               float* __restrict__ y) {
  const float vy = 1.0f - wy;
  // tessel:hot
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) {
    const float w = wx[j], v = 1.0f - w;
    const float top = r0[x0[j]] * v + r0[x1[j]] * w;
    const float bottom = r1[x0[j]] * v + r1[x1[j]] * w;
    y[j] = top * vy + bottom * wy;
  }
}

void NearestRow(int64_t n, const float* __restrict__ row, const int32_t* __restrict__ xs, float* __restrict__ y) {
  // tessel:hot
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) y[j] = row[xs[j]];
}

ResizeRowFns Rows() { return ResizeRowFns{LinearRow, NearestRow}; }

}  // namespace
}  // namespace resize_internal
}  // namespace tessel

#endif  // TESSEL_KERNELS_RESIZE_INTERNAL_RESIZE_ROWS_IMPL_H_
