// The per-pixel kernel of the large-window depthwise convolution (dwconv_kxk.h): one output pixel of all
// channels of a channels-last depthwise layer from its taps' input pixels. One per ISA, all compiled from
// the same portable C++ (dw_rows_impl.h) with that ISA's flags; they never allocate and never fail.
#ifndef TESSEL_KERNELS_CONV_INTERNAL_DW_ROWS_H_
#define TESSEL_KERNELS_CONV_INTERNAL_DW_ROWS_H_

#include <cstdint>

namespace tessel {
namespace dw_internal {

// y[i] = clamp(bias[i] + sum_t taps[t][i] * w[t * c + i] + r[i], lo, hi) for i < c, over the taps t < n_taps
// whose pointer is not null (null: the tap reads padding). w is tap-major [n_taps][c]; acc holds c
// floats of scratch; r may be null or equal to y.
using DwPixelFn = void (*)(int64_t c, int64_t n_taps, const float* const* taps, const float* w, const float* bias,
                           const float* r, float lo, float hi, float* acc, float* y);

// GCC's auto-vectorizer at the baseline ISA (SSE2, NEON), and with AVX2 or AVX-512 enabled (those two
// exist only in x86-64 builds).
DwPixelFn DwPixelAutovec();
DwPixelFn DwPixelAvx2();
DwPixelFn DwPixelAvx512();

}  // namespace dw_internal
}  // namespace tessel

#endif  // TESSEL_KERNELS_CONV_INTERNAL_DW_ROWS_H_
