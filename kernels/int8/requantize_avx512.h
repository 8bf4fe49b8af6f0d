// requantize.h's fixed-point output stage in AVX-512 form (16 i32 lanes), shared by the int8 kernels
// built with AVX-512 (include only from translation units compiled with -mavx512f -mavx512bw).
#ifndef TESSEL_KERNELS_INT8_REQUANTIZE_AVX512_H_
#define TESSEL_KERNELS_INT8_REQUANTIZE_AVX512_H_

#include <immintrin.h>

namespace tessel {
namespace requantize_avx512 {

// SaturatingRoundingDoublingHighMul for multipliers in [0, 2^31) (never the saturating case). With the
// nudge (ab >= 0 ? 2^30 : 1 - 2^30) and a division truncating toward zero, the result always equals
// floor((ab + 2^30) / 2^31): for ab < 0, trunc((ab + 1 - 2^30) / 2^31) = (ab + 1 - 2^30 + 2^31 - 1) >> 31.
// `b_odd` holds the odd lanes' multipliers in the even positions.
inline __m512i RoundingDoublingHighMul(__m512i a, __m512i b_even, __m512i b_odd) {
  const __m512i nudge = _mm512_set1_epi64(1LL << 30);
  const __m512i even = _mm512_add_epi64(_mm512_mul_epi32(a, b_even), nudge);
  const __m512i odd = _mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(a, 32), b_odd), nudge);
  // Low 32 bits of even >> 31 (the quotient fits in 32 bits), and odd >> 31 moved into the high half.
  return _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(even, 31), _mm512_slli_epi64(odd, 1));
}

// RoundingDivideByPOT with a per-lane exponent in [0, 31]; mask = 2^e - 1, half_mask = mask >> 1.
inline __m512i RoundingDivideByPOT(__m512i x, __m512i exponent, __m512i mask, __m512i half_mask) {
  const __m512i one = _mm512_set1_epi32(1);
  const __m512i remainder = _mm512_and_si512(x, mask);
  const __mmask16 neg = _mm512_movepi32_mask(x);
  const __m512i threshold = _mm512_mask_add_epi32(half_mask, neg, half_mask, one);
  const __m512i q = _mm512_srav_epi32(x, exponent);
  return _mm512_mask_add_epi32(q, _mm512_cmpgt_epi32_mask(remainder, threshold), q, one);
}

}  // namespace requantize_avx512
}  // namespace tessel

#endif  // TESSEL_KERNELS_INT8_REQUANTIZE_AVX512_H_
