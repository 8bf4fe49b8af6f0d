// AVX-512 weight-only GEMV: bytes widened to 16 x i32 (vpmovzxbd / vpmovsxbd); 4-bit values become
// floats through a 16-entry vpermps table, 8-bit ones through vcvtdq2ps; FMA with x, one scale FMA per
// block or group. Q4_0 runs 8 rows at a time so that each x load serves 8 rows; Q8_0 and Int4Group run
// row by row with two accumulators.
#include <immintrin.h>

#include "kernels/gemv/internal/gemv_kernels.h"

namespace tessel {
namespace {

// sum_j lut[nibble_j] * x_j for 16 bytes of nibbles (low nibbles against x_lo, high against x_hi).
// vpermps reads only the low 4 bits of each index, so the widened bytes index the 16-entry table of
// dequantized values directly: no mask, no integer recentring, no int->float conversion.
inline __m512 Nibbles16Dot(const uint8_t* q, const float* x_lo, const float* x_hi, __m512 lut) {
  const __m512i v = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q)));
  const __m512 lo = _mm512_permutexvar_ps(v, lut);
  const __m512 hi = _mm512_permutexvar_ps(_mm512_srli_epi32(v, 4), lut);
  return _mm512_fmadd_ps(hi, _mm512_loadu_ps(x_hi), _mm512_mul_ps(lo, _mm512_loadu_ps(x_lo)));
}

// {0 - zero, 1 - zero, ..., 15 - zero} as floats.
inline __m512 CenteredLut(int zero) {
  return _mm512_cvtepi32_ps(_mm512_sub_epi32(
      _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), _mm512_set1_epi32(zero)));
}

// How far ahead of the current block to prefetch weights: enough DRAM requests in flight for one
// core's stream (the hardware prefetcher alone left this loop at half the streaming-read rate).
constexpr int kPrefetchBytes = 1024;

inline __m512 Q8Block(const BlockQ8_0& blk, const float* x) {
  const __m512 v0 = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk.qs))));
  const __m512 v1 =
      _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk.qs + 16))));
  return _mm512_fmadd_ps(v1, _mm512_loadu_ps(x + 16), _mm512_mul_ps(v0, _mm512_loadu_ps(x)));
}

}  // namespace

namespace {

// Q4_0 rows r .. r+kRows-1 at once: each x vector is loaded once and used for kRows rows (loads bound
// the single-row loop: two 64-byte x loads per 18-byte block; 8 rows measured 1.5x one row).
template <int kRows>
void Q4_0Rows(const BlockQ4_0* rows, int64_t nb, const float* xv, float* y, __m512 lut, const float* f16) {
  __m512 acc[kRows];
#pragma GCC unroll 8
  for (int i = 0; i < kRows; ++i) acc[i] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    if ((b & 3) == 0) {
#pragma GCC unroll 8
      for (int i = 0; i < kRows; ++i) {
        _mm_prefetch(reinterpret_cast<const char*>(rows + i * nb + b) + kPrefetchBytes, _MM_HINT_T0);
      }
    }
    const __m512 x0 = _mm512_loadu_ps(xv + b * kQuantBlock);
    const __m512 x1 = _mm512_loadu_ps(xv + b * kQuantBlock + 16);
#pragma GCC unroll 8
    for (int i = 0; i < kRows; ++i) {
      const BlockQ4_0& blk = rows[i * nb + b];
      const __m512i v = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk.qs)));
      const __m512 lo = _mm512_permutexvar_ps(v, lut);
      const __m512 hi = _mm512_permutexvar_ps(_mm512_srli_epi32(v, 4), lut);
      const __m512 t = _mm512_fmadd_ps(hi, x1, _mm512_mul_ps(lo, x0));
      acc[i] = _mm512_fmadd_ps(t, _mm512_set1_ps(f16[blk.d]), acc[i]);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < kRows; ++i) y[i] = _mm512_reduce_add_ps(acc[i]);
}

}  // namespace

void tessel_q4_0_gemv__avx512(const GemvArgs& a, int64_t row_begin, int64_t row_end) {
  const int64_t nb = a.cols / kQuantBlock;
  const auto* blocks = static_cast<const BlockQ4_0*>(a.w);
  const __m512 lut = CenteredLut(8);
  const float* f16 = Fp16ToF32Table();
  int64_t r = row_begin;
  for (; r + 8 <= row_end; r += 8) Q4_0Rows<8>(blocks + r * nb, nb, a.x, a.y + r, lut, f16);
  for (; r < row_end; ++r) Q4_0Rows<1>(blocks + r * nb, nb, a.x, a.y + r, lut, f16);
}

void tessel_q8_0_gemv__avx512(const GemvArgs& a, int64_t row_begin, int64_t row_end) {
  const int64_t nb = a.cols / kQuantBlock;
  const auto* blocks = static_cast<const BlockQ8_0*>(a.w);
  const float* f16 = Fp16ToF32Table();
  for (int64_t r = row_begin; r < row_end; ++r) {
    const BlockQ8_0* row = blocks + r * nb;
    __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
    int64_t b = 0;
    for (; b + 2 <= nb; b += 2) {
      _mm_prefetch(reinterpret_cast<const char*>(row + b) + kPrefetchBytes, _MM_HINT_T0);
      acc0 = _mm512_fmadd_ps(Q8Block(row[b], a.x + b * kQuantBlock), _mm512_set1_ps(f16[row[b].d]), acc0);
      acc1 = _mm512_fmadd_ps(Q8Block(row[b + 1], a.x + (b + 1) * kQuantBlock), _mm512_set1_ps(f16[row[b + 1].d]),
                             acc1);
    }
    if (b < nb) acc0 = _mm512_fmadd_ps(Q8Block(row[b], a.x + b * kQuantBlock), _mm512_set1_ps(f16[row[b].d]), acc0);
    a.y[r] = _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
  }
}

void tessel_i4g_gemv__avx512(const GemvArgs& a, int64_t row_begin, int64_t row_end) {
  const int64_t g = a.group_size;
  const int64_t half = g / 2;
  const int64_t ng = a.cols / g;
  const auto* q = static_cast<const uint8_t*>(a.w);
  for (int64_t r = row_begin; r < row_end; ++r) {
    __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
    for (int64_t gi = 0; gi < ng; ++gi) {
      const uint8_t* qg = q + r * (a.cols / 2) + gi * half;
      const float* x = a.x + gi * g;
      _mm_prefetch(reinterpret_cast<const char*>(qg) + kPrefetchBytes, _MM_HINT_T0);
      const __m512 lut = CenteredLut(GroupZero(a, r * ng + gi));
      // half is 16, 32 or 64 bytes: one, two or four 16-byte chunks, alternating accumulators.
      __m512 t0 = Nibbles16Dot(qg, x, x + half, lut);
      __m512 t1 = _mm512_setzero_ps();
      for (int64_t c = 16; c < half; c += 32) {
        t1 = _mm512_add_ps(t1, Nibbles16Dot(qg + c, x + c, x + half + c, lut));
        if (c + 16 < half) t0 = _mm512_add_ps(t0, Nibbles16Dot(qg + c + 16, x + c + 16, x + half + c + 16, lut));
      }
      const __m512 s = _mm512_set1_ps(GroupScale(a, r * ng + gi));
      acc0 = _mm512_fmadd_ps(t0, s, acc0);
      acc1 = _mm512_fmadd_ps(t1, s, acc1);
    }
    a.y[r] = _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
  }
}

}  // namespace tessel
