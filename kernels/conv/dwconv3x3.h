// Depthwise 3x3 convolution (tessel.FusedConv with group == C == M, stride 1 or 2, no dilation, any padding,
// bias, residual and clamp fused) on Tessel's hand-written aarch64 microkernels: NEON (backend "neon") and
// vector-length agnostic SVE (backend "sve"). Registers nothing on other targets.
#ifndef TESSEL_KERNELS_CONV_DWCONV3X3_H_
#define TESSEL_KERNELS_CONV_DWCONV3X3_H_

#include "kernels/registry/op_kernel.h"

namespace tessel {

void RegisterDwConv3x3OpKernels(OpKernelRegistry& registry);

}  // namespace tessel

#endif  // TESSEL_KERNELS_CONV_DWCONV3X3_H_
