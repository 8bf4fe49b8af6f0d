// Q4_0 / Q8_0 / IQ4_NL Panel16 kernels (gemv.h) for AVX2 CPUs without AVX-512 (Zen 2/3, Intel before
// Ice Lake, Alder Lake's E-cores): decode (one token, lockstep streams) and prefill (token tiles), int8 x
// in the layouts QuantizeGemvInput writes.
//
// A 64-byte Panel16 vector (16 rows x 4 bytes) is two ymm registers: rows 0-7 and rows 8-15. Without
// VNNI the 4-byte dots are vpmaddubsw (u8 x s8 -> pairs in int16) then vpmaddwd against ones (-> int32):
// - Q4_0: codes 0..15 meet x directly (|pair| <= 2 x 15 x 128 = 3840, so all 8 products of a block add
//   up in int16 before one vpmaddwd), and the block bias (-8 x sum x) makes them code - 8.
// - Q8_0 (stored + 128) and IQ4_NL (looked-up signed levels): signed weights, so vpmaddubsw takes |w|
//   and x with w's sign (vpsignb), |pair| <= 2 x 128 x 127; one vpmaddwd per product.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "kernels/cpu/cpu_features.h"
#include "kernels/gemv/internal/decode_streams.h"
#include "kernels/gemv/internal/gemv_kernels.h"
#include "kernels/gemv/internal/quant_blocks.h"

namespace tessel {
namespace {

constexpr int kPanel = kPanel16Rows;

// Within a Panel16 pair: block h's fp16 scales for rows 8 * half ..., and half `half` of its vector k.
inline const uint8_t* PairScales(const uint8_t* pair, int h, int half) { return pair + 32 * h + 16 * half; }
template <int kK>
inline const uint8_t* PairVector(const uint8_t* pair, int h, int k, int half) {
  return pair + 64 + (h * kK + k) * 64 + 32 * half;
}

inline __m256i Load(const uint8_t* p) { return _mm256_load_si256(reinterpret_cast<const __m256i*>(p)); }

inline __m256 LoadScales8(const uint8_t* p) {
  return _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(p)));
}

inline __m256i Broadcast4(const int8_t* x) {
  int32_t v;
  std::memcpy(&v, x, 4);
  return _mm256_set1_epi32(v);
}

// ggml's IQ4_NL levels as signed bytes in both 128-bit lanes (vpshufb looks up per lane).
inline __m256i IQ4Table() {
  return _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIQ4NLValues)));
}

// w . x over 4-byte groups for signed w: int32 per lane.
inline __m256i SignedDot(__m256i w, __m256i x, __m256i ones) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_sign_epi8(w, w), _mm256_sign_epi8(x, w)), ones);
}

// The signed weights of vector v: Q8_0 un-flipped (stored + 128), IQ4_NL's levels for the low (kHigh =
// false) or high nibbles.
template <bool kQ4, bool kHigh>
inline __m256i SignedWeights(__m256i v, __m256i table) {
  if constexpr (kQ4) {
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    const __m256i codes = kHigh ? _mm256_and_si256(_mm256_srli_epi16(v, 4), low4) : _mm256_and_si256(v, low4);
    return _mm256_shuffle_epi8(table, codes);
  } else {
    return _mm256_xor_si256(v, _mm256_set1_epi8(static_cast<char>(0x80)));
  }
}

// x for block b of one token: Q4_0 layout (groups of 4 blocks, low halves then high halves) or Q8_0's.
template <bool kQ4>
inline int64_t BlockXOffset(int64_t b) {
  return kQ4 ? (b / 4) * 128 + 16 * (b % 4) : b * 32;
}

