// fuse-conv-add: a Conv (with its optional bias) whose output feeds only an Add with another tensor of
// the same shape (the ResNet residual) becomes tessel.FusedConv with that tensor as its Residual input.
// Run fuse-conv-activation afterwards to fold the activation that follows the Add into the same node.
#ifndef TESSEL_PASSES_FUSE_CONV_ADD_FUSE_CONV_ADD_H_
#define TESSEL_PASSES_FUSE_CONV_ADD_FUSE_CONV_ADD_H_

#include "passes/core/pass.h"

namespace tessel {

PassInfo FuseConvAddPassInfo();

}  // namespace tessel

#endif  // TESSEL_PASSES_FUSE_CONV_ADD_FUSE_CONV_ADD_H_
