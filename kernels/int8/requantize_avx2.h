// requantize.h's fixed-point output stage in AVX2 form (8 i32 lanes, no mask registers), shared by the
// int8 kernels built with AVX2 or AVX-VNNI (include only from translation units compiled with -mavx2).
#ifndef TESSEL_KERNELS_INT8_REQUANTIZE_AVX2_H_
#define TESSEL_KERNELS_INT8_REQUANTIZE_AVX2_H_

#include <immintrin.h>

namespace tessel {
namespace requantize_avx2 {

// SaturatingRoundingDoublingHighMul for multipliers in [0, 2^31) (never the saturating case): always
// floor((ab + 2^30) / 2^31) (see requantize_avx512.h). `b_odd` holds the odd lanes' multipliers in the
// even positions.
inline __m256i RoundingDoublingHighMul(__m256i a, __m256i b_even, __m256i b_odd) {
  const __m256i nudge = _mm256_set1_epi64x(1LL << 30);
  const __m256i even = _mm256_add_epi64(_mm256_mul_epi32(a, b_even), nudge);
  const __m256i odd = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(a, 32), b_odd), nudge);
  // Low 32 bits of even >> 31 (the quotient fits in 32 bits), and odd >> 31 moved into the high half.
  return _mm256_blend_epi32(_mm256_srli_epi64(even, 31), _mm256_slli_epi64(odd, 1), 0xAA);
}

// RoundingDivideByPOT with a per-lane exponent in [0, 31]; mask = 2^e - 1, half_mask = mask >> 1.
inline __m256i RoundingDivideByPOT(__m256i x, __m256i exponent, __m256i mask, __m256i half_mask) {
  const __m256i remainder = _mm256_and_si256(x, mask);
  // half_mask + 1 for negative x (x >> 31 is -1 there).
  const __m256i threshold = _mm256_sub_epi32(half_mask, _mm256_srai_epi32(x, 31));
  const __m256i q = _mm256_srav_epi32(x, exponent);
  // cmpgt gives -1 where the remainder is past the threshold: subtracting it rounds up.
  return _mm256_sub_epi32(q, _mm256_cmpgt_epi32(remainder, threshold));
}

}  // namespace requantize_avx2
}  // namespace tessel

#endif  // TESSEL_KERNELS_INT8_REQUANTIZE_AVX2_H_
