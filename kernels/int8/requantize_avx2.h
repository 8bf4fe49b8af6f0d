// requantize.h's f32 output stage in AVX2 form (8 i32 lanes), shared by the int8 kernels built with AVX2
// or AVX-VNNI (include only from translation units compiled with -mavx2).
#ifndef TESSEL_KERNELS_INT8_REQUANTIZE_AVX2_H_
#define TESSEL_KERNELS_INT8_REQUANTIZE_AVX2_H_

#include <immintrin.h>

namespace tessel {
namespace requantize_avx2 {

// RequantizeF32 on 8 lanes with the clamp [lo, hi] before the rounding: +-kRequantizeBound, or, where
// nothing is added after, [act_min - zero point, act_max - zero point] (integers, so clamping before the
// rounding equals clamping after). vcvtdq2ps, vmulps and vcvtps2dq round to nearest even (MXCSR's
// default), as the scalar steps do.
inline __m256i RoundScaled(__m256i x, __m256 scale, __m256 lo, __m256 hi) {
  const __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(x), scale);
  return _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(f, lo), hi));
}

}  // namespace requantize_avx2
}  // namespace tessel

#endif  // TESSEL_KERNELS_INT8_REQUANTIZE_AVX2_H_
