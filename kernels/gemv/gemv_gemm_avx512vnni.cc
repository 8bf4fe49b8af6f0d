// AVX-512 VNNI Q4_0 / Q8_0 GEMM against several int8-quantized tokens (gemv.h, GemmQ8Args): the
// multi-token twin of gemv_avx512vnni.cc for prefill.
//
// Rows run in panels of 16, one row per int32 lane. A panel's weights are repacked once per call into
// a per-thread buffer (row loads and in-register transposes): per 32-block, 8 vectors whose lane r
// holds 4 consecutive weights of row r as unsigned bytes (Q4_0 nibbles, or Q8_0 bytes biased by 128),
// and one vector of the 16 rows' scales.
// Every token tile then meets each block with one vpdpbusd per 4 elements: the weights in registers,
// the token's 4 x bytes broadcast from memory (embedded {1to16}), the block's bias (GemmQ8Args
// block_bias, undoing the offset) as the start value. One convert and one FMA per block and token
// apply both scales to 16 rows at once, and the accumulators are already y's layout: no horizontal
// sums. The repack is spread over all tokens.
#include <immintrin.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <type_traits>

#include "kernels/cpu/cpu_features.h"
#include "kernels/gemv/internal/decode_streams.h"
#include "kernels/gemv/internal/gemv_kernels.h"

namespace tessel {
namespace {

constexpr int kPanel = kPanel16Rows;

// A 64-byte vector read as two 32-byte loads. Zen 4 streams DRAM faster under 32-byte loads than under
// 64-byte ones: one core walking the same 17-line Panel16 pairs in address order, 16- or 32-byte loads
// 27-28 GB/s, 64-byte loads 20 GB/s. The Q8_0 decode kernel reads its weights this way (TinyLlama Q8_0,
// gemv_benchmark, 1 thread, 4 interleaved runs: 22.9-26.4 -> 25.8-29.1 GB/s); Q4_0's, with twice the
// work per byte, measured no better (25.6-29.1 vs 24.9-30.4) and keeps 64-byte loads.
inline __m512i LoadAsHalves(const uint8_t* p) {
  const __m256i lo = _mm256_load_si256(reinterpret_cast<const __m256i*>(p));
  const __m256i hi = _mm256_load_si256(reinterpret_cast<const __m256i*>(p + 32));
  return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}

// 16 fp16 values at p (32-byte aligned) as floats.
inline __m512 LoadHalves16(const uint8_t* p) {
  return _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(p)));
}

// Tokens per tile: 12 float accumulators + 8 weight vectors + the scales fit the 32 registers; on
// Zen 5, 12 ran ~5% faster than 8 or 16.
constexpr int kTileTokens = 12;
constexpr int kVecsPerBlock = 9;  // 8 weight vectors, 1 scale vector
// Up to this many tokens, a Panel16 call reads the packed weights directly (Panel16FewTokens).
constexpr int kFewTokens = 8;

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

// The calling thread's panel buffer, grown to the largest panel seen.
__m512i* PanelBuffer(int64_t vecs) {
  thread_local std::unique_ptr<void, FreeDeleter> buf;
  thread_local int64_t size = 0;
  if (vecs > size) {
    buf.reset(std::aligned_alloc(64, vecs * 64));
    size = vecs;
  }
  return static_cast<__m512i*>(buf.get());
}

// Lane r: r * row_bytes, the gather offsets of a panel's rows.
inline __m512i RowOffsets(int64_t row_bytes) {
  return _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                            _mm512_set1_epi32(static_cast<int>(row_bytes)));
}

// out[k] lane r = dword k of the 16 bytes at p + r * row_bytes, k < 4: one 16 x 4 dword transpose.
// Y_i holds rows i, 4 + i, 8 + i, 12 + i in its 128-bit lanes; a 4 x 4 transpose within each lane
// among Y_0..Y_3 leaves lane j of out[k] = dword k of rows 4j..4j+3.
inline void Transpose16x4(const uint8_t* p, int64_t row_bytes, __m512i out[4]) {
  __m512i y[4];
  for (int i = 0; i < 4; ++i) {
    const uint8_t* r = p + i * row_bytes;
    __m512i v = _mm512_castsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i*>(r)));
    v = _mm512_inserti32x4(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(r + 4 * row_bytes)), 1);
    v = _mm512_inserti32x4(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(r + 8 * row_bytes)), 2);
    y[i] = _mm512_inserti32x4(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(r + 12 * row_bytes)), 3);
  }
  const __m512i t0 = _mm512_unpacklo_epi32(y[0], y[1]), t1 = _mm512_unpackhi_epi32(y[0], y[1]);
  const __m512i t2 = _mm512_unpacklo_epi32(y[2], y[3]), t3 = _mm512_unpackhi_epi32(y[2], y[3]);
  out[0] = _mm512_unpacklo_epi64(t0, t2);
  out[1] = _mm512_unpackhi_epi64(t0, t2);
  out[2] = _mm512_unpacklo_epi64(t1, t3);
  out[3] = _mm512_unpackhi_epi64(t1, t3);
}

// Repacks a whole 16-row panel at w: row loads and in-register transposes, no gathers for the weights.
template <bool kQ4>
void PackFullPanel(const uint8_t* w, int64_t row_bytes, int64_t nb, __m512i* out) {
  const int64_t block_bytes = kQ4 ? 18 : 34;
  const __m512i row_offsets = RowOffsets(row_bytes);
  const __m512i low4 = _mm512_set1_epi8(0x0f);
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* blk = w + b * block_bytes;
    __m512i* o = out + b * kVecsPerBlock;
    __m512i v[4];
    Transpose16x4(blk + 2, row_bytes, v);
    if (kQ4) {
      for (int k = 0; k < 4; ++k) {
        o[k] = _mm512_and_si512(v[k], low4);
        o[4 + k] = _mm512_and_si512(_mm512_srli_epi16(v[k], 4), low4);
      }
    } else {
      for (int k = 0; k < 4; ++k) o[k] = _mm512_xor_si512(v[k], flip);
      Transpose16x4(blk + 18, row_bytes, v);
      for (int k = 0; k < 4; ++k) o[4 + k] = _mm512_xor_si512(v[k], flip);
    }
    // The fp16 scale is the low half of the block's first dword.
    const __m512i d = _mm512_i32gather_epi32(row_offsets, blk, 1);
    o[8] = _mm512_castps_si512(_mm512_cvtph_ps(_mm512_cvtepi32_epi16(d)));
  }
}

// Repacks rows [0, rows) (rows <= 16; missing rows read as zero) of the panel at w, by gathers.
template <bool kQ4>
void PackPanel(const uint8_t* w, int64_t row_bytes, int64_t nb, int rows, __m512i* out) {
  if (rows == kPanel) {
    PackFullPanel<kQ4>(w, row_bytes, nb, out);
    return;
  }
  const int64_t block_bytes = kQ4 ? 18 : 34;
  const __mmask16 m = static_cast<__mmask16>((1u << rows) - 1);
  const __m512i row_offsets = RowOffsets(row_bytes);
  const __m512i low4 = _mm512_set1_epi8(0x0f);
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* blk = w + b * block_bytes;
    __m512i* o = out + b * kVecsPerBlock;
    // Dwords past the block's scale: nibble bytes 4k..4k+3 (Q4_0) or int8 bytes 4k..4k+3 (Q8_0).
    if (kQ4) {
      for (int k = 0; k < 4; ++k) {
        const __m512i v = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), m, row_offsets, blk + 2 + 4 * k, 1);
        o[k] = _mm512_and_si512(v, low4);
        o[4 + k] = _mm512_and_si512(_mm512_srli_epi16(v, 4), low4);
      }
    } else {
      for (int k = 0; k < 8; ++k) {
        const __m512i v = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), m, row_offsets, blk + 2 + 4 * k, 1);
        o[k] = _mm512_xor_si512(v, flip);  // missing rows: 128 each, but their lanes are never stored
      }
    }
    // The fp16 scale is the low half of the block's first dword.
    const __m512i d = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), m, row_offsets, blk, 1);
    o[8] = _mm512_castps_si512(_mm512_cvtph_ps(_mm512_cvtepi32_epi16(d)));
  }
}

inline __m512i IQ4LevelTable();
inline void IQ4Codes(const uint8_t* block, __m512i table, __m512i* out);


// Within a Panel16 pair (gemv.h): block h's 16 fp16 scales, and its vector k of kK.
inline const uint8_t* PairScales(const uint8_t* pair, int h) { return pair + 32 * h; }
template <int kK>
inline const uint8_t* PairVector(const uint8_t* pair, int h, int k) {
  return pair + 64 + (h * kK + k) * 64;
}

// The kVecsPerBlock form of a Panel16 panel: one load (Q4_0: plus two masks) per vector, no shuffles;
// kNL (IQ4_NL) looks the codes up as IQ4Codes does.
template <bool kQ4, bool kNL = false>
void UnpackPanel16(const uint8_t* panel, int64_t nb, __m512i* out) {
  constexpr int kK = kQ4 ? 4 : 8;
  const __m512i low4 = _mm512_set1_epi8(0x0f);
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* pair = panel + (b / 2) * Panel16PairBytes(kQ4);
    const int h = static_cast<int>(b % 2);
    __m512i* o = out + b * kVecsPerBlock;
    if constexpr (kNL) {
      IQ4Codes(PairVector<kK>(pair, h, 0), IQ4LevelTable(), o);
      o[8] = _mm512_castps_si512(LoadHalves16(PairScales(pair, h)));
      continue;
    }
    for (int k = 0; k < kK; ++k) {
      const __m512i v = _mm512_load_si512(PairVector<kK>(pair, h, k));
      if (kQ4) {
        o[k] = _mm512_and_si512(v, low4);
        o[4 + k] = _mm512_and_si512(_mm512_srli_epi16(v, 4), low4);
      } else {
        o[k] = v;
      }
    }
    o[8] = _mm512_castps_si512(
        LoadHalves16(PairScales(pair, h)));
  }
}

