// requantize.h's f32 output stage in SVE form (any vector length), for the SVE int8 kernels.
#ifndef TESSEL_KERNELS_INT8_REQUANTIZE_SVE_H_
#define TESSEL_KERNELS_INT8_REQUANTIZE_SVE_H_

#include <arm_sve.h>

namespace tessel {
namespace requantize_sve {
// Internal linkage, as in requantize_neon.h: only translation units built with SVE include this.
namespace {

// RequantizeF32 on the active lanes with the clamp [lo, hi] before the rounding: +-kRequantizeBound, or,
// where nothing is added after, [act_min - zero point, act_max - zero point] (see requantize_avx2.h).
// SCVTF and FMUL round to nearest even; FRINTN rounds half to even, after which FCVTZS is exact.
inline svint32_t RoundScaled(svbool_t pg, svint32_t x, svfloat32_t scale, float lo, float hi) {
  const svfloat32_t f = svmul_f32_x(pg, svcvt_f32_s32_x(pg, x), scale);
  return svcvt_s32_f32_x(pg, svrintn_f32_x(pg, svmin_n_f32_x(pg, svmax_n_f32_x(pg, f, lo), hi)));
}

}  // namespace
}  // namespace requantize_sve
}  // namespace tessel

#endif  // TESSEL_KERNELS_INT8_REQUANTIZE_SVE_H_
