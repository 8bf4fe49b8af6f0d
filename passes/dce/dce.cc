// Dead-code elimination.
#include "passes/dce/dce.h"

namespace tessel {
namespace {

class DcePass : public Pass {
 public:
  absl::Status Run(Graph& graph, PassContext& ctx) override {
    absl::StatusOr<std::vector<Node*>> order = graph.TopologicalOrder();
    if (!order.ok()) return order.status();
    // Reverse topological order: a node's users are visited (and maybe removed) before it.
    for (auto it = order->rbegin(); it != order->rend(); ++it) {
      Node* n = *it;
      bool dead = true;
      for (Value* o : n->outputs()) dead &= o->uses().empty() && !graph.IsGraphOutput(o);
      if (!dead) continue;
      absl::Status s = graph.EraseNode(n);
      if (!s.ok()) return s;
      ++ctx.stat("nodes-removed");
    }
    ctx.stat("constants-removed") += graph.RemoveUnusedConstants();
    return absl::OkStatus();
  }
};

}  // namespace

PassInfo DcePassInfo() { return SimplePassInfo<DcePass>("dce", "remove nodes and constants whose results are unused"); }

}  // namespace tessel
