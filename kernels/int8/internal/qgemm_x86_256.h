// The u8 x s8 GEMM on 256-bit x86 vectors, shared by the AVX2 and AVX-VNNI kernels (qgemm_avx2.cc,
// qgemm_avxvnni.cc), which differ only in how 4 bytes of K become i32 sums and in the packed layout they
// read (the `Dot` policy: the VNNI layout, or its 16-bit widening; qgemm.h). A register tile is up to
// Dot::kMr rows x 8 Dot::kNv channels (Dot::kNv ymm); the row pointers serve plain GEMM rows and implicit-GEMM
// convolution alike. The accumulators start at the bias. The output stage is requantize_avx2.h's f32
// arithmetic, bit-exact with the reference; where the layer's scaled accumulators fit int32
// (PackedQGemmWeights::scaled_fits_int32) and so does a residual's term, without the float clamp, two
// rows packed to bytes together with saturation (the packs clamp).
// Internal linkage: include from one translation unit per ISA.
#ifndef TESSEL_KERNELS_INT8_INTERNAL_QGEMM_X86_256_H_
#define TESSEL_KERNELS_INT8_INTERNAL_QGEMM_X86_256_H_

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>

#include "kernels/int8/internal/row_tiles.h"
#include "kernels/int8/qgemm.h"
#include "kernels/int8/requantize.h"
#include "kernels/int8/requantize_avx2.h"

namespace tessel::qgemm_x86_256 {
namespace {

constexpr int kTileChannels = 16;  // channels per 16-byte store: 2 ymm of i32

// Weight prefetch distance in K quads, and the bytes of one quad of a tile's NV vectors (32 elements each).
// Tiles prefetch only when the layer's packed weights pass kPrefetchWeightBytes: smaller ones stay in L2
// from run to run, and there the extra loads cost up to 15% (small-K MobileNetV2 GEMMs, medians of 8 runs
// on a Zen 3).
constexpr int64_t kPrefetchQuads = 16;
constexpr int64_t kPrefetchWeightBytes = 256 << 10;
template <class Dot, int NV>
constexpr int64_t kSliceBytes = NV * 32 * static_cast<int64_t>(sizeof(typename Dot::Elem));

// Per-channel output-stage constants for 8 channels (the bias starts the accumulators).
struct Stage {
  __m256i bias;
  __m256 scale;
};

inline Stage LoadStage(const PackedQGemmWeights& w, int64_t col) {
  return {_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.bias.data() + col)),
          _mm256_loadu_ps(w.scale.data() + col)};
}

using requantize_avx2::RoundScaled;
using requantize_avx2::RoundScaledUnclamped;

// The first `valid` (1..16) of 16 output bytes.
inline void StoreChannels(uint8_t* y, __m128i bytes, int64_t valid) {
  if (valid == kTileChannels) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y), bytes);
  } else {
    alignas(16) uint8_t ybuf[16];
    _mm_store_si128(reinterpret_cast<__m128i*>(ybuf), bytes);
    std::memcpy(y, ybuf, valid);
  }
}

// The residual term RequantizeF32(R - r_zp, r_scale) for 8 channels whose u8 values are in the low 8 bytes
// of `r8`.
inline __m256i ResidualTerm(const QGemmOutputStage& out, __m128i r8) {
  const __m256i x = _mm256_sub_epi32(_mm256_cvtepu8_epi32(r8), _mm256_set1_epi32(out.r_zero_point));
  return RoundScaled(x, _mm256_set1_ps(out.r_scale), _mm256_set1_ps(-kRequantizeBound),
                     _mm256_set1_ps(kRequantizeBound));
}

