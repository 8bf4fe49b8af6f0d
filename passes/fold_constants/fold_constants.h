// fold-constants: evaluates nodes whose inputs are all constants (with the reference kernels),
// cascading through the graph in topological order.
#ifndef TESSEL_PASSES_FOLD_CONSTANTS_FOLD_CONSTANTS_H_
#define TESSEL_PASSES_FOLD_CONSTANTS_FOLD_CONSTANTS_H_

#include "passes/core/pass.h"

namespace tessel {

PassInfo FoldConstantsPassInfo();

}  // namespace tessel

#endif  // TESSEL_PASSES_FOLD_CONSTANTS_FOLD_CONSTANTS_H_
