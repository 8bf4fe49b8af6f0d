// fold-shape-ops: Shape of a statically shaped tensor becomes a constant, and the small
// shape-arithmetic chains fed by it (Gather, Concat, Unsqueeze, Slice, Cast, ...) fold too.
#ifndef TESSEL_PASSES_FOLD_SHAPE_OPS_FOLD_SHAPE_OPS_H_
#define TESSEL_PASSES_FOLD_SHAPE_OPS_FOLD_SHAPE_OPS_H_

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "passes/core/pass.h"

namespace tessel {

PassInfo FoldShapeOpsPassInfo();

// Folds one node if it is Shape of a statically shaped tensor, or has all-constant inputs and small
// outputs (Quantize/DequantizeLinear excepted): replaces its outputs by constants of the same names
// and erases it. The pass runs it over a graph until nothing folds; the ONNX importer of the
// command-line tools runs it on each node as it is built (OnnxImportOptions::fold_node), so that
// later nodes see those shapes as constants.
absl::StatusOr<bool> FoldShapeNode(Graph& graph, Node* n);

}  // namespace tessel

#endif  // TESSEL_PASSES_FOLD_SHAPE_OPS_FOLD_SHAPE_OPS_H_
