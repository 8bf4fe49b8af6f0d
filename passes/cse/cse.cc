// Common-subexpression elimination.
#include "passes/cse/cse.h"

#include <cstring>
#include <string>
#include <unordered_map>

#include "absl/hash/hash.h"
#include "absl/strings/string_view.h"

namespace tessel {
namespace {

bool SameConstant(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.raw_data(), b.raw_data(), a.byte_size()) == 0;
}

class CsePass : public Pass {
 public:
  absl::Status Run(Graph& graph, PassContext& ctx) override {
    // Identical constants first, so that nodes reading copies of the same data become equal.
    std::unordered_multimap<size_t, Value*> constants;
    for (Value* c : graph.Constants()) {
      const Tensor& t = *c->constant();
      const size_t h = absl::HashOf(static_cast<int>(t.dtype()), t.shape(),
                                    absl::string_view(static_cast<const char*>(t.raw_data()), t.byte_size()));
      Value* same = nullptr;
      auto range = constants.equal_range(h);
      for (auto it = range.first; it != range.second; ++it) {
        if (c->constant() == it->second->constant() || SameConstant(t, *it->second->constant())) same = it->second;
      }
      if (same == nullptr || graph.IsGraphOutput(c)) {
        constants.emplace(h, c);
        continue;
      }
      graph.ReplaceAllUsesWith(c, same);
      ++ctx.stat("constants-merged");
    }
    graph.RemoveUnusedConstants();

    absl::StatusOr<std::vector<Node*>> order = graph.TopologicalOrder();
    if (!order.ok()) return order.status();
    std::unordered_multimap<size_t, Node*> seen;
    for (Node* n : *order) {
      std::vector<int> input_ids;
      for (Value* in : n->inputs()) input_ids.push_back(in ? in->id() : -1);
      const size_t h = absl::HashOf(n->domain(), n->op_type(), input_ids, n->num_outputs());
      Node* same = nullptr;
      auto range = seen.equal_range(h);
      for (auto it = range.first; it != range.second && same == nullptr; ++it) {
        Node* m = it->second;
        if (m->op_type() == n->op_type() && m->domain() == n->domain() && m->inputs() == n->inputs() &&
            m->num_outputs() == n->num_outputs() && m->attributes() == n->attributes()) {
          same = m;
        }
      }
      if (same == nullptr) {
        seen.emplace(h, n);
        continue;
      }
      for (int i = 0; i < n->num_outputs(); ++i) graph.ReplaceAllUsesWith(n->output(i), same->output(i));
      // Outputs that were graph outputs now point at `same`; the node is dead.
      absl::Status s = graph.EraseNode(n);
      if (!s.ok()) return s;
      ++ctx.stat("nodes-merged");
    }
    return absl::OkStatus();
  }
};

}  // namespace

PassInfo CsePassInfo() {
  return SimplePassInfo<CsePass>("cse", "merge identical constants and nodes computing the same thing");
}

}  // namespace tessel
