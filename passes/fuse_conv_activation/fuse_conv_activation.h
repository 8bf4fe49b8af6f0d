// fuse-conv-activation: a Conv (or an activation-free tessel.FusedConv, e.g. one carrying a residual)
// followed by an activation becomes one tessel.FusedConv. Activations: Relu; Clip with constant bounds
// (relu6 is Clip(0, 6)); HardSwish; Sigmoid; SiLU written as x * Sigmoid(x). Option `activations`
// limits which are fused.
#ifndef TESSEL_PASSES_FUSE_CONV_ACTIVATION_FUSE_CONV_ACTIVATION_H_
#define TESSEL_PASSES_FUSE_CONV_ACTIVATION_FUSE_CONV_ACTIVATION_H_

#include "passes/core/pass.h"

namespace tessel {

PassInfo FuseConvActivationPassInfo();

}  // namespace tessel

#endif  // TESSEL_PASSES_FUSE_CONV_ACTIVATION_FUSE_CONV_ACTIVATION_H_
