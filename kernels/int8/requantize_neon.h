// requantize.h's fixed-point output stage in NEON form (4 i32 lanes), shared by the aarch64 int8 kernels.
#ifndef TESSEL_KERNELS_INT8_REQUANTIZE_NEON_H_
#define TESSEL_KERNELS_INT8_REQUANTIZE_NEON_H_

#include <arm_neon.h>

namespace tessel {
namespace requantize_neon {
// Internal linkage: translation units built for different Arm extensions (dotprod, i8mm) include this,
// and must not share one out-of-line copy compiled for the other's extension.
namespace {

// SaturatingRoundingDoublingHighMul exactly: SQRDMULH gives sat((2ab + 2^31) >> 32) = floor((ab + 2^30) /
// 2^31), which is gemmlowp's nudged, truncating division for either sign of ab (see requantize_avx512.h),
// and it saturates the same single case.
inline int32x4_t RoundingDoublingHighMul(int32x4_t a, int32x4_t b) { return vqrdmulhq_s32(a, b); }

// RoundingDivideByPOT with a per-lane neg_exponent = -exponent in [-31, 0]. SRSHL rounds ties up; taking 1
// from a negative x first (only when it shifts) turns that into ties away from zero. x = INT32_MIN
// saturates instead of wrapping, which is exact since its remainder is 0.
inline int32x4_t RoundingDivideByPOT(int32x4_t x, int32x4_t neg_exponent) {
  const int32x4_t fixup = vshrq_n_s32(vandq_s32(x, neg_exponent), 31);
  return vrshlq_s32(vqaddq_s32(x, fixup), neg_exponent);
}

// RoundingDivideByPOT of a RoundingDoublingHighMul result, which is never INT32_MIN (|a b| < 2^62 when the
// product is negative), so the fixup cannot overflow and one SSRA does the saturating add's work.
inline int32x4_t RoundingDivideProductByPOT(int32x4_t x, int32x4_t neg_exponent) {
  return vrshlq_s32(vsraq_n_s32(x, vandq_s32(x, neg_exponent), 31), neg_exponent);
}

// MultiplyByQuantizedMultiplier with left = max(shift, 0) and neg_right = min(shift, 0); the left shift
// wraps like requantize.h's.
inline int32x4_t MultiplyByQuantizedMultiplier(int32x4_t x, int32x4_t multiplier, int32x4_t left,
                                               int32x4_t neg_right) {
  return RoundingDivideProductByPOT(RoundingDoublingHighMul(vshlq_s32(x, left), multiplier), neg_right);
}

// The same where every lane's shift is negative (a multiplier below 1/2, as convolutions have): no left
// shift, and the fixup applies to every negative product, so it needs no mask.
inline int32x4_t MultiplyByQuantizedMultiplierRight(int32x4_t x, int32x4_t multiplier, int32x4_t neg_right) {
  const int32x4_t product = RoundingDoublingHighMul(x, multiplier);
  return vrshlq_s32(vsraq_n_s32(product, product, 31), neg_right);
}

}  // namespace
}  // namespace requantize_neon
}  // namespace tessel

#endif  // TESSEL_KERNELS_INT8_REQUANTIZE_NEON_H_
