// LayerNorm fusion.
#include "passes/fuse_layernorm/fuse_layernorm.h"

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

struct LayerNormMatch {
  Value* x = nullptr;
  Value* scale = nullptr;
  ParamFit scale_fit = ParamFit::kNo;
  Value* bias = nullptr;
  ParamFit bias_fit = ParamFit::kNo;
  int axes = 0;
  double epsilon = 0;
  Value* result = nullptr;  // what the fused node replaces
  std::vector<Node*> nodes;
};

// The root-mean-square half of a LayerNorm: d / sqrt(mean(d^2) + eps) over `axes` trailing axes, where
// d = x - mean(x). Sets m->result to the normalized value.
bool MatchNormalize(const Graph& g, Value* d, LayerNormMatch* m, std::string* why) {
  Node* sq = nullptr;
  Node* divide = nullptr;  // Div(d, sqrt) or Mul(d, 1/sqrt)
  for (const Use& u : d->uses()) {
    double exponent = 0;
    if ((IsOp(u.node, "Pow") && u.input_index == 0 && GetScalarConstant(u.node->input(1), &exponent) &&
         exponent == 2) ||
        (IsOp(u.node, "Mul") && u.node->input(0) == d && u.node->input(1) == d)) {
      sq = u.node;
    }
  }
  Node* var = sq == nullptr ? nullptr : SoleUser(g, sq->output(0));
  if (!IsOp(var, "ReduceMean") || TrailingReducedAxes(var) != m->axes) {
    *why = "x - mean(x) is not squared and averaged (alone) over the same axes";
    return false;
  }
  Node* add = SoleUser(g, var->output(0));
  Value* eps = IsOp(add, "Add") ? OtherInput(add, var->output(0)) : nullptr;
  if (eps == nullptr || !GetScalarConstant(eps, &m->epsilon) || !(m->epsilon >= 0)) {
    *why = "the variance is not followed (as its only user) by an Add of a constant epsilon >= 0";
    return false;
  }
  Node* sqrt = SoleUser(g, add->output(0));
  if (!IsOp(sqrt, "Sqrt")) {
    *why = "variance + epsilon is not followed (as its only user) by Sqrt";
    return false;
  }
  m->nodes.insert(m->nodes.end(), {sq, var, add, sqrt});
  Node* u = SoleUser(g, sqrt->output(0));
  double one = 0;
  if (IsOp(u, "Div") && u->input(0) == d && u->input(1) == sqrt->output(0)) {
    divide = u;
  } else if (IsOp(u, "Reciprocal") ||
             (IsOp(u, "Div") && u->input(1) == sqrt->output(0) && GetScalarConstant(u->input(0), &one) && one == 1)) {
    Node* mul = SoleUser(g, u->output(0));
    if (IsOp(mul, "Mul") && OtherInput(mul, u->output(0)) == d) divide = mul;
    m->nodes.push_back(u);
  }
  if (divide == nullptr) {
    *why = "the standard deviation does not divide x - mean(x) (as its only user)";
    return false;
  }
  m->nodes.push_back(divide);
  // x - mean(x) may feed only the square and the division.
  for (const Use& use : d->uses()) {
    if (use.node != sq && use.node != divide) {
      *why = absl::StrCat("x - mean(x) ('", d->name(), "') is also used by ", use.node->DebugName());
      return false;
    }
  }
  if (g.IsGraphOutput(d)) {
    *why = absl::StrCat("x - mean(x) ('", d->name(), "') is a graph output");
    return false;
  }
  m->result = divide->output(0);
  return true;
}