// acc += dpbusd(w, the dword at x broadcast to 16 lanes), the broadcast embedded in the instruction
// ({1to16}): GCC 12 otherwise emits a separate vpbroadcastd per product.
inline __m512i DpbusdBroadcast(__m512i acc, __m512i w, const int8_t* x) {
  __asm__("vpdpbusd %2%{1to16%}, %1, %0" : "+v"(acc) : "v"(w), "m"(*reinterpret_cast<const int32_t*>(x)));
  return acc;
}

// IQ4_NL / IQ4_XS: ggml's 16 levels + 128 as unsigned bytes in every 128-bit lane, the table vpshufb
// looks codes up in. A code's byte meets x as level + 128, against 16 x the block bias (-128 x sum x).
inline __m512i IQ4LevelTable() {
  const __m128i levels = _mm_loadu_si128(reinterpret_cast<const __m128i*>(kIQ4NLValues));
  return _mm512_xor_si512(_mm512_broadcast_i32x4(levels), _mm512_set1_epi8(static_cast<char>(0x80)));
}

// The unsigned level bytes of a block's 4 Q4_0-style nibble vectors (IQ4_NL, IQ4_XS): out[0..3] the low
// nibbles' (elements 4k + j), out[4..7] the high ones' (16 + 4k + j), as UnpackPanel16 lays out Q4_0.
inline void IQ4Codes(const uint8_t* block, __m512i table, __m512i* out) {
  const __m512i low4 = _mm512_set1_epi8(0x0f);
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) {
    const __m512i v = _mm512_load_si512(block + 64 * k);
    out[k] = _mm512_shuffle_epi8(table, _mm512_and_si512(v, low4));
    out[4 + k] = _mm512_shuffle_epi8(table, _mm512_and_si512(_mm512_srli_epi16(v, 4), low4));
  }
}

// The dots of a block's two 16-element halves with x, from lo / hi: codes c[0..3] (elements 0..15) and
// c[4..7] (16..31) laid out as UnpackPanel16 lays out Q4_0 (Q6Codes, IQ4Codes).
inline void HalfDots(const __m512i* c, const int8_t* xb, __m512i* lo, __m512i* hi) {
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) {
    *lo = DpbusdBroadcast(*lo, c[k], xb + 4 * k);
    *hi = DpbusdBroadcast(*hi, c[4 + k], xb + 64 + 4 * k);
  }
}

// y[t * ldy + r] for t < T and the panel's rows (mask), from the packed panel.
// `next`: the next panel's weights (16 rows from there on), or null. The repack of a panel waits on
// DRAM unless its rows are already on their way, so the first token tile fetches them block by block
// while it computes.
// kBiasShift: the block bias (-8 x the sum of the block's x) is doubled for group-wise INT4 with zero
// points, whose unpacked weights are code - zero + 16 (UnpackPanel16Group).
// For the Panel16 layouts, row_bytes is the stride of the next panel's weights per block.
// kMins (Q4_1 on the group layout): a tenth vector per block holds min + 8 x scale per row, which
// turns the block's sum((code - 8) x) into sum((code x scale + min) x): one more FMA per block and token.
// kHalves (Q6_K and Q3_K on their Panel16 layouts; the codes' zero point, 32 or 4, else 0): a scale per
// 16-element half, the ninth and tenth vectors; each half's dot starts from its own bias
// (GemmQ8Args::half_bias, -32 x the half's sum of x, scaled to the zero point) instead of the block bias.
// kHalfMins (Q2_K): kHalves with zero point 0 and a min per half, the eleventh and twelfth vectors
// (-dmin x min), times dx x the half's sum of x.
template <bool kQ4, int T, bool kPanel16 = false, int kBiasShift = 0, bool kMins = false, int kHalves = 0,
          bool kHalfMins = false>
void PanelTokens(const GemmQ8Args& a, const __m512i* panel, int64_t nb, int64_t t0, __mmask16 rows, float* y,
                 const uint8_t* next, int64_t row_bytes) {
  __m512 acc[T];
#pragma GCC unroll 16
  for (int t = 0; t < T; ++t) acc[t] = _mm512_setzero_ps();
  const int8_t* xq0 = a.xq + t0 * a.xq_stride;
  const int32_t* bias0 = a.block_bias + t0 * a.block_stride;
  const float* scale0 = a.block_scale + t0 * a.block_stride;
  for (int64_t b = 0; b < nb; ++b) {
    constexpr int kVecs = kHalfMins ? kVecsPerBlock + 3 : kMins || kHalves ? kVecsPerBlock + 1 : kVecsPerBlock;
    const __m512i* p = panel + b * kVecs;
    __m512i wv[8];
#pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) wv[k] = _mm512_load_si512(p + k);
    const __m512 d = _mm512_castsi512_ps(_mm512_load_si512(p + 8));
    const __m512 mn = kMins || kHalves ? _mm512_castsi512_ps(_mm512_load_si512(p + 9)) : _mm512_setzero_ps();
    const __m512 min_lo = kHalfMins ? _mm512_castsi512_ps(_mm512_load_si512(p + 10)) : _mm512_setzero_ps();
    const __m512 min_hi = kHalfMins ? _mm512_castsi512_ps(_mm512_load_si512(p + 11)) : _mm512_setzero_ps();
    if (next != nullptr) {
      if (kPanel16) {
        // The next panel is one linear stream: its share for block b (Q4_0 / Q8_0: a half-pair).
        const char* q = reinterpret_cast<const char*>(next) + b * row_bytes;
        for (int i = 0; i < (kQ4 ? 5 : 9); ++i) _mm_prefetch(q + 64 * i, _MM_HINT_T0);
      } else {
        const char* q = reinterpret_cast<const char*>(next + b * (kQ4 ? 18 : 34));
        for (int i = 0; i < kPanel; ++i) _mm_prefetch(q + i * row_bytes, _MM_HINT_T0);
      }
    }
    // Where x's bytes for weight vector k sit (gemv.h GemvQ8Input): Q4_0 keeps elements 0..15 and
    // 16..31 of block b 64 bytes apart within its 128-byte group.
    const int8_t* xb = kQ4 ? xq0 + (b / 4) * 128 + 16 * (b % 4) : xq0 + b * 32;
#pragma GCC unroll 16
    for (int t = 0; t < T; ++t) {
      const int8_t* x = xb + t * a.xq_stride;
      if constexpr (kHalves) {
        const int32_t* hb = a.half_bias + (t0 + t) * a.half_stride + 2 * b;
        __m512i lo = kHalfMins ? _mm512_setzero_si512() : _mm512_set1_epi32(hb[0] / (32 / kHalves));
        __m512i hi = kHalfMins ? _mm512_setzero_si512() : _mm512_set1_epi32(hb[1] / (32 / kHalves));
#pragma GCC unroll 4
        for (int k = 0; k < 4; ++k) {
          lo = DpbusdBroadcast(lo, wv[k], x + 4 * k);
          hi = DpbusdBroadcast(hi, wv[4 + k], x + 64 + 4 * k);
        }
        const __m512 xs = _mm512_set1_ps(scale0[t * a.block_stride + b]);
        acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(lo), _mm512_mul_ps(d, xs), acc[t]);
        acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(hi), _mm512_mul_ps(mn, xs), acc[t]);
        if constexpr (kHalfMins) {
          // half_bias = -32 x the half's sum of x_q exactly.
          const float dx = scale0[t * a.block_stride + b];
          acc[t] = _mm512_fmadd_ps(min_lo, _mm512_set1_ps(dx * static_cast<float>(-hb[0] / 32)), acc[t]);
          acc[t] = _mm512_fmadd_ps(min_hi, _mm512_set1_ps(dx * static_cast<float>(-hb[1] / 32)), acc[t]);
        }
        continue;
      }
      __m512i dot = _mm512_set1_epi32(bias0[t * a.block_stride + b] * (1 << kBiasShift));
#pragma GCC unroll 8
      for (int k = 0; k < 8; ++k) {
        dot = DpbusdBroadcast(dot, wv[k], x + (kQ4 ? (k < 4 ? 4 * k : 64 + 4 * (k - 4)) : 4 * k));
      }
      const __m512 s = _mm512_mul_ps(d, _mm512_set1_ps(scale0[t * a.block_stride + b]));
      acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), s, acc[t]);
      if (kMins) {
        // block_bias = -8 x sum(x_q) exactly.
        const float xs = scale0[t * a.block_stride + b] * static_cast<float>(-bias0[t * a.block_stride + b] / 8);
        acc[t] = _mm512_fmadd_ps(mn, _mm512_set1_ps(xs), acc[t]);
      }
    }
  }
#pragma GCC unroll 16
  for (int t = 0; t < T; ++t) _mm512_mask_storeu_ps(y + (t0 + t) * a.ldy, rows, acc[t]);
}

template <bool kQ4, bool kPanel16, int kBiasShift = 0, bool kMins = false, int kHalves = 0, bool kHalfMins = false,
          int T = kTileTokens - 1>
void TokenTail(const GemmQ8Args& a, int64_t tokens, const __m512i* panel, int64_t nb, int64_t t0, __mmask16 rows,
               float* y, const uint8_t* next, int64_t row_bytes) {
  if constexpr (T > 0) {
    if (tokens == T) {
      PanelTokens<kQ4, T, kPanel16, kBiasShift, kMins, kHalves, kHalfMins>(a, panel, nb, t0, rows, y, next,
                                                                           row_bytes);
    } else {
      TokenTail<kQ4, kPanel16, kBiasShift, kMins, kHalves, kHalfMins, T - 1>(a, tokens, panel, nb, t0, rows, y, next,
                                                                             row_bytes);
    }
  }
}

