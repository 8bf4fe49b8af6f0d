// requantize_sve.h over arrays, built with SVE for the tests (see requantize_sve_probe.h).
#include "kernels/int8/internal/requantize_sve_probe.h"

#include <arm_sve.h>

#include "kernels/int8/requantize_sve.h"

namespace tessel::requantize_sve_probe {

void RoundingDivideByPOT(const int32_t* x, const int32_t* exponent, int32_t* out, int64_t n) {
  for (int64_t i = 0; i < n; i += static_cast<int64_t>(svcntw())) {
    const svbool_t pg = svwhilelt_b32_s64(i, n);
    svuint32_t left, right;
    svint32_t mask, half;
    requantize_sve::SplitShift(pg, svneg_s32_x(pg, svld1_s32(pg, exponent + i)), left, right, mask, half);
    svst1_s32(pg, out + i, requantize_sve::RoundingDivideByPOT(pg, svld1_s32(pg, x + i), right, mask, half));
  }
}

void MultiplyByQuantizedMultiplier(const int32_t* x, const int32_t* multiplier, const int32_t* shift, int32_t* out,
                                   int64_t n) {
  for (int64_t i = 0; i < n; i += static_cast<int64_t>(svcntw())) {
    const svbool_t pg = svwhilelt_b32_s64(i, n);
    svuint32_t left, right;
    svint32_t mask, half;
    requantize_sve::SplitShift(pg, svld1_s32(pg, shift + i), left, right, mask, half);
    svst1_s32(pg, out + i,
              requantize_sve::MultiplyByQuantizedMultiplier(pg, svld1_s32(pg, x + i), svld1_s32(pg, multiplier + i),
                                                            left, right, mask, half));
  }
}

}  // namespace tessel::requantize_sve_probe
