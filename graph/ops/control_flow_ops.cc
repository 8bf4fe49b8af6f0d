// Control flow: If and Loop, with their branches and body as subgraphs (Attribute::kGraph). A subgraph
// reads the values it uses from the enclosing graph through the node's inputs (after the condition, or
// after Loop's own inputs), which are its graph inputs in the same order.
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

// Loop: inputs M (trip count) and cond, either omitted, then `carried` initial values, then the enclosing
// values its body reads; the body's inputs are (iteration i64, cond bool, carried..., enclosing...) and its
// outputs (cond, carried..., scan...). Outputs: the carried values' final types (an extent that the body
// changes is unknown), then each scan output with an unknown leading extent, the iteration count.
InferResult InferLoop(const InferenceContext& ctx) {
  const Attribute* a = ctx.node.FindAttr("body");
  if (a == nullptr || a->kind != Attribute::Kind::kGraph || a->g == nullptr) {
    return absl::InvalidArgumentError("attribute body must be a subgraph");
  }
  const Graph& body = *a->g;
  const int64_t carried = ctx.node.GetInt("carried", 0);
  const int n_in = ctx.num_inputs();
  const int64_t scans = static_cast<int64_t>(body.outputs().size()) - 1 - carried;
  if (carried < 0 || 2 + carried > n_in || static_cast<int>(body.inputs().size()) != n_in || scans < 0 ||
      ctx.node.num_outputs() != carried + scans) {
    return absl::InvalidArgumentError(absl::StrCat("the body reads ", body.inputs().size(), " values and writes ",
                                                   body.outputs().size(), "; the node passes ", n_in, " with ", carried,
                                                   " carried and has ", ctx.node.num_outputs(), " outputs"));
  }
  for (int i = 0; i < 2; ++i) {
    if (ctx.has_input(i) && ctx.type(i).NumElements() != 1 && ctx.type(i).is_static()) {
      return absl::InvalidArgumentError(absl::StrCat(i == 0 ? "M" : "cond", " has type ", ctx.type(i).ToString(),
                                                     "; expected one element"));
    }
  }
  for (int i = 2; i < n_in; ++i) {
    if (!ctx.has_input(i)) return absl::InvalidArgumentError(absl::StrCat("input ", i, " is missing"));
    const TensorType& want = body.inputs()[i]->type();
    if (ctx.type(i).dtype != want.dtype || ctx.type(i).rank() != want.rank()) {
      return absl::InvalidArgumentError(absl::StrCat("body input '", body.inputs()[i]->name(), "' is ", want.ToString(),
                                                     " but the node passes ", ctx.type(i).ToString()));
    }
  }
  std::vector<TensorType> out;
  for (int64_t k = 0; k < carried; ++k) {
    const TensorType& init = ctx.type(2 + static_cast<int>(k));
    const TensorType& next = body.outputs()[1 + k]->type();
    if (next.dtype != init.dtype || next.rank() != init.rank()) {
      return absl::InvalidArgumentError(absl::StrCat("carried value ", k, " is ", init.ToString(),
                                                     " initially but ", next.ToString(), " after an iteration"));
    }
    std::vector<Dim> dims;
    for (int d = 0; d < init.rank(); ++d) dims.push_back(init.dims[d] == next.dims[d] ? init.dims[d] : UnknownDim());
    out.emplace_back(init.dtype, std::move(dims));
  }
  for (int64_t k = 0; k < scans; ++k) {
    const TensorType& t = body.outputs()[1 + carried + k]->type();
    std::vector<Dim> dims = {UnknownDim()};
    dims.insert(dims.end(), t.dims.begin(), t.dims.end());
    out.emplace_back(t.dtype, std::move(dims));
  }
  return out;
}

}  // namespace

void RegisterControlFlowOps(OpRegistry& r) {
  r.Register({"Loop", "", 2, 1 << 20, 1, 1 << 20, InferLoop,
              "runs body (a subgraph) up to M times while cond holds, carrying values and stacking scan outputs"});
  r.Register({"If", "", 1, 1 << 20, 1, 1 << 20, RequireInputs(1, InferIf),
              "runs then_branch or else_branch (subgraphs) by a one-element condition known at run time"});
}

}  // namespace tessel
