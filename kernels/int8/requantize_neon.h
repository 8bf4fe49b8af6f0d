// requantize.h's f32 output stage in NEON form (4 i32 lanes), shared by the aarch64 int8 kernels.
#ifndef TESSEL_KERNELS_INT8_REQUANTIZE_NEON_H_
#define TESSEL_KERNELS_INT8_REQUANTIZE_NEON_H_

#include <arm_neon.h>

namespace tessel {
namespace requantize_neon {
// Internal linkage: translation units built for different Arm extensions (dotprod, i8mm) include this,
// and must not share one out-of-line copy compiled for the other's extension.
namespace {

// x * scale rounded half to even: SCVTF and FMUL round to nearest even (FPCR's default) and FCVTNS rounds
// half to even, saturating at the int32 range. That is requantize.h's RequantizeF32 wherever |x * scale|
// <= kRequantizeBound, and beyond it the result keeps its sign and lies past the bound, so a caller whose
// saturating narrows and clamp follow directly gets RequantizeClamp's result without clamping first.
inline int32x4_t RoundScaled(int32x4_t x, float32x4_t scale) {
  return vcvtnq_s32_f32(vmulq_f32(vcvtq_f32_s32(x), scale));
}

// RequantizeF32 exactly: the product clamped to [-bound, bound] (bound = kRequantizeBound) before the
// rounding, for callers that add another term before clamping.
inline int32x4_t RoundScaledClamped(int32x4_t x, float32x4_t scale, float32x4_t bound) {
  const float32x4_t f = vmulq_f32(vcvtq_f32_s32(x), scale);
  return vcvtnq_s32_f32(vminq_f32(vmaxq_f32(f, vnegq_f32(bound)), bound));
}

}  // namespace
}  // namespace requantize_neon
}  // namespace tessel

#endif  // TESSEL_KERNELS_INT8_REQUANTIZE_NEON_H_
