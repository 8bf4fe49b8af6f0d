// Scaled dot-product attention fusion.
#include "passes/fuse_attention/fuse_attention.h"

#include <optional>
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

// Additive mask entries at or below this hide a score as completely as -inf: adding them to any score of
// ordinary size leaves them unchanged in f32, and exp() of them is 0.
constexpr double kMasked = -1e30;

// A scalar factor: v = Mul(rest, c), Mul(c, rest) or Div(rest, c) with c a one-element float constant
// that does not broadcast `rest` to a larger shape. Sets the factor (1/c for Div) and `rest`.
bool ScalarFactor(const Node* n, double* factor, Value** rest) {
  if (n == nullptr || n->num_inputs() != 2) return false;
  double c = 0;
  for (int i = 0; i < 2; ++i) {
    const Value* k = n->input(i);
    if ((IsOp(n, "Mul") || (IsOp(n, "Div") && i == 1)) && IsFloat(k->type().dtype) && GetScalarConstant(k, &c) &&
        n->output(0)->type() == n->input(1 - i)->type()) {
      if (IsOp(n, "Div") && c == 0) return false;
      *factor = IsOp(n, "Div") ? 1.0 / c : c;
      *rest = n->input(1 - i);
      return true;
    }
  }
  return false;
}

// Walks up through scalar factors read only along this path; multiplies them into *scale.
Value* PeelScales(const Graph& g, Value* v, double* scale, std::vector<Node*>* nodes) {
  double factor = 1;
  Value* rest = nullptr;
  while (NumUsers(g, v) == 1 && ScalarFactor(v->producer(), &factor, &rest)) {
    nodes->push_back(v->producer());
    *scale *= factor;
    v = rest;
  }
  return v;
}

// The MatMul computing the (scaled) scores `v`, with the scales it passes through; nullptr if none.
Node* ScoresMatMul(const Graph& g, Value* v, double* scale, std::vector<Node*>* nodes) {
  double s = 1;
  std::vector<Node*> peeled;
  Value* raw = PeelScales(g, v, &s, &peeled);
  Node* mm = raw->producer();
  if (!IsOp(mm, "MatMul") || NumUsers(g, raw) != 1) return nullptr;
  *scale *= s;
  nodes->insert(nodes->end(), peeled.begin(), peeled.end());
  return mm;
}

// When `r` is x repeated along the heads by repeat_kv (Unsqueeze(x, 2) -> Expand to [B, H, rep, S, D] ->
// Reshape to [B, H * rep, S, D]) and read only along this path, returns x; nullptr otherwise.
Value* RepeatedFrom(const Graph& g, Value* r, std::vector<Node*>* nodes) {
  Node* reshape = r->producer();
  if (!IsOp(reshape, "Reshape") || NumUsers(g, r) != 1) return nullptr;
  Node* expand = reshape->input(0)->producer();
  if (!IsOp(expand, "Expand") || NumUsers(g, expand->output(0)) != 1) return nullptr;
  Node* unsqueeze = expand->input(0)->producer();
  if (!IsOp(unsqueeze, "Unsqueeze") || NumUsers(g, unsqueeze->output(0)) != 1) return nullptr;
  Value* x = unsqueeze->input(0);
  const TensorType& xt = x->type();
  const TensorType& et = expand->output(0)->type();
  if (xt.rank() != 4 || !xt.is_static() || !et.is_static() || !r->type().is_static()) return nullptr;
  const std::vector<int64_t> xs = xt.StaticShape();
  int64_t axis = 0;
  const Value* axes = unsqueeze->input(1);
  if (axes == nullptr || !axes->is_constant() || axes->constant()->num_elements() != 1) return nullptr;
  axis = axes->constant()->GetAsInt64(0);
  if (axis != 2 && axis != -3) return nullptr;
  const std::vector<int64_t> es = et.StaticShape();
  if (es.size() != 5 || es[0] != xs[0] || es[1] != xs[1] || es[3] != xs[2] || es[4] != xs[3]) return nullptr;
  if (r->type().StaticShape() != std::vector<int64_t>{xs[0], xs[1] * es[2], xs[2], xs[3]}) return nullptr;
  nodes->insert(nodes->end(), {unsqueeze, expand, reshape});
  return x;
}

// A constant additive mask that is exactly the causal one for Sq queries over Sk keys: masked where
// key j lies after query i + Sk - Sq, zero elsewhere; leading dimensions 1.
bool IsCausalMask(const Tensor& m, int64_t sq, int64_t sk) {
  if (m.rank() < 2 || m.dim(m.rank() - 2) != sq || m.dim(m.rank() - 1) != sk || m.num_elements() != sq * sk) {
    return false;
  }
  for (int64_t i = 0; i < sq; ++i) {
    for (int64_t j = 0; j < sk; ++j) {
      const double x = m.GetAsDouble(i * sk + j);
      if (j > i + sk - sq ? !(x <= kMasked) : x != 0) return false;
    }
  }
  return true;
}

