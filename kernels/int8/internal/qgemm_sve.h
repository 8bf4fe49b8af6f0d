// The output stage the SVE int8 GEMM kernels share (SDOT by lane in qgemm_sve.cc, USMMLA in
// qgemm_svei8mm.cc): one row's accumulators for one vector of channels, requantized, the residual added,
// clamped and stored as u8. Internal linkage, as requantize_sve.h: only SVE translation units include it.
#ifndef TESSEL_KERNELS_INT8_INTERNAL_QGEMM_SVE_H_
#define TESSEL_KERNELS_INT8_INTERNAL_QGEMM_SVE_H_

#include <arm_sve.h>

#include <algorithm>
#include <cstdint>

#include "kernels/int8/internal/row_tiles.h"
#include "kernels/int8/qgemm.h"
#include "kernels/int8/requantize.h"
#include "kernels/int8/requantize_sve.h"

namespace tessel {
namespace qgemm_sve {
namespace {

inline constexpr int kMr = 8;  // rows per register tile

// Where a tile reads and writes: rows from `row` (mr of them), row r's segment s at
// ind[r * ind_stride + s]; the packed weights of its first channel at b, b_stride bytes per step of K, of
// which block_bytes are the 64-channel block's (its channels from the tile's first on); `channels`
// channels (at most 2 x svcntw()) from col.
struct TileArgs {
  const uint8_t* const* ind;
  int64_t ind_stride, segments, segment_len;
  const int8_t* b;
  int64_t b_stride, block_bytes;
  int64_t row, col, channels;
  int mr;
};

// The loop over 64-channel blocks (`panels`, kpb bytes of packed K per channel, step_bytes per channel and
// step of K), row tiles and tiles of 2 x svcntw() channels; row_pointers(row, mr, &stride) gives a tile's
// rows' segment pointers, tile(t) runs it. Channels past n (zero padding) are neither stored nor, past
// the block, read.
template <typename RowPointers, typename Tile>
void Run(int64_t rows, int64_t segments, int64_t segment_len, const PackedQGemmWeights& w, const int8_t* panels,
         int64_t kpb, int64_t step_bytes, RowPointers&& row_pointers, Tile&& tile) {
  const int64_t vl = static_cast<int64_t>(svcntw());
  const int64_t padded = (w.n + kQGemmLanes - 1) / kQGemmLanes * kQGemmLanes;
  for (int64_t col = 0; col < padded; col += kQGemmNr) {
    const int64_t nb = std::min<int64_t>(kQGemmNr, padded - col);
    const int8_t* block = panels + col * kpb;
    int8_internal::ForEachRowTile<kMr>(rows, [&](int64_t row, int mr) {
      int64_t stride = 0;
      const uint8_t* const* ind = row_pointers(row, mr, &stride);
      for (int64_t sub = 0; sub < nb && col + sub < w.n; sub += 2 * vl) {
        tile(TileArgs{ind, stride, segments, segment_len, block + sub * step_bytes, nb * step_bytes,
                      (nb - sub) * step_bytes, row, col + sub, std::min(nb - sub, w.n - col - sub), mr});
      }
    });
  }
}

// The plain and indirect entry points' row pointers over `run(rows, segments, segment_len, row_pointers)`.
template <typename RunFn>
void RunPlain(const uint8_t* a, int64_t rows, const PackedQGemmWeights& w, RunFn&& run) {
  const uint8_t* ptrs[kMr];
  run(rows, 1, w.kp, [&](int64_t row, int mr, int64_t* stride) {
    for (int r = 0; r < mr; ++r) ptrs[r] = a + (row + r) * w.kp;
    *stride = 1;
    return ptrs;
  });
}
template <typename RunFn>
void RunIndirect(const uint8_t* const* indirection, int64_t segments, int64_t segment_len, int64_t rows,
                 RunFn&& run) {
  run(rows, segments, segment_len, [&](int64_t row, int, int64_t* stride) {
    *stride = segments;
    return indirection + row * segments;
  });
}

// The per-channel constants of one vector of channels from `col` (pc: the active channels): bias (the
// packed bias or dot_bias, whichever the kernel's sums need) and scale. (SVE values cannot be struct
// members, hence the out-parameters.)
inline void LoadChannelStage(svbool_t pc, const int32_t* bias_array, const PackedQGemmWeights& w, int64_t col,
                             svint32_t& bias, svfloat32_t& scale) {
  bias = svld1_s32(pc, bias_array + col);
  scale = svld1_f32(pc, w.scale.data() + col);
}

// Requantizes one row's accumulators for one vector of channels (the bias not yet added), adds the residual
// term when `residual` is non-null, clamps and stores the active channels as u8.
inline void StoreRow(svbool_t pc, svint32_t acc, svint32_t bias, svfloat32_t scale, const QGemmOutputStage& out,
                     const uint8_t* residual, uint8_t* y) {
  svint32_t v;
  if (residual == nullptr) {
    v = requantize_sve::RoundScaled(pc, svadd_s32_x(pc, acc, bias), scale,
                                    static_cast<float>(out.act_min - out.y_zero_point),
                                    static_cast<float>(out.act_max - out.y_zero_point));
    v = svadd_n_s32_x(pc, v, out.y_zero_point);
  } else {
    v = requantize_sve::RoundScaled(pc, svadd_s32_x(pc, acc, bias), scale, -kRequantizeBound, kRequantizeBound);
    const svint32_t r = svsub_n_s32_x(pc, svreinterpret_s32_u32(svld1ub_u32(pc, residual)), out.r_zero_point);
    v = svadd_s32_x(pc, v,
                    requantize_sve::RoundScaled(pc, r, svdup_n_f32(out.r_scale), -kRequantizeBound, kRequantizeBound));
    v = svmin_n_s32_x(pc, svmax_n_s32_x(pc, svadd_n_s32_x(pc, v, out.y_zero_point), out.act_min), out.act_max);
  }
  // The low 8 bits, as the other kernels store them (the clamp keeps a u8 range in range).
  svst1b_s32(pc, reinterpret_cast<int8_t*>(y), v);
}

// A tile's constants for its channel vector i (pc##i) and their StoreRow arguments.
#define TESSEL_QSVE_CHANNEL_STAGE(i, bias_array, col) \
  [[maybe_unused]] svint32_t bias##i;                 \
  [[maybe_unused]] svfloat32_t scale##i;              \
  qgemm_sve::LoadChannelStage(pc##i, bias_array, w, col, bias##i, scale##i);

#define TESSEL_QSVE_STAGE_ARGS(i) bias##i, scale##i

}  // namespace
}  // namespace qgemm_sve
}  // namespace tessel

#endif  // TESSEL_KERNELS_INT8_INTERNAL_QGEMM_SVE_H_
