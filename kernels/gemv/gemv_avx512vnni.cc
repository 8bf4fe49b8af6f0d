// AVX-512 VNNI weight-only GEMV against int8-quantized x (gemv.h, GemvQ8Input): vpdpbusd multiplies
// unsigned weight bytes (Q4_0 nibbles, or Q8_0 bytes biased by 128) with the int8 x, the bias lanes
// of GemvQ8Input undo the offset, and one FMA per 16 lanes applies the weight and x block scales.
// Blocks are pulled out of the 18- or 34-byte ggml layout with one vpermt2w (every block field is
// word aligned), the fp16 scales with one vpermw + vcvtph2ps: no scalar work per block. Sixteen rows run
// together: each x vector is loaded once for sixteen weight streams, and the streams keep the core's
// memory requests in flight.
#include <immintrin.h>

#include "kernels/gemv/internal/gemv_kernels.h"

namespace tessel {
namespace {

// Two software prefetches per row and step. Near: kPrefetchBytes ahead in the same row, into L1.
// Far: the same position one row group (R rows) further on, into L2 — the R rows of a group are
// contiguous, so this streams the next group in while the current one is consumed, and a group
// starts warm even when rows are short (decode's 2048-column rows are 1152 bytes: a near prefetch
// alone restarts cold at every group). On Zen 5, TinyLlama's decode matrices (benchmarks/kernels
// gemv_tinyllama): near only (768 bytes) 10.2 GB/s, near + far 19-20 GB/s.
constexpr int kPrefetchBytes = 384;
constexpr int kRows = 16;

inline void PrefetchNearFar(const uint8_t* p, int64_t group_bytes) {
  _mm_prefetch(reinterpret_cast<const char*>(p) + group_bytes, _MM_HINT_T1);
  _mm_prefetch(reinterpret_cast<const char*>(p) + kPrefetchBytes, _MM_HINT_T0);
}

// Q4_0, 4 blocks (72 bytes, words 0..35) per step: words 9i+1..9i+8 hold block i's nibbles, word 9i
// its scale.
alignas(64) constexpr uint16_t kQ4QsIndex[32] = {1,  2,  3,  4,  5,  6,  7,  8,  10, 11, 12, 13, 14, 15, 16, 17,
                                                 19, 20, 21, 22, 23, 24, 25, 26, 28, 29, 30, 31, 32, 33, 34, 35};
alignas(64) constexpr uint16_t kQ4DIndex[32] = {0, 0, 0, 0, 9, 9, 9, 9, 18, 18, 18, 18, 27, 27, 27, 27};

struct Q4Consts {
  __m512i qs_index = _mm512_load_si512(kQ4QsIndex);
  __m512i d_index = _mm512_load_si512(kQ4DIndex);
  __m512i low4 = _mm512_set1_epi8(0x0f);
};

inline __m512 Q4Step(const Q4Consts& c, __m512i z0, __m512i z1, __m512i xlo, __m512i xhi, __m512i bias, __m512 xs,
                     __m512 acc) {
  const __m512i qs = _mm512_permutex2var_epi16(z0, c.qs_index, z1);
  const __m512i lo = _mm512_and_si512(qs, c.low4);
  const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(qs, 4), c.low4);
  const __m512i dot = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(bias, lo, xlo), hi, xhi);
  const __m512 d = _mm512_cvtph_ps(_mm512_castsi512_si256(_mm512_permutexvar_epi16(c.d_index, z0)));
  return _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(d, xs), acc);
}

