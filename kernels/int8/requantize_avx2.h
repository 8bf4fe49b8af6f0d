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

// RequantizeF32 on 8 lanes without the clamp, for accumulators whose scaled values stay within +-2^29
// (ScaledAccumulatorsFitInt32): vcvtps2dq is exact there, and the saturating i32 -> i16 -> u8 packs that
// follow clamp as the bound would (every value past +-2^22 lands on the same end of [0, 255]).
inline __m256i RoundScaledUnclamped(__m256i x, __m256 scale) {
  return _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_cvtepi32_ps(x), scale));
}

// Two rows' 16 requantized channels each (lo: channels 0..7, hi: 8..15) as bytes: the zero point added
// in saturating 16 bits, the u8 clamp [lo8, hi8]. Row a's bytes in the low 128 bits, row b's in the high.
// Exact for values from RoundScaledUnclamped: a value past the 16-bit range saturates to the end of [0,
// 255] it belongs to, with or without the zero point (0..255).
inline __m256i PackRowsU8(__m256i a_lo, __m256i a_hi, __m256i b_lo, __m256i b_hi, __m256i zp16, __m256i lo8,
                          __m256i hi8) {
  const __m256i a = _mm256_adds_epi16(_mm256_packs_epi32(a_lo, a_hi), zp16);
  const __m256i b = _mm256_adds_epi16(_mm256_packs_epi32(b_lo, b_hi), zp16);
  // The packs leave [a 0..3, a 8..11, b 0..3, b 8..11 | a 4..7, a 12..15, b 4..7, b 12..15] as dwords.
  const __m256i bytes =
      _mm256_permutevar8x32_epi32(_mm256_packus_epi16(a, b), _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
  return _mm256_min_epu8(_mm256_max_epu8(bytes, lo8), hi8);
}

}  // namespace requantize_avx2
}  // namespace tessel

#endif  // TESSEL_KERNELS_INT8_REQUANTIZE_AVX2_H_
