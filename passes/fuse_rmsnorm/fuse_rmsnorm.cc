// RMSNorm fusion.
#include "passes/fuse_rmsnorm/fuse_rmsnorm.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "passes/utils/pass_utils.h"
#include "passes/utils/rewrite.h"

namespace tessel {
namespace {

struct RMSNormMatch {
  Value* x = nullptr;
  Value* gain = nullptr;
  ParamFit gain_fit = ParamFit::kNo;
  int axes = 0;
  double epsilon = 0;
  Value* result = nullptr;  // what the fused node replaces
  std::vector<Node*> nodes;
};

// Matches RMSNorm starting from the ReduceMean of x^2. Returns false with `why` empty when `rm` does not
// average a square, or with the reason why the recognised start does not complete.
bool MatchRMSNorm(const Graph& g, Node* rm, RMSNormMatch* m, std::string* why) {
  if (!IsOp(rm, "ReduceMean")) return false;
  Node* sq = rm->input(0)->producer();
  double exponent = 0;
  if (IsOp(sq, "Pow") && GetScalarConstant(sq->input(1), &exponent) && exponent == 2) {
    m->x = sq->input(0);
  } else if (IsOp(sq, "Mul") && sq->input(0) == sq->input(1)) {
    m->x = sq->input(0);
  } else {
    return false;
  }
  const Value* x = m->x;
  // x - mean(x) squared is a LayerNorm's variance: fusing it as RMSNorm(x - mean) would be correct but hide
  // the LayerNorm.
  Node* centre = x->producer();
  if (IsOp(centre, "Sub") && IsOp(centre->input(1)->producer(), "ReduceMean") &&
      centre->input(1)->producer()->input(0) == centre->input(0)) {
    *why = "the squared value is centred (x - mean(x)), a LayerNorm; left to fuse-layernorm";
    return false;
  }
  if (!IsFloat(x->type().dtype)) {
    *why = absl::StrCat("x ('", x->name(), "') is not a float tensor");
    return false;
  }
  m->nodes = {sq, rm};
  if (SoleUser(g, sq->output(0)) != rm) {
    *why = absl::StrCat("the square ('", sq->output(0)->name(), "') has other users");
    return false;
  }
  m->axes = TrailingReducedAxes(rm);
  if (m->axes == 0) {
    *why = "the mean is not over the trailing axes with keepdims=1";
    return false;
  }
  Node* add = SoleUser(g, rm->output(0));
  Value* eps = OtherInput(IsOp(add, "Add") ? add : nullptr, rm->output(0));
  if (eps == nullptr || !GetScalarConstant(eps, &m->epsilon) || !(m->epsilon >= 0)) {
    *why = "the mean of squares is not followed (as its only user) by an Add of a constant epsilon >= 0";
    return false;
  }
  Node* sqrt = SoleUser(g, add->output(0));
  if (!IsOp(sqrt, "Sqrt")) {
    *why = "mean(x^2) + epsilon is not followed (as its only user) by Sqrt";
    return false;
  }
  m->nodes.insert(m->nodes.end(), {add, sqrt});
  // x / sqrt(...), or x * r with r = 1 / sqrt(...) or Reciprocal(sqrt(...)).
  Node* u = SoleUser(g, sqrt->output(0));
  double one = 0;
  Node* normed = nullptr;
  Value* scaled = nullptr;  // x, or x times the gain
  if (IsOp(u, "Reciprocal") ||
      (IsOp(u, "Div") && u->input(1) == sqrt->output(0) && GetScalarConstant(u->input(0), &one) && one == 1)) {
    normed = SoleUser(g, u->output(0));
    scaled = IsOp(normed, "Mul") ? OtherInput(normed, u->output(0)) : nullptr;
    m->nodes.push_back(u);
  } else if (IsOp(u, "Div") && u->input(1) == sqrt->output(0)) {
    normed = u;
    scaled = u->input(0);
  }
  if (scaled == nullptr) {
    *why = "sqrt(mean(x^2) + epsilon) does not divide x (as its only user)";
    return false;
  }
  m->nodes.push_back(normed);
  const std::vector<Dim> normalized(x->type().dims.end() - m->axes, x->type().dims.end());
  // The gain may be applied before the normalization: (x * gain) / sqrt(...).
  if (scaled != x) {
    Node* pre = scaled->producer();
    Value* gain = IsOp(pre, "Mul") ? OtherInput(pre, x) : nullptr;
    if (gain == nullptr || SoleUser(g, scaled) != normed) {
      *why = absl::StrCat("the value divided by the root mean square ('", scaled->name(), "') is not x ('", x->name(),
                          "') or x times a gain");
      return false;
    }
    m->gain_fit = FitParam(gain, normalized, x->type().dtype);
    if (m->gain_fit == ParamFit::kNo) {
      *why = absl::StrCat("gain '", gain->name(), "' (", gain->type().ToString(),
                          ") does not broadcast over the normalized axes only");
      return false;
    }
    m->gain = gain;
    m->nodes.push_back(pre);
  }
  m->result = normed->output(0);
  if (m->result->type() != x->type()) {
    *why = "the normalized value does not keep x's type";
    return false;
  }
  // Or after it: x / sqrt(...) * gain.
  if (m->gain == nullptr) {
    Node* post = SoleUser(g, m->result);
    Value* gain = IsOp(post, "Mul") ? OtherInput(post, m->result) : nullptr;
    if (gain != nullptr && gain != m->result) {
      m->gain_fit = FitParam(gain, normalized, x->type().dtype);
      if (m->gain_fit != ParamFit::kNo) {
        m->gain = gain;
        m->result = post->output(0);
        m->nodes.push_back(post);
      }
    }
  }
  return true;
}

class FuseRMSNormPass : public Pass {
 public:
  absl::Status Run(Graph& graph, PassContext& ctx) override {
    absl::StatusOr<std::vector<Node*>> order = graph.TopologicalOrder();
    if (!order.ok()) return order.status();
    // Matched nodes are only rewired here; erasing them after the scan keeps `order` valid.
    std::vector<Node*> dead;
    std::vector<std::pair<Value*, std::string>> renames;
    for (Node* rm : *order) {
      RMSNormMatch m;
      std::string why;
      if (!MatchRMSNorm(graph, rm, &m, &why)) {
        if (!why.empty()) ctx.Explain(absl::StrCat(rm->name(), " not fused: ", why));
        continue;
      }
      std::vector<Value*> inputs = {m.x};
      if (m.gain != nullptr) {
        absl::StatusOr<Value*> gain = ApplyFit(graph, m.gain, m.gain_fit, m.axes);
        if (!gain.ok()) return gain.status();
        inputs.push_back(*gain);
        ++ctx.stat("gains-absorbed");
      }
      Node* last = m.result->producer();
      Node* fused = graph.AddNode("RMSNorm", inputs, 1, last->name(), {m.result->name()});
      fused->set_domain(kTesselDomain);
      fused->SetAttr("axis", Attribute::Int(-m.axes));
      fused->SetAttr("epsilon", Attribute::Float(static_cast<float>(m.epsilon)));
      fused->output(0)->set_type(m.result->type());
      renames.push_back({fused->output(0), m.result->name()});
      graph.ReplaceAllUsesWith(m.result, fused->output(0));
      dead.insert(dead.end(), m.nodes.begin(), m.nodes.end());
      ++ctx.stat("rmsnorms-fused");
    }
    return FinishRewrites(graph, dead, renames);
  }
};

}  // namespace

PassInfo FuseRMSNormPassInfo() {
  return SimplePassInfo<FuseRMSNormPass>(
      "fuse-rmsnorm", "x / sqrt(mean(x^2) + eps) * gain, as PyTorch exports it, becomes one tessel.RMSNorm");
}

}  // namespace tessel
