// fuse-depthwise-pointwise: a 3x3 depthwise convolution (Conv or FusedConv with group == C_in == C_out)
// whose output (after its activation) feeds only a 1x1 pointwise convolution becomes one
// tessel.DwPwConv (the MobileNet block), keeping both activations, the biases and a residual.
#ifndef TESSEL_PASSES_FUSE_DEPTHWISE_POINTWISE_FUSE_DEPTHWISE_POINTWISE_H_
#define TESSEL_PASSES_FUSE_DEPTHWISE_POINTWISE_FUSE_DEPTHWISE_POINTWISE_H_

#include "passes/core/pass.h"

namespace tessel {

PassInfo FuseDepthwisePointwisePassInfo();

// fuse-expansion (after layout): a channels-last 1x1 FusedConv (stride 1, no padding, group 1, no residual,
// a clamp activation or none) whose output feeds only a channels-last tessel.DwPwConv becomes that
// DwPwConv's expansion (inputs W_exp, B_exp; attributes exp_activation, exp_clip_min/max): MobileNetV2's
// whole inverted-residual block in one operator, so that the expanded tensor never goes to memory.
// Option min-bytes (default 2 MiB): smaller expanded tensors stay in cache anyway and are left alone.
PassInfo FuseExpansionPassInfo();

}  // namespace tessel

#endif  // TESSEL_PASSES_FUSE_DEPTHWISE_POINTWISE_FUSE_DEPTHWISE_POINTWISE_H_
