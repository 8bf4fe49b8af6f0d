// f32 -> u8 / s8 QuantizeLinear kernels beside the portable one (int8_op_kernels.cc), equal to it element
// for element: y = clamp(round_half_even(clamp(x / scale, -1024, 1024)) + zp, lo, hi), NaN -> 0.
#ifndef TESSEL_KERNELS_INT8_QUANTIZE_H_
#define TESSEL_KERNELS_INT8_QUANTIZE_H_

#include <cstdint>

namespace tessel {

// aarch64 NEON (baseline Armv8-A), 16 elements a step: x times the scale's reciprocal where that rounds
// as the scalar division would, FDIV where it might not (quantize_neon.cc), then the portable kernel's
// steps lane by lane. `y` holds n bytes (u8 or s8 by lo / hi).
void QuantizeF32__neon(const float* x, int64_t n, float scale, float zp, float lo, float hi, uint8_t* y);

// x86-64 AVX2, 32 elements a step (vdivps), the same steps and results.
void QuantizeF32__avx2(const float* x, int64_t n, float scale, float zp, float lo, float hi, uint8_t* y);

}  // namespace tessel

#endif  // TESSEL_KERNELS_INT8_QUANTIZE_H_
