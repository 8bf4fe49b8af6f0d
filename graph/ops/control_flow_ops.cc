// Control flow: If, with its branches as subgraphs (Attribute::kGraph). The branches read the values
// they use from the enclosing graph through the node's inputs after the condition, which are their
// graph inputs in the same order; only the taken branch runs.
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/ops/shape_util.h"

namespace tessel {
namespace {

using InferResult = absl::StatusOr<std::vector<TensorType>>;

// A branch's checked subgraph: as many inputs as the node has after its condition, of matching dtype
// and rank, and as many outputs as the node.
absl::StatusOr<const Graph*> Branch(const InferenceContext& ctx, const char* name) {
  const Attribute* a = ctx.node.FindAttr(name);
  if (a == nullptr || a->kind != Attribute::Kind::kGraph || a->g == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("attribute ", name, " must be a subgraph"));
  }
  const Graph& g = *a->g;
  if (static_cast<int>(g.inputs().size()) != ctx.num_inputs() - 1) {
    return absl::InvalidArgumentError(absl::StrCat(name, " reads ", g.inputs().size(), " enclosing values, the node passes ",
                                                   ctx.num_inputs() - 1));
  }
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const TensorType& want = g.inputs()[i]->type();
    if (!ctx.has_input(static_cast<int>(i) + 1)) {
      return absl::InvalidArgumentError(absl::StrCat(name, " input '", g.inputs()[i]->name(), "' is not passed"));
    }
    const TensorType& got = ctx.type(static_cast<int>(i) + 1);
    if (got.dtype != want.dtype || got.rank() != want.rank()) {
      return absl::InvalidArgumentError(absl::StrCat(name, " input '", g.inputs()[i]->name(), "' is ",
                                                     want.ToString(), " but the node passes ", got.ToString()));
    }
  }
  if (static_cast<int>(g.outputs().size()) != ctx.node.num_outputs()) {
    return absl::InvalidArgumentError(absl::StrCat(name, " has ", g.outputs().size(), " outputs, the node ",
                                                   ctx.node.num_outputs()));
  }
  return &g;
}

// The outputs: the taken branch's types where the condition is known, else each output's dtype and
// rank (the branches must agree) with the extents both branches give, and unknown extents elsewhere.
InferResult InferIf(const InferenceContext& ctx) {
  const TensorType& cond = ctx.type(0);
  if (cond.NumElements() != 1) {
    return absl::InvalidArgumentError(absl::StrCat("condition has type ", cond.ToString(), "; expected one element"));
  }
  absl::StatusOr<const Graph*> then_branch = Branch(ctx, "then_branch");
  if (!then_branch.ok()) return then_branch.status();
  absl::StatusOr<const Graph*> else_branch = Branch(ctx, "else_branch");
  if (!else_branch.ok()) return else_branch.status();
  std::vector<TensorType> out;
  for (int i = 0; i < ctx.node.num_outputs(); ++i) {
    const TensorType& a = (*then_branch)->outputs()[i]->type();
    const TensorType& b = (*else_branch)->outputs()[i]->type();
    if (a.dtype != b.dtype || a.rank() != b.rank()) {
      return absl::UnimplementedError(absl::StrCat("output ", i, " is ", a.ToString(), " in then_branch but ",
                                                   b.ToString(), " in else_branch; the branches must agree on dtype "
                                                   "and rank"));
    }
    std::vector<Dim> dims;
    for (int d = 0; d < a.rank(); ++d) dims.push_back(a.dims[d] == b.dims[d] ? a.dims[d] : UnknownDim());
    out.emplace_back(a.dtype, std::move(dims));
  }
  // Extents inside a branch may be its own symbols or depend on values; a known condition does not
  // make them known, so the merged types stand. Running the node (RunReferenceNode) gives concrete ones.
  return out;
}

}  // namespace

void RegisterControlFlowOps(OpRegistry& r) {
  r.Register({"If", "", 1, 1 << 20, 1, 1 << 20, RequireInputs(1, InferIf),
              "runs then_branch or else_branch (subgraphs) by a one-element condition known at run time"});
}

}  // namespace tessel
