// Fused depthwise 3x3 + pointwise 1x1 convolution (tessel.DwPwConv), backend "fused": Tessel's depthwise
// rows write a block of pixels into a cache-resident buffer, XNNPACK's fully connected microkernels run
// the pointwise step on it at once, and the residual is added while the block is in cache.
#ifndef TESSEL_KERNELS_CONV_DWPW_H_
#define TESSEL_KERNELS_CONV_DWPW_H_

#include "kernels/registry/op_kernel.h"

namespace tessel {

void RegisterDwPwOpKernels(OpKernelRegistry& registry);

}  // namespace tessel

#endif  // TESSEL_KERNELS_CONV_DWPW_H_
