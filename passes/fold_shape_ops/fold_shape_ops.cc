// Shape-op folding.
#include "passes/fold_shape_ops/fold_shape_ops.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "graph/op_registry.h"
#include "passes/utils/pass_utils.h"

namespace tessel {
namespace {

// Small tensors only: shape arithmetic, never weights.
constexpr int64_t kMaxShapeElements = 1024;

class FoldShapeOpsPass : public Pass {
 public:
  absl::Status Run(Graph& graph, PassContext& ctx) override {
    // Folding makes types downstream static (a Resize whose scales became constant), which can make
    // further Shapes foldable (a detection model's anchors hang on the backbone's extents, which hang
    // on the preprocessing's scale factor): repeat until nothing folds.
    for (int round = 0; round < kMaxRounds; ++round) {
      absl::StatusOr<std::vector<Node*>> order = graph.TopologicalOrder();
      if (!order.ok()) return order.status();
      int folds = 0;
      for (Node* n : *order) {
        const bool shape = n->domain().empty() && n->op_type() == "Shape";
        absl::StatusOr<bool> folded = FoldShapeNode(graph, n);
        if (!folded.ok()) return folded.status();
        if (!*folded) continue;
        ++folds;
        ++ctx.stat(shape ? "shapes-folded" : "nodes-folded");
      }
      absl::Status s = InferShapes(graph);
      if (!s.ok()) return s;
      if (folds == 0) break;
    }
    graph.RemoveUnusedConstants();
    return absl::OkStatus();
  }

 private:
  static constexpr int kMaxRounds = 16;
};

// The dims of Shape(x) [start, end) as far as they are known: a static extent, or -1.
std::vector<int64_t> KnownShapeDims(const Node& shape) {
  const TensorType& x = shape.input(0)->type();
  const int rank = x.rank();
  int64_t start = shape.GetInt("start", 0), end = shape.GetInt("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::max<int64_t>(0, std::min<int64_t>(start, rank));
  end = std::max<int64_t>(start, std::min<int64_t>(end, rank));
  std::vector<int64_t> dims;
  for (int64_t d = start; d < end; ++d) dims.push_back(x.dims[d].is_static() ? x.dims[d].value() : -1);
  return dims;
}

// Gather(Shape(x), constant indices) where every selected extent of x is static, though others are not
// (torchvision's detection heads test a static channel count of a tensor whose box count depends on
// the data): the selected extents.
std::optional<Tensor> GatherOfKnownDims(const Node& n) {
  if (!n.domain().empty() || n.op_type() != "Gather" || n.num_inputs() != 2 || n.input(0) == nullptr ||
      n.input(1) == nullptr || !n.input(1)->is_constant() || n.GetInt("axis", 0) != 0) {
    return std::nullopt;
  }
  const Node* shape = n.input(0)->producer();
  if (shape == nullptr || !shape->domain().empty() || shape->op_type() != "Shape" || shape->input(0) == nullptr) {
    return std::nullopt;
  }
  const std::vector<int64_t> dims = KnownShapeDims(*shape);
  const Tensor& indices = *n.input(1)->constant();
  if (indices.dtype() != DType::kI64 && indices.dtype() != DType::kI32) return std::nullopt;
  std::vector<int64_t> values;
  for (int64_t i = 0; i < indices.num_elements(); ++i) {
    int64_t k = indices.GetAsInt64(i);
    if (k < 0) k += static_cast<int64_t>(dims.size());
    if (k < 0 || k >= static_cast<int64_t>(dims.size()) || dims[k] < 0) return std::nullopt;
    values.push_back(dims[k]);
  }
  return Tensor::FromVector<int64_t>(indices.shape(), values);
}

}  // namespace

absl::StatusOr<bool> FoldShapeNode(Graph& graph, Node* n) {
  if (std::optional<Tensor> known = GatherOfKnownDims(*n)) {
    absl::Status s = ReplaceWithConstant(graph, n->output(0), std::move(*known));
    if (!s.ok()) return s;
    return true;
  }
  if (n->domain().empty() && n->op_type() == "Shape" && n->input(0) != nullptr && n->input(0)->type().is_static()) {
    const std::vector<int64_t> dims = KnownShapeDims(*n);
    Tensor t = Tensor::FromVector<int64_t>({static_cast<int64_t>(dims.size())}, dims);
    absl::Status s = ReplaceWithConstant(graph, n->output(0), std::move(t));
    if (!s.ok()) return s;
    return true;
  }
  // Anything else with all-constant inputs and small outputs is shape arithmetic (an extent not known
  // yet, such as Range's length, is inferred from the constant inputs and bounded by TryFoldNode),
  // including the float scalars of a preprocessing's resize factor. Quantization's own nodes stay for
  // the int8 passes to read.
  if (n->domain().empty() && (n->op_type() == "QuantizeLinear" || n->op_type() == "DequantizeLinear")) return false;
  for (Value* o : n->outputs()) {
    if (o->type().NumElements() > kMaxShapeElements) return false;
  }
  return TryFoldNode(graph, n, kMaxShapeElements);
}


PassInfo FoldShapeOpsPassInfo() {
  return SimplePassInfo<FoldShapeOpsPass>("fold-shape-ops",
                                          "turn Shape of static tensors and the integer chains it feeds into constants");
}

}  // namespace tessel