template <int R>
void Q4Rows(const GemvArgs& a, const uint8_t* w, int64_t row_bytes, int64_t nb, float* y) {
  const Q4Consts c;
  __m512 acc[R];
  for (int i = 0; i < R; ++i) acc[i] = _mm512_setzero_ps();
  const int64_t steps = nb / 4;
  for (int64_t s = 0; s < steps; ++s) {
    const __m512i xlo = _mm512_loadu_si512(a.xq + s * 128);
    const __m512i xhi = _mm512_loadu_si512(a.xq + s * 128 + 64);
    const __m512i bias = _mm512_loadu_si512(a.xbias + s * 16);
    const __m512 xs = _mm512_loadu_ps(a.xscale + s * 16);
    for (int i = 0; i < R; ++i) {
      const uint8_t* p = w + i * row_bytes + s * 72;
      PrefetchNearFar(p, R * row_bytes);
      // The second load only needs words 32..35; the mask keeps it inside the matrix.
      acc[i] = Q4Step(c, _mm512_loadu_si512(p), _mm512_maskz_loadu_epi16(0xf, p + 64), xlo, xhi, bias, xs, acc[i]);
    }
  }
  if (const int64_t tail = nb % 4) {
    // 1..3 blocks: words past them read as zero (zero nibbles, zero scales); x is zero-padded.
    const __mmask32 m = (1u << (9 * tail)) - 1;
    const __m512i xlo = _mm512_loadu_si512(a.xq + steps * 128);
    const __m512i xhi = _mm512_loadu_si512(a.xq + steps * 128 + 64);
    const __m512i bias = _mm512_loadu_si512(a.xbias + steps * 16);
    const __m512 xs = _mm512_loadu_ps(a.xscale + steps * 16);
    for (int i = 0; i < R; ++i) {
      const uint8_t* p = w + i * row_bytes + steps * 72;
      acc[i] = Q4Step(c, _mm512_maskz_loadu_epi16(m, p), _mm512_setzero_si512(), xlo, xhi, bias, xs, acc[i]);
    }
  }
  for (int i = 0; i < R; ++i) y[i] = _mm512_reduce_add_ps(acc[i]);
}

// Q8_0, 2 blocks (68 bytes, words 0..33) per step: words 1..16 and 18..33 hold the bytes, 0 and 17
// the scales.
alignas(64) constexpr uint16_t kQ8QsIndex[32] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16,
                                                 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33};
alignas(64) constexpr uint16_t kQ8DIndex[32] = {0, 0, 0, 0, 0, 0, 0, 0, 17, 17, 17, 17, 17, 17, 17, 17};

struct Q8Consts {
  __m512i qs_index = _mm512_load_si512(kQ8QsIndex);
  __m512i d_index = _mm512_load_si512(kQ8DIndex);
  __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
};

inline __m512 Q8Step(const Q8Consts& c, __m512i z0, __m512i z1, __m512i x, __m512i bias, __m512 xs, __m512 acc) {
  const __m512i u = _mm512_xor_si512(_mm512_permutex2var_epi16(z0, c.qs_index, z1), c.flip);
  const __m512i dot = _mm512_dpbusd_epi32(bias, u, x);
  const __m512 d = _mm512_cvtph_ps(_mm512_castsi512_si256(_mm512_permutexvar_epi16(c.d_index, z0)));
  return _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(d, xs), acc);
}

template <int R>
void Q8Rows(const GemvArgs& a, const uint8_t* w, int64_t row_bytes, int64_t nb, float* y) {
  const Q8Consts c;
  __m512 acc[R];
  for (int i = 0; i < R; ++i) acc[i] = _mm512_setzero_ps();
  const int64_t steps = nb / 2;
  for (int64_t s = 0; s < steps; ++s) {
    const __m512i x = _mm512_loadu_si512(a.xq + s * 64);
    const __m512i bias = _mm512_loadu_si512(a.xbias + s * 16);
    const __m512 xs = _mm512_loadu_ps(a.xscale + s * 16);
    for (int i = 0; i < R; ++i) {
      const uint8_t* p = w + i * row_bytes + s * 68;
      PrefetchNearFar(p, R * row_bytes);
      acc[i] = Q8Step(c, _mm512_loadu_si512(p), _mm512_maskz_loadu_epi16(0x3, p + 64), x, bias, xs, acc[i]);
    }
  }
  if (nb % 2) {
    // One block: words 17.. read as zero. Its x half is zero-padded, bias included.
    const __m512i x = _mm512_loadu_si512(a.xq + steps * 64);
    const __m512i bias = _mm512_loadu_si512(a.xbias + steps * 16);
    const __m512 xs = _mm512_loadu_ps(a.xscale + steps * 16);
    for (int i = 0; i < R; ++i) {
      const uint8_t* p = w + i * row_bytes + steps * 68;
      acc[i] = Q8Step(c, _mm512_maskz_loadu_epi16(0x1ffff, p), _mm512_setzero_si512(), x, bias, xs, acc[i]);
    }
  }
  for (int i = 0; i < R; ++i) y[i] = _mm512_reduce_add_ps(acc[i]);
}

