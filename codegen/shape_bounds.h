// Upper bounds for data-dependent shapes, a compile step: a value whose extent depends on input values
// (NonZero's count, NonMaxSuppression's selections, a TopK whose k is computed from such a count, and
// everything downstream of them) gets a static shape no smaller than any it can take at run time. The
// memory plan reserves that much; the runtime sets the actual extent when the op runs and refuses an
// output that would exceed its bound.
//
// How: every value is walked in topological order with its largest type and, for small integer tensors
// (shape arithmetic), its largest value. Operators whose count depends on data take their ceilings
// (NonZero: every element; NonMaxSuppression: every box of every class, or max_output_boxes_per_class;
// TopK: k or the axis' extent; Compress: the condition's length). Other operators infer their output
// types from their inputs' largest types and values: extents only grow with their inputs' (shape
// arithmetic here is min, max, +, x, Gather, Concat, Slice of counts), which the runtime's check backs.
#ifndef TESSEL_CODEGEN_SHAPE_BOUNDS_H_
#define TESSEL_CODEGEN_SHAPE_BOUNDS_H_

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "graph/graph.h"

namespace tessel {

// For every value of `graph` whose type is not static (inputs bound, shape arithmetic folded): its
// upper-bound static type. Empty when every shape is static. An error names the first node whose output
// cannot be bounded (an extent that hangs on a float value, or on an operator without a ceiling).
absl::StatusOr<absl::flat_hash_map<const Value*, TensorType>> BoundDataDependentShapes(
    const Graph& graph, const std::vector<Node*>& order);

}  // namespace tessel

#endif  // TESSEL_CODEGEN_SHAPE_BOUNDS_H_
