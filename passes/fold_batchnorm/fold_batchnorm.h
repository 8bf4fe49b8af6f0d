// fold-batchnorm: inference-mode BatchNormalization after a Conv, a Gemm or a 2-D MatMul with constant
// weights is folded into the weights and bias (a bias is created where there was none; a MatMul becomes
// a Gemm); any other BatchNormalization becomes a per-channel Mul and Add with constant scale and shift
// of broadcastable shape [C, 1, ...].
#ifndef TESSEL_PASSES_FOLD_BATCHNORM_FOLD_BATCHNORM_H_
#define TESSEL_PASSES_FOLD_BATCHNORM_FOLD_BATCHNORM_H_

#include "passes/core/pass.h"

namespace tessel {

PassInfo FoldBatchNormPassInfo();

}  // namespace tessel

#endif  // TESSEL_PASSES_FOLD_BATCHNORM_FOLD_BATCHNORM_H_
