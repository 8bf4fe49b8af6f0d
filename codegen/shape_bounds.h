// Upper bounds for data-dependent shapes, a compile step: a value whose extent depends on input values
// (NonZero's count, NonMaxSuppression's selections, a TopK whose k is computed from such a count, and
// everything downstream of them) gets a static shape no smaller than any it can take at run time. The
// memory plan reserves that much; the runtime sets the actual extent when the op runs and refuses an
// output that would exceed its bound.
//
// How: every value is walked in topological order with its largest type and, for small integer tensors
// (shape arithmetic), its largest value. Operators whose count depends on data take their ceilings
// (NonZero: every element; NonMaxSuppression: every box of every class, or max_output_boxes_per_class;
// TopK: k or the axis' extent; Compress: the condition's length; Unique: every element or slice). Other
// operators infer their output types from their inputs' largest types and values: extents only grow with
// their inputs' (shape arithmetic here is min, max, +, x, Gather, Concat, Slice of counts), which the
// runtime's check backs.
// A value with no bound (its extent read from activations) and what it feeds are left to the runtime,
// which allocates them when their ops run.
#ifndef TESSEL_CODEGEN_SHAPE_BOUNDS_H_
#define TESSEL_CODEGEN_SHAPE_BOUNDS_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "graph/graph.h"

namespace tessel {

struct DataDependentBounds {
  // Values whose type is not static (inputs bound, shape arithmetic folded), each with its upper-bound
  // static type.
  absl::flat_hash_map<const Value*, TensorType> bounds;
  // Those without a bound (an extent read from activations, a Loop's growing carried value, or fed by
  // such a value): known only when their op runs.
  absl::flat_hash_set<const Value*> unbounded;
  std::string first_unbounded;  // why the first of those has no bound, naming its node
};

// Both sets empty when every shape is static.
absl::StatusOr<DataDependentBounds> BoundDataDependentShapes(const Graph& graph, const std::vector<Node*>& order);

}  // namespace tessel

#endif  // TESSEL_CODEGEN_SHAPE_BOUNDS_H_
