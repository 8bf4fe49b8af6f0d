// Folding of RMSNorm gains into the weights of the MatMuls that read the normalized value.
#include "passes/fold_rmsnorm_gain/fold_rmsnorm_gain.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"

namespace tessel {
namespace {

// Why the gain of `n` cannot move into its users' weights; empty when it can. (x * g) @ W equals
// x @ (diag(g) W) only when every user contracts the normalized axis with a constant weight.
std::string CannotFold(const Graph& g, const Node* n) {
  const Value* x = n->input(0);
  const Value* gain = n->input(1);
  const Value* out = n->output(0);
  const int rank = x->type().rank();
  const int64_t axis = n->GetInt("axis", -1);
  if (axis != -1 && axis != rank - 1) return "it normalizes more than the last axis";
  if (!gain->is_constant() || gain->type().dtype != DType::kF32) return "the gain is not an f32 constant";
  const Dim& d = x->type().dims.back();
  if (!d.is_static()) return "the normalized axis is not static";
  const int64_t features = gain->constant()->num_elements();
  if (features != 1 && features != d.value()) return "the gain is not one value per feature";
  if (g.IsGraphOutput(out)) return "its output is a graph output";
  if (out->uses().empty()) return "its output is unused";
  for (const Use& u : out->uses()) {
    const Node* m = u.node;
    const Value* w = m->input(1);
    if (!m->domain().empty() || m->op_type() != "MatMul" || u.input_index != 0 || w == out || !w->is_constant() ||
        w->type().dtype != DType::kF32 || w->constant()->rank() != 2 || w->constant()->dim(0) != d.value()) {
      return absl::StrCat("its output feeds ", m->DebugName(),
                          ", not (only) as the input of a MatMul with a constant "
                          "f32 weight");
    }
  }
  return "";
}

class FoldRMSNormGainPass : public Pass {
 public:
  absl::Status Run(Graph& graph, PassContext& ctx) override {
    bool folded = false;
    for (const auto& node : graph.nodes()) {
      Node* n = node.get();
      if (n->domain() != kTesselDomain || n->op_type() != "RMSNorm" || n->input(1) == nullptr) continue;
      const std::string why = CannotFold(graph, n);
      if (!why.empty()) {
        ctx.Explain(absl::StrCat(n->name(), " gain not folded: ", why));
        continue;
      }
      const Tensor& gain = *n->input(1)->constant();
      // A weight shared by several of the users is scaled once.
      std::map<Value*, Value*> scaled;
      std::vector<Use> uses = n->output(0)->uses();
      for (const Use& u : uses) {
        Value* w = u.node->input(1);
        Value*& copy = scaled[w];
        if (copy == nullptr) {
          const Tensor& t = *w->constant();
          const int64_t rows = t.dim(0), cols = t.dim(1);
          Tensor folded(DType::kF32, t.shape());
          for (int64_t r = 0; r < rows; ++r) {
            const float g = gain.data<float>()[gain.num_elements() == 1 ? 0 : r];
            for (int64_t c = 0; c < cols; ++c) folded.data<float>()[r * cols + c] = g * t.data<float>()[r * cols + c];
          }
          copy = graph.AddConstant(absl::StrCat(w->name(), ".gain"), std::move(folded));
          ++ctx.stat("weights-scaled");
        }
        u.node->SetInput(1, copy);
      }
      n->RemoveLastInput();
      ++ctx.stat("gains-folded");
      folded = true;
    }
    // The unscaled weights and the gains, unless something else reads them.
    if (folded) graph.RemoveUnusedConstants();
    return absl::OkStatus();
  }
};

}  // namespace

PassInfo FoldRMSNormGainPassInfo() {
  return SimplePassInfo<FoldRMSNormGainPass>(
      "fold-rmsnorm-gain", "multiply a constant RMSNorm gain into the rows of the MatMul weights that read it");
}

}  // namespace tessel
