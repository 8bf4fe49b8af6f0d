// The u8 x s8 GEMM on aarch64 with i8mm. USMMLA multiplies a 2x8 u8 block of A (two rows) by a 2x8 s8
// block of W (two channels) into a 2x2 i32 tile, twice the multiply-adds of an SDOT. A register tile of up
// to 8 rows x 8 channels keeps 16 accumulators; per 16 bytes of K it loads one q register of A per row and
// interleaves row pairs into 8-byte halves (zip), and per 8 bytes loads the 4 weight vectors of the packed
// [kp8/8][nb/2][2][8] block, for 16 USMMLA. u8 x s8 needs no flip of A. Each row run (segment) is padded
// to a multiple of 8 in the packed weights; a 4-byte remainder of A is read as 4 bytes (its other half
// meets zero weights). An odd last row is paired with itself and not stored twice.
#include <arm_neon.h>

#include <cstring>

#include "kernels/int8/internal/qgemm_neon.h"
#include "kernels/int8/qgemm.h"

namespace tessel {
namespace {

using qgemm_neon::kMr;
using qgemm_neon::TileArgs;

// acc[p][j] += A pair p (2 rows x 8 of K) . W pair j (2 channels x 8 of K) for one 8-byte step at b.
template <int MP>
__attribute__((always_inline)) inline void MmlaStep(int32x4_t (&acc)[MP][4], const uint8x16_t (&a)[MP],
                                                    const int8_t* b) {
  int8x16_t wv[4];
  #pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) wv[j] = vld1q_s8(b + 16 * j);
  #pragma GCC unroll 4
  for (int p = 0; p < MP; ++p) {
  #pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) acc[p][j] = vusmmlaq_s32(acc[p][j], a[p], wv[j]);
  }
}

// Rows [row, row + mr) as MP = ceil(mr / 2) row pairs.
template <int MP>
void Tile(const TileArgs& t, const PackedQGemmWeights& w, const QGemmOutputStage& out, uint8_t* y, int64_t ldy) {
  const qgemm_neon::OutputStage os = qgemm_neon::LoadOutputStage(out);
  // Locals, not t's fields: the u8 stores may alias t, which would make every row reload them.
  const int64_t row = t.row, channels = t.channels;
  for (int64_t sub = 0; sub < channels; sub += qgemm_neon::kNr) {
    const int64_t col = t.col + sub;
    // The accumulators start at the bias: acc[p][j] holds channels 2j and 2j + 1 of two rows.
    int32x4_t bias[4];
    #pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      const int32x2_t pair = vld1_s32(w.bias.data() + col + 2 * j);
      bias[j] = vcombine_s32(pair, pair);
    }
    int32x4_t acc[MP][4];
    #pragma GCC unroll 4
    for (int p = 0; p < MP; ++p) {
    #pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) acc[p][j] = bias[j];
    }
    const int8_t* b = t.b + sub * t.col_bytes;
    const int64_t len = t.segment_len;
    for (int64_t s = 0; s < t.segments; ++s) {
      const uint8_t* a[2 * MP];
      #pragma GCC unroll 8
      for (int r = 0; r < 2 * MP; ++r) a[r] = t.ind[std::min(r, t.mr - 1) * t.ind_stride + s];
      int64_t kk = 0;
      for (; kk + 16 <= len; kk += 16) {
        uint8x16_t lo[MP], hi[MP];
        #pragma GCC unroll 4
        for (int p = 0; p < MP; ++p) {
          const uint64x2_t x0 = vreinterpretq_u64_u8(vld1q_u8(a[2 * p] + kk));
          const uint64x2_t x1 = vreinterpretq_u64_u8(vld1q_u8(a[2 * p + 1] + kk));
          lo[p] = vreinterpretq_u8_u64(vzip1q_u64(x0, x1));
          hi[p] = vreinterpretq_u8_u64(vzip2q_u64(x0, x1));
        }
        MmlaStep<MP>(acc, lo, b);
        MmlaStep<MP>(acc, hi, b + t.b_stride);
        b += 2 * t.b_stride;
      }
      if (kk + 8 <= len) {
        uint8x16_t av[MP];
        #pragma GCC unroll 4
        for (int p = 0; p < MP; ++p) av[p] = vcombine_u8(vld1_u8(a[2 * p] + kk), vld1_u8(a[2 * p + 1] + kk));
        MmlaStep<MP>(acc, av, b);
        b += t.b_stride;
        kk += 8;
      }
      if (kk < len) {
        uint8x16_t av[MP];
        #pragma GCC unroll 4
        for (int p = 0; p < MP; ++p) {
          uint32_t q0, q1;
          std::memcpy(&q0, a[2 * p] + kk, 4);
          std::memcpy(&q1, a[2 * p + 1] + kk, 4);
          av[p] = vreinterpretq_u8_u32(vcombine_u32(vcreate_u32(q0), vcreate_u32(q1)));
        }
        MmlaStep<MP>(acc, av, b);
        b += t.b_stride;
      }
    }
    const qgemm_neon::ChannelStage cs = qgemm_neon::LoadChannelStage(w, col);
    const int valid = static_cast<int>(std::min<int64_t>(qgemm_neon::kNr, channels - sub));
    // acc[p][j] is [r c, r c+1, r+1 c, r+1 c+1] for channels c = 2j: row 2p's 8 channels are the low halves,
    // row 2p + 1's the high ones. An odd last row (paired with itself) is not stored.
    qgemm_neon::StoreTile<2 * MP>(
        cs, os, out.residual, valid, y, t.mr,
        [&](int r, int32x4_t* acc0, int32x4_t* acc1) {
          const int p = r / 2;
          const int64x2_t a0 = vreinterpretq_s64_s32(acc[p][0]), a1 = vreinterpretq_s64_s32(acc[p][1]);
          const int64x2_t a2 = vreinterpretq_s64_s32(acc[p][2]), a3 = vreinterpretq_s64_s32(acc[p][3]);
          *acc0 = vreinterpretq_s32_s64(r % 2 == 0 ? vzip1q_s64(a0, a1) : vzip2q_s64(a0, a1));
          *acc1 = vreinterpretq_s32_s64(r % 2 == 0 ? vzip1q_s64(a2, a3) : vzip2q_s64(a2, a3));
        },
        [&](int r) { return (row + r) * ldy + col; });
  }
}

using TileFn = void (*)(const TileArgs&, const PackedQGemmWeights&, const QGemmOutputStage&, uint8_t*, int64_t);

TileFn GetTile(int mr) {
  static constexpr TileFn kTiles[kMr / 2] = {Tile<1>, Tile<2>, Tile<3>, Tile<4>};
  return kTiles[(mr + 1) / 2 - 1];
}

template <typename RowPointers>
void Run(int64_t rows, int64_t segments, int64_t segment_len, const PackedQGemmWeights& w,
         const QGemmOutputStage& stage, uint8_t* y, int64_t ldy, RowPointers&& row_pointers) {
  qgemm_neon::Run(rows, segments, segment_len, w, w.mmla_panels.data(), w.kp8, 8, 8, row_pointers,
                  [&](const TileArgs& t) { GetTile(t.mr)(t, w, stage, y, ldy); });
}

}  // namespace

void QGemmU8S8__neoni8mm(const uint8_t* a, int64_t rows, const PackedQGemmWeights& w, const QGemmOutputStage& stage,
                         uint8_t* y, int64_t ldy) {
  const uint8_t* ptrs[kMr];
  Run(rows, 1, w.kp, w, stage, y, ldy, [&](int64_t row, int mr, int64_t* stride) {
    for (int r = 0; r < mr; ++r) ptrs[r] = a + (row + r) * w.kp;
    *stride = 1;
    return ptrs;
  });
}

void QGemmU8S8Indirect__neoni8mm(const uint8_t* const* indirection, int64_t segments, int64_t segment_len,
                                 int64_t rows, const PackedQGemmWeights& w, const QGemmOutputStage& stage, uint8_t* y,
                                 int64_t ldy) {
  Run(rows, segments, segment_len, w, stage, y, ldy, [&](int64_t row, int, int64_t* stride) {
    *stride = segments;
    return indirection + row * segments;
  });
}

}  // namespace tessel
