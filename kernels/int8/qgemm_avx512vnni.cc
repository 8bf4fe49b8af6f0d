// The u8 x s8 GEMM on AVX-512 VNNI: vpdpbusd accumulates four u8*s8 products per i32 lane. A register
// tile of up to 6 rows x 64 columns keeps 24 accumulators in zmm registers: per 4 bytes of K it loads 4
// weight vectors (contiguous in the packed block) and broadcasts 6 A quads, for 24 vpdpbusd. A rows come
// through row pointers, so the same tile serves plain GEMM rows and implicit-GEMM convolution (one
// pointer per kernel tap, no im2col). The output stage is requantize.h's f32 arithmetic in vector form,
// applied to the finished tile with the per-channel constants loaded once per tile.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/int8/internal/row_tiles.h"
#include "kernels/int8/qgemm.h"
#include "kernels/int8/requantize.h"
#include "kernels/int8/requantize_avx512.h"

namespace tessel {
namespace {

// Per-channel requantization constants for 16 channels.
struct Stage {
  __m512i bias;
  __m512 scale;
};

Stage LoadStage(const PackedQGemmWeights& w, int64_t col) {
  return {_mm512_loadu_si512(w.bias.data() + col), _mm512_loadu_ps(w.scale.data() + col)};
}

using requantize_avx512::RoundScaled;

// The residual term RequantizeF32(R - r_zp, r_scale) for 16 channels.
inline __m512i ResidualTerm(const QGemmOutputStage& out, const uint8_t* r, __mmask16 valid) {
  const __m512i x = _mm512_sub_epi32(_mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(valid, r)),
                                     _mm512_set1_epi32(out.r_zero_point));
  return RoundScaled(x, _mm512_set1_ps(out.r_scale), _mm512_set1_ps(-kRequantizeBound),
                     _mm512_set1_ps(kRequantizeBound));
}

// Requantizes accumulators (bias not yet added) and stores the valid channels. Without a residual the
// scaled values clamp to the output range less the zero point before the rounding (requantize.h).
inline void Store(__m512i acc, const Stage& s, const QGemmOutputStage& out, __mmask16 valid, const uint8_t* residual,
                  uint8_t* y) {
  const float lo = residual != nullptr ? -kRequantizeBound : static_cast<float>(out.act_min - out.y_zero_point);
  const float hi = residual != nullptr ? kRequantizeBound : static_cast<float>(out.act_max - out.y_zero_point);
  __m512i v = RoundScaled(_mm512_add_epi32(acc, s.bias), s.scale, _mm512_set1_ps(lo), _mm512_set1_ps(hi));
  v = _mm512_add_epi32(v, _mm512_set1_epi32(out.y_zero_point));
  if (residual != nullptr) v = _mm512_add_epi32(v, ResidualTerm(out, residual, valid));
  v = _mm512_min_epi32(_mm512_max_epi32(v, _mm512_set1_epi32(out.act_min)), _mm512_set1_epi32(out.act_max));
  _mm512_mask_cvtepi32_storeu_epi8(y, valid, v);
}

// Rows [row, row + MR) x channels [col, col + 16 NV). Row r's segment s starts at ind[r * ind_stride + s];
// `b` is the packed block (NV * 64 bytes per 4 of K).
template <int MR, int NV>
void Tile(const uint8_t* const* ind, int64_t ind_stride, int64_t segments, int64_t seg4, const int8_t* b,
          const PackedQGemmWeights& w, const QGemmOutputStage& out, int64_t row, int64_t col, uint8_t* y,
          int64_t ldy) {
  __m512i acc[MR][NV];
  #pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
  #pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_setzero_si512();
  }
  for (int64_t s = 0; s < segments; ++s) {
    const uint8_t* a[MR];
    #pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) a[r] = ind[r * ind_stride + s];
    for (int64_t kk = 0; kk < seg4; ++kk) {
      __m512i wv[NV];
      #pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) wv[v] = _mm512_loadu_si512(b + v * 64);
      b += NV * 64;
      #pragma GCC unroll 8
      for (int r = 0; r < MR; ++r) {
        int32_t quad;
        std::memcpy(&quad, a[r] + kk * 4, 4);
        const __m512i x = _mm512_set1_epi32(quad);
        #pragma GCC unroll 8
        for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_dpbusd_epi32(acc[r][v], x, wv[v]);
      }
    }
  }
  #pragma GCC unroll 8
  for (int v = 0; v < NV; ++v) {
    const int64_t c = col + v * kQGemmLanes;
    if (c >= w.n) break;
    const __mmask16 valid = c + 16 <= w.n ? 0xFFFF : static_cast<__mmask16>((1u << (w.n - c)) - 1);
    const Stage s = LoadStage(w, c);
    #pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const int64_t off = (row + r) * ldy + c;
      Store(acc[r][v], s, out, valid, out.residual != nullptr ? out.residual + off : nullptr, y + off);
    }
  }
}

using TileFn = void (*)(const uint8_t* const*, int64_t, int64_t, int64_t, const int8_t*, const PackedQGemmWeights&,
                        const QGemmOutputStage&, int64_t, int64_t, uint8_t*, int64_t);

template <int MR>
constexpr TileFn kRowTiles[4] = {Tile<MR, 1>, Tile<MR, 2>, Tile<MR, 3>, Tile<MR, 4>};

TileFn GetTile(int mr, int nv) {
  static constexpr const TileFn* kTiles[kQGemmMr] = {kRowTiles<1>, kRowTiles<2>, kRowTiles<3>,
                                                     kRowTiles<4>, kRowTiles<5>, kRowTiles<6>};
  return kTiles[mr - 1][nv - 1];
}


template <typename RowPointers>
void Run(int64_t rows, int64_t segments, int64_t seg4, const PackedQGemmWeights& w, const QGemmOutputStage& stage,
         uint8_t* y, int64_t ldy, RowPointers&& row_pointers) {
  const int64_t padded = (w.n + kQGemmLanes - 1) / kQGemmLanes * kQGemmLanes;
  for (int64_t col = 0; col < padded; col += kQGemmNr) {
    const int nv = static_cast<int>(std::min<int64_t>(kQGemmNr, padded - col) / kQGemmLanes);
    const int8_t* b = w.panels.data() + col * w.kp;
    int8_internal::ForEachRowTile<kQGemmMr>(rows, [&](int64_t row, int mr) {
      int64_t stride = 0;
      const uint8_t* const* ind = row_pointers(row, mr, &stride);
      GetTile(mr, nv)(ind, stride, segments, seg4, b, w, stage, row, col, y, ldy);
    });
  }
}

}  // namespace

void QGemmU8S8__avx512vnni(const uint8_t* a, int64_t rows, const PackedQGemmWeights& w, const QGemmOutputStage& stage,
                           uint8_t* y, int64_t ldy) {
  const uint8_t* ptrs[kQGemmMr];
  Run(rows, 1, w.kp / 4, w, stage, y, ldy, [&](int64_t row, int mr, int64_t* stride) {
    for (int r = 0; r < mr; ++r) ptrs[r] = a + (row + r) * w.kp;
    *stride = 1;
    return ptrs;
  });
}

void QGemmU8S8Indirect__avx512vnni(const uint8_t* const* indirection, int64_t segments, int64_t segment_len,
                                   int64_t rows, const PackedQGemmWeights& w, const QGemmOutputStage& stage,
                                   uint8_t* y, int64_t ldy) {
  Run(rows, segments, segment_len / 4, w, stage, y, ldy, [&](int64_t row, int, int64_t* stride) {
    *stride = segments;
    return indirection + row * segments;
  });
}

}  // namespace tessel
