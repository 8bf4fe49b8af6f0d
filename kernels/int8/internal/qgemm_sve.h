// The output stage the SVE int8 GEMM kernels share (SDOT by lane in qgemm_sve.cc, USMMLA in
// qgemm_svei8mm.cc): one row's accumulators for one vector of channels, requantized, the residual added,
// clamped and stored as u8. Internal linkage, as requantize_sve.h: only SVE translation units include it.
#ifndef TESSEL_KERNELS_INT8_INTERNAL_QGEMM_SVE_H_
#define TESSEL_KERNELS_INT8_INTERNAL_QGEMM_SVE_H_

#include <arm_sve.h>

#include <algorithm>
#include <cstdint>

#include "kernels/int8/qgemm.h"
#include "kernels/int8/requantize_sve.h"

namespace tessel {
namespace qgemm_sve {
namespace {

// The residual's requantization, split once per call (see requantize_sve::SplitShift).
struct ResidualStage {
  int32_t zero_point, multiplier, left, right, mask, half;
};

inline ResidualStage SplitResidual(const QGemmOutputStage& out) {
  const int32_t right = std::max(-out.r_shift, 0);
  const int32_t mask = static_cast<int32_t>((int64_t{1} << right) - 1);
  return {out.r_zero_point, out.r_multiplier, std::max(out.r_shift, 0), right, mask, mask >> 1};
}

// The per-channel constants of one vector of channels from `col` (pc: the active channels): bias (the
// packed bias or dot_bias, whichever the kernel's sums need), multiplier and the split shift. (SVE values
// cannot be struct members, hence the out-parameters.)
inline void LoadChannelStage(svbool_t pc, const int32_t* bias_array, const PackedQGemmWeights& w, int64_t col,
                             svint32_t& bias, svint32_t& multiplier, svuint32_t& left, svuint32_t& right,
                             svint32_t& mask, svint32_t& half) {
  bias = svld1_s32(pc, bias_array + col);
  multiplier = svld1_s32(pc, w.multiplier.data() + col);
  requantize_sve::SplitShift(pc, svld1_s32(pc, w.shift.data() + col), left, right, mask, half);
}

// Requantizes one row's accumulators for one vector of channels (the bias not yet added), adds the residual
// term when `residual` is non-null, clamps and stores the active channels as u8.
inline void StoreRow(svbool_t pc, svint32_t acc, svint32_t bias, svint32_t multiplier, svuint32_t left,
                     svuint32_t right, svint32_t mask, svint32_t half, const QGemmOutputStage& out,
                     const ResidualStage& rs, const uint8_t* residual, uint8_t* y) {
  svint32_t v = requantize_sve::MultiplyByQuantizedMultiplier(pc, svadd_s32_x(pc, acc, bias), multiplier, left, right,
                                                              mask, half);
  v = svadd_n_s32_x(pc, v, out.y_zero_point);
  if (residual != nullptr) {
    const svint32_t r = svsub_n_s32_x(pc, svreinterpret_s32_u32(svld1ub_u32(pc, residual)), rs.zero_point);
    v = svadd_s32_x(pc, v,
                    requantize_sve::MultiplyByQuantizedMultiplier(
                        pc, r, svdup_n_s32(rs.multiplier), svdup_n_u32(static_cast<uint32_t>(rs.left)),
                        svdup_n_u32(static_cast<uint32_t>(rs.right)), svdup_n_s32(rs.mask), svdup_n_s32(rs.half)));
  }
  v = svmin_n_s32_x(pc, svmax_n_s32_x(pc, v, out.act_min), out.act_max);
  // The low 8 bits, as the other kernels store them (the clamp keeps a u8 range in range).
  svst1b_s32(pc, reinterpret_cast<int8_t*>(y), v);
}

// A tile's constants for its channel vector i (pc##i) and their StoreRow arguments.
#define TESSEL_QSVE_CHANNEL_STAGE(i, bias_array, col)                                                        \
  [[maybe_unused]] svint32_t bias##i, mult##i, mask##i, half##i;                                            \
  [[maybe_unused]] svuint32_t left##i, right##i;                                                            \
  qgemm_sve::LoadChannelStage(pc##i, bias_array, w, col, bias##i, mult##i, left##i, right##i, mask##i, half##i);
#define TESSEL_QSVE_STAGE_ARGS(i) bias##i, mult##i, left##i, right##i, mask##i, half##i

}  // namespace
}  // namespace qgemm_sve
}  // namespace tessel

#endif  // TESSEL_KERNELS_INT8_INTERNAL_QGEMM_SVE_H_
