// fuse-layernorm: recognizes the decomposed LayerNorm (mean, centre, variance, epsilon, Sqrt, Div, then
// optional scale and bias) and replaces it by one ONNX LayerNormalization.
#ifndef TESSEL_PASSES_FUSE_LAYERNORM_FUSE_LAYERNORM_H_
#define TESSEL_PASSES_FUSE_LAYERNORM_FUSE_LAYERNORM_H_

#include "passes/core/pass.h"

namespace tessel {

PassInfo FuseLayerNormPassInfo();

}  // namespace tessel

#endif  // TESSEL_PASSES_FUSE_LAYERNORM_FUSE_LAYERNORM_H_
