// Test access to requantize_sve.h from code built without SVE: each function applies one step of it to n
// lanes read from and written to arrays, so a test can compare them with requantize.h. aarch64 only.
#ifndef TESSEL_KERNELS_INT8_INTERNAL_REQUANTIZE_SVE_PROBE_H_
#define TESSEL_KERNELS_INT8_INTERNAL_REQUANTIZE_SVE_PROBE_H_

#include <cstdint>

namespace tessel::requantize_sve_probe {

// out[i] = RoundingDivideByPOT(x[i], exponent[i]).
void RoundingDivideByPOT(const int32_t* x, const int32_t* exponent, int32_t* out, int64_t n);
// out[i] = MultiplyByQuantizedMultiplier(x[i], multiplier[i], shift[i]).
void MultiplyByQuantizedMultiplier(const int32_t* x, const int32_t* multiplier, const int32_t* shift, int32_t* out,
                                   int64_t n);

}  // namespace tessel::requantize_sve_probe

#endif  // TESSEL_KERNELS_INT8_INTERNAL_REQUANTIZE_SVE_PROBE_H_