// The int32 dots of half `half` (8 rows) of block (pair, h) with one token's x: xv[k] is x's dword for
// vector k broadcast (Q4_0: k < 4 the low nibbles', 4 + k the high ones'). kQ4 && !kNL: including the
// block bias; otherwise exact signed dots.
template <bool kQ4, bool kNL>
inline __m256i BlockDots(const uint8_t* pair, int h, int half, const __m256i* xv, __m256i bias, __m256i table) {
  const __m256i ones = _mm256_set1_epi16(1);
  if constexpr (kQ4 && !kNL) {
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    __m256i lo16 = _mm256_setzero_si256(), hi16 = _mm256_setzero_si256();
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {
      const __m256i v = Load(PairVector<4>(pair, h, k, half));
      lo16 = _mm256_add_epi16(lo16, _mm256_maddubs_epi16(_mm256_and_si256(v, low4), xv[k]));
      hi16 = _mm256_add_epi16(hi16, _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(v, 4), low4), xv[4 + k]));
    }
    return _mm256_add_epi32(_mm256_madd_epi16(_mm256_add_epi16(lo16, hi16), ones), bias);
  } else if constexpr (kQ4) {
    __m256i s32 = _mm256_setzero_si256();
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {
      const __m256i v = Load(PairVector<4>(pair, h, k, half));
      s32 = _mm256_add_epi32(s32, SignedDot(SignedWeights<true, false>(v, table), xv[k], ones));
      s32 = _mm256_add_epi32(s32, SignedDot(SignedWeights<true, true>(v, table), xv[4 + k], ones));
    }
    return s32;
  } else {
    __m256i s32 = _mm256_setzero_si256();
#pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) {
      const __m256i v = Load(PairVector<8>(pair, h, k, half));
      s32 = _mm256_add_epi32(s32, SignedDot(SignedWeights<false, false>(v, table), xv[k], ones));
    }
    return s32;
  }
}

// Where x's dword for vector k of block b starts in a token's quantized x (BlockDots' xv order).
template <bool kQ4>
inline int64_t VectorXOffset(int64_t b, int k) {
  return BlockXOffset<kQ4>(b) + (kQ4 && k >= 4 ? 64 + 4 * (k - 4) : 4 * k);
}

// The calling thread's copy of one token's x with every dword broadcast to a vector, 8 per block in
// BlockDots' order: the decode kernel then reads x as memory operands instead of holding 8 broadcasts
// in AVX2's 16 registers.
template <bool kQ4>
const __m256i* ExpandX(const GemmQ8Args& a) {
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  thread_local std::unique_ptr<void, Free> buffer;
  thread_local int64_t capacity = 0;
  const int64_t nb = a.cols / kQuantBlock;
  if (nb * 8 > capacity) {
    buffer.reset(std::aligned_alloc(32, nb * 8 * sizeof(__m256i)));
    capacity = nb * 8;
  }
  auto* out = static_cast<__m256i*>(buffer.get());
  for (int64_t b = 0; b < nb; ++b) {
    for (int k = 0; k < 8; ++k) out[b * 8 + k] = Broadcast4(a.xq + VectorXOffset<kQ4>(b, k));
  }
  return out;
}