struct AttentionMatch {
  Value* q = nullptr;
  Value* k = nullptr;
  Value* v = nullptr;
  Value* mask = nullptr;
  std::optional<Tensor> where_mask;  // an additive mask made from a Where
  bool causal = false;
  bool grouped = false;
  double scale = 1;
  Node* out = nullptr;  // the MatMul with V, whose result the fused node replaces
  std::vector<Node*> nodes;
};

// The additive mask equal to Where(cond, scores, fill) (or Where(cond, fill, scores) when
// `fill_where_true`) for a constant cond and a fill that masks completely.
bool WhereToAdditive(const Node* where, bool fill_where_true, const TensorType& scores, std::optional<Tensor>* out,
                     std::string* why) {
  const Value* cond = where->input(0);
  const Value* fill = where->input(fill_where_true ? 1 : 2);
  double f = 0;
  if (!cond->is_constant()) {
    *why = "mask is not constant (Where with a computed condition)";
    return false;
  }
  if (!GetScalarConstant(fill, &f) || !(f <= kMasked)) {
    *why = absl::StrCat("Where fills masked scores with '", fill->name(), "', not a constant <= -1e30 or -inf");
    return false;
  }
  if (scores.dtype != DType::kF32 || where->output(0)->type() != scores) {
    *why = "the Where mask is not f32 or broadcasts the scores to a larger shape";
    return false;
  }
  const Tensor& c = *cond->constant();
  Tensor m(DType::kF32, c.shape());
  for (int64_t i = 0; i < c.num_elements(); ++i) {
    m.data<float>()[i] = (c.GetAsInt64(i) != 0) == fill_where_true ? static_cast<float>(f) : 0.0f;
  }
  *out = std::move(m);
  return true;
}

// Matches attention at its Softmax. Returns false with `why` empty when the Softmax does not sit between
// a scores MatMul and a MatMul with V, or with the reason why the recognised attention cannot be fused.
bool MatchAttention(const Graph& g, Node* sm, AttentionMatch* m, std::string* why) {
  if (!IsOp(sm, "Softmax")) return false;
  Value* in = sm->input(0);
  Node* out = SoleUser(g, sm->output(0));
  if (!IsOp(out, "MatMul") || out->input(0) != sm->output(0) || NumUsers(g, in) != 1) return false;
  m->out = out;
  m->nodes = {sm, out};
  // Scores, then an optional mask (Add, or Where with a fill), then the Softmax.
  Node* mm = nullptr;
  Node* masking = in->producer();
  Value* mask = nullptr;
  const Node* where = nullptr;
  bool fill_where_true = false;
  if (IsOp(masking, "Add")) {
    for (int side = 0; side < 2 && mm == nullptr; ++side) {
      mm = ScoresMatMul(g, masking->input(side), &m->scale, &m->nodes);
      if (mm != nullptr) mask = masking->input(1 - side);
    }
  } else if (IsOp(masking, "Where")) {
    for (int side = 1; side <= 2 && mm == nullptr; ++side) {
      mm = ScoresMatMul(g, masking->input(side), &m->scale, &m->nodes);
      fill_where_true = side == 2;
    }
    if (mm != nullptr) where = masking;
  }
  if (mm == nullptr) {
    masking = nullptr;
    mm = ScoresMatMul(g, in, &m->scale, &m->nodes);
  }
  if (mm == nullptr) return false;
  if (masking != nullptr) m->nodes.push_back(masking);
  m->nodes.push_back(mm);
  const TensorType& scores = mm->output(0)->type();
  if (scores.rank() != 4) {
    *why = absl::StrCat("scores have type ", scores.ToString(), "; tessel.Attention takes [batch, heads, seq, seq]");
    return false;
  }
  if (sm->GetInt("axis", -1) != -1 && sm->GetInt("axis", -1) != 3) {
    *why = "the softmax is not over the last axis";
    return false;
  }
  // Q (scales folded), and K under its transpose (scales on either side folded).
  m->q = PeelScales(g, mm->input(0), &m->scale, &m->nodes);
  Value* kt = PeelScales(g, mm->input(1), &m->scale, &m->nodes);
  Node* transpose = kt->producer();
  if (!IsOp(transpose, "Transpose") || NumUsers(g, kt) != 1 ||
      transpose->GetInts("perm") != std::vector<int64_t>{0, 1, 3, 2}) {
    *why = "K^T is not a Transpose of the last two axes of K";
    return false;
  }
  m->nodes.push_back(transpose);
  m->k = PeelScales(g, transpose->input(0), &m->scale, &m->nodes);
  m->v = out->input(1);
  // Grouped-query attention: K and V repeated to the query heads come in with their own head count.
  std::vector<Node*> repeat;
  Value* k_base = RepeatedFrom(g, m->k, &repeat);
  Value* v_base = k_base == nullptr ? nullptr : RepeatedFrom(g, m->v, &repeat);
  if (v_base != nullptr && k_base->type().dims[1] == v_base->type().dims[1]) {
    m->k = k_base;
    m->v = v_base;
    m->grouped = true;
    m->nodes.insert(m->nodes.end(), repeat.begin(), repeat.end());
  }
  // The mask: a causal constant becomes causal=1, an all-zero one disappears.
  if (where != nullptr) {
    if (!WhereToAdditive(where, fill_where_true, scores, &m->where_mask, why)) return false;
  } else if (mask != nullptr && masking->output(0)->type() != scores) {
    *why = absl::StrCat("the mask (", mask->type().ToString(), ") broadcasts the scores (", scores.ToString(),
                        ") to a larger shape");
    return false;
  }
  const Tensor* constant_mask = m->where_mask                            ? &*m->where_mask
                                : mask != nullptr && mask->is_constant() ? mask->constant().get()
                                                                         : nullptr;
  if (constant_mask != nullptr && scores.is_static()) {
    const std::vector<int64_t> s = scores.StaticShape();
    m->causal = IsCausalMask(*constant_mask, s[2], s[3]);
    if (m->causal || IsConstantFilledWith(mask, 0)) {
      mask = nullptr;
      m->where_mask.reset();
    }
  }
  m->mask = mask;
  return true;
}

