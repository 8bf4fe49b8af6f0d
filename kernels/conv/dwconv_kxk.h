// Depthwise convolution with a large window (tessel.FusedConv in layout nhwc, group == C == M, more than
// 25 taps: ConvNeXt's 7x7), any stride, dilation and padding, bias, residual and clamp fused, on a
// per-pixel kernel compiled for the baseline ISA, AVX2 and AVX-512 (internal/dw_rows.h). XNNPACK's
// (2022) depthwise microkernels stop at 25 taps. The reference twin is the reference tessel.FusedConv
// kernel.
#ifndef TESSEL_KERNELS_CONV_DWCONV_KXK_H_
#define TESSEL_KERNELS_CONV_DWCONV_KXK_H_

#include "kernels/registry/op_kernel.h"

namespace tessel {

void RegisterDwConvKxkOpKernels(OpKernelRegistry& registry);

}  // namespace tessel

#endif  // TESSEL_KERNELS_CONV_DWCONV_KXK_H_
