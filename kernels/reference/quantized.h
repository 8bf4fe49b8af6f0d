// Reference kernels for QuantizeLinear, DequantizeLinear and the tessel.Q* operators (quantized.cc).
#ifndef TESSEL_KERNELS_REFERENCE_QUANTIZED_H_
#define TESSEL_KERNELS_REFERENCE_QUANTIZED_H_

#include "kernels/reference/reference.h"

namespace tessel {

// Adds the quantized kernels to `r` (the //kernels/reference:quantized library does so for the global
// registry when it is linked).
void RegisterQuantizedReferenceKernels(ReferenceKernelRegistry& r);

}  // namespace tessel

#endif  // TESSEL_KERNELS_REFERENCE_QUANTIZED_H_