template <bool kQ4>
void Run(const GemmQ8Args& a, int64_t row_begin, int64_t row_end) {
  const int64_t nb = a.cols / kQuantBlock;
  const int64_t row_bytes = nb * (kQ4 ? int64_t{sizeof(BlockQ4_0)} : int64_t{sizeof(BlockQ8_0)});
  const auto* w = static_cast<const uint8_t*>(a.w);
  __m512i* panel = PanelBuffer(nb * kVecsPerBlock);
  for (int64_t r = row_begin; r < row_end; r += kPanel) {
    const int rows = static_cast<int>(std::min<int64_t>(kPanel, row_end - r));
    const __mmask16 mask = static_cast<__mmask16>((1u << rows) - 1);
    PackPanel<kQ4>(w + r * row_bytes, row_bytes, nb, rows, panel);
    // Only a whole next panel is prefetched: a partial one must not be read past the matrix.
    const uint8_t* next = r + 2 * kPanel <= row_end ? w + (r + kPanel) * row_bytes : nullptr;
    for (int64_t t = 0; t < a.n; t += kTileTokens) {
      if (t + kTileTokens <= a.n) {
        PanelTokens<kQ4, kTileTokens>(a, panel, nb, t, mask, a.y + r, next, row_bytes);
      } else {
        TokenTail<kQ4, false>(a, a.n - t, panel, nb, t, mask, a.y + r, next, row_bytes);
      }
      next = nullptr;
    }
  }
}

// One token on the Panel16 layout (decode): straight from the packed bytes, which stream in order.
// Per block and 16 rows: K loads, 2K vpdpbusd against x's dwords broadcast from memory, one convert
// and one FMA; the lanes are already y. Two dot chains per block (Q4_0: low / high nibbles, Q8_0: even /
// odd vectors) halve the vpdpbusd latency chain. Q4_0's high nibbles are used in place (v & 0xf0 =
// 16 x nibble: one AND, no shift per vector) and their chain is divided by 16 once per block (exact).


// kStreams panels run in lockstep, each from its own contiguous part of the row range: kStreams
// linear streams, as the read-bandwidth probe's best case (benchmarks/kernels/machine_limits.h). One
// core keeps more DRAM requests in flight on several streams than the hardware prefetcher does on
// one. Q4_0, with twice the work per byte of Q8_0, also prefetches each stream two pairs (1152 bytes)
// ahead. TinyLlama's decode matrices on Zen 5, 1 thread (gemv_benchmark, interleaved runs): Q4_0
// 1 stream 23-28 GB/s, 4 streams 26-31, 4 streams + prefetch 29-34; 8 streams spill registers and
// were slower than 4; Q8_0 4 streams 32-36 GB/s, slower with the prefetch. Zen 4 reads fastest with
// 2 streams and no prefetch: the stream count and the prefetch follow CpuFeatures (decode_streams,
// stream_prefetch).
// kNL: IQ4_NL on the Q4_0 layout, each nibble looked up (IQ4Codes) and met by 16 x the block bias.
template <bool kQ4, int kStreams, bool kPrefetch, bool kNL = false>
void Panel16GemvPanels(const GemmQ8Args& a, const uint8_t* const* panels, float* const* y, const int* rows) {
  constexpr int kK = kQ4 ? 4 : 8;
  constexpr int64_t kPair = Panel16PairBytes(kQ4);
  const int64_t nb = a.cols / kQuantBlock, pairs = (nb + 1) / 2;
  const __m512i low4 = _mm512_set1_epi8(0x0f);
  const __m512i high4 = _mm512_set1_epi8(static_cast<char>(0xf0));
  __m512 acc0[kStreams], acc1[kStreams];
#pragma GCC unroll 4
  for (int s = 0; s < kStreams; ++s) acc0[s] = acc1[s] = _mm512_setzero_ps();
  for (int64_t j = 0; j < pairs; ++j) {
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      const int64_t b = 2 * j + h;
      if (b >= nb) break;
      const int8_t* xb = kQ4 ? a.xq + (b / 4) * 128 + 16 * (b % 4) : a.xq + b * 32;
      const __m512i bias = _mm512_set1_epi32(kNL ? 16 * a.block_bias[b] : a.block_bias[b]);
      const __m512 xs = _mm512_set1_ps(a.block_scale[b]);
      if (!kQ4) {
        // Q8_0: vector k of every stream, then vector k + 1: the streams advance together line by
        // line instead of 8 lines each in turn (gemv_benchmark TinyLlama Q8_0, 1 thread, 4 interleaved
        // runs: 27.2-29.7 -> 28.5-30.7 GB/s).
        __m512 d[kStreams];
        __m512i dot0[kStreams], dot1[kStreams];
#pragma GCC unroll 4
        for (int s = 0; s < kStreams; ++s) {
          // The scales first: they lead the pair (gemv.h), so the loads walk the stream in address order.
          d[s] = LoadHalves16(PairScales(panels[s] + j * kPair, h));
          dot0[s] = bias;
          dot1[s] = _mm512_setzero_si512();
        }
#pragma GCC unroll 8
        for (int k = 0; k < kK; ++k) {
#pragma GCC unroll 4
          for (int s = 0; s < kStreams; ++s) {
            const __m512i v = LoadAsHalves(PairVector<kK>(panels[s] + j * kPair, h, k));
            if (k % 2 == 0) {
              dot0[s] = DpbusdBroadcast(dot0[s], v, xb + 4 * k);
            } else {
              dot1[s] = DpbusdBroadcast(dot1[s], v, xb + 4 * k);
            }
          }
        }
#pragma GCC unroll 4
        for (int s = 0; s < kStreams; ++s) {
          const __m512 dot = _mm512_cvtepi32_ps(_mm512_add_epi32(dot0[s], dot1[s]));
          if (h == 0) {
            acc0[s] = _mm512_fmadd_ps(dot, _mm512_mul_ps(d[s], xs), acc0[s]);
          } else {
            acc1[s] = _mm512_fmadd_ps(dot, _mm512_mul_ps(d[s], xs), acc1[s]);
          }
        }
        continue;
      }
#pragma GCC unroll 4
      for (int s = 0; s < kStreams; ++s) {
        const uint8_t* pair = panels[s] + j * kPair;
        if (kPrefetch && h == 0) PrefetchTwoPairsAhead<kPair>(pair);
        // The scales first: they lead the pair (gemv.h), so the loads walk the stream in address order.
        const __m512 d = LoadHalves16(PairScales(pair, h));
        __m512i dot0 = bias, dot1 = _mm512_setzero_si512();
        if constexpr (kNL) {
          __m512i c[8];
          IQ4Codes(PairVector<kK>(pair, h, 0), IQ4LevelTable(), c);
          HalfDots(c, xb, &dot0, &dot1);
        } else {
#pragma GCC unroll 8
          for (int k = 0; k < kK; ++k) {
            const __m512i v = _mm512_load_si512(PairVector<kK>(pair, h, k));
            dot0 = DpbusdBroadcast(dot0, _mm512_and_si512(v, low4), xb + 4 * k);
            dot1 = DpbusdBroadcast(dot1, _mm512_and_si512(v, high4), xb + 64 + 4 * k);
          }
          dot1 = _mm512_srai_epi32(dot1, 4);  // |16 x 4 x 15 x 128 x 4| stays far inside int32
        }
        const __m512 dot = _mm512_cvtepi32_ps(_mm512_add_epi32(dot0, dot1));
        if (h == 0) {
          acc0[s] = _mm512_fmadd_ps(dot, _mm512_mul_ps(d, xs), acc0[s]);
        } else {
          acc1[s] = _mm512_fmadd_ps(dot, _mm512_mul_ps(d, xs), acc1[s]);
        }
      }
    }
  }
#pragma GCC unroll 4
  for (int s = 0; s < kStreams; ++s) {
    _mm512_mask_storeu_ps(y[s], static_cast<__mmask16>((1u << rows[s]) - 1), _mm512_add_ps(acc0[s], acc1[s]));
  }
}

// T tokens (2 to 4: continuous batching's decode steps) on the Panel16 layout, straight from the packed
// bytes as Panel16GemvPanels reads them for one: each stream's block is loaded (and its nibbles masked)
// once, then meets every token with 8 vpdpbusd, one convert and one FMA. One token's decode waits on
// DRAM, not on the multiplies, so the extra tokens ride on the same weight stream; repacking panels
// into a buffer first (the prefill path) costs more than it saves at this size.
template <bool kQ4, int kStreams, bool kPrefetch, int T>
void Panel16FewTokensPanels(const GemmQ8Args& a, const uint8_t* const* panels, float* const* y, const int* rows) {
  constexpr int kK = kQ4 ? 4 : 8;
  constexpr int64_t kPair = Panel16PairBytes(kQ4);
  const int64_t nb = a.cols / kQuantBlock, pairs = (nb + 1) / 2;
  const __m512i low4 = _mm512_set1_epi8(0x0f);
  const __m512i high4 = _mm512_set1_epi8(static_cast<char>(0xf0));
  __m512 acc[kStreams][T];
#pragma GCC unroll 4
  for (int s = 0; s < kStreams; ++s) {
#pragma GCC unroll 4
    for (int t = 0; t < T; ++t) acc[s][t] = _mm512_setzero_ps();
  }
  for (int64_t j = 0; j < pairs; ++j) {
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      const int64_t b = 2 * j + h;
      if (b >= nb) break;
      const int64_t xoff = kQ4 ? (b / 4) * 128 + 16 * (b % 4) : b * 32;
#pragma GCC unroll 4
      for (int s = 0; s < kStreams; ++s) {
        const uint8_t* pair = panels[s] + j * kPair;
        if (kPrefetch && h == 0) PrefetchTwoPairsAhead<kPair>(pair);
        const __m512 d = LoadHalves16(PairScales(pair, h));
        __m512i w[8];
#pragma GCC unroll 8
        for (int k = 0; k < kK; ++k) {
          const __m512i v = _mm512_load_si512(PairVector<kK>(pair, h, k));
          if (kQ4) {
            w[k] = _mm512_and_si512(v, low4);
            w[4 + k] = _mm512_and_si512(v, high4);
          } else {
            w[k] = v;
          }
        }
#pragma GCC unroll 4
        for (int t = 0; t < T; ++t) {
          const int8_t* xb = a.xq + t * a.xq_stride + xoff;
          __m512i dot0 = _mm512_set1_epi32(a.block_bias[t * a.block_stride + b]), dot1 = _mm512_setzero_si512();
#pragma GCC unroll 4
          for (int k = 0; k < 4; ++k) {
            if (kQ4) {
              dot0 = DpbusdBroadcast(dot0, w[k], xb + 4 * k);
              dot1 = DpbusdBroadcast(dot1, w[4 + k], xb + 64 + 4 * k);
            } else {
              dot0 = DpbusdBroadcast(dot0, w[2 * k], xb + 8 * k);
              dot1 = DpbusdBroadcast(dot1, w[2 * k + 1], xb + 8 * k + 4);
            }
          }
          if (kQ4) dot1 = _mm512_srai_epi32(dot1, 4);  // the high nibbles in place: 16 x their dot, exactly
          const __m512 dot = _mm512_cvtepi32_ps(_mm512_add_epi32(dot0, dot1));
          acc[s][t] = _mm512_fmadd_ps(dot, _mm512_mul_ps(d, _mm512_set1_ps(a.block_scale[t * a.block_stride + b])),
                                      acc[s][t]);
        }
      }
    }
  }
