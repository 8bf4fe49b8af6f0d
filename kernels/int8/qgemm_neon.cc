// The u8 x s8 GEMM on aarch64 NEON with dotprod. SDOT multiplies s8 by s8, so A is read as a ^ 0x80 =
// a - 128 and the packed dot_bias adds back 128 * sum_k W. A register tile of up to 8 rows x 8 channels
// keeps 16 accumulators; per 16 bytes of K it loads one q register of A per row and, per 4 bytes, the 2
// weight vectors of the packed [kp/4][nb][4] block (4 channels x 4 of K each), for 16 SDOT by lane. Rows
// come through row pointers, as in the VNNI kernel, so the tile also serves implicit-GEMM convolution.
#include <arm_neon.h>

#include <cstring>

#include "kernels/int8/internal/qgemm_neon.h"
#include "kernels/int8/qgemm.h"

namespace tessel {
namespace {

using qgemm_neon::kMr;
using qgemm_neon::TileArgs;

// acc[r][v] += W[v] . A[r] quad `Lane` for the 8 channels of one 4-byte step of K at b.
template <int MR, int Lane>
__attribute__((always_inline)) inline void DotStep(int32x4_t (&acc)[MR][2], const int8x16_t (&a)[MR],
                                                   const int8_t* b) {
  const int8x16_t w0 = vld1q_s8(b);
  const int8x16_t w1 = vld1q_s8(b + 16);
  #pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    acc[r][0] = vdotq_laneq_s32(acc[r][0], w0, a[r], Lane);
    acc[r][1] = vdotq_laneq_s32(acc[r][1], w1, a[r], Lane);
  }
}

template <int MR>
void Tile(const TileArgs& t, const PackedQGemmWeights& w, const QGemmOutputStage& out, uint8_t* y, int64_t ldy) {
  const qgemm_neon::OutputStage os = qgemm_neon::LoadOutputStage(out);
  const uint8x16_t flip = vdupq_n_u8(0x80);
  // Locals, not t's fields: the u8 stores may alias t, which would make every row reload them.
  const int64_t seg4 = t.segment_len / 4, segments = t.segments, row = t.row, channels = t.channels;
  const uint8_t* const* ind = t.ind;
  const int64_t ind_stride = t.ind_stride, b_stride = t.b_stride;
  for (int64_t sub = 0; sub < channels; sub += qgemm_neon::kNr) {
    const int64_t col = t.col + sub;
    // The accumulators start at the bias.
    const int32x4_t bias0 = vld1q_s32(w.dot_bias.data() + col), bias1 = vld1q_s32(w.dot_bias.data() + col + 4);
    int32x4_t acc[MR][2];
    #pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) acc[r][0] = bias0, acc[r][1] = bias1;
    const int8_t* b = t.b + sub * t.col_bytes;
    for (int64_t s = 0; s < segments; ++s) {
      const uint8_t* a[MR];
      #pragma GCC unroll 8
      for (int r = 0; r < MR; ++r) a[r] = ind[r * ind_stride + s];
      int64_t kk = 0;
      for (; kk + 4 <= seg4; kk += 4) {
        int8x16_t av[MR];
        #pragma GCC unroll 8
        for (int r = 0; r < MR; ++r) av[r] = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(a[r] + kk * 4), flip));
        DotStep<MR, 0>(acc, av, b);
        DotStep<MR, 1>(acc, av, b + b_stride);
        DotStep<MR, 2>(acc, av, b + 2 * b_stride);
        DotStep<MR, 3>(acc, av, b + 3 * b_stride);
        b += 4 * b_stride;
      }
      if (kk + 2 <= seg4) {
        int8x16_t av[MR];
        #pragma GCC unroll 8
        for (int r = 0; r < MR; ++r) {
          av[r] = vreinterpretq_s8_u8(veorq_u8(vcombine_u8(vld1_u8(a[r] + kk * 4), vdup_n_u8(0)), flip));
        }
        DotStep<MR, 0>(acc, av, b);
        DotStep<MR, 1>(acc, av, b + b_stride);
        b += 2 * b_stride;
        kk += 2;
      }
      if (kk < seg4) {
        int8x16_t av[MR];
        #pragma GCC unroll 8
        for (int r = 0; r < MR; ++r) {
          uint32_t quad;
          std::memcpy(&quad, a[r] + kk * 4, 4);
          av[r] = vreinterpretq_s8_u8(veorq_u8(vreinterpretq_u8_u32(vdupq_n_u32(quad)), flip));
        }
        DotStep<MR, 0>(acc, av, b);
        b += b_stride;
      }
    }
    const qgemm_neon::ChannelStage cs = qgemm_neon::LoadChannelStage(w, col);
    const int valid = static_cast<int>(std::min<int64_t>(qgemm_neon::kNr, channels - sub));
    qgemm_neon::StoreTile<MR>(
        cs, os, out.residual, valid, y, MR,
        [&](int r, int32x4_t* acc0, int32x4_t* acc1) { *acc0 = acc[r][0], *acc1 = acc[r][1]; },
        [&](int r) { return (row + r) * ldy + col; });
  }
}

using TileFn = void (*)(const TileArgs&, const PackedQGemmWeights&, const QGemmOutputStage&, uint8_t*, int64_t);

TileFn GetTile(int mr) {
  static constexpr TileFn kTiles[kMr] = {Tile<1>, Tile<2>, Tile<3>, Tile<4>, Tile<5>, Tile<6>, Tile<7>, Tile<8>};
  return kTiles[mr - 1];
}

template <typename RowPointers>
void Run(int64_t rows, int64_t segments, int64_t segment_len, const PackedQGemmWeights& w,
         const QGemmOutputStage& stage, uint8_t* y, int64_t ldy, RowPointers&& row_pointers) {
  qgemm_neon::Run(rows, segments, segment_len, w, w.panels.data(), w.kp, 4, 4, row_pointers,
                  [&](const TileArgs& t) { GetTile(t.mr)(t, w, stage, y, ldy); });
}

}  // namespace

void QGemmU8S8__neondot(const uint8_t* a, int64_t rows, const PackedQGemmWeights& w, const QGemmOutputStage& stage,
                        uint8_t* y, int64_t ldy) {
  const uint8_t* ptrs[kMr];
  Run(rows, 1, w.kp, w, stage, y, ldy, [&](int64_t row, int mr, int64_t* stride) {
    for (int r = 0; r < mr; ++r) ptrs[r] = a + (row + r) * w.kp;
    *stride = 1;
    return ptrs;
  });
}

void QGemmU8S8Indirect__neondot(const uint8_t* const* indirection, int64_t segments, int64_t segment_len,
                                int64_t rows, const PackedQGemmWeights& w, const QGemmOutputStage& stage, uint8_t* y,
                                int64_t ldy) {
  Run(rows, segments, segment_len, w, stage, y, ldy, [&](int64_t row, int, int64_t* stride) {
    *stride = segments;
    return indirection + row * segments;
  });
}

}  // namespace tessel
