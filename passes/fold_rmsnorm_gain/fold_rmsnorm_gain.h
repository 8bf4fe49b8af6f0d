// fold-rmsnorm-gain: when every user of a tessel.RMSNorm with a constant gain is a MatMul with
// constant weights, scales the weight rows by the gain and drops the gain.
#ifndef TESSEL_PASSES_FOLD_RMSNORM_GAIN_FOLD_RMSNORM_GAIN_H_
#define TESSEL_PASSES_FOLD_RMSNORM_GAIN_FOLD_RMSNORM_GAIN_H_

#include "passes/core/pass.h"

namespace tessel {

PassInfo FoldRMSNormGainPassInfo();

}  // namespace tessel

#endif  // TESSEL_PASSES_FOLD_RMSNORM_GAIN_FOLD_RMSNORM_GAIN_H_
