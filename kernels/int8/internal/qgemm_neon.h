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
#include "kernels/int8/requantize.h"
#include "kernels/int8/requantize_neon.h"

namespace tessel {
namespace qgemm_neon {
// Internal linkage, as in requantize_neon.h: the including files are built for different extensions.
namespace {

inline constexpr int kMr = 8;  // rows per register tile
inline constexpr int kNr = 8;  // channels per register tile

// Requantization scales of the 8 channels of a tile (the bias goes into the accumulators' start).
struct ChannelStage {
  float32x4_t scale[2];
};

inline ChannelStage LoadChannelStage(const PackedQGemmWeights& w, int64_t col) {
  return {{vld1q_f32(w.scale.data() + col), vld1q_f32(w.scale.data() + col + 4)}};
}

// The per-call part of the output stage, broadcast once.
struct OutputStage {
  int16x8_t y_zero_point;
  uint8x8_t lo, hi;
  int32x4_t r_zero_point;
  float32x4_t r_scale, bound;
};

// y_zero_point, act_min and act_max lie in [0, 255] (the QConv / QGemm checks).
inline OutputStage LoadOutputStage(const QGemmOutputStage& out) {
  OutputStage s;
  s.y_zero_point = vdupq_n_s16(static_cast<int16_t>(out.y_zero_point));
  s.lo = vdup_n_u8(static_cast<uint8_t>(out.act_min));
  s.hi = vdup_n_u8(static_cast<uint8_t>(out.act_max));
  s.r_zero_point = vdupq_n_s32(out.r_zero_point);
  s.r_scale = vdupq_n_f32(out.r_scale);
  s.bound = vdupq_n_f32(kRequantizeBound);
  return s;
}

// Requantizes one row's accumulators for 8 channels (bias included), adds the residual term r8 when
// kResidual, then the zero point, and clamps to u8. The zero point and clamp work on saturating narrows:
// a sum beyond int16 ends beyond [0, 255] either way and clamps as the int32 sum does, so the result
// equals requantize.h's RequantizeClamp (with a residual term both terms are clamped to the bound first,
// as there, so that their sum cannot wrap). No branches, so that a tile's rows form one straight run.
template <bool kResidual>
inline uint8x8_t RequantizeRow(int32x4_t acc0, int32x4_t acc1, const ChannelStage& c, const OutputStage& o,
                               uint8x8_t r8) {
  int32x4_t v[2] = {acc0, acc1};
  for (int i = 0; i < 2; ++i) {
    v[i] = kResidual ? requantize_neon::RoundScaledClamped(v[i], c.scale[i], o.bound)
                     : requantize_neon::RoundScaled(v[i], c.scale[i]);
  }
  if (kResidual) {
    const uint16x8_t r16 = vmovl_u8(r8);
    const int32x4_t r[2] = {vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(r16))),
                            vreinterpretq_s32_u32(vmovl_u16(vget_high_u16(r16)))};
    for (int i = 0; i < 2; ++i) {
      v[i] = vaddq_s32(v[i],
                       requantize_neon::RoundScaledClamped(vsubq_s32(r[i], o.r_zero_point), o.r_scale, o.bound));
    }
  }
  const int16x8_t v16 = vqaddq_s16(vqmovn_high_s32(vqmovn_s32(v[0]), v[1]), o.y_zero_point);
  return vmin_u8(vmax_u8(vqmovun_s16(v16), o.lo), o.hi);
}

// The first `valid` bytes at p (8 when kFull), the rest 0.
template <bool kFull>
inline uint8x8_t LoadBytes(const uint8_t* p, int valid) {
  if (kFull) return vld1_u8(p);
  uint8_t tmp[kNr] = {0};
  std::memcpy(tmp, p, valid);
  return vld1_u8(tmp);
}

template <bool kFull>
inline void StoreBytes(uint8_t* p, uint8x8_t bytes, int valid) {
  if (kFull) {
    vst1_u8(p, bytes);
  } else {
    uint8_t tmp[kNr];
    vst1_u8(tmp, bytes);
    std::memcpy(p, tmp, valid);
  }
}

// The output stage of a tile of `rows` rows x 8 channels: row(r, &acc0, &acc1) gives row r's
// accumulators, which go to y + offset(r) (and read the residual at the same offset), the first `valid`
// channels. The two choices (a residual, all 8 channels) are made once per tile, so each row loop
// compiles to straight code.
template <int kRows, typename RowAcc, typename Offset>
inline void StoreTile(const ChannelStage& c, const OutputStage& o, const uint8_t* residual, int valid, uint8_t* y,
                      int rows, RowAcc&& row, Offset&& offset) {
  auto run = [&](auto has_residual, auto full) {
    constexpr bool kResidual = decltype(has_residual)::value, kFull = decltype(full)::value;
    #pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
      if (r >= rows) break;
      int32x4_t acc0, acc1;
      row(r, &acc0, &acc1);
      const int64_t off = offset(r);
      const uint8x8_t r8 = kResidual ? LoadBytes<kFull>(residual + off, valid) : vdup_n_u8(0);
      StoreBytes<kFull>(y + off, RequantizeRow<kResidual>(acc0, acc1, c, o, r8), valid);
    }
  };
  auto with_full = [&](auto has_residual) {
    if (valid == kNr) {
      run(has_residual, std::true_type());
    } else {
      run(has_residual, std::false_type());
    }
  };
  if (residual != nullptr) {
    with_full(std::true_type());
  } else {
    with_full(std::false_type());
  }
}

