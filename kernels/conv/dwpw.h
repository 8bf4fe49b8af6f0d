// Fused depthwise 3x3 + pointwise 1x1 convolution (tessel.DwPwConv) on the prepacked f32 GEMM, backend
// "gemm": the depthwise output of a block of pixels stays in cache and feeds the pointwise GEMM, whose
// epilogue adds bias and residual and clamps.
#ifndef TESSEL_KERNELS_CONV_DWPW_H_
#define TESSEL_KERNELS_CONV_DWPW_H_

#include "kernels/registry/op_kernel.h"

namespace tessel {

void RegisterDwPwOpKernels(OpKernelRegistry& registry);

}  // namespace tessel

#endif  // TESSEL_KERNELS_CONV_DWPW_H_
