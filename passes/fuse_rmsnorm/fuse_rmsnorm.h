// fuse-rmsnorm: recognizes RMSNorm in the form PyTorch exports it, x * 1/sqrt(mean(x^2) + eps) * gain
// (with the Div, Reciprocal and gain-order variants), and replaces it by one tessel.RMSNorm.
#ifndef TESSEL_PASSES_FUSE_RMSNORM_FUSE_RMSNORM_H_
#define TESSEL_PASSES_FUSE_RMSNORM_FUSE_RMSNORM_H_

#include "passes/core/pass.h"

namespace tessel {

PassInfo FuseRMSNormPassInfo();

}  // namespace tessel

#endif  // TESSEL_PASSES_FUSE_RMSNORM_FUSE_RMSNORM_H_
