// Tessel's own operator-level kernels on the packed f32 GEMM (kernels/gemm), backend "gemm":
// channels-last convolution by im2col + GEMM, 1x1 convolution as a GEMM straight on the activations
// (no im2col), and fully connected layers (Gemm, MatMul, tessel.MatMulBiasGelu); bias, residual and
// activation are applied per output block while it is still in cache. Plus the data-movement kernels
// around them (backend "portable"): Transpose and the reshaping ops.
#ifndef TESSEL_KERNELS_CONV_CONV_KERNELS_H_
#define TESSEL_KERNELS_CONV_CONV_KERNELS_H_

#include "kernels/registry/op_kernel.h"

namespace tessel {

void RegisterGemmOpKernels(OpKernelRegistry& registry);
void RegisterLayoutOpKernels(OpKernelRegistry& registry);

}  // namespace tessel

#endif  // TESSEL_KERNELS_CONV_CONV_KERNELS_H_
