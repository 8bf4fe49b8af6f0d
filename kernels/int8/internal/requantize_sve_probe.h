// Test access to requantize_sve.h from code built without SVE: applies it to n lanes read from and
// written to arrays, so a test can compare it with requantize.h. aarch64 only.
#ifndef TESSEL_KERNELS_INT8_INTERNAL_REQUANTIZE_SVE_PROBE_H_
#define TESSEL_KERNELS_INT8_INTERNAL_REQUANTIZE_SVE_PROBE_H_

#include <cstdint>

namespace tessel::requantize_sve_probe {

// out[i] = requantize_sve::RoundScaled(x[i], scale[i]) with the clamp [lo, hi].
void RoundScaled(const int32_t* x, const float* scale, float lo, float hi, int32_t* out, int64_t n);

}  // namespace tessel::requantize_sve_probe

#endif  // TESSEL_KERNELS_INT8_INTERNAL_REQUANTIZE_SVE_PROBE_H_
