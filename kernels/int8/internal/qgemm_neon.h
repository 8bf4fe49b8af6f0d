// What the aarch64 u8 x s8 GEMM kernels share (qgemm_neon.cc with dotprod, qgemm_neoni8mm.cc with i8mm):
// the output stage for one row of 8 channels, the row tiling and the loop over packed blocks. Include only
// from NEON translation units.
#ifndef TESSEL_KERNELS_INT8_INTERNAL_QGEMM_NEON_H_
#define TESSEL_KERNELS_INT8_INTERNAL_QGEMM_NEON_H_

#include <arm_neon.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/int8/internal/row_tiles.h"
#include "kernels/int8/qgemm.h"
#include "kernels/int8/requantize_neon.h"

namespace tessel {
namespace qgemm_neon {
// Internal linkage, as in requantize_neon.h: the including files are built for different extensions.
namespace {

inline constexpr int kMr = 8;  // rows per register tile
inline constexpr int kNr = 8;  // channels per register tile

// Requantization constants for the 8 channels of a tile (the bias goes into the accumulators' start).
// right_only: every channel's shift is negative, so StoreRow<true> applies.
struct ChannelStage {
  int32x4_t multiplier[2], left[2], neg_right[2];
  bool right_only;
};

inline ChannelStage LoadChannelStage(const PackedQGemmWeights& w, int64_t col) {
  ChannelStage s;
  int32x4_t most = vdupq_n_s32(std::numeric_limits<int32_t>::min());
  for (int v = 0; v < 2; ++v) {
    const int32x4_t shift = vld1q_s32(w.shift.data() + col + 4 * v);
    s.multiplier[v] = vld1q_s32(w.multiplier.data() + col + 4 * v);
    s.left[v] = vmaxq_s32(shift, vdupq_n_s32(0));
    s.neg_right[v] = vminq_s32(shift, vdupq_n_s32(0));
    most = vmaxq_s32(most, shift);
  }
  s.right_only = vmaxvq_s32(most) < 0;
  return s;
}

// Calls f(std::true_type) when the tile's channels all shift right, else f(std::false_type), so that the
// row loop is compiled once for each StoreRow form.
template <typename F>
inline void WithShiftForm(const ChannelStage& c, F&& f) {
  if (c.right_only) {
    f(std::true_type());
  } else {
    f(std::false_type());
  }
}

// The per-call part of the output stage, broadcast once.
struct OutputStage {
  int16x8_t y_zero_point;
  uint8x8_t lo, hi;
  int32x4_t r_zero_point, r_multiplier, r_left, r_neg_right;
};

// y_zero_point, act_min and act_max lie in [0, 255] (the QConv / QGemm checks).
inline OutputStage LoadOutputStage(const QGemmOutputStage& out) {
  OutputStage s;
  s.y_zero_point = vdupq_n_s16(static_cast<int16_t>(out.y_zero_point));
  s.lo = vdup_n_u8(static_cast<uint8_t>(out.act_min));
  s.hi = vdup_n_u8(static_cast<uint8_t>(out.act_max));
  s.r_zero_point = vdupq_n_s32(out.r_zero_point);
  s.r_multiplier = vdupq_n_s32(out.r_multiplier);
  s.r_left = vdupq_n_s32(std::max(out.r_shift, 0));
  s.r_neg_right = vdupq_n_s32(std::min(out.r_shift, 0));
  return s;
}

// Requantizes one row's accumulators for 8 channels (bias included), adds the residual term when
// `residual` is non-null, adds the zero point, clamps and stores the first `valid` channels (1 to 8) as
// u8. The zero point and clamp work on saturating narrows: a sum beyond int16 ends beyond [0, 255] either
// way and clamps as the int32 sum does, so the result equals requantize.h's RequantizeClamp.
template <bool kRightOnly>
inline void StoreRow(int32x4_t acc0, int32x4_t acc1, const ChannelStage& c, const OutputStage& o,
                     const uint8_t* residual, int valid, uint8_t* y) {
  using requantize_neon::MultiplyByQuantizedMultiplier;
  int32x4_t v[2] = {acc0, acc1};
  for (int i = 0; i < 2; ++i) {
    v[i] = kRightOnly ? requantize_neon::MultiplyByQuantizedMultiplierRight(v[i], c.multiplier[i], c.neg_right[i])
                      : MultiplyByQuantizedMultiplier(v[i], c.multiplier[i], c.left[i], c.neg_right[i]);
  }
  if (residual != nullptr) {
    uint8x8_t r8;
    if (valid == kNr) {
      r8 = vld1_u8(residual);
    } else {
      uint8_t tmp[kNr] = {0};
      std::memcpy(tmp, residual, valid);
      r8 = vld1_u8(tmp);
    }
    const uint16x8_t r16 = vmovl_u8(r8);
    const int32x4_t r[2] = {vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(r16))),
                            vreinterpretq_s32_u32(vmovl_u16(vget_high_u16(r16)))};
    for (int i = 0; i < 2; ++i) {
      v[i] = vaddq_s32(v[i], MultiplyByQuantizedMultiplier(vsubq_s32(r[i], o.r_zero_point), o.r_multiplier, o.r_left,
                                                           o.r_neg_right));
    }
  }
  const int16x8_t v16 = vqaddq_s16(vqmovn_high_s32(vqmovn_s32(v[0]), v[1]), o.y_zero_point);
  const uint8x8_t bytes = vmin_u8(vmax_u8(vqmovun_s16(v16), o.lo), o.hi);
  if (valid == kNr) {
    vst1_u8(y, bytes);
  } else {
    uint8_t tmp[kNr];
    vst1_u8(tmp, bytes);
    std::memcpy(y, tmp, valid);
  }
}

// Where a tile reads and writes: rows [row, row + mr) x channels [col, col + 8), row r's segment s at
// ind[r * ind_stride + s], the packed weights of its 8 channels at b, b_stride bytes per step of K.
struct TileArgs {
  const uint8_t* const* ind;
  int64_t ind_stride, segments, segment_len;
  const int8_t* b;
  int64_t b_stride;
  int64_t row, col;
  int mr;
};

// The loop over 64-channel blocks, row tiles and 8-channel tiles; `tile(args)` computes one tile. The
// layout: `panels` with `kpb` bytes of K per channel, in steps of `step_bytes_per_channel` bytes per
// channel (4 for [kp/4][nb][4], 8 for [kp8/8][nb/2][2][8]); a channel's first byte in a step is at
// channel * col_bytes.
template <typename RowPointers, typename Tile>
void Run(int64_t rows, int64_t segments, int64_t segment_len, const PackedQGemmWeights& w, const int8_t* panels,
         int64_t kpb, int64_t step_bytes_per_channel, int64_t col_bytes, RowPointers&& row_pointers, Tile&& tile) {
  const int64_t padded = (w.n + kQGemmLanes - 1) / kQGemmLanes * kQGemmLanes;
  for (int64_t col = 0; col < padded; col += kQGemmNr) {
    const int64_t nb = std::min<int64_t>(kQGemmNr, padded - col);
    const int8_t* block = panels + col * kpb;
    int8_internal::ForEachRowTile<kMr>(rows, [&](int64_t row, int mr) {
      int64_t stride = 0;
      const uint8_t* const* ind = row_pointers(row, mr, &stride);
      for (int64_t sub = 0; sub < nb && col + sub < w.n; sub += kNr) {
        tile(TileArgs{ind, stride, segments, segment_len, block + sub * col_bytes, nb * step_bytes_per_channel, row,
                      col + sub, mr});
      }
    });
  }
}

}  // namespace
}  // namespace qgemm_neon
}  // namespace tessel

#endif  // TESSEL_KERNELS_INT8_INTERNAL_QGEMM_NEON_H_
