// Helpers shared by passes: constant evaluation of nodes, use queries, small constant matching.
#ifndef TESSEL_PASSES_UTILS_PASS_UTILS_H_
#define TESSEL_PASSES_UTILS_PASS_UTILS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"

namespace tessel {

// If every present input of `n` is a constant, evaluates it with the reference kernels and replaces
// its outputs by constants that keep the outputs' names; the node is erased. Returns whether it
// folded. Nodes whose outputs would exceed max_elements in total are left alone.
absl::StatusOr<bool> TryFoldNode(Graph& graph, Node* n, int64_t max_elements);

// Replaces `v` (a node output) by a new constant holding `data`, under v's name; the producer is
// erased when none of its outputs is used any more.
absl::Status ReplaceWithConstant(Graph& graph, Value* v, Tensor data);

// Removes `n` when it is a pure pass-through: every use of output 0 reads `input` instead.
absl::Status BypassNode(Graph& graph, Node* n, Value* input);

// Number of users of v, counting a graph output as a user.
int NumUsers(const Graph& graph, const Value* v);

// The constant's single value when v is a constant holding one element (any shape), else false.
bool GetScalarConstant(const Value* v, double* out);
// True when v is a constant whose every element equals `x`.
bool IsConstantFilledWith(const Value* v, double x);
// True when every element of v equals x (also when v is empty): strides, pads and dilations checks.
bool AllEqual(const std::vector<int64_t>& v, int64_t x);

}  // namespace tessel

#endif  // TESSEL_PASSES_UTILS_PASS_UTILS_H_