class FuseAttentionPass : public Pass {
 public:
  absl::Status Run(Graph& graph, PassContext& ctx) override {
    absl::StatusOr<std::vector<Node*>> order = graph.TopologicalOrder();
    if (!order.ok()) return order.status();
    // Matched nodes are only rewired here; erasing them after the scan keeps `order` valid.
    std::vector<Node*> dead;
    std::vector<std::pair<Value*, std::string>> renames;
    for (Node* sm : *order) {
      AttentionMatch m;
      std::string why;
      if (!MatchAttention(graph, sm, &m, &why)) {
        if (!why.empty()) ctx.Explain(absl::StrCat(sm->name(), " not fused: ", why));
        continue;
      }
      std::vector<Value*> inputs = {m.q, m.k, m.v};
      if (m.where_mask) {
        inputs.push_back(graph.AddConstant(absl::StrCat(sm->name(), ".mask"), std::move(*m.where_mask)));
      } else if (m.mask != nullptr) {
        inputs.push_back(m.mask);
      }
      Value* result = m.out->output(0);
      Node* fused = graph.AddNode("Attention", inputs, 1, m.out->name(), {result->name()});
      fused->set_domain(kTesselDomain);
      fused->SetAttr("scale", Attribute::Float(static_cast<float>(m.scale)));
      fused->SetAttr("causal", Attribute::Int(m.causal ? 1 : 0));
      // The op's own shape rules (heads divisible, sizes agreeing) are the last check.
      std::vector<const TensorType*> types;
      std::vector<const Tensor*> values;
      for (const Value* v : inputs) {
        types.push_back(&v->type());
        values.push_back(v->is_constant() ? v->constant().get() : nullptr);
      }
      absl::StatusOr<std::vector<TensorType>> inferred = InferOutputTypes(*fused, types, values);
      if (!inferred.ok() || (*inferred)[0] != result->type()) {
        ctx.Explain(absl::StrCat(sm->name(), " not fused: ",
                                 inferred.ok() ? absl::StrCat("tessel.Attention would give ", (*inferred)[0].ToString(),
                                                              " instead of ", result->type().ToString())
                                               : std::string(inferred.status().message())));
        absl::Status s = graph.EraseNode(fused);
        if (!s.ok()) return s;
        continue;
      }
      fused->output(0)->set_type(result->type());
      renames.push_back({fused->output(0), result->name()});
      graph.ReplaceAllUsesWith(result, fused->output(0));
      dead.insert(dead.end(), m.nodes.begin(), m.nodes.end());
      ++ctx.stat("attentions-fused");
      if (m.grouped) ++ctx.stat("kv-repeats-absorbed");
      if (m.causal) ++ctx.stat("causal-masks");
    }
    return FinishRewrites(graph, dead, renames);
  }
};

}  // namespace

PassInfo FuseAttentionPassInfo() {
  return SimplePassInfo<FuseAttentionPass>(
      "fuse-attention",
      "MatMul(Q, K^T) -> scale -> mask -> Softmax -> MatMul(V), grouped-query too, becomes one tessel.Attention");
}

}  // namespace tessel