#pragma GCC unroll 4
  for (int s = 0; s < kStreams; ++s) {
    const __mmask16 m = static_cast<__mmask16>((1u << rows[s]) - 1);
#pragma GCC unroll 4
    for (int t = 0; t < T; ++t) _mm512_mask_storeu_ps(y[s] + t * a.ldy, m, acc[s][t]);
  }
}

// Panel16FewTokensPanels over rows [row_begin, row_end): at most 8 accumulators (streams x T) stay in
// registers beside a block's 8 weight vectors.
template <bool kQ4, bool kPrefetch, int T>
void Panel16FewTokens(const GemmQ8Args& a, int64_t row_begin, int64_t row_end, int max_streams) {
  const int64_t nb = a.cols / kQuantBlock, pairs = (nb + 1) / 2;
  StreamPanels(a, row_begin, row_end, pairs * Panel16PairBytes(kQ4), std::min(max_streams, 8 / T),
               [&](auto streams_tag, const uint8_t* const* panels, float* const* y, const int* rows) {
                 Panel16FewTokensPanels<kQ4, decltype(streams_tag)::value, kPrefetch, T>(a, panels, y, rows);
               });
}

template <bool kQ4, bool kPrefetch>
void Panel16FewTokens(const GemmQ8Args& a, int64_t row_begin, int64_t row_end, int max_streams) {
  switch (a.n) {
    case 2: return Panel16FewTokens<kQ4, kPrefetch, 2>(a, row_begin, row_end, max_streams);
    case 3: return Panel16FewTokens<kQ4, kPrefetch, 3>(a, row_begin, row_end, max_streams);
    case 4: return Panel16FewTokens<kQ4, kPrefetch, 4>(a, row_begin, row_end, max_streams);
    case 5: return Panel16FewTokens<kQ4, kPrefetch, 5>(a, row_begin, row_end, max_streams);
    case 6: return Panel16FewTokens<kQ4, kPrefetch, 6>(a, row_begin, row_end, max_streams);
    case 7: return Panel16FewTokens<kQ4, kPrefetch, 7>(a, row_begin, row_end, max_streams);
    default: return Panel16FewTokens<kQ4, kPrefetch, 8>(a, row_begin, row_end, max_streams);
  }
}

template <bool kQ4, bool kPrefetch, bool kNL = false>
void Panel16Gemv(const GemmQ8Args& a, int64_t row_begin, int64_t row_end, int max_streams) {
  const int64_t nb = a.cols / kQuantBlock, pairs = (nb + 1) / 2;
  StreamPanels(a, row_begin, row_end, pairs * Panel16PairBytes(kQ4), max_streams,
               [&](auto streams_tag, const uint8_t* const* panels, float* const* y, const int* rows) {
                 Panel16GemvPanels<kQ4, decltype(streams_tag)::value, kPrefetch, kNL>(a, panels, y, rows);
               });
}

// Prefill on a Panel16 layout: each panel of rows [row_begin, row_end) (panel_bytes apart) unpacked
// once into the per-block vector form (unpack(packed, out), vecs_per_block vectors per block), then
// every token tile; the first tile prefetches the next panel (next_per_block bytes per block).
template <bool kQ4, int kBiasShift = 0, bool kMins = false, int kHalves = 0, bool kHalfMins = false,
          typename Unpack>
void Panel16Prefill(const GemmQ8Args& a, int64_t row_begin, int64_t row_end, int64_t panel_bytes,
                    int64_t next_per_block, Unpack unpack) {
  const int64_t nb = a.cols / kQuantBlock;
  const auto* w = static_cast<const uint8_t*>(a.w);
  __m512i* panel =
      PanelBuffer(nb * (kHalfMins ? kVecsPerBlock + 3 : kMins || kHalves ? kVecsPerBlock + 1 : kVecsPerBlock));
  for (int64_t r = row_begin; r < row_end; r += kPanel) {
    const int rows = static_cast<int>(std::min<int64_t>(kPanel, row_end - r));
    const __mmask16 mask = static_cast<__mmask16>((1u << rows) - 1);
    const uint8_t* packed = w + (r / kPanel) * panel_bytes;
    unpack(packed, panel);
    const uint8_t* next = r + kPanel < row_end ? packed + panel_bytes : nullptr;
    for (int64_t t = 0; t < a.n; t += kTileTokens) {
      if (t + kTileTokens <= a.n) {
        PanelTokens<kQ4, kTileTokens, true, kBiasShift, kMins, kHalves, kHalfMins>(a, panel, nb, t, mask, a.y + r,
                                                                                     next, next_per_block);
      } else {
        TokenTail<kQ4, true, kBiasShift, kMins, kHalves, kHalfMins>(a, a.n - t, panel, nb, t, mask, a.y + r, next,
                                                                    next_per_block);
      }
      next = nullptr;
    }
  }
}

// kNL: IQ4_NL (GemmQ8Args::nonlinear), whose looked-up codes meet 16 x the block bias.
template <bool kQ4, bool kNL = false>
void RunPanel16(const GemmQ8Args& a, int64_t row_begin, int64_t row_end) {
  if (a.n == 1) {
    const CpuFeatures& cpu = GetCpuFeatures();
    if (cpu.stream_prefetch) {
      Panel16Gemv<kQ4, true, kNL>(a, row_begin, row_end, cpu.decode_streams);
    } else {
      Panel16Gemv<kQ4, false, kNL>(a, row_begin, row_end, cpu.decode_streams);
    }
    return;
  }
  if (!kNL && a.n <= kFewTokens) {
    const CpuFeatures& cpu = GetCpuFeatures();
    if (cpu.stream_prefetch) {
      Panel16FewTokens<kQ4, true>(a, row_begin, row_end, cpu.decode_streams);
    } else {
      Panel16FewTokens<kQ4, false>(a, row_begin, row_end, cpu.decode_streams);
    }
    return;
  }
  const int64_t nb = a.cols / kQuantBlock, pairs = (nb + 1) / 2;
  Panel16Prefill<kQ4, kNL ? 4 : 0>(
      a, row_begin, row_end, pairs * Panel16PairBytes(kQ4), Panel16PairBytes(kQ4) / 2,
      [nb](const uint8_t* packed, __m512i* out) { UnpackPanel16<kQ4, kNL>(packed, nb, out); });
}

// Group-wise INT4 / INT3 on the Panel16 layout (gemv.h): the Q4_0 Panel16 vectors (INT4), or three
// vectors per block of bit planes (INT3), with a scale (and a zero point) per group of kG columns
// instead of per 32-block.
//
// Decode, per group and 16 rows: the group's scales (and zeros) first (they lead the unit, so the loads
// walk the stream in address order), then per 32-block its vectors and 8 (INT4) or 16 (INT3) vpdpbusd,
// one convert and one FMA by the block's dx into a per-group sum; then one FMA by the group scales.
// INT4 runs the Q4_0 kernel's two chains (low nibbles, and high nibbles in place as 16 x nibble);
// INT3 extracts each 2-bit field and each high bit with a shift and a mask and sums
// low + 4 x high. Symmetric groups start each block's dot from the block bias (-8 x the sum of x's
// block; halved for INT3's zero point 4), which makes it sum((code - zero) x). Zero points are applied
// per group in float: sum(code x) - zero x sum over the group's blocks of dx x sum(x block).
// GF(2) affine transform of every byte of x by the 8x8 bit matrix in each qword of a
// (vgf2p8affineqb): result bit i = parity(a.byte[7 - i] & x). As inline assembly so that the kernels
// need no GFNI compile flag; it only runs where the CPU has GFNI (CpuFeatures::gfni).
// The matrix is broadcast from memory ({1to8}), as vpdpbusd's x is: twelve matrices held in registers
// made the 4-stream INT3 kernel spill.
inline __m512i Gf2p8Affine(__m512i x, const uint64_t* a) {
  __m512i r;
  __asm__("vgf2p8affineqb $0, %2%{1to8%}, %1, %0" : "=v"(r) : "v"(x), "m"(*a));
  return r;
}
// The matrix that moves input bit from0 to output bit to0 (and from1 to to1).
constexpr uint64_t BitMove(int from0, int to0, int from1 = -1, int to1 = -1) {
  return (uint64_t{1} << from0) << (8 * (7 - to0)) | (from1 < 0 ? 0 : (uint64_t{1} << from1) << (8 * (7 - to1)));
}
// INT3 planes to codes: kLowFields[f] takes bits 2f, 2f + 1 to bits 0, 1; kHighBits[b] bit b to bit 2.
alignas(64) constexpr uint64_t kLowFields[4] = {BitMove(0, 0, 1, 1), BitMove(2, 0, 3, 1), BitMove(4, 0, 5, 1),
                                                BitMove(6, 0, 7, 1)};