// Matches LayerNorm starting from x - mean(x). Returns false with `why` empty when `sub` is not such a
// difference, or with the reason why the recognised start does not complete.
bool MatchLayerNorm(const Graph& g, Node* sub, LayerNormMatch* m, std::string* why) {
  if (!IsOp(sub, "Sub")) return false;
  Node* mean = sub->input(1)->producer();
  if (!IsOp(mean, "ReduceMean") || mean->input(0) != sub->input(0)) return false;
  m->x = sub->input(0);
  const TensorType& xt = m->x->type();
  if (!IsFloat(xt.dtype)) {
    *why = absl::StrCat("x ('", m->x->name(), "') is not a float tensor");
    return false;
  }
  m->axes = TrailingReducedAxes(mean);
  if (m->axes == 0) {
    *why = "the mean is not over the trailing axes with keepdims=1";
    return false;
  }
  if (SoleUser(g, mean->output(0)) != sub) {
    *why = absl::StrCat("the mean ('", mean->output(0)->name(), "') has other users");
    return false;
  }
  m->nodes = {mean, sub};
  if (!MatchNormalize(g, sub->output(0), m, why)) return false;
  if (m->result->type() != xt) {
    *why = "the normalized value does not keep x's type";
    return false;
  }
  const std::vector<Dim> normalized(xt.dims.end() - m->axes, xt.dims.end());
  // Optional scale, then optional bias; a factor or term that is not per-feature stays outside.
  Node* mul = SoleUser(g, m->result);
  Value* scale = IsOp(mul, "Mul") ? OtherInput(mul, m->result) : nullptr;
  if (scale != nullptr && scale != m->result && (m->scale_fit = FitParam(scale, normalized, xt.dtype)) != ParamFit::kNo) {
    m->scale = scale;
    m->result = mul->output(0);
    m->nodes.push_back(mul);
  }
  Node* add = SoleUser(g, m->result);
  Value* bias = IsOp(add, "Add") ? OtherInput(add, m->result) : nullptr;
  if (bias != nullptr && bias != m->result && (m->bias_fit = FitParam(bias, normalized, xt.dtype)) != ParamFit::kNo) {
    m->bias = bias;
    m->result = add->output(0);
    m->nodes.push_back(add);
  }
  if (m->scale == nullptr) {
    if (xt.dtype != DType::kF32) {
      *why = "there is no scale to pass as LayerNormalization's Scale and x is not f32";
      return false;
    }
    for (const Dim& d : normalized) {
      if (!d.is_static()) {
        *why = absl::StrCat("there is no scale and the normalized shape ", TensorType(xt.dtype, normalized).ToString(),
                            " is not static (LayerNormalization needs a Scale input)");
        return false;
      }
    }
  }
  return true;
}

class FuseLayerNormPass : public Pass {
 public:
  absl::Status Run(Graph& graph, PassContext& ctx) override {
    absl::StatusOr<std::vector<Node*>> order = graph.TopologicalOrder();
    if (!order.ok()) return order.status();
    // Matched nodes are only rewired here; erasing them after the scan keeps `order` valid.
    std::vector<Node*> dead;
    std::vector<std::pair<Value*, std::string>> renames;
    for (Node* sub : *order) {
      LayerNormMatch m;
      std::string why;
      if (!MatchLayerNorm(graph, sub, &m, &why)) {
        if (!why.empty()) ctx.Explain(absl::StrCat(sub->name(), " not fused: ", why));
        continue;
      }
      const TensorType& xt = m.x->type();
      Value* scale;
      if (m.scale != nullptr) {
        absl::StatusOr<Value*> fitted = ApplyFit(graph, m.scale, m.scale_fit, m.axes);
        if (!fitted.ok()) return fitted.status();
        scale = *fitted;
      } else {
        std::vector<int64_t> shape;
        for (auto it = xt.dims.end() - m.axes; it != xt.dims.end(); ++it) shape.push_back(it->value());
        Tensor ones(xt.dtype, shape);
        for (int64_t i = 0; i < ones.num_elements(); ++i) ones.data<float>()[i] = 1.0f;
        scale = graph.AddConstant(absl::StrCat(sub->name(), ".scale"), std::move(ones));
      }
      std::vector<Value*> inputs = {m.x, scale};
      if (m.bias != nullptr) {
        absl::StatusOr<Value*> fitted = ApplyFit(graph, m.bias, m.bias_fit, m.axes);
        if (!fitted.ok()) return fitted.status();
        inputs.push_back(*fitted);
      }
      Node* last = m.result->producer();
      Node* fused = graph.AddNode("LayerNormalization", inputs, 1, last->name(), {m.result->name()});
      fused->SetAttr("axis", Attribute::Int(-m.axes));
      fused->SetAttr("epsilon", Attribute::Float(static_cast<float>(m.epsilon)));
      fused->output(0)->set_type(m.result->type());
      renames.push_back({fused->output(0), m.result->name()});
      graph.ReplaceAllUsesWith(m.result, fused->output(0));
      dead.insert(dead.end(), m.nodes.begin(), m.nodes.end());
      ++ctx.stat("layernorms-fused");
    }
    return FinishRewrites(graph, dead, renames);
  }
};

}  // namespace

PassInfo FuseLayerNormPassInfo() {
  return SimplePassInfo<FuseLayerNormPass>(
      "fuse-layernorm", "(x - mean) / sqrt(var + eps) * scale + bias, decomposed, becomes one LayerNormalization");
}

}  // namespace tessel
