// requantize_sve.h over arrays, built with SVE for the tests (see requantize_sve_probe.h).
#include "kernels/int8/internal/requantize_sve_probe.h"

#include <arm_sve.h>

#include "kernels/int8/requantize_sve.h"

namespace tessel::requantize_sve_probe {

void RoundScaled(const int32_t* x, const float* scale, float lo, float hi, int32_t* out, int64_t n) {
  for (int64_t i = 0; i < n; i += static_cast<int64_t>(svcntw())) {
    const svbool_t pg = svwhilelt_b32_s64(i, n);
    svst1_s32(pg, out + i,
              requantize_sve::RoundScaled(pg, svld1_s32(pg, x + i), svld1_f32(pg, scale + i), lo, hi));
  }
}

}  // namespace tessel::requantize_sve_probe