alignas(64) constexpr uint64_t kHighBits[8] = {BitMove(0, 2), BitMove(1, 2), BitMove(2, 2), BitMove(3, 2),
                                               BitMove(4, 2), BitMove(5, 2), BitMove(6, 2), BitMove(7, 2)};

inline void Q5Codes(const uint8_t* block, __m512i* out);

template <int kBits, bool kGfni = false>
inline __m512i BlockDot(const uint8_t* block, const int8_t* xb, __m512i bias) {
  if constexpr (kBits == 5) {
    // Q5_0 / Q5_1: Q5_K's block vectors (the fifth bits, then Q4_0-style nibbles).
    __m512i c[8];
    Q5Codes(block, c);
    __m512i lo = bias, hi = _mm512_setzero_si512();
    HalfDots(c, xb, &lo, &hi);
    return _mm512_add_epi32(lo, hi);
  } else if constexpr (kBits == 4) {
    const __m512i low4 = _mm512_set1_epi8(0x0f);
    const __m512i high4 = _mm512_set1_epi8(static_cast<char>(0xf0));
    __m512i dot0 = bias, dot1 = _mm512_setzero_si512();
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {
      const __m512i v = _mm512_load_si512(block + 64 * k);
      dot0 = DpbusdBroadcast(dot0, _mm512_and_si512(v, low4), xb + 4 * k);
      dot1 = DpbusdBroadcast(dot1, _mm512_and_si512(v, high4), xb + 64 + 4 * k);
    }
    return _mm512_add_epi32(dot0, _mm512_srai_epi32(dot1, 4));  // |16 x 4 x 15 x 128 x 4| fits int32
  } else if constexpr (kGfni) {
    // Each element's code rebuilt in one byte (two affine transforms and an OR per 4 elements of each
    // row), then one vpdpbusd per 4 elements: 8 per block instead of 16, no shifts or masks.
    const __m512i l0 = _mm512_load_si512(block), l1 = _mm512_load_si512(block + 64);
    const __m512i h = _mm512_load_si512(block + 128);
    __m512i dot0 = bias, dot1 = _mm512_setzero_si512();
#pragma GCC unroll 4
    for (int f = 0; f < 4; ++f) {
      const __m512i code0 = _mm512_or_si512(Gf2p8Affine(l0, &kLowFields[f]), Gf2p8Affine(h, &kHighBits[f]));
      const __m512i code1 = _mm512_or_si512(Gf2p8Affine(l1, &kLowFields[f]), Gf2p8Affine(h, &kHighBits[4 + f]));
      dot0 = DpbusdBroadcast(dot0, code0, xb + 4 * f);
      dot1 = DpbusdBroadcast(dot1, code1, xb + 64 + 4 * f);
    }
    return _mm512_add_epi32(dot0, dot1);
  } else {
    const __m512i three = _mm512_set1_epi8(3), one = _mm512_set1_epi8(1);
    const __m512i l0 = _mm512_load_si512(block), l1 = _mm512_load_si512(block + 64);
    const __m512i h = _mm512_load_si512(block + 128);
    __m512i dot0 = bias, dot1 = _mm512_setzero_si512(), doth = _mm512_setzero_si512();
#pragma GCC unroll 4
    for (int f = 0; f < 4; ++f) {
      // 16-bit shifts: the bits that cross from the neighbouring byte are masked off.
      dot0 = DpbusdBroadcast(dot0, _mm512_and_si512(_mm512_srli_epi16(l0, 2 * f), three), xb + 4 * f);
      dot1 = DpbusdBroadcast(dot1, _mm512_and_si512(_mm512_srli_epi16(l1, 2 * f), three), xb + 64 + 4 * f);
    }
#pragma GCC unroll 8
    for (int bit = 0; bit < 8; ++bit) {
      const int8_t* x = bit < 4 ? xb + 4 * bit : xb + 64 + 4 * (bit - 4);
      doth = DpbusdBroadcast(doth, _mm512_and_si512(_mm512_srli_epi16(h, bit), one), x);
    }
    return _mm512_add_epi32(_mm512_add_epi32(dot0, dot1), _mm512_slli_epi32(doth, 2));
  }
}

// kMins: Q4_1 (G = 32, INT4): codes taken as they are (no bias) and min x dx x sum(x_q) added per block.
template <int kG, bool kAsym, int kBits, int kStreams, bool kPrefetch, bool kGfni, bool kMins = false>
__attribute__((noinline)) void Panel16GroupGemvPanels(const GemmQ8Args& a, const uint8_t* const* panels,
                                                      float* const* y, const int* rows) {
  constexpr Panel16GroupGeometry kGeo(0, kG, kAsym, kBits, kMins);
  constexpr int kBlocksPerGroup = kG / kQuantBlock, kGroupsPerUnit = Panel16GroupGeometry::kUnitCols / kG;
  const int64_t groups = a.cols / kG;
  __m512 acc[kStreams];
#pragma GCC unroll 4
  for (int s = 0; s < kStreams; ++s) acc[s] = _mm512_setzero_ps();
  for (int64_t gg = 0; gg < groups; ++gg) {
    const int64_t unit_offset = gg / kGroupsPerUnit * kGeo.unit_bytes;
    const int gi = static_cast<int>(gg % kGroupsPerUnit);
    __m512 d[kStreams], z[kStreams], facc[kStreams];
#pragma GCC unroll 4
    for (int s = 0; s < kStreams; ++s) {
      const uint8_t* unit = panels[s] + unit_offset;
      d[s] = LoadHalves16(unit + Panel16GroupGeometry::Scales(gi));
      if (kMins) z[s] = LoadHalves16(unit + kGeo.Mins(gi));
      if (kAsym) {
        const __m128i zb = _mm_load_si128(reinterpret_cast<const __m128i*>(unit + kGeo.Zeros(gi)));
        z[s] = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(zb));
      }
      facc[s] = _mm512_setzero_ps();
    }
    float xsum = 0;  // asymmetric: sum over the group's blocks of dx x sum(x_q)
#pragma GCC unroll 4
    for (int bi = 0; bi < kBlocksPerGroup; ++bi) {
      const int64_t b = gg * kBlocksPerGroup + bi;
      const int i = static_cast<int>(b % 8);  // block within the unit
      const int8_t* xb = a.xq + (b / 4) * 128 + 16 * (b % 4);
      // block_bias = -8 x sum(x_q) exactly: INT3's zero point 4 takes half of it.
      const __m512i bias = kAsym || kMins ? _mm512_setzero_si512()
                                          : _mm512_set1_epi32(kBits == 4   ? a.block_bias[b]
                                                              : kBits == 5 ? 2 * a.block_bias[b]
                                                                           : a.block_bias[b] / 2);
      const __m512 dx = _mm512_set1_ps(a.block_scale[b]);
      if (kAsym || kMins) xsum += a.block_scale[b] * static_cast<float>(-a.block_bias[b] / 8);
#pragma GCC unroll 4
      for (int s = 0; s < kStreams; ++s) {
        const uint8_t* unit = panels[s] + unit_offset;
        if (kPrefetch) {
          // The same block two units (about 3-4 KiB) ahead in this stream: harmless past the matrix.
#pragma GCC unroll 4
          for (int k = 0; k < kGeo.vectors_per_block; ++k) {
            _mm_prefetch(reinterpret_cast<const char*>(unit + 2 * kGeo.unit_bytes + kGeo.Vector(i, k)), _MM_HINT_T0);
          }
        }
        const __m512i dot = BlockDot<kBits, kGfni>(unit + kGeo.Vector(i, 0), xb, bias);
        facc[s] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), dx, facc[s]);
      }
    }
#pragma GCC unroll 4
    for (int s = 0; s < kStreams; ++s) {
      if (kMins) {
        // code x scale x dot + min x sum: z holds the mins.
        acc[s] = _mm512_fmadd_ps(z[s], _mm512_set1_ps(xsum), _mm512_fmadd_ps(facc[s], d[s], acc[s]));
        continue;
      }
      const __m512 f = kAsym ? _mm512_fnmadd_ps(z[s], _mm512_set1_ps(xsum), facc[s]) : facc[s];
      acc[s] = _mm512_fmadd_ps(f, d[s], acc[s]);
    }
  }
#pragma GCC unroll 4
  for (int s = 0; s < kStreams; ++s) {
    _mm512_mask_storeu_ps(y[s], static_cast<__mmask16>((1u << rows[s]) - 1), acc[s]);
  }
}

template <int kG, bool kAsym, int kBits, bool kPrefetch, bool kGfni, bool kMins>
void Panel16GroupGemv(const GemmQ8Args& a, int64_t row_begin, int64_t row_end, int max_streams) {
  const Panel16GroupGeometry geo(a.cols, kG, kAsym, kBits, kMins);
  StreamPanels(a, row_begin, row_end, geo.panel_bytes(), max_streams,
               [&](auto streams_tag, const uint8_t* const* panels, float* const* y, const int* rows) {
                 Panel16GroupGemvPanels<kG, kAsym, kBits, decltype(streams_tag)::value, kPrefetch, kGfni, kMins>(
                     a, panels, y, rows);
               });
}

