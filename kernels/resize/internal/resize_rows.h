// The row kernels of the channels-first Resize (resize_op_kernels.h): one output row of one plane from one
// or two input rows and precomputed column maps, compiled from portable C++ (resize_rows_impl.h) for the
// auto-vectorizer; they never allocate and never fail.
#ifndef TESSEL_KERNELS_RESIZE_INTERNAL_RESIZE_ROWS_H_
#define TESSEL_KERNELS_RESIZE_INTERNAL_RESIZE_ROWS_H_

#include <cstdint>

namespace tessel {
namespace resize_internal {

// Linear: y[j] = (r0[x0[j]] (1 - wx[j]) + r0[x1[j]] wx[j]) (1 - wy) + (r1[x0[j]] (1 - wx[j]) + r1[x1[j]] wx[j]) wy
// for j < n; r0 and r1 may be the same row.
using ResizeLinearRowFn = void (*)(int64_t n, const float* r0, const float* r1, float wy, const int32_t* x0,
                                   const int32_t* x1, const float* wx, float* y);
// Nearest: y[j] = row[xs[j]] for j < n.
using ResizeNearestRowFn = void (*)(int64_t n, const float* row, const int32_t* xs, float* y);

struct ResizeRowFns {
  ResizeLinearRowFn linear;
  ResizeNearestRowFn nearest;
};

// GCC's auto-vectorizer at the baseline ISA (SSE2, NEON).
ResizeRowFns ResizeRowsAutovec();

}  // namespace resize_internal
}  // namespace tessel

#endif  // TESSEL_KERNELS_RESIZE_INTERNAL_RESIZE_ROWS_H_