// Decode: kS panels (16 rows each) in lockstep, each from its own part of the row range, so that one
// core keeps kS linear streams in flight (as the AVX-512 kernel and the read-bandwidth probe).
template <bool kQ4, bool kNL, int kS, bool kPrefetch>
void GemvPanels(const GemmQ8Args& a, const __m256i* xe, const uint8_t* const* panels, float* const* y,
                const int* rows) {
  constexpr int64_t kPair = Panel16PairBytes(kQ4);
  const int64_t nb = a.cols / kQuantBlock;
  const __m256i table = kNL ? IQ4Table() : _mm256_setzero_si256();
  __m256 acc[kS][2];
#pragma GCC unroll 4
  for (int s = 0; s < kS; ++s) acc[s][0] = acc[s][1] = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    const int64_t j = b / 2;
    const int h = static_cast<int>(b % 2);
    // Q4_0 reads x as memory operands of vpmaddubsw; the signed kernels need x in registers for vpsignb.
    __m256i xr[8];
    const __m256i* xv = xe + b * 8;
    if constexpr (!kQ4 || kNL) {
      for (int k = 0; k < 8; ++k) xr[k] = Broadcast4(a.xq + VectorXOffset<kQ4>(b, k));
      xv = xr;
    }
    const __m256i bias = _mm256_set1_epi32(a.block_bias[b]);
    const __m256 xs = _mm256_set1_ps(a.block_scale[b]);
#pragma GCC unroll 4
    for (int s = 0; s < kS; ++s) {
      const uint8_t* pair = panels[s] + j * kPair;
      if (kPrefetch && h == 0) PrefetchTwoPairsAhead<kPair>(pair);
#pragma GCC unroll 2
      for (int half = 0; half < 2; ++half) {
        const __m256i dot = BlockDots<kQ4, kNL>(pair, h, half, xv, bias, table);
        const __m256 d = _mm256_mul_ps(LoadScales8(PairScales(pair, h, half)), xs);
        acc[s][half] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), d, acc[s][half]);
      }
    }
  }
  for (int s = 0; s < kS; ++s) {
    alignas(32) float out[kPanel];
    _mm256_store_ps(out, acc[s][0]);
    _mm256_store_ps(out + 8, acc[s][1]);
    std::memcpy(y[s], out, sizeof(float) * rows[s]);
  }
}

// Rows [row_begin, row_end) as up to max_streams lockstep streams (decode_streams.h StreamPanels).
template <bool kQ4, bool kNL, bool kPrefetch>
void Gemv(const GemmQ8Args& a, int64_t row_begin, int64_t row_end, int max_streams) {
  const int64_t nb = a.cols / kQuantBlock;
  const __m256i* xe = kQ4 && !kNL ? ExpandX<kQ4>(a) : nullptr;
  StreamPanels(a, row_begin, row_end, (nb + 1) / 2 * Panel16PairBytes(kQ4), max_streams,
               [&](auto streams_tag, const uint8_t* const* panels, float* const* y, const int* rows) {
                 GemvPanels<kQ4, kNL, decltype(streams_tag)::value, kPrefetch>(a, xe, panels, y, rows);
               });
}

// Prefill: T tokens (from t0) x 8 rows (half `half` of the panel at `panel`); y rows [r, r + rows). Each
// weight vector is loaded and unpacked once per block and met by every token of the tile.
template <bool kQ4, bool kNL, int T>
void PrefillTile(const GemmQ8Args& a, const uint8_t* panel, int half, int64_t t0, int64_t r, int rows) {
  constexpr int64_t kPair = Panel16PairBytes(kQ4);
  constexpr int kK = kQ4 ? 4 : 8;
  const int64_t nb = a.cols / kQuantBlock;
  const __m256i table = kNL ? IQ4Table() : _mm256_setzero_si256();
  const __m256i low4 = _mm256_set1_epi8(0x0f);
  const __m256i ones = _mm256_set1_epi16(1);
  const int8_t* xq[T];
  for (int t = 0; t < T; ++t) xq[t] = a.xq + (t0 + t) * a.xq_stride;
  __m256 acc[T];
  for (int t = 0; t < T; ++t) acc[t] = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* pair = panel + (b / 2) * kPair;
    const int h = static_cast<int>(b % 2);
    const int64_t xo = BlockXOffset<kQ4>(b);
    __m256i dot[T];
    for (int t = 0; t < T; ++t) dot[t] = _mm256_setzero_si256();
#pragma GCC unroll 8
    for (int k = 0; k < kK; ++k) {
      const __m256i v = Load(PairVector<kK>(pair, h, k, half));
      if constexpr (kQ4 && !kNL) {
        // int16 sums: 8 products of at most 3840 each.
        const __m256i lo = _mm256_and_si256(v, low4), hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), low4);
#pragma GCC unroll 4
        for (int t = 0; t < T; ++t) {
          dot[t] = _mm256_add_epi16(dot[t], _mm256_maddubs_epi16(lo, Broadcast4(xq[t] + xo + 4 * k)));
          dot[t] = _mm256_add_epi16(dot[t], _mm256_maddubs_epi16(hi, Broadcast4(xq[t] + xo + 64 + 4 * k)));
        }
      } else if constexpr (kQ4) {
        const __m256i lo = SignedWeights<true, false>(v, table), hi = SignedWeights<true, true>(v, table);
#pragma GCC unroll 4
        for (int t = 0; t < T; ++t) {
          dot[t] = _mm256_add_epi32(dot[t], SignedDot(lo, Broadcast4(xq[t] + xo + 4 * k), ones));
          dot[t] = _mm256_add_epi32(dot[t], SignedDot(hi, Broadcast4(xq[t] + xo + 64 + 4 * k), ones));
        }
      } else {
        const __m256i sw = SignedWeights<false, false>(v, table);
#pragma GCC unroll 4
        for (int t = 0; t < T; ++t) {
          dot[t] = _mm256_add_epi32(dot[t], SignedDot(sw, Broadcast4(xq[t] + xo + 4 * k), ones));
        }
      }
    }
    const __m256 d = LoadScales8(PairScales(pair, h, half));