// The kVecsPerBlock form of a group Panel16 panel, for the token tiles of PanelTokens<kQ4 = true>: the
// group's scale as each of its blocks' scale; the weights as unsigned bytes u with u - 8 = code - zero
// against the block bias -8 x sum x (symmetric INT4: the code; symmetric INT3: code + 4), or, with
// zero points, u = code - zero + 16 (1..31) against the doubled block bias (-16 x sum x).
template <bool kAsym, int kBits, bool kMins = false>
void UnpackPanel16Group(const uint8_t* panel, const Panel16GroupGeometry& geo, int64_t nb, int64_t group,
                        __m512i* out) {
  constexpr int kVecs = kMins ? kVecsPerBlock + 1 : kVecsPerBlock;
  __m512 mn = _mm512_setzero_ps();
  const __m512i low4 = _mm512_set1_epi8(0x0f), three = _mm512_set1_epi8(3), one = _mm512_set1_epi8(1);
  const int64_t blocks_per_group = group / kQuantBlock;
  __m512 d = _mm512_setzero_ps();
  __m512i offset = _mm512_set1_epi8(kBits == 3 ? 4 : 0);
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* unit = panel + (b / 8) * geo.unit_bytes;
    const int i = static_cast<int>(b % 8);
    if (b % blocks_per_group == 0) {
      const int64_t gi = i / blocks_per_group;
      d = LoadHalves16(unit + Panel16GroupGeometry::Scales(gi));
      if (kMins) {
        // min + 8 x scale: the codes meet the block bias -8 x sum x (PanelTokens kMins).
        mn = _mm512_fmadd_ps(_mm512_set1_ps(8.0f), d, LoadHalves16(unit + geo.Mins(gi)));
      }
      if (kAsym) {
        const __m128i zb = _mm_load_si128(reinterpret_cast<const __m128i*>(unit + geo.Zeros(gi)));
        const __m512i zero = _mm512_cvtepu8_epi32(zb);
        // 16 - zero in each byte of the row's lane.
        offset = _mm512_mullo_epi32(_mm512_sub_epi32(_mm512_set1_epi32(16), zero), _mm512_set1_epi32(0x01010101));
      }
    }
    __m512i* o = out + b * kVecs;
    const uint8_t* block = unit + geo.Vector(i, 0);
    if constexpr (kBits == 5) {
      // Codes as they are: Q5_0 meets the doubled block bias (-16 x sum x), Q5_1 its min form.
      Q5Codes(block, o);
    } else if constexpr (kBits == 4) {
      for (int k = 0; k < 4; ++k) {
        const __m512i v = _mm512_load_si512(block + 64 * k);
        o[k] = _mm512_add_epi8(_mm512_and_si512(v, low4), offset);
        o[4 + k] = _mm512_add_epi8(_mm512_and_si512(_mm512_srli_epi16(v, 4), low4), offset);
      }
    } else {
      const __m512i l0 = _mm512_load_si512(block), l1 = _mm512_load_si512(block + 64);
      const __m512i h = _mm512_load_si512(block + 128);
      for (int k = 0; k < 4; ++k) {
        // Elements 4k.. (vector k) and 16 + 4k.. (vector 4 + k): low bits from l0 / l1, high bit k / 4 + k.
        const __m512i h0 = _mm512_slli_epi16(_mm512_and_si512(_mm512_srli_epi16(h, k), one), 2);
        const __m512i h1 = _mm512_slli_epi16(_mm512_and_si512(_mm512_srli_epi16(h, 4 + k), one), 2);
        o[k] = _mm512_add_epi8(_mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(l0, 2 * k), three), h0), offset);
        o[4 + k] = _mm512_add_epi8(_mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(l1, 2 * k), three), h1), offset);
      }
    }
    o[8] = _mm512_castps_si512(d);
    if (kMins) o[9] = _mm512_castps_si512(mn);
  }
}

template <int kG, bool kAsym, int kBits, bool kGfni, bool kMins = false>
void RunPanel16GroupDecode(const GemmQ8Args& a, int64_t row_begin, int64_t row_end) {
  const CpuFeatures& cpu = GetCpuFeatures();
  if (cpu.stream_prefetch) {
    Panel16GroupGemv<kG, kAsym, kBits, true, kGfni, kMins>(a, row_begin, row_end, cpu.decode_streams);
  } else {
    Panel16GroupGemv<kG, kAsym, kBits, false, kGfni, kMins>(a, row_begin, row_end, cpu.decode_streams);
  }
}

// INT3 rebuilds its codes with GFNI where the CPU has it (CpuFeatures::gfni; TESSEL_GFNI=0 turns it off).
template <int kG, bool kAsym, int kBits>
void RunPanel16GroupDecode(const GemmQ8Args& a, int64_t row_begin, int64_t row_end) {
  if (kBits == 3 && GetCpuFeatures().gfni) {
    RunPanel16GroupDecode<kG, kAsym, kBits, true>(a, row_begin, row_end);
  } else {
    RunPanel16GroupDecode<kG, kAsym, kBits, false>(a, row_begin, row_end);
  }
}

template <bool kAsym, int kBits, bool kMins = false>
void RunPanel16Group(const GemmQ8Args& a, int64_t row_begin, int64_t row_end) {
  if (a.n == 1) {
    if constexpr (kMins) {
      return RunPanel16GroupDecode<32, false, kBits, false, true>(a, row_begin, row_end);
    } else if constexpr (kBits == 5) {
      return RunPanel16GroupDecode<32, false, 5>(a, row_begin, row_end);
    } else {
      switch (a.group_size) {
        case 32: return RunPanel16GroupDecode<32, kAsym, kBits>(a, row_begin, row_end);
        case 64: return RunPanel16GroupDecode<64, kAsym, kBits>(a, row_begin, row_end);
        default: return RunPanel16GroupDecode<128, kAsym, kBits>(a, row_begin, row_end);
      }
    }
  }
  const Panel16GroupGeometry geo(a.cols, a.group_size, kAsym, kBits, kMins);
  const int64_t nb = a.cols / kQuantBlock, group = a.group_size;
  // Zero points (and Q5_0's zero point 16): the doubled block bias.
  Panel16Prefill<true, kAsym || (kBits == 5 && !kMins) ? 1 : 0, kMins>(
      a, row_begin, row_end, geo.panel_bytes(), geo.unit_bytes / 8,
      [&geo, nb, group](const uint8_t* packed, __m512i* out) {
        UnpackPanel16Group<kAsym, kBits, kMins>(packed, geo, nb, group, out);
      });
}

// ggml's k-quants on their Panel16 layouts (gemv.h PackGemvPanel16KQuant).
//
// Q6_K's 6-bit codes of block `block` (its 6 vectors, gemv.h): elements 0..15 are the low 6 bits of
// vectors 2..5; element 16 + 4k + j takes its low nibble from vector k / 2 (low nibble for even k,
// high for odd) and its high 2 bits from bits 6, 7 of vector 2 + k, moved to bits 4, 5 by a 16-bit shift (the
// bits that cross from the neighbouring byte are masked off). Vectors 0..3 of `out` hold elements 0..15,
// 4..7 elements 16..31, as UnpackPanel16 lays out Q4_0. 18 ALU operations per block; the layout with
// the high bits in two planes of their own took 30 and ran at 15-18 GB/s on one Zen 4 core.
inline void Q6Codes(const uint8_t* block, __m512i* out) {
  const __m512i low4 = _mm512_set1_epi8(0x0f), low6 = _mm512_set1_epi8(0x3f), bits45 = _mm512_set1_epi8(0x30);
  const __m512i n01 = _mm512_load_si512(block), n23 = _mm512_load_si512(block + 64);
  const __m512i nib[4] = {_mm512_and_si512(n01, low4), _mm512_and_si512(_mm512_srli_epi16(n01, 4), low4),
                          _mm512_and_si512(n23, low4), _mm512_and_si512(_mm512_srli_epi16(n23, 4), low4)};
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) {
    const __m512i v = _mm512_load_si512(block + 128 + 64 * k);
    out[k] = _mm512_and_si512(v, low6);
    // (A & C) | B with A = v >> 2, B = the nibbles, C = 0x30: ternary logic imm 0xec.
    out[4 + k] = _mm512_ternarylogic_epi32(_mm512_srli_epi16(v, 2), nib[k], bits45, 0xec);
  }
}

// Q2_K's 2-bit codes of block `block` (its 2 vectors: bits 2k of vectors 0 and 1 for elements 4k + j and
// 16 + 4k + j). Layout of `out` as Q6Codes'.
inline void Q2Codes(const uint8_t* block, __m512i* out) {
  const __m512i three = _mm512_set1_epi8(3);
  const __m512i l0 = _mm512_load_si512(block), l1 = _mm512_load_si512(block + 64);
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) {
    out[k] = _mm512_and_si512(k == 0 ? l0 : _mm512_srli_epi16(l0, 2 * k), three);
    out[4 + k] = _mm512_and_si512(k == 0 ? l1 : _mm512_srli_epi16(l1, 2 * k), three);
  }
}

// Q3_K's 3-bit codes of block `block` (its 3 vectors, gemv.h): elements 4k + j and 16 + 4k + j take
// their low 2 bits from bits 2k of vectors 0 and 1 and their third bit from bits k and 4 + k of vector 2,
// moved by 16-bit shifts (the bits that cross from the neighbouring byte are masked off). Layout of
// `out` as Q6Codes'.
inline void Q3Codes(const uint8_t* block, __m512i* out) {
  const __m512i three = _mm512_set1_epi8(3), four = _mm512_set1_epi8(4);
  const __m512i l0 = _mm512_load_si512(block), l1 = _mm512_load_si512(block + 64);
  const __m512i h = _mm512_load_si512(block + 128);
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) {
    const __m512i a0 = k == 0 ? l0 : _mm512_srli_epi16(l0, 2 * k);
    const __m512i a1 = k == 0 ? l1 : _mm512_srli_epi16(l1, 2 * k);
    const __m512i b0 = k == 0 ? _mm512_slli_epi16(h, 2) : k == 1 ? _mm512_slli_epi16(h, 1) : k == 2 ? h
                                                                                        : _mm512_srli_epi16(h, 1);
    const __m512i b1 = _mm512_srli_epi16(h, 2 + k);
    // (A & C) | B with C = 3 and B the third bit at bit 2: ternary logic imm 0xec.
    out[k] = _mm512_ternarylogic_epi32(a0, _mm512_and_si512(b0, four), three, 0xec);
    out[4 + k] = _mm512_ternarylogic_epi32(a1, _mm512_and_si512(b1, four), three, 0xec);
  }
}