// Adds the residual terms RequantizeF32(R - r_zp, r_scale), unclamped (ScaledResidualFitsUnclamped), of
// the 16 channels at `r` (the first `valid` readable) to lo (channels 0..7) and hi (8..15).
inline void AddResidualTerms(const QGemmOutputStage& out, const uint8_t* r, int64_t valid, __m256i& lo, __m256i& hi) {
  __m128i r16;
  if (valid == kTileChannels) {
    r16 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(r));
  } else {
    alignas(16) uint8_t rbuf[16] = {};
    std::memcpy(rbuf, r, valid);
    r16 = _mm_load_si128(reinterpret_cast<const __m128i*>(rbuf));
  }
  const __m256i zp = _mm256_set1_epi32(out.r_zero_point);
  const __m256 scale = _mm256_set1_ps(out.r_scale);
  lo = _mm256_add_epi32(lo, RoundScaledUnclamped(_mm256_sub_epi32(_mm256_cvtepu8_epi32(r16), zp), scale));
  hi = _mm256_add_epi32(
      hi, RoundScaledUnclamped(_mm256_sub_epi32(_mm256_cvtepu8_epi32(_mm_srli_si128(r16, 8)), zp), scale));
}

// Rows [row, row + MR) x channels [col, col + 8 NV), with st[0..NV) their output-stage constants. Row r's
// segment s starts at ind[r * ind_stride + s]; `b` points at the tile's first vector in the packed block,
// whose K quads are `quad_stride` elements apart (32 elements per vector of 8 channels).
template <class Dot, int MR, int NV, bool kPrefetch>
void Tile(const uint8_t* const* ind, int64_t ind_stride, int64_t segments, int64_t seg4,
          const typename Dot::Elem* b, int64_t quad_stride, const PackedQGemmWeights& w, const Stage* st,
          const QGemmOutputStage& out, int64_t row, int64_t col, uint8_t* y, int64_t ldy) {
  __m256i acc[MR][NV];
  #pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    #pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) acc[r][v] = st[v].bias;
  }
  for (int64_t s = 0; s < segments; ++s) {
    const uint8_t* a[MR];
    #pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) a[r] = ind[r * ind_stride + s];
    for (int64_t kk = 0; kk < seg4; ++kk) {
      // The weights kPrefetchQuads steps ahead: a row tile's weight slice is a strided stream (one line of
      // every quad_stride bytes), which the hardware prefetchers follow too late when the block comes from
      // memory, as it does once per layer inside a network (AVX2, 3x3 7x7x512 with the caches evicted:
      // 50 -> 64 GMAC/s, medians of 6 runs; ResNet-18's layer4 convolutions 2.1-2.9 -> 1.9-2.1 ms on a Zen 3).
      if constexpr (kPrefetch) {
        #pragma GCC unroll 8
        for (int64_t line = 0; line < kSliceBytes<Dot, NV>; line += 64) {
          _mm_prefetch(reinterpret_cast<const char*>(b + kPrefetchQuads * quad_stride) + line, _MM_HINT_T0);
        }
      }
      typename Dot::W wv[NV];
      #pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) wv[v] = Dot::LoadW(b + v * 32);
      b += quad_stride;
      #pragma GCC unroll 8
      for (int r = 0; r < MR; ++r) {
        int32_t quad;
        std::memcpy(&quad, a[r] + kk * 4, 4);
        const typename Dot::A x = Dot::BroadcastA(quad);
        #pragma GCC unroll 8
        for (int v = 0; v < NV; ++v) acc[r][v] = Dot::Mac(acc[r][v], x, wv[v]);
      }
    }
  }
  const bool residual = out.residual != nullptr;
  if (w.scaled_fits_int32 && (!residual || ScaledResidualFitsUnclamped(out.r_scale))) {
    // No float clamp: the saturating packs clamp, two rows a 256-bit pack (requantize_avx2.h). Its own
    // channel loop: one loop with both forms inside ran 8% slower on MobileNetV2's K = 16 expansion.
    const __m256i zp16 = _mm256_set1_epi16(static_cast<int16_t>(out.y_zero_point));
    const __m256i lo8 = _mm256_set1_epi8(static_cast<char>(out.act_min));
    const __m256i hi8 = _mm256_set1_epi8(static_cast<char>(out.act_max));
    #pragma GCC unroll 8
    for (int v = 0; v < NV; v += 2) {
      const int64_t c = col + 8 * v;
      const int64_t valid = std::min<int64_t>(kTileChannels, w.n - c);
      if (valid <= 0) break;
      #pragma GCC unroll 8
      for (int r = 0; r < MR; r += 2) {
        const int r1 = r + 1 < MR ? r + 1 : r;
        __m256i a0 = RoundScaledUnclamped(acc[r][v], st[v].scale);
        __m256i a1 = RoundScaledUnclamped(acc[r][v + 1], st[v + 1].scale);
        __m256i b0 = RoundScaledUnclamped(acc[r1][v], st[v].scale);
        __m256i b1 = RoundScaledUnclamped(acc[r1][v + 1], st[v + 1].scale);
        if (residual) {
          AddResidualTerms(out, out.residual + (row + r) * ldy + c, valid, a0, a1);
          if (r1 != r) {
            AddResidualTerms(out, out.residual + (row + r1) * ldy + c, valid, b0, b1);
          } else {
            b0 = a0, b1 = a1;
          }
        }
        const __m256i bytes = requantize_avx2::PackRowsU8(a0, a1, b0, b1, zp16, lo8, hi8);
        StoreChannels(y + (row + r) * ldy + c, _mm256_castsi256_si128(bytes), valid);
        if (r1 != r) StoreChannels(y + (row + r1) * ldy + c, _mm256_extracti128_si256(bytes, 1), valid);
      }
    }
    return;
  }
  // Without a residual the scaled values clamp to the output range less the zero point before the
  // rounding, and need no clamp after; with one, to +-kRequantizeBound, and the sum clamps.
  const __m256i zp = _mm256_set1_epi32(out.y_zero_point);
  const __m256i lo = _mm256_set1_epi32(out.act_min), hi = _mm256_set1_epi32(out.act_max);
  const __m256 lo_f = _mm256_set1_ps(residual ? -kRequantizeBound : static_cast<float>(out.act_min - out.y_zero_point));
  const __m256 hi_f = _mm256_set1_ps(residual ? kRequantizeBound : static_cast<float>(out.act_max - out.y_zero_point));
  #pragma GCC unroll 8
  for (int v = 0; v < NV; v += 2) {
    const int64_t c = col + 8 * v;
    const int64_t valid = std::min<int64_t>(kTileChannels, w.n - c);
    if (valid <= 0) break;
    #pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const int64_t off = (row + r) * ldy + c;
      __m256i v0 = _mm256_add_epi32(RoundScaled(acc[r][v], st[v].scale, lo_f, hi_f), zp);
      __m256i v1 = _mm256_add_epi32(RoundScaled(acc[r][v + 1], st[v + 1].scale, lo_f, hi_f), zp);
      if (residual) {
        alignas(16) uint8_t rbuf[16] = {};
        std::memcpy(rbuf, out.residual + off, valid);
        const __m128i r16 = _mm_load_si128(reinterpret_cast<const __m128i*>(rbuf));
        v0 = _mm256_add_epi32(v0, ResidualTerm(out, r16));
        v1 = _mm256_add_epi32(v1, ResidualTerm(out, _mm_srli_si128(r16, 8)));
        v0 = _mm256_min_epi32(_mm256_max_epi32(v0, lo), hi);
        v1 = _mm256_min_epi32(_mm256_max_epi32(v1, lo), hi);
      }
      // Within [0, 255] after the clamp, so the saturating packs are exact.
      const __m256i p = _mm256_permute4x64_epi64(_mm256_packs_epi32(v0, v1), 0xD8);
      const __m128i bytes = _mm_packus_epi16(_mm256_castsi256_si128(p), _mm256_extracti128_si256(p, 1));
      StoreChannels(y + off, bytes, valid);
    }
  }
}

