// Conv + residual Add fusion.
#include "passes/fuse_conv_add/fuse_conv_add.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "passes/utils/pass_utils.h"
#include "passes/utils/rewrite.h"

namespace tessel {
namespace {

bool IsFusedConv(const Node* n) { return n != nullptr && n->domain() == kTesselDomain && n->op_type() == "FusedConv"; }

// Why `conv`, whose output c is added to r, cannot take r as its residual; "" when it can.
std::string Blocker(const Graph& graph, const Node* conv, const Value* c, const Value* r) {
  if (IsFusedConv(conv)) {
    if (conv->input(3) != nullptr) return "it already adds a residual";
    if (conv->GetString("activation", "none") != "none") {
      return absl::StrCat("it applies ", conv->GetString("activation", ""), " before the Add");
    }
  }
  const int users = NumUsers(graph, c);
  if (users != 1) return absl::StrCat("output has ", users, " users");
  // Same dtype and dims: no broadcasting hides in the Add, and the sum has the convolution's shape.
  if (c->type().dtype != r->type().dtype || c->type().dims != r->type().dims) {
    return absl::StrCat("the other operand has type ", r->type().ToString(), ", not ", c->type().ToString());
  }
  return "";
}

class FuseConvAddPass : public Pass {
 public:
  absl::Status Run(Graph& graph, PassContext& ctx) override {
    absl::StatusOr<std::vector<Node*>> order = graph.TopologicalOrder();
    if (!order.ok()) return order.status();
    // A rewrite erases the Add and its convolution, both at or before the current position.
    for (Node* add : *order) {
      if (!IsOp(add, "Add")) continue;
      std::vector<std::string> reasons;
      bool fused = false;
      for (int i = 0; i < 2 && !fused; ++i) {
        Value* c = add->input(i);
        Value* r = add->input(1 - i);
        Node* conv = c->producer();
        if (!IsOp(conv, "Conv") && !IsFusedConv(conv)) continue;
        const std::string reason = Blocker(graph, conv, c, r);
        if (!reason.empty()) {
          reasons.push_back(absl::StrCat(conv->name(), " not fused with ", add->DebugName(), ": ", reason));
          continue;
        }
        absl::Status s = Fuse(graph, conv, add, r);
        if (!s.ok()) return s;
        ++ctx.stat("residuals-fused");
        fused = true;
      }
      if (!fused && ctx.explain()) {
        for (const std::string& m : reasons) ctx.Explain(m);
      }
    }
    return absl::OkStatus();
  }

 private:
  absl::Status Fuse(Graph& graph, Node* conv, Node* add, Value* residual) {
    // Inputs (X, W, B or omitted, Residual).
    std::vector<Value*> inputs = {conv->input(0), conv->input(1), conv->input(2), residual};
    Node* fused = graph.AddNode("FusedConv", inputs, 1, conv->name());
    fused->set_domain(kTesselDomain);
    for (const auto& [k, v] : conv->attributes()) fused->SetAttr(k, v);
    absl::Status s = InferNodeTypes(fused);
    if (!s.ok()) return s;
    Value* out = add->output(0);
    const std::string name = out->name();
    graph.ReplaceAllUsesWith(out, fused->output(0));
    for (Node* d : {add, conv}) {
      s = graph.EraseNode(d);
      if (!s.ok()) return s;
    }
    return graph.RenameValue(fused->output(0), name);
  }
};

}  // namespace

PassInfo FuseConvAddPassInfo() {
  return SimplePassInfo<FuseConvAddPass>(
      "fuse-conv-add", "fuse Conv (+bias) with a following same-shape Add (residual) into tessel.FusedConv");
}

}  // namespace tessel
