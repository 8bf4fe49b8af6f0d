// An out-of-tree pass: merges x * c1 * c2 (scalar constants) into x * (c1*c2).
#ifndef CUSTOM_PIPELINE_FOLD_MUL_CHAIN_H_
#define CUSTOM_PIPELINE_FOLD_MUL_CHAIN_H_

#include "passes/core/pass.h"

namespace example {

tessel::PassInfo FoldMulChainPassInfo();

}  // namespace example

#endif  // CUSTOM_PIPELINE_FOLD_MUL_CHAIN_H_
