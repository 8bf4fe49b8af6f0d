// requantize.h's f32 output stage in AVX-512 form (16 i32 lanes), shared by the int8 kernels built with
// AVX-512 (include only from translation units compiled with -mavx512f).
#ifndef TESSEL_KERNELS_INT8_REQUANTIZE_AVX512_H_
#define TESSEL_KERNELS_INT8_REQUANTIZE_AVX512_H_

#include <immintrin.h>

namespace tessel {
namespace requantize_avx512 {

// RequantizeF32 on 16 lanes with the clamp [lo, hi] before the rounding (see requantize_avx2.h).
inline __m512i RoundScaled(__m512i x, __m512 scale, __m512 lo, __m512 hi) {
  const __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(x), scale);
  return _mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(f, lo), hi));
}

}  // namespace requantize_avx512
}  // namespace tessel

#endif  // TESSEL_KERNELS_INT8_REQUANTIZE_AVX512_H_