using RowsFn = void (*)(const GemvArgs&, const uint8_t*, int64_t, int64_t, float*);

template <RowsFn Many, RowsFn Four, RowsFn One>
void RunRows(const GemvArgs& a, int64_t block_bytes, int64_t row_begin, int64_t row_end) {
  const int64_t nb = a.cols / kQuantBlock;
  const int64_t row_bytes = nb * block_bytes;
  const auto* w = static_cast<const uint8_t*>(a.w);
  int64_t r = row_begin;
  for (; r + kRows <= row_end; r += kRows) Many(a, w + r * row_bytes, row_bytes, nb, a.y + r);
  for (; r + 4 <= row_end; r += 4) Four(a, w + r * row_bytes, row_bytes, nb, a.y + r);
  for (; r < row_end; ++r) One(a, w + r * row_bytes, row_bytes, nb, a.y + r);
}

// Quantizes one 32-element block (or zeros past cols) to 2 x 16 int8 at lo / hi; returns dx.
inline float QuantizeBlock(const float* x, bool present, int8_t* lo, int8_t* hi) {
  if (!present) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(lo), _mm_setzero_si128());
    _mm_storeu_si128(reinterpret_cast<__m128i*>(hi), _mm_setzero_si128());
    return 0;
  }
  const __m512 v0 = _mm512_loadu_ps(x), v1 = _mm512_loadu_ps(x + 16);
  const float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(v0), _mm512_abs_ps(v1)));
  const __m512 id = _mm512_set1_ps(amax > 0 ? 127 / amax : 0.0f);
  // vcvtps2dq rounds to nearest even (the default MXCSR mode), as std::nearbyint does.
  _mm_storeu_si128(reinterpret_cast<__m128i*>(lo), _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(_mm512_mul_ps(v0, id))));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(hi), _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(_mm512_mul_ps(v1, id))));
  return amax / 127;
}

}  // namespace

void tessel_quantize_gemv_input__avx512vnni(GemvFormat format, const float* x, int64_t cols, const GemvQ8Input& out) {
  const bool q4 = format == GemvFormat::kQ4_0;
  const int blocks_per_group = q4 ? 4 : 2;
  const int64_t groups = GemvQ8PaddedCols(format, cols) / (kQuantBlock * blocks_per_group);
  const __m512i ones = _mm512_set1_epi8(1);
  for (int64_t g = 0; g < groups; ++g) {
    int8_t* q = out.q + g * 64 * (q4 ? 2 : 1);
    float* scale = out.scale + g * 16;
    for (int i = 0; i < blocks_per_group; ++i) {
      const int64_t b = g * blocks_per_group + i;
      int8_t* lo = q4 ? q + 16 * i : q + 32 * i;
      const float d = QuantizeBlock(x + b * kQuantBlock, b * kQuantBlock < cols, lo, q4 ? lo + 64 : lo + 16);
      const int lanes = 16 / blocks_per_group;
      for (int l = 0; l < lanes; ++l) scale[i * lanes + l] = d;
    }
    // Lane sums of q by vpdpbusd against ones: the same lanes the GEMV kernels accumulate.
    __m512i sum = _mm512_dpbusd_epi32(_mm512_setzero_si512(), ones, _mm512_loadu_si512(q));
    if (q4) sum = _mm512_dpbusd_epi32(sum, ones, _mm512_loadu_si512(q + 64));
    const __m512i bias = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_slli_epi32(sum, q4 ? 3 : 7));
    _mm512_storeu_si512(out.bias + g * 16, bias);
  }
}

void tessel_q4_0_q8_gemv__avx512vnni(const GemvArgs& a, int64_t row_begin, int64_t row_end) {
  RunRows<Q4Rows<kRows>, Q4Rows<4>, Q4Rows<1>>(a, sizeof(BlockQ4_0), row_begin, row_end);
}

void tessel_q8_0_q8_gemv__avx512vnni(const GemvArgs& a, int64_t row_begin, int64_t row_end) {
  RunRows<Q8Rows<kRows>, Q8Rows<4>, Q8Rows<1>>(a, sizeof(BlockQ8_0), row_begin, row_end);
}

}  // namespace tessel