#pragma GCC unroll 4
    for (int t = 0; t < T; ++t) {
      const int64_t tb = (t0 + t) * a.block_stride + b;
      __m256i i32 = dot[t];
      if constexpr (kQ4 && !kNL) {
        i32 = _mm256_add_epi32(_mm256_madd_epi16(i32, ones), _mm256_set1_epi32(a.block_bias[tb]));
      }
      acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(i32), _mm256_mul_ps(d, _mm256_set1_ps(a.block_scale[tb])), acc[t]);
    }
  }
  for (int t = 0; t < T; ++t) {
    alignas(32) float out[8];
    _mm256_store_ps(out, acc[t]);
    std::memcpy(a.y + (t0 + t) * a.ldy + r, out, sizeof(float) * rows);
  }
}

template <bool kQ4, bool kNL>
void Prefill(const GemmQ8Args& a, int64_t row_begin, int64_t row_end) {
  constexpr int kT = 4;
  const int64_t nb = a.cols / kQuantBlock;
  const int64_t panel_bytes = (nb + 1) / 2 * Panel16PairBytes(kQ4);
  const auto* w = static_cast<const uint8_t*>(a.w);
  for (int64_t r = row_begin; r < row_end; r += kPanel) {
    const uint8_t* panel = w + (r / kPanel) * panel_bytes;
    for (int half = 0; half < 2; ++half) {
      const int64_t r8 = r + 8 * half;
      if (r8 >= row_end) break;
      const int rows = static_cast<int>(row_end - r8 < 8 ? row_end - r8 : 8);
      int64_t t = 0;
      for (; t + kT <= a.n; t += kT) PrefillTile<kQ4, kNL, kT>(a, panel, half, t, r8, rows);
      switch (a.n - t) {
        case 3: PrefillTile<kQ4, kNL, 3>(a, panel, half, t, r8, rows); break;
        case 2: PrefillTile<kQ4, kNL, 2>(a, panel, half, t, r8, rows); break;
        case 1: PrefillTile<kQ4, kNL, 1>(a, panel, half, t, r8, rows); break;
        default: break;
      }
    }
  }
}

template <bool kQ4, bool kNL>
void Run(const GemmQ8Args& a, int64_t row_begin, int64_t row_end) {
  if (a.n == 1) {
    // Q4_0 reads x from memory and fits four streams' accumulators in AVX2's 16 registers; the signed
    // kernels hold x in registers, so two streams at most.
    const CpuFeatures& cpu = GetCpuFeatures();
    const int streams = kQ4 && !kNL ? cpu.decode_streams_ymm : std::min(cpu.decode_streams_ymm, 2);
    if (cpu.stream_prefetch) return Gemv<kQ4, kNL, true>(a, row_begin, row_end, streams);
    Gemv<kQ4, kNL, false>(a, row_begin, row_end, streams);
    return;
  }
  Prefill<kQ4, kNL>(a, row_begin, row_end);
}

