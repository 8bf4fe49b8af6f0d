// QuantizeLinear f32 -> 8 bits on AVX2 (quantize.h). Each step is the portable kernel's, as one IEEE
// operation per lane (no fused multiply-add), so the bytes are the same: the division, the clamp to
// [-1024, 1024], rounding half to even by adding and subtracting 1.5 * 2^23, the zero point, the clamp to
// [lo, hi], and NaN replaced by 0 at the end (through a mask taken before the clamps, since x86's min /
// max return their second operand for NaN).
#include <immintrin.h>

#include <cstring>

#include "kernels/int8/quantize.h"

namespace tessel {
namespace {

struct Consts {
  __m256 scale, zp, lo, hi;
};

inline __m256i Eight(const float* x, const Consts& k) {
  const __m256 round = _mm256_set1_ps(12582912.0f);  // 1.5 * 2^23
  __m256 v = _mm256_div_ps(_mm256_loadu_ps(x), k.scale);
  const __m256 number = _mm256_cmp_ps(v, v, _CMP_ORD_Q);
  v = _mm256_min_ps(_mm256_max_ps(v, _mm256_set1_ps(-1024.0f)), _mm256_set1_ps(1024.0f));
  __m256 q = _mm256_add_ps(_mm256_sub_ps(_mm256_add_ps(v, round), round), k.zp);
  q = _mm256_min_ps(_mm256_max_ps(q, k.lo), k.hi);
  return _mm256_and_si256(_mm256_cvtps_epi32(q), _mm256_castps_si256(number));
}

// 32 values to 32 bytes: the low byte of each (the values lie in [lo, hi], within 8 bits). The packs work
// within 128-bit lanes, leaving dwords [v0 0..3, v1 0..3, v2 0..3, v3 0..3 | the same of 4..7].
inline __m256i ThirtyTwo(const float* x, const Consts& k) {
  const __m256i low = _mm256_set1_epi16(0xFF);
  const __m256i a = _mm256_and_si256(_mm256_packs_epi32(Eight(x, k), Eight(x + 8, k)), low);
  const __m256i b = _mm256_and_si256(_mm256_packs_epi32(Eight(x + 16, k), Eight(x + 24, k)), low);
  return _mm256_permutevar8x32_epi32(_mm256_packus_epi16(a, b), _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

}  // namespace

void QuantizeF32__avx2(const float* x, int64_t n, float scale, float zp, float lo, float hi, uint8_t* y) {
  const Consts k{_mm256_set1_ps(scale), _mm256_set1_ps(zp), _mm256_set1_ps(lo), _mm256_set1_ps(hi)};
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), ThirtyTwo(x + i, k));
  if (i < n) {
    // The tail through a zero-padded copy.
    float in[32] = {};
    alignas(32) uint8_t out[32];
    std::memcpy(in, x + i, (n - i) * sizeof(float));
    _mm256_store_si256(reinterpret_cast<__m256i*>(out), ThirtyTwo(in, k));
    std::memcpy(y + i, out, n - i);
  }
}

}  // namespace tessel