template <class Dot>
using TileFn = void (*)(const uint8_t* const*, int64_t, int64_t, int64_t, const typename Dot::Elem*, int64_t,
                        const PackedQGemmWeights&, const Stage*, const QGemmOutputStage&, int64_t, int64_t, uint8_t*,
                        int64_t);

// Tile<Dot, mr, NV, prefetch> for mr in [1, Dot::kMr].
template <class Dot, int NV, size_t... I>
TileFn<Dot> GetTile(int mr, bool prefetch, std::index_sequence<I...>) {
  static constexpr TileFn<Dot> tiles[] = {Tile<Dot, static_cast<int>(I) + 1, NV, false>...};
  static constexpr TileFn<Dot> prefetching[] = {Tile<Dot, static_cast<int>(I) + 1, NV, true>...};
  return prefetch ? prefetching[mr - 1] : tiles[mr - 1];
}

// Row tiles outer, the block's channel tiles (Dot::kNv vectors, then 2 for a 16-channel rest) inner: the
// tile's A rows stay in L1 while the block's weights stream from L2.
template <class Dot, typename RowPointers>
void Run(int64_t rows, int64_t segments, int64_t seg4, const PackedQGemmWeights& w, const QGemmOutputStage& stage,
         uint8_t* y, int64_t ldy, RowPointers&& row_pointers) {
  const int64_t padded = (w.n + kQGemmLanes - 1) / kQGemmLanes * kQGemmLanes;
  const typename Dot::Elem* panels = Dot::Panels(w);
  const bool prefetch = padded * w.kp * static_cast<int64_t>(sizeof(typename Dot::Elem)) >= kPrefetchWeightBytes;
  for (int64_t block = 0; block < padded; block += kQGemmNr) {
    const int64_t nb = std::min<int64_t>(kQGemmNr, padded - block);
    const typename Dot::Elem* panel = panels + block * w.kp;
    Stage st[kQGemmNr / 8];
    for (int64_t v = 0; v < nb / 8; ++v) st[v] = LoadStage(w, block + 8 * v);
    int8_internal::ForEachRowTile<Dot::kMr>(rows, [&](int64_t row, int mr) {
      int64_t stride = 0;
      const uint8_t* const* ind = row_pointers(row, mr, &stride);
      if (rows == 1 && nb == kQGemmNr) {
        // One row (a batch-1 fully connected layer): the block's 64 channels in one tile, so that its
        // weights stream line after line instead of in four strided passes.
        (prefetch ? Tile<Dot, 1, 8, true> : Tile<Dot, 1, 8, false>)(ind, stride, segments, seg4, panel, nb * 4, w, st,
                                                                     stage, row, block, y, ldy);
        return;
      }
      int64_t c = 0;
      for (; c + 8 * Dot::kNv <= nb; c += 8 * Dot::kNv) {
        GetTile<Dot, Dot::kNv>(mr, prefetch, std::make_index_sequence<Dot::kMr>())(
            ind, stride, segments, seg4, panel + c * 4, nb * 4, w, st + c / 8, stage, row, block + c, y, ldy);
      }
      for (; c < nb; c += kTileChannels) {
        GetTile<Dot, 2>(mr, prefetch, std::make_index_sequence<Dot::kMr>())(
            ind, stride, segments, seg4, panel + c * 4, nb * 4, w, st + c / 8, stage, row, block + c, y, ldy);
      }
    });
  }
}

template <class Dot>
void Gemm(const uint8_t* a, int64_t rows, const PackedQGemmWeights& w, const QGemmOutputStage& stage, uint8_t* y,
          int64_t ldy) {
  const uint8_t* ptrs[Dot::kMr];
  Run<Dot>(rows, 1, w.kp / 4, w, stage, y, ldy, [&](int64_t row, int mr, int64_t* stride) {
    for (int r = 0; r < mr; ++r) ptrs[r] = a + (row + r) * w.kp;
    *stride = 1;
    return ptrs;
  });
}

template <class Dot>
void GemmIndirect(const uint8_t* const* indirection, int64_t segments, int64_t segment_len, int64_t rows,
                  const PackedQGemmWeights& w, const QGemmOutputStage& stage, uint8_t* y, int64_t ldy) {
  Run<Dot>(rows, segments, segment_len / 4, w, stage, y, ldy, [&](int64_t row, int, int64_t* stride) {
    *stride = segments;
    return indirection + row * segments;
  });
}

}  // namespace
}  // namespace tessel::qgemm_x86_256

#endif  // TESSEL_KERNELS_INT8_INTERNAL_QGEMM_X86_256_H_
