// Constant folding.
#include "passes/fold_constants/fold_constants.h"

#include "passes/utils/pass_utils.h"

namespace tessel {
namespace {

class FoldConstantsPass : public Pass {
 public:
  explicit FoldConstantsPass(int64_t max_elements) : max_elements_(max_elements) {}
  absl::Status Run(Graph& graph, PassContext& ctx) override {
    absl::StatusOr<std::vector<Node*>> order = graph.TopologicalOrder();
    if (!order.ok()) return order.status();
    // Topological order makes folding cascade: a folded node's users see constant inputs.
    for (Node* n : *order) {
      absl::StatusOr<bool> folded = TryFoldNode(graph, n, max_elements_);
      if (!folded.ok()) return folded.status();
      if (*folded) ++ctx.stat("nodes-folded");
    }
    ctx.stat("constants-removed") += graph.RemoveUnusedConstants();
    return absl::OkStatus();
  }

 private:
  int64_t max_elements_;
};

}  // namespace

PassInfo FoldConstantsPassInfo() {
  PassInfo info;
  info.name = "fold-constants";
  info.summary = "evaluate nodes whose inputs are all constants (cascading)";
  info.options = {{"max-elements", "largest total output size (elements) a folded node may produce", "16777216"}};
  info.create = [](const PassOptions& options) -> absl::StatusOr<std::unique_ptr<Pass>> {
    absl::StatusOr<int64_t> max = options.GetInt("max-elements", 16777216);
    if (!max.ok()) return max.status();
    return std::unique_ptr<Pass>(new FoldConstantsPass(*max));
  };
  return info;
}

}  // namespace tessel
