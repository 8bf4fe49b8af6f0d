// Winograd F(2x2, 3x3) convolution for channels-last 3x3 stride-1 layers (tessel.FusedConv): per
// block of 2x2 output tiles, the input transform V = B^T d B, 16 GEMMs (one per transform point,
// XNNPACK fully connected operators over weights U = G g G^T transformed and packed once), and the
// output transform Y = A^T M A fused with bias, residual and clamp. 2.25x fewer multiplications than
// direct convolution; blocks keep V and M in L2.
#ifndef TESSEL_KERNELS_CONV_WINOGRAD_H_
#define TESSEL_KERNELS_CONV_WINOGRAD_H_

#include "kernels/registry/op_kernel.h"

namespace tessel {

void RegisterWinogradOpKernels(OpKernelRegistry& registry);

}  // namespace tessel

#endif  // TESSEL_KERNELS_CONV_WINOGRAD_H_
