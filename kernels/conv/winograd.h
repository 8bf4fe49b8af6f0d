// Winograd convolution for channels-last 3x3 stride-1 layers (tessel.FusedConv), in two variants:
// F(2x2, 3x3) (4x4 input tiles, 2.25x fewer multiplications than direct convolution) and F(4x4, 3x3)
// (6x6 input tiles, 4x fewer, larger rounding error). Per block of output tiles: the input transform
// V = B^T d B, one GEMM per transform point (XNNPACK fully connected operators over weights
// U = G g G^T transformed and packed once), and the output transform Y = A^T M A fused with bias,
// residual and clamp; blocks keep V and M in L2. The cost model picks F(4x4) on large feature maps and
// F(2x2) where, with few tiles, its 2.25x larger transformed weights dominate.
#ifndef TESSEL_KERNELS_CONV_WINOGRAD_H_
#define TESSEL_KERNELS_CONV_WINOGRAD_H_

#include "kernels/registry/op_kernel.h"

namespace tessel {

void RegisterWinogradOpKernels(OpKernelRegistry& registry);

}  // namespace tessel

#endif  // TESSEL_KERNELS_CONV_WINOGRAD_H_
