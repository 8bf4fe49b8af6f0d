// requantize.h's fixed-point output stage in SVE form (any vector length), for the SVE int8 kernels. Base
// SVE only: the SVE2 instructions requantize_neon.h's steps map to (SQRDMULH, SRSHL) are missing on
// SVE-only cores such as Neoverse V1 and A64FX, so both steps are built from SMULH / MUL and shifts.
#ifndef TESSEL_KERNELS_INT8_REQUANTIZE_SVE_H_
#define TESSEL_KERNELS_INT8_REQUANTIZE_SVE_H_

#include <arm_sve.h>

namespace tessel {
namespace requantize_sve {
// Internal linkage, as in requantize_neon.h: only translation units built with SVE include this.
namespace {

// SaturatingRoundingDoublingHighMul exactly. Its value is floor((ab + 2^30) / 2^31) (gemmlowp's nudged,
// truncating division, for either sign of ab; see requantize_neon.h). With ab = hi 2^32 + lo (SMULH's
// signed high word, MUL's low word read unsigned) that is 2 hi + floor((lo + 2^30) / 2^31), and the last
// term is ((lo >> 30) + 1) >> 1 from lo's top two bits. The saturating adds turn the one overflowing case,
// a = b = INT32_MIN (hi = 2^30, lo = 0), into INT32_MAX as requantize.h does; nothing else comes near.
inline svint32_t RoundingDoublingHighMul(svbool_t pg, svint32_t a, svint32_t b) {
  const svint32_t hi = svmulh_s32_x(pg, a, b);
  const svuint32_t lo = svreinterpret_u32_s32(svmul_s32_x(pg, a, b));
  const svuint32_t round = svlsr_n_u32_x(pg, svadd_n_u32_x(pg, svlsr_n_u32_x(pg, lo, 30), 1), 1);
  return svqadd_s32(svqadd_s32(hi, hi), svreinterpret_s32_u32(round));
}

// A per-lane shift split into what MultiplyByQuantizedMultiplier needs: left = max(shift, 0), right =
// max(-shift, 0), mask = 2^right - 1 and half = mask >> 1 (right in [0, 31]: 2^31 - 1 wraps to INT32_MAX,
// as in requantize.h).
inline void SplitShift(svbool_t pg, svint32_t shift, svuint32_t& left, svuint32_t& right, svint32_t& mask,
                       svint32_t& half) {
  left = svreinterpret_u32_s32(svmax_n_s32_x(pg, shift, 0));
  right = svreinterpret_u32_s32(svmax_n_s32_x(pg, svneg_s32_x(pg, shift), 0));
  mask = svsub_n_s32_x(pg, svlsl_s32_x(pg, svdup_n_s32(1), right), 1);
  half = svasr_n_s32_x(pg, mask, 1);
}

// RoundingDivideByPOT by `right`, step for step as requantize.h computes it: x >> right, plus 1 where the
// remainder x & mask exceeds half (half + 1 for negative x: ties away from zero).
inline svint32_t RoundingDivideByPOT(svbool_t pg, svint32_t x, svuint32_t right, svint32_t mask, svint32_t half) {
  const svint32_t remainder = svand_s32_x(pg, x, mask);
  const svint32_t threshold = svsub_s32_x(pg, half, svasr_n_s32_x(pg, x, 31));
  const svint32_t quotient = svasr_s32_x(pg, x, right);
  return svadd_n_s32_m(svcmpgt_s32(pg, remainder, threshold), quotient, 1);
}

// MultiplyByQuantizedMultiplier with the shift split by SplitShift; the left shift wraps like
// requantize.h's.
inline svint32_t MultiplyByQuantizedMultiplier(svbool_t pg, svint32_t x, svint32_t multiplier, svuint32_t left,
                                               svuint32_t right, svint32_t mask, svint32_t half) {
  return RoundingDivideByPOT(pg, RoundingDoublingHighMul(pg, svlsl_s32_x(pg, x, left), multiplier), right, mask,
                             half);
}

}  // namespace
}  // namespace requantize_sve
}  // namespace tessel

#endif  // TESSEL_KERNELS_INT8_REQUANTIZE_SVE_H_