// Where a tile reads and writes: rows [row, row + mr) x channels [col, col + channels) of one block, in
// tiles of 8 channels; row r's segment s at ind[r * ind_stride + s]; the packed weights of the tile at
// channel offset c (a multiple of 8) at b + c * col_bytes, b_stride bytes per step of K.
struct TileArgs {
  const uint8_t* const* ind;
  int64_t ind_stride, segments, segment_len;
  const int8_t* b;
  int64_t b_stride, col_bytes;
  int64_t row, col, channels;
  int mr;
};

// The loop over 64-channel blocks and row tiles; `tile(args)` computes a row tile's 8-channel tiles of
// one block, so that its setup (row pointers, the call) is paid once per block, not per 8 channels. The
// layout: `panels` with `kpb` bytes of K per channel, in steps of `step_bytes_per_channel` bytes per
// channel (4 for [kp/4][nb][4], 8 for [kp8/8][nb/2][2][8]); a channel's first byte in a step is at
// channel * col_bytes.
template <typename RowPointers, typename Tile>
void Run(int64_t rows, int64_t segments, int64_t segment_len, const PackedQGemmWeights& w, const int8_t* panels,
         int64_t kpb, int64_t step_bytes_per_channel, int64_t col_bytes, RowPointers&& row_pointers, Tile&& tile) {
  const int64_t padded = (w.n + kQGemmLanes - 1) / kQGemmLanes * kQGemmLanes;
  for (int64_t col = 0; col < padded; col += kQGemmNr) {
    const int64_t nb = std::min<int64_t>(kQGemmNr, padded - col);
    const int64_t channels = std::min<int64_t>(nb, w.n - col);
    const int8_t* block = panels + col * kpb;
    int8_internal::ForEachRowTile<kMr>(rows, [&](int64_t row, int mr) {
      int64_t stride = 0;
      const uint8_t* const* ind = row_pointers(row, mr, &stride);
      tile(TileArgs{ind, stride, segments, segment_len, block, nb * step_bytes_per_channel, col_bytes, row, col,
                    channels, mr});
    });
  }
}

}  // namespace
}  // namespace qgemm_neon
}  // namespace tessel

#endif  // TESSEL_KERNELS_INT8_INTERNAL_QGEMM_NEON_H_
