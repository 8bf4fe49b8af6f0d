// Conv + activation fusion.
#include "passes/fuse_conv_activation/fuse_conv_activation.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/op_registry.h"
#include "passes/utils/pass_utils.h"
#include "passes/utils/rewrite.h"

namespace tessel {
namespace {

const char* const kActivations[] = {"relu", "relu6", "clip", "hardswish", "sigmoid", "silu"};

bool IsFusedConv(const Node* n) { return n != nullptr && n->domain() == kTesselDomain && n->op_type() == "FusedConv"; }

// An activation node (the anchor, the last node of the pattern) applied to the convolution output x.
struct Activation {
  std::string option;     // its name in the `activations` option
  std::string attribute;  // FusedConv's activation attribute
  float lo = 0, hi = 0;   // clip bounds
  Value* x = nullptr;
  std::vector<Node*> nodes;  // the activation's nodes, users first
  int x_users = 1;           // uses of x inside the pattern
  std::string decline;       // why it cannot fuse whatever precedes it (non-constant clip bounds)
};

// Matches `n` as an activation, or returns false.
bool MatchActivation(const Graph& graph, Node* n, Activation* a) {
  if (!n->domain().empty() || n->num_outputs() != 1) return false;
  const std::string& op = n->op_type();
  a->nodes = {n};
  if (op == "Relu" || op == "HardSwish" || op == "Sigmoid") {
    a->option = op == "Relu" ? "relu" : op == "HardSwish" ? "hardswish" : "sigmoid";
    a->attribute = a->option;
    a->x = n->input(0);
    if (op == "Sigmoid") {
      // x * Sigmoid(x) is matched at the Mul; leave the Sigmoid to it.
      for (const Use& u : a->x->uses()) {
        const Node* m = u.node;
        if (IsOp(m, "Mul") && ((m->input(0) == a->x && m->input(1) == n->output(0)) ||
                               (m->input(1) == a->x && m->input(0) == n->output(0)))) {
          return false;
        }
      }
    }
    return true;
  }
  if (op == "Clip") {
    a->x = n->input(0);
    double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
    if ((n->input(1) != nullptr && !GetScalarConstant(n->input(1), &lo)) ||
        (n->input(2) != nullptr && !GetScalarConstant(n->input(2), &hi))) {
      a->decline = "clip bounds are not constants";
    }
    a->lo = static_cast<float>(lo);
    a->hi = static_cast<float>(hi);
    a->option = lo == 0.0 && hi == 6.0 ? "relu6" : "clip";
    a->attribute = "clip";
    return true;
  }
  if (op == "Mul") {
    for (int i = 0; i < 2; ++i) {
      Value* x = n->input(i);
      Node* sig = n->input(1 - i)->producer();
      if (IsOp(sig, "Sigmoid") && sig->input(0) == x) {
        if (NumUsers(graph, sig->output(0)) != 1) return false;
        a->option = a->attribute = "silu";
        a->x = x;
        a->nodes = {n, sig};
        a->x_users = 2;
        return true;
      }
    }
  }
  return false;
}

class FuseConvActivationPass : public Pass {
 public:
  explicit FuseConvActivationPass(std::set<std::string> enabled) : enabled_(std::move(enabled)) {}

  absl::Status Run(Graph& graph, PassContext& ctx) override {
    absl::StatusOr<std::vector<Node*>> order = graph.TopologicalOrder();
    if (!order.ok()) return order.status();
    // The anchor is the pattern's last node: a rewrite erases it and nodes before it in this order.
    for (Node* n : *order) {
      Activation a;
      if (!MatchActivation(graph, n, &a)) continue;
      Node* conv = a.x->producer();
      const bool is_conv = IsOp(conv, "Conv");
      if (!is_conv && !IsFusedConv(conv)) continue;
      std::string reason;
      const int users = NumUsers(graph, a.x);
      // Clip(0, 6) is a clip too.
      if (!enabled_.count(a.option) && !(a.option == "relu6" && enabled_.count("clip"))) {
        reason = absl::StrCat(a.option, " is not in the activations option");
      } else if (!a.decline.empty()) {
        reason = a.decline;
      } else if (!is_conv && conv->GetString("activation", "none") != "none") {
        reason = absl::StrCat("it already applies ", conv->GetString("activation", ""));
      } else if (users != a.x_users) {
        reason = absl::StrCat("output has ", users, " users");
      }
      if (!reason.empty()) {
        if (ctx.explain()) ctx.Explain(absl::StrCat(conv->name(), " not fused with ", n->DebugName(), ": ", reason));
        continue;
      }
      absl::Status s = Fuse(graph, conv, a);
      if (!s.ok()) return s;
      ++ctx.stat("convs-fused");
    }
    graph.RemoveUnusedConstants();
    return absl::OkStatus();
  }

 private:
  absl::Status Fuse(Graph& graph, Node* conv, const Activation& a) {
    Node* fused = graph.AddNode("FusedConv", conv->inputs(), 1, conv->name());
    fused->set_domain(kTesselDomain);
    for (const auto& [k, v] : conv->attributes()) fused->SetAttr(k, v);
    fused->SetAttr("activation", Attribute::String(a.attribute));
    if (a.attribute == "clip") {
      fused->SetAttr("clip_min", Attribute::Float(a.lo));
      fused->SetAttr("clip_max", Attribute::Float(a.hi));
    }
    absl::Status s = InferNodeTypes(fused);
    if (!s.ok()) return s;
    Value* out = a.nodes.front()->output(0);
    const std::string name = out->name();
    graph.ReplaceAllUsesWith(out, fused->output(0));
    std::vector<Node*> dead = a.nodes;
    dead.push_back(conv);
    for (Node* d : dead) {
      s = graph.EraseNode(d);
      if (!s.ok()) return s;
    }
    return graph.RenameValue(fused->output(0), name);
  }

  std::set<std::string> enabled_;
};

}  // namespace

PassInfo FuseConvActivationPassInfo() {
  PassInfo info;
  info.name = "fuse-conv-activation";
  info.summary = "fuse Conv (+bias, +residual) with a following activation into tessel.FusedConv";
  const std::vector<std::string> all(std::begin(kActivations), std::end(kActivations));
  info.options = {{"activations", absl::StrCat("activations to fuse (", absl::StrJoin(all, ", "), ")"),
                   absl::StrJoin(all, ",")}};
  info.create = [all](const PassOptions& options) -> absl::StatusOr<std::unique_ptr<Pass>> {
    std::set<std::string> enabled;
    for (const std::string& a : options.GetList("activations", all)) {
      if (std::find(all.begin(), all.end(), a) == all.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat("unknown activation '", a, "' in option activations; known: ", absl::StrJoin(all, ", ")));
      }
      enabled.insert(a);
    }
    return std::unique_ptr<Pass>(new FuseConvActivationPass(std::move(enabled)));
  };
  return info;
}

}  // namespace tessel