// Two int32 dots per lane that fit int16 (Q2_K's and Q3_K's 16-element halves: |dot| <= 16 x 4 x 127) as
// one lane of int16 pairs, lo in the low half, so that one vpdpwssd gives lo x f_lo + hi x f_hi.
inline __m512i PairHalves(__m512i lo, __m512i hi) {
  return _mm512_mask_blend_epi16(0xAAAAAAAA, lo, _mm512_slli_epi32(hi, 16));
}

// Block i's scale-byte pairs of a Q2_K / Q3_K unit (Panel16KQuantGeometry::ScalePair), widened to int16:
// lane r holds row r's two halves' bytes.
template <bool kSigned>
inline __m512i ScalePairs(const uint8_t* p) {
  const __m256i v = _mm256_load_si256(reinterpret_cast<const __m256i*>(p));
  return kSigned ? _mm512_cvtepi8_epi16(v) : _mm512_cvtepu8_epi16(v);
}

// Q5_K's 5-bit codes of block `block` (its 5 vectors, gemv.h): the Q4_0-style nibbles of vectors 1..4
// with bit 4 from vector 0 (bit k for element 4k + j, bit 4 + k for 16 + 4k + j), moved by 16-bit shifts
// (the bits that cross from the neighbouring byte are masked off). Layout of `out` as Q6Codes'.
inline void Q5Codes(const uint8_t* block, __m512i* out) {
  const __m512i low4 = _mm512_set1_epi8(0x0f), bit4 = _mm512_set1_epi8(0x10);
  const __m512i h = _mm512_load_si512(block);
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) {
    const __m512i v = _mm512_load_si512(block + 64 + 64 * k);
    const __m512i lo = _mm512_and_si512(_mm512_slli_epi16(h, 4 - k), bit4);
    const __m512i hi = _mm512_and_si512(k == 0 ? h : _mm512_srli_epi16(h, k), bit4);
    // A | (B & C) with C = 0x0f: ternary logic imm 0xf8.
    out[k] = _mm512_ternarylogic_epi32(lo, v, low4, 0xf8);
    out[4 + k] = _mm512_ternarylogic_epi32(hi, _mm512_srli_epi16(v, 4), low4, 0xf8);
  }
}

// Decode, per unit (one super-block) and 16 rows: per 32-block the codes' dot with x (Q4_K: the Q4_0
// Panel16 chains, no bias; Q6_K: a dot per 16-element half, each from its -32 x sum(x) bias), times the
// sub-block scales (bytes converted to float) and the block's dx, into a unit sum; Q4_K's mins times
// dx x sum(x_q) into a second; then one FMA by the rows' d (and one by dmin).
template <int kKind, int kStreams, bool kPrefetch>
__attribute__((noinline)) void Panel16KQuantGemvPanels(const GemmQ8Args& a, const uint8_t* const* panels,
                                                       float* const* y, const int* rows) {
  constexpr Panel16KQuantGeometry kGeo(0, kKind);
  using G = Panel16KQuantGeometry;
  const int64_t units = a.cols / G::kUnitCols;
  __m512 acc[kStreams];
#pragma GCC unroll 4
  for (int s = 0; s < kStreams; ++s) acc[s] = _mm512_setzero_ps();
  for (int64_t u = 0; u < units; ++u) {
    const int64_t unit_offset = u * kGeo.unit_bytes;
    // The rows' d (and dmin) first: they lead the unit, so the loads walk the stream in address order (a
    // load of them after the unit's blocks missed behind the hardware prefetcher's stream).
    __m512 sacc[kStreams], macc[kStreams], d[kStreams];
#pragma GCC unroll 4
    for (int s = 0; s < kStreams; ++s) {
      sacc[s] = macc[s] = _mm512_setzero_ps();
      d[s] = LoadHalves16(panels[s] + unit_offset + G::D());
    }
#pragma GCC unroll 1
    for (int i = 0; i < 8; ++i) {
      const int64_t b = u * 8 + i;
      const int8_t* xb = a.xq + (b / 4) * 128 + 16 * (b % 4);
      const __m512 dx = _mm512_set1_ps(a.block_scale[b]);
      // Q2_K: the two halves' sums of x_q (half_bias = -32 x the sum, exactly) as an int16 pair.
      const __m512i hsum = kKind == 2 ? _mm512_set1_epi32(static_cast<int32_t>(
                                            static_cast<uint16_t>(-a.half_bias[2 * b] / 32) |
                                            static_cast<uint32_t>(static_cast<uint16_t>(-a.half_bias[2 * b + 1] / 32))
                                                << 16))
                                      : _mm512_setzero_si512();
      // Q4_K: dx x sum(x_q); block_bias = -8 x sum(x_q) exactly.
      const __m512 xsum = _mm512_set1_ps(a.block_scale[b] * static_cast<float>(-a.block_bias[b] / 8));
#pragma GCC unroll 4
      for (int s = 0; s < kStreams; ++s) {
        const uint8_t* unit = panels[s] + unit_offset;
        if (kPrefetch) {
          // The same block two units ahead in this stream (and, with block 0, that unit's scales). Written
          // out here rather than through decode_streams.h PrefetchBlockAhead, which spilled vector
          // registers in the 4-stream instances (gemv_gemm_avx512vnni_spill_test).
          const char* ahead = reinterpret_cast<const char*>(unit + 2 * kGeo.unit_bytes);
#pragma GCC unroll 6
          for (int k = 0; k < kGeo.vectors_per_block; ++k) _mm_prefetch(ahead + kGeo.Vector(i, k), _MM_HINT_T0);
          if (i == 0) {
#pragma GCC unroll 5
            for (int l = 0; l < kGeo.meta_bytes / 64; ++l) _mm_prefetch(ahead + 64 * l, _MM_HINT_T0);
          }
        }
        if constexpr (kKind == 2) {
          __m512i c[8];
          Q2Codes(unit + kGeo.Vector(i, 0), c);
          __m512i lo = _mm512_setzero_si512(), hi = _mm512_setzero_si512();
          HalfDots(c, xb, &lo, &hi);
          // Every row's two (scale | min << 4) bytes as int16 pairs: the scaled dots and the mins times the
          // halves' sums of x_q in integers, one vpdpwssd each (a convert and a multiply per half fewer:
          // 1-thread Q2_K decode is compute-bound).
          const __m512i sm = ScalePairs<false>(unit + kGeo.ScalePair(i));
          const __m512i sc = _mm512_and_si512(sm, _mm512_set1_epi16(15));
          const __m512i sdot = _mm512_dpwssd_epi32(_mm512_setzero_si512(), PairHalves(lo, hi), sc);
          const __m512i mdot = _mm512_dpwssd_epi32(_mm512_setzero_si512(), _mm512_srli_epi16(sm, 4), hsum);
          sacc[s] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sdot), dx, sacc[s]);
          macc[s] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(mdot), dx, macc[s]);
        } else if constexpr (kKind == kKQuantIQ4_XS) {
          // Looked-up codes against 16 x the block bias; int8 scales ls - 32.
          __m512i c[8];
          IQ4Codes(unit + kGeo.Vector(i, 0), IQ4LevelTable(), c);
          __m512i lo = _mm512_set1_epi32(16 * a.block_bias[b]), hi = _mm512_setzero_si512();
          HalfDots(c, xb, &lo, &hi);
          const __m512 sc = _mm512_cvtepi32_ps(
              _mm512_cvtepi8_epi32(_mm_load_si128(reinterpret_cast<const __m128i*>(unit + kGeo.Scales(i)))));
          sacc[s] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(lo, hi)), _mm512_mul_ps(sc, dx), sacc[s]);
        } else if constexpr (kKind == 4 || kKind == 5) {
          __m512i dot;
          if constexpr (kKind == 4) {
            dot = BlockDot<4>(unit + kGeo.Vector(i, 0), xb, _mm512_setzero_si512());
          } else {
            __m512i c[8];
            Q5Codes(unit + kGeo.Vector(i, 0), c);
            __m512i lo = _mm512_setzero_si512(), hi = _mm512_setzero_si512();
            HalfDots(c, xb, &lo, &hi);
            dot = _mm512_add_epi32(lo, hi);
          }
          const __m512 sc = _mm512_cvtepi32_ps(
              _mm512_cvtepu8_epi32(_mm_load_si128(reinterpret_cast<const __m128i*>(unit + kGeo.Scales(i)))));
          const __m512 mn = _mm512_cvtepi32_ps(
              _mm512_cvtepu8_epi32(_mm_load_si128(reinterpret_cast<const __m128i*>(unit + kGeo.Mins(i)))));
          sacc[s] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(sc, dx), sacc[s]);
          macc[s] = _mm512_fmadd_ps(mn, xsum, macc[s]);
        } else {
          // Q6_K (zero point 32) and Q3_K (4): half_bias is -32 x the half's sum of x.
          constexpr int kDiv = kKind == 6 ? 1 : 8;
          __m512i c[8];
          if constexpr (kKind == 6) {
            Q6Codes(unit + kGeo.Vector(i, 0), c);
          } else {
            Q3Codes(unit + kGeo.Vector(i, 0), c);
          }
          __m512i lo = _mm512_set1_epi32(a.half_bias[2 * b] / kDiv);
          __m512i hi = _mm512_set1_epi32(a.half_bias[2 * b + 1] / kDiv);
          HalfDots(c, xb, &lo, &hi);
          if constexpr (kKind == 3) {
            // Q3_K's halves' dots fit int16: both scaled by one vpdpwssd (Q2_K's way).
            const __m512i sdot =
                _mm512_dpwssd_epi32(_mm512_setzero_si512(), PairHalves(lo, hi), ScalePairs<true>(unit + kGeo.ScalePair(i)));
            sacc[s] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sdot), dx, sacc[s]);
            continue;
          }
          const __m512 sc_lo = _mm512_cvtepi32_ps(
              _mm512_cvtepi8_epi32(_mm_load_si128(reinterpret_cast<const __m128i*>(unit + kGeo.Scales(2 * i)))));
          const __m512 sc_hi = _mm512_cvtepi32_ps(
              _mm512_cvtepi8_epi32(_mm_load_si128(reinterpret_cast<const __m128i*>(unit + kGeo.Scales(2 * i + 1)))));
          sacc[s] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(lo), _mm512_mul_ps(sc_lo, dx), sacc[s]);
          sacc[s] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(hi), _mm512_mul_ps(sc_hi, dx), sacc[s]);
        }
      }
    }
