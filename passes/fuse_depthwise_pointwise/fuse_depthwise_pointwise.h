// fuse-depthwise-pointwise: a 3x3 depthwise convolution (Conv or FusedConv with group == C_in == C_out)
// whose output (after its activation) feeds only a 1x1 pointwise convolution becomes one
// tessel.DwPwConv (the MobileNet block), keeping both activations, the biases and a residual.
#ifndef TESSEL_PASSES_FUSE_DEPTHWISE_POINTWISE_FUSE_DEPTHWISE_POINTWISE_H_
#define TESSEL_PASSES_FUSE_DEPTHWISE_POINTWISE_FUSE_DEPTHWISE_POINTWISE_H_

#include "passes/pass.h"

namespace tessel {

PassInfo FuseDepthwisePointwisePassInfo();

}  // namespace tessel

#endif  // TESSEL_PASSES_FUSE_DEPTHWISE_POINTWISE_FUSE_DEPTHWISE_POINTWISE_H_
