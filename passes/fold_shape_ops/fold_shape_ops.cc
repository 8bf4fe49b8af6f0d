// Shape-op folding.
#include "passes/fold_shape_ops/fold_shape_ops.h"

#include <algorithm>

#include "graph/op_registry.h"
#include "passes/utils/pass_utils.h"

namespace tessel {
namespace {

// Small integer tensors only: shape arithmetic, never weights.
constexpr int64_t kMaxShapeElements = 1024;

class FoldShapeOpsPass : public Pass {
 public:
  absl::Status Run(Graph& graph, PassContext& ctx) override {
    absl::StatusOr<std::vector<Node*>> order = graph.TopologicalOrder();
    if (!order.ok()) return order.status();
    for (Node* n : *order) {
      const bool shape = n->domain().empty() && n->op_type() == "Shape";
      absl::StatusOr<bool> folded = FoldShapeNode(graph, n);
      if (!folded.ok()) return folded.status();
      if (*folded) ++ctx.stat(shape ? "shapes-folded" : "nodes-folded");
    }
    // Types downstream may now be static (e.g. a Reshape whose target became constant).
    absl::Status s = InferShapes(graph);
    if (!s.ok()) return s;
    graph.RemoveUnusedConstants();
    return absl::OkStatus();
  }
};

}  // namespace

absl::StatusOr<bool> FoldShapeNode(Graph& graph, Node* n) {
  if (n->domain().empty() && n->op_type() == "Shape" && n->input(0) != nullptr && n->input(0)->type().is_static()) {
    const std::vector<int64_t> shape = n->input(0)->type().StaticShape();
    const int rank = static_cast<int>(shape.size());
    int64_t start = n->GetInt("start", 0), end = n->GetInt("end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::max<int64_t>(0, std::min<int64_t>(start, rank));
    end = std::max<int64_t>(start, std::min<int64_t>(end, rank));
    std::vector<int64_t> dims(shape.begin() + start, shape.begin() + end);
    Tensor t = Tensor::FromVector<int64_t>({static_cast<int64_t>(dims.size())}, dims);
    absl::Status s = ReplaceWithConstant(graph, n->output(0), std::move(t));
    if (!s.ok()) return s;
    return true;
  }
  // Anything else with all-constant, small, non-float outputs is shape arithmetic.
  for (Value* o : n->outputs()) {
    if (IsFloat(o->type().dtype) || o->type().NumElements() < 0 || o->type().NumElements() > kMaxShapeElements) {
      return false;
    }
  }
  return TryFoldNode(graph, n, kMaxShapeElements);
}


PassInfo FoldShapeOpsPassInfo() {
  return SimplePassInfo<FoldShapeOpsPass>("fold-shape-ops",
                                          "turn Shape of static tensors and the integer chains it feeds into constants");
}

}  // namespace tessel
