// Pattern matching and rewriting helpers the fusion passes share: operator tests, single-user and
// two-input walks, trailing-axes reductions, broadcast-parameter fitting, and the final erase-and-
// rename step of a pass that fused several patterns.
#ifndef TESSEL_PASSES_UTILS_REWRITE_H_
#define TESSEL_PASSES_UTILS_REWRITE_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"

namespace tessel {

// Whether n is the ONNX (default domain) operator `op`; false for nullptr.
bool IsOp(const Node* n, const char* op);

// The only node reading v when v is read once and is no graph output, else nullptr.
Node* SoleUser(const Graph& g, const Value* v);

// For a two-input node reading v, its other input; nullptr when n is null, has another arity, or does
// not read v.
Value* OtherInput(const Node* n, const Value* v);

// How many trailing axes a keepdims ReduceMean averages over when its axes are exactly the last k axes
// of its input; 0 when they are anything else.
int TrailingReducedAxes(const Node* reduce_mean);

// Whether a value can serve as a normalization's per-element parameter (scale, bias, gain): it must
// broadcast to the `normalized` trailing dims without changing x's shape. A constant with extra
// leading 1s (a [1, 1, D] weight) fits after a reshape.
enum class ParamFit { kNo, kAsIs, kReshape };
ParamFit FitParam(const Value* v, const std::vector<Dim>& normalized, DType dtype);
// v as the fused node's input: itself, or (kReshape) a new constant without the leading 1s, of rank
// `rank`.
absl::StatusOr<Value*> ApplyFit(Graph& g, Value* v, ParamFit fit, size_t rank);

// After a pass has rewired the users of every fused pattern: erases the patterns' nodes (users before
// producers; InternalError when one is still used), gives the fused outputs their names, and drops
// constants only the patterns read.
absl::Status FinishRewrites(Graph& g, const std::vector<Node*>& dead,
                            const std::vector<std::pair<Value*, std::string>>& renames);

}  // namespace tessel

#endif  // TESSEL_PASSES_UTILS_REWRITE_H_
