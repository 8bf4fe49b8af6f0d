// AVX2+FMA weight-only GEMV: the AVX-512 scheme at 8 lanes (nibbles split with pand/psrlw, widened
// with vpmovzxbd), f32 FMA with x, one block scale per block.
#include <immintrin.h>

#include "kernels/gemv/internal/gemv_kernels.h"

namespace tessel {
namespace {

inline __m256 Widen8(__m128i bytes8, __m256i zero) {
  return _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_cvtepu8_epi32(bytes8), zero));
}

// sum_j (nibble_j - zero) * x_j for 16 bytes of nibbles: low nibbles against x_lo, high against x_hi.
inline __m256 Nibbles16Dot(const uint8_t* q, const float* x_lo, const float* x_hi, __m256i zero) {
  const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
  const __m128i mask = _mm_set1_epi8(0xf);
  const __m128i lo = _mm_and_si128(raw, mask);
  const __m128i hi = _mm_and_si128(_mm_srli_epi16(raw, 4), mask);
  __m256 t = _mm256_mul_ps(Widen8(lo, zero), _mm256_loadu_ps(x_lo));
  t = _mm256_fmadd_ps(Widen8(_mm_srli_si128(lo, 8), zero), _mm256_loadu_ps(x_lo + 8), t);
  t = _mm256_fmadd_ps(Widen8(hi, zero), _mm256_loadu_ps(x_hi), t);
  return _mm256_fmadd_ps(Widen8(_mm_srli_si128(hi, 8), zero), _mm256_loadu_ps(x_hi + 8), t);
}

inline __m256 Q8Block(const BlockQ8_0& blk, const float* x) {
  __m256 t = _mm256_setzero_ps();
  for (int i = 0; i < 4; ++i) {
    const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(blk.qs + 8 * i));
    t = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(b)), _mm256_loadu_ps(x + 8 * i), t);
  }
  return t;
}

inline float HorizontalSum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// How far ahead to prefetch weights (see gemv_avx512.cc).
constexpr int kPrefetchBytes = 1024;

}  // namespace

void tessel_q4_0_gemv__avx2(const GemvArgs& a, int64_t row_begin, int64_t row_end) {
  const int64_t nb = a.cols / kQuantBlock;
  const auto* blocks = static_cast<const BlockQ4_0*>(a.w);
  const __m256i eight = _mm256_set1_epi32(8);
  const float* f16 = Fp16ToF32Table();
  for (int64_t r = row_begin; r < row_end; ++r) {
    const BlockQ4_0* row = blocks + r * nb;
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    int64_t b = 0;
    for (; b + 2 <= nb; b += 2) {
      _mm_prefetch(reinterpret_cast<const char*>(row + b) + kPrefetchBytes, _MM_HINT_T0);
      const float* x = a.x + b * kQuantBlock;
      acc0 = _mm256_fmadd_ps(Nibbles16Dot(row[b].qs, x, x + 16, eight), _mm256_set1_ps(f16[row[b].d]), acc0);
      acc1 = _mm256_fmadd_ps(Nibbles16Dot(row[b + 1].qs, x + 32, x + 48, eight),
                             _mm256_set1_ps(f16[row[b + 1].d]), acc1);
    }
    if (b < nb) {
      const float* x = a.x + b * kQuantBlock;
      acc0 = _mm256_fmadd_ps(Nibbles16Dot(row[b].qs, x, x + 16, eight), _mm256_set1_ps(f16[row[b].d]), acc0);
    }
    a.y[r] = HorizontalSum(_mm256_add_ps(acc0, acc1));
  }
}

void tessel_q8_0_gemv__avx2(const GemvArgs& a, int64_t row_begin, int64_t row_end) {
  const int64_t nb = a.cols / kQuantBlock;
  const auto* blocks = static_cast<const BlockQ8_0*>(a.w);
  const float* f16 = Fp16ToF32Table();
  for (int64_t r = row_begin; r < row_end; ++r) {
    const BlockQ8_0* row = blocks + r * nb;
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    int64_t b = 0;
    for (; b + 2 <= nb; b += 2) {
      _mm_prefetch(reinterpret_cast<const char*>(row + b) + kPrefetchBytes, _MM_HINT_T0);
      acc0 = _mm256_fmadd_ps(Q8Block(row[b], a.x + b * kQuantBlock), _mm256_set1_ps(f16[row[b].d]), acc0);
      acc1 = _mm256_fmadd_ps(Q8Block(row[b + 1], a.x + (b + 1) * kQuantBlock), _mm256_set1_ps(f16[row[b + 1].d]),
                             acc1);
    }
    if (b < nb) acc0 = _mm256_fmadd_ps(Q8Block(row[b], a.x + b * kQuantBlock), _mm256_set1_ps(f16[row[b].d]), acc0);
    a.y[r] = HorizontalSum(_mm256_add_ps(acc0, acc1));
  }
}

void tessel_i4g_gemv__avx2(const GemvArgs& a, int64_t row_begin, int64_t row_end) {
  const int64_t g = a.group_size;
  const int64_t half = g / 2;
  const int64_t ng = a.cols / g;
  const auto* q = static_cast<const uint8_t*>(a.w);
  for (int64_t r = row_begin; r < row_end; ++r) {
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    for (int64_t gi = 0; gi < ng; ++gi) {
      const uint8_t* qg = q + r * (a.cols / 2) + gi * half;
      const float* x = a.x + gi * g;
      _mm_prefetch(reinterpret_cast<const char*>(qg) + kPrefetchBytes, _MM_HINT_T0);
      const __m256i zero = _mm256_set1_epi32(GroupZero(a, r * ng + gi));
      __m256 t0 = Nibbles16Dot(qg, x, x + half, zero);
      __m256 t1 = _mm256_setzero_ps();
      for (int64_t c = 16; c < half; c += 32) {
        t1 = _mm256_add_ps(t1, Nibbles16Dot(qg + c, x + c, x + half + c, zero));
        if (c + 16 < half) t0 = _mm256_add_ps(t0, Nibbles16Dot(qg + c + 16, x + c + 16, x + half + c + 16, zero));
      }
      const __m256 s = _mm256_set1_ps(GroupScale(a, r * ng + gi));
      acc0 = _mm256_fmadd_ps(t0, s, acc0);
      acc1 = _mm256_fmadd_ps(t1, s, acc1);
    }
    a.y[r] = HorizontalSum(_mm256_add_ps(acc0, acc1));
  }
}

}  // namespace tessel
