// fold-shape-ops: Shape of a statically shaped tensor becomes a constant, and the integer
// shape-arithmetic chains fed by it (Gather, Concat, Unsqueeze, Slice, Cast, ...) fold too.
#ifndef TESSEL_PASSES_FOLD_SHAPE_OPS_FOLD_SHAPE_OPS_H_
#define TESSEL_PASSES_FOLD_SHAPE_OPS_FOLD_SHAPE_OPS_H_

#include "passes/core/pass.h"

namespace tessel {

PassInfo FoldShapeOpsPassInfo();

}  // namespace tessel

#endif  // TESSEL_PASSES_FOLD_SHAPE_OPS_FOLD_SHAPE_OPS_H_
