// Channels-first ONNX Conv, and tessel.FusedConv in layout nchw (with its residual and any activation),
// over 1 to 3 spatial dimensions on the f32 GEMM (backend "gemm"): what the layout pass leaves in
// NC[D]HW, the 1-D convolutions of audio stems (Whisper) and the 3-D ones of video models (r3d_18).
// With at least 16 output channels per group, the weights are packed once as the GEMM's B: per (image,
// group) the input is transposed to channels-last, each block of output positions unfolded into rows
// of (tap, channel) over the taps that read inside the input for some output (padding-only taps are
// left out of the GEMM), multiplied by the packed weights and transposed into the output. Otherwise the
// output is W_g [M/g x C/g*k] times the unfolded input [C/g*k x output positions], taken in column blocks
// that stay in cache; a 1x1 stride-1 layer without padding multiplies the input planes in place. Its
// reference twins are the reference Conv and FusedConv kernels.
#ifndef TESSEL_KERNELS_CONV_CONV_ND_H_
#define TESSEL_KERNELS_CONV_CONV_ND_H_

#include "kernels/registry/op_kernel.h"

namespace tessel {

void RegisterConvNdOpKernels(OpKernelRegistry& registry);

}  // namespace tessel

#endif  // TESSEL_KERNELS_CONV_CONV_ND_H_