// One 32-element block (or zeros past cols) to 2 x 16 int8 at lo / hi; returns dx. vcvtps2dq rounds to
// nearest even (the default MXCSR mode) as std::nearbyint does: the portable quantizer's bytes.
inline float QuantizeBlock(const float* x, bool present, int8_t* lo, int8_t* hi) {
  if (!present) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(lo), _mm_setzero_si128());
    _mm_storeu_si128(reinterpret_cast<__m128i*>(hi), _mm_setzero_si128());
    return 0;
  }
  const __m256 sign = _mm256_set1_ps(-0.0f);
  __m256 v[4];
  for (int i = 0; i < 4; ++i) v[i] = _mm256_loadu_ps(x + 8 * i);
  __m256 m = _mm256_max_ps(_mm256_max_ps(_mm256_andnot_ps(sign, v[0]), _mm256_andnot_ps(sign, v[1])),
                           _mm256_max_ps(_mm256_andnot_ps(sign, v[2]), _mm256_andnot_ps(sign, v[3])));
  __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
  h = _mm_max_ps(h, _mm_movehl_ps(h, h));
  h = _mm_max_ss(h, _mm_movehdup_ps(h));
  const float amax = _mm_cvtss_f32(h);
  const __m256 id = _mm256_set1_ps(amax > 0 ? 127 / amax : 0.0f);
  __m256i q[4];
  for (int i = 0; i < 4; ++i) q[i] = _mm256_cvtps_epi32(_mm256_mul_ps(v[i], id));
  // packs interleave the 128-bit lanes; the permutes put the elements back in order.
  const __m256i w01 = _mm256_permute4x64_epi64(_mm256_packs_epi32(q[0], q[1]), 0xd8);
  const __m256i w23 = _mm256_permute4x64_epi64(_mm256_packs_epi32(q[2], q[3]), 0xd8);
  const __m256i b = _mm256_permute4x64_epi64(_mm256_packs_epi16(w01, w23), 0xd8);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(lo), _mm256_castsi256_si128(b));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(hi), _mm256_extracti128_si256(b, 1));
  return amax / 127;
}

}  // namespace

void tessel_quantize_gemv_input__avx2(GemvFormat format, const float* x, int64_t cols, const GemvQ8Input& out) {
  const bool q4 = format == GemvFormat::kQ4_0;
  const int blocks_per_group = q4 ? 4 : 2;
  const int64_t groups = GemvQ8PaddedCols(format, cols) / (kQuantBlock * blocks_per_group);
  const __m256i ones8 = _mm256_set1_epi8(1);
  const __m256i ones16 = _mm256_set1_epi16(1);
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
    // Sums of 4 consecutive q per lane (Q4_0: of the low and the high halves), as the kernels read them.
    for (int half = 0; half < 2; ++half) {
      auto sum4 = [&](const int8_t* p) {
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
        return _mm256_madd_epi16(_mm256_maddubs_epi16(ones8, v), ones16);
      };
      __m256i sum = sum4(q + 32 * half);
      if (q4) sum = _mm256_add_epi32(sum, sum4(q + 64 + 32 * half));
      const __m256i bias = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(sum, q4 ? 3 : 7));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out.bias + g * 16 + 8 * half), bias);
    }
  }
}

void tessel_q4_0_panel16_q8_gemm__avx2(const GemmQ8Args& a, int64_t row_begin, int64_t row_end) {
  if (a.nonlinear) return Run<true, true>(a, row_begin, row_end);
  Run<true, false>(a, row_begin, row_end);
}

void tessel_q8_0_panel16_q8_gemm__avx2(const GemmQ8Args& a, int64_t row_begin, int64_t row_end) {
  Run<false, false>(a, row_begin, row_end);
}

}  // namespace tessel