#pragma GCC unroll 4
    for (int s = 0; s < kStreams; ++s) {
      const uint8_t* unit = panels[s] + unit_offset;
      acc[s] = _mm512_fmadd_ps(sacc[s], d[s], acc[s]);
      if (kKind != 3 && kKind != 6 && kKind != kKQuantIQ4_XS) {
        acc[s] = _mm512_fnmadd_ps(macc[s], LoadHalves16(unit + G::Dmin()), acc[s]);
      }
    }
  }
#pragma GCC unroll 4
  for (int s = 0; s < kStreams; ++s) {
    _mm512_mask_storeu_ps(y[s], static_cast<__mmask16>((1u << rows[s]) - 1), acc[s]);
  }
}

// The PanelTokens form of a k-quant panel, 10 vectors per block: Q4_K and Q5_K as Q4_1's (kMins: codes, d x
// scale, and 8 x d x scale - dmin x min against the block bias), Q6_K as kHalves (6-bit codes, d x the
// scale of each half). Both products are exact in f32 (11-bit d times a 6- or 8-bit scale).
template <int kKind>
void UnpackPanel16KQuant(const uint8_t* panel, const Panel16KQuantGeometry& geo, int64_t nb, __m512i* out) {
  using G = Panel16KQuantGeometry;
  const __m512i low4 = _mm512_set1_epi8(0x0f);
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* unit = panel + (b / 8) * geo.unit_bytes;
    const int i = static_cast<int>(b % 8);
    const __m512 d = LoadHalves16(unit + G::D());
    constexpr int kVecs = kKind == 2 ? kVecsPerBlock + 3 : kKind == kKQuantIQ4_XS ? kVecsPerBlock : kVecsPerBlock + 1;
    __m512i* o = out + b * kVecs;
    const uint8_t* block = unit + geo.Vector(i, 0);
    auto scale = [unit](int64_t offset, bool is_signed) {
      const __m128i v = _mm_load_si128(reinterpret_cast<const __m128i*>(unit + offset));
      return _mm512_cvtepi32_ps(is_signed ? _mm512_cvtepi8_epi32(v) : _mm512_cvtepu8_epi32(v));
    };
    if constexpr (kKind == kKQuantIQ4_XS) {
      // Looked-up codes against the block bias shifted by 4 (Panel16Prefill's kBiasShift), d x scale.
      IQ4Codes(block, IQ4LevelTable(), o);
      o[8] = _mm512_castps_si512(_mm512_mul_ps(d, scale(geo.Scales(i), true)));
    } else if constexpr (kKind == 2) {
      // (scale | min << 4) bytes: d x scale per half, then -dmin x min per half.
      Q2Codes(block, o);
      const __m512 dmin = LoadHalves16(unit + G::Dmin());
      const __m512i pairs = ScalePairs<false>(unit + geo.ScalePair(i));
      for (int h = 0; h < 2; ++h) {
        const __m512i sm = h == 0 ? _mm512_and_si512(pairs, _mm512_set1_epi32(0xFFFF)) : _mm512_srli_epi32(pairs, 16);
        const __m512 sc = _mm512_cvtepi32_ps(_mm512_and_si512(sm, _mm512_set1_epi32(15)));
        const __m512 mn = _mm512_cvtepi32_ps(_mm512_srli_epi32(sm, 4));
        o[8 + h] = _mm512_castps_si512(_mm512_mul_ps(d, sc));
        o[10 + h] = _mm512_castps_si512(_mm512_sub_ps(_mm512_setzero_ps(), _mm512_mul_ps(dmin, mn)));
      }
    } else if constexpr (kKind == 4 || kKind == 5) {
      if constexpr (kKind == 4) {
        for (int k = 0; k < 4; ++k) {
          const __m512i v = _mm512_load_si512(block + 64 * k);
          o[k] = _mm512_and_si512(v, low4);
          o[4 + k] = _mm512_and_si512(_mm512_srli_epi16(v, 4), low4);
        }
      } else {
        Q5Codes(block, o);
      }
      const __m512 sc = _mm512_mul_ps(d, scale(geo.Scales(i), false));
      const __m512 mn = _mm512_mul_ps(LoadHalves16(unit + G::Dmin()), scale(geo.Mins(i), false));
      o[8] = _mm512_castps_si512(sc);
      o[9] = _mm512_castps_si512(_mm512_fmsub_ps(_mm512_set1_ps(8.0f), sc, mn));
    } else {
      if constexpr (kKind == 6) {
        Q6Codes(block, o);
        o[8] = _mm512_castps_si512(_mm512_mul_ps(d, scale(geo.Scales(2 * i), true)));
        o[9] = _mm512_castps_si512(_mm512_mul_ps(d, scale(geo.Scales(2 * i + 1), true)));
      } else {
        Q3Codes(block, o);
        const __m512i pairs = ScalePairs<true>(unit + geo.ScalePair(i));  // int16 pairs, sign-extended
        const __m512 lo = _mm512_cvtepi32_ps(_mm512_srai_epi32(_mm512_slli_epi32(pairs, 16), 16));
        const __m512 hi = _mm512_cvtepi32_ps(_mm512_srai_epi32(pairs, 16));
        o[8] = _mm512_castps_si512(_mm512_mul_ps(d, lo));
        o[9] = _mm512_castps_si512(_mm512_mul_ps(d, hi));
      }
    }
  }
}

template <int kKind>
void RunPanel16KQuant(const GemmQ8Args& a, int64_t row_begin, int64_t row_end) {
  const Panel16KQuantGeometry geo(a.cols, kKind);
  if (a.n == 1) {
    const CpuFeatures& cpu = GetCpuFeatures();
    auto run = [&](auto prefetch_tag) {
      StreamPanels(a, row_begin, row_end, geo.panel_bytes(), cpu.decode_streams,
                   [&](auto streams_tag, const uint8_t* const* panels, float* const* y, const int* rows) {
                     Panel16KQuantGemvPanels<kKind, decltype(streams_tag)::value, decltype(prefetch_tag)::value>(
                         a, panels, y, rows);
                   });
    };
    if (cpu.stream_prefetch) {
      run(std::true_type());
    } else {
      run(std::false_type());
    }
    return;
  }
  const int64_t nb = a.cols / kQuantBlock;
  Panel16Prefill<true, kKind == kKQuantIQ4_XS ? 4 : 0, kKind == 4 || kKind == 5,
                 kKind == 6 ? 32 : kKind == 3 ? 4 : kKind == 2 ? 32 : 0, kKind == 2>(
      a, row_begin, row_end, geo.panel_bytes(), geo.unit_bytes / 8,
      [&geo, nb](const uint8_t* packed, __m512i* out) { UnpackPanel16KQuant<kKind>(packed, geo, nb, out); });
}

}  // namespace

void tessel_group_panel16_q8_gemm__avx512vnni(const GemmQ8Args& a, int64_t row_begin, int64_t row_end) {
  if (a.kquant == 2) return RunPanel16KQuant<2>(a, row_begin, row_end);
  if (a.kquant == 3) return RunPanel16KQuant<3>(a, row_begin, row_end);
  if (a.kquant == 4) return RunPanel16KQuant<4>(a, row_begin, row_end);
  if (a.kquant == 5) return RunPanel16KQuant<5>(a, row_begin, row_end);
  if (a.kquant == 6) return RunPanel16KQuant<6>(a, row_begin, row_end);
  if (a.kquant == kKQuantIQ4_XS) return RunPanel16KQuant<kKQuantIQ4_XS>(a, row_begin, row_end);
  if (a.group_mins) {
    a.group_bits == 5 ? RunPanel16Group<false, 5, true>(a, row_begin, row_end)
                      : RunPanel16Group<false, 4, true>(a, row_begin, row_end);
  } else if (a.group_bits == 5) {
    RunPanel16Group<false, 5>(a, row_begin, row_end);
  } else if (a.group_bits == 3) {
    a.asymmetric ? RunPanel16Group<true, 3>(a, row_begin, row_end) : RunPanel16Group<false, 3>(a, row_begin, row_end);
  } else {
    a.asymmetric ? RunPanel16Group<true, 4>(a, row_begin, row_end) : RunPanel16Group<false, 4>(a, row_begin, row_end);
  }
}

void tessel_q4_0_panel16_q8_gemm__avx512vnni(const GemmQ8Args& a, int64_t row_begin, int64_t row_end) {
  if (a.nonlinear) return RunPanel16<true, true>(a, row_begin, row_end);
  RunPanel16<true>(a, row_begin, row_end);
}

void tessel_q8_0_panel16_q8_gemm__avx512vnni(const GemmQ8Args& a, int64_t row_begin, int64_t row_end) {
  RunPanel16<false>(a, row_begin, row_end);
}

void tessel_q4_0_q8_gemm__avx512vnni(const GemmQ8Args& a, int64_t row_begin, int64_t row_end) {
  Run<true>(a, row_begin, row_end);
}

void tessel_q8_0_q8_gemm__avx512vnni(const GemmQ8Args& a, int64_t row_begin, int64_t row_end) {
  Run<false>(a, row_begin, row_end);
}

}  // namespace tessel
