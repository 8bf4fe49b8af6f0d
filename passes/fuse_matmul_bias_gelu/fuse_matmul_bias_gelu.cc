// GELU recognition and MatMul/Gemm + bias (+ GELU) fusion.
#include "passes/fuse_matmul_bias_gelu/fuse_matmul_bias_gelu.h"

#include <cmath>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "passes/utils/pass_utils.h"
#include "passes/utils/rewrite.h"

namespace tessel {
namespace {

// A scalar constant within float precision of `want` (exporters round sqrt(2) and friends to f32).
bool IsScalarNear(const Value* v, double want) {
  double x;
  return GetScalarConstant(v, &x) && std::abs(x - want) <= 1e-6 * std::abs(want);
}

// For a binary `n` of type op with `v` as one operand: the other operand, else nullptr.
Value* OtherOperand(const Node* n, const char* op, const Value* v) {
  if (!IsOp(n, op) || n->num_inputs() != 2) return nullptr;
  if (n->input(0) == v) return n->input(1);
  if (n->input(1) == v) return n->input(0);
  return nullptr;
}

// A binary `n` of type op with one operand a constant near c: the other operand, else nullptr.
Value* OperandBesideConstant(const Node* n, const char* op, double c) {
  if (!IsOp(n, op) || n->num_inputs() != 2) return nullptr;
  if (IsScalarNear(n->input(1), c)) return n->input(0);
  if (IsScalarNear(n->input(0), c)) return n->input(1);
  return nullptr;
}

// A GELU written out: the nodes to replace (the last one's output is the result) and its input x.
struct GeluMatch {
  Value* x = nullptr;
  std::vector<Node*> nodes;
  std::string approximate;
};

// After `one_plus` = 1 + f(x): matches x * one_plus * 0.5 in any association and order.
bool MatchHalfProduct(const Graph& graph, Node* one_plus, Value* x, GeluMatch* m) {
  Node* m1 = SoleUser(graph, one_plus->output(0));
  Value* o = OtherOperand(m1, "Mul", one_plus->output(0));
  if (o == nullptr) return false;
  if (o == x) {  // (x * (1 + f)) * 0.5
    Node* m2 = SoleUser(graph, m1->output(0));
    if (OperandBesideConstant(m2, "Mul", 0.5) != m1->output(0)) return false;
    m->nodes.insert(m->nodes.end(), {m1, m2});
    return true;
  }
  if (IsScalarNear(o, 0.5)) {  // ((1 + f) * 0.5) * x
    Node* m2 = SoleUser(graph, m1->output(0));
    if (OtherOperand(m2, "Mul", m1->output(0)) != x) return false;
    m->nodes.insert(m->nodes.end(), {m1, m2});
    return true;
  }
  Node* h = o->producer();  // (x * 0.5) * (1 + f)
  if (OperandBesideConstant(h, "Mul", 0.5) == x && SoleUser(graph, o) == m1) {
    m->nodes.insert(m->nodes.end(), {h, m1});
    return true;
  }
  return false;
}

// Anchored at the Erf of x * 0.5 * (1 + Erf(x / sqrt(2))), with Div(x, sqrt 2) or Mul(x, 1/sqrt 2).
bool MatchErfGelu(const Graph& graph, Node* erf, GeluMatch* m) {
  if (!IsOp(erf, "Erf")) return false;
  Node* scale = erf->input(0)->producer();
  Value* x = nullptr;
  if (IsOp(scale, "Div") && IsScalarNear(scale->input(1), std::sqrt(2.0))) {
    x = scale->input(0);
  } else {
    x = OperandBesideConstant(scale, "Mul", std::sqrt(0.5));
  }
  if (x == nullptr || SoleUser(graph, scale->output(0)) != erf) return false;
  Node* one_plus = SoleUser(graph, erf->output(0));
  if (OperandBesideConstant(one_plus, "Add", 1.0) != erf->output(0)) return false;
  m->x = x;
  m->nodes = {scale, erf, one_plus};
  m->approximate = "none";
  return MatchHalfProduct(graph, one_plus, x, m);
}

// x^3 as Pow(x, 3), x * (x * x) or (x * x) * x: the nodes, else empty.
std::vector<Node*> MatchCube(const Graph& graph, Value* v, Value* x) {
  Node* n = v->producer();
  if (IsOp(n, "Pow") && n->input(0) == x && IsScalarNear(n->input(1), 3.0)) return {n};
  Value* o = OtherOperand(n, "Mul", x);
  if (o == nullptr) return {};
  Node* sq = o->producer();
  if (IsOp(sq, "Mul") && sq->input(0) == x && sq->input(1) == x && SoleUser(graph, o) == n) return {sq, n};
  return {};
}

// Anchored at the Tanh of 0.5 * x * (1 + Tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))).
bool MatchTanhGelu(const Graph& graph, Node* tanh, GeluMatch* m) {
  if (!IsOp(tanh, "Tanh")) return false;
  Node* beta = tanh->input(0)->producer();
  Value* sum = OperandBesideConstant(beta, "Mul", 0.79788456080286535588 /* sqrt(2 / pi) */);
  if (sum == nullptr || SoleUser(graph, beta->output(0)) != tanh) return false;
  Node* add = sum->producer();
  if (!IsOp(add, "Add") || SoleUser(graph, sum) != beta) return false;
  for (int i = 0; i < 2; ++i) {
    Value* x = add->input(i);
    Node* kappa = add->input(1 - i)->producer();
    Value* cube = OperandBesideConstant(kappa, "Mul", 0.044715);
    if (cube == nullptr || SoleUser(graph, kappa->output(0)) != add || SoleUser(graph, cube) != kappa) continue;
    std::vector<Node*> cube_nodes = MatchCube(graph, cube, x);
    if (cube_nodes.empty()) continue;
    Node* one_plus = SoleUser(graph, tanh->output(0));
    if (OperandBesideConstant(one_plus, "Add", 1.0) != tanh->output(0)) return false;
    m->x = x;
    m->nodes = cube_nodes;
    m->nodes.insert(m->nodes.end(), {kappa, add, beta, tanh, one_plus});
    m->approximate = "tanh";
    return MatchHalfProduct(graph, one_plus, x, m);
  }
  return false;
}

// `by` takes over `out` (uses, graph-output slot, name); `dead`, listed in dataflow order, are erased.
absl::Status Replace(Graph& graph, Value* out, Node* by, std::vector<Node*> dead,
                     absl::flat_hash_set<const Node*>* erased) {
  absl::Status s = InferNodeTypes(by);
  if (!s.ok()) return s;
  const std::string name = out->name();
  graph.ReplaceAllUsesWith(out, by->output(0));
  for (auto it = dead.rbegin(); it != dead.rend(); ++it) {
    s = graph.EraseNode(*it);
    if (!s.ok()) return s;
    erased->insert(*it);
  }
  return graph.RenameValue(by->output(0), name);
}

bool IsF32Constant(const Value* v) { return v != nullptr && v->is_constant() && v->constant()->dtype() == DType::kF32; }

class FuseMatMulBiasGeluPass : public Pass {
 public:
  absl::Status Run(Graph& graph, PassContext& ctx) override {
    absl::Status s = RecognizeGelu(graph, ctx);
    if (!s.ok()) return s;
    s = FuseMatMuls(graph, ctx);
    if (!s.ok()) return s;
    graph.RemoveUnusedConstants();
    return absl::OkStatus();
  }

 private:
  absl::Status RecognizeGelu(Graph& graph, PassContext& ctx) {
    absl::StatusOr<std::vector<Node*>> order = graph.TopologicalOrder();
    if (!order.ok()) return order.status();
    // Matches are anchored mid-pattern and erase later nodes too; erased ones are skipped.
    absl::flat_hash_set<const Node*> erased;
    for (Node* n : *order) {
      if (erased.count(n)) continue;
      GeluMatch m;
      if (!MatchErfGelu(graph, n, &m) && !MatchTanhGelu(graph, n, &m)) continue;
      Node* gelu = graph.AddNode("Gelu", {m.x}, 1, m.nodes.back()->name());
      if (m.approximate == "tanh") gelu->SetAttr("approximate", Attribute::String("tanh"));
      absl::Status s = Replace(graph, m.nodes.back()->output(0), gelu, m.nodes, &erased);
      if (!s.ok()) return s;
      ++ctx.stat("gelus-recognized");
    }
    return absl::OkStatus();
  }

  absl::Status FuseMatMuls(Graph& graph, PassContext& ctx) {
    absl::StatusOr<std::vector<Node*>> order = graph.TopologicalOrder();
    if (!order.ok()) return order.status();
    absl::flat_hash_set<const Node*> erased;
    for (Node* n : *order) {
      if (erased.count(n)) continue;
      absl::Status s;
      if (IsOp(n, "MatMul")) {
        s = FuseMatMul(graph, n, ctx, &erased);
      } else if (IsOp(n, "Gemm")) {
        s = FuseGemm(graph, n, ctx, &erased);
      }
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }

  // The Gelu reading v alone, else nullptr.
  Node* GeluAfter(const Graph& graph, const Value* v) {
    Node* g = SoleUser(graph, v);
    return IsOp(g, "Gelu") ? g : nullptr;
  }

  // Why `bias`, added to MatMul(A, W), is not one constant per column of a constant [K, N] W; "".
  static std::string MatMulBlocker(const Node* mm, const Value* bias) {
    const Value* w = mm->input(1);
    if (!IsF32Constant(w) || w->constant()->rank() != 2) return "weight is not a 2-D f32 constant";
    if (!IsF32Constant(bias)) return "bias is not an f32 constant";
    const Tensor& b = *bias->constant();
    bool per_column = b.num_elements() == w->constant()->dim(1) && b.rank() <= mm->output(0)->type().rank();
    for (int d = 0; per_column && d + 1 < b.rank(); ++d) per_column = b.dim(d) == 1;
    if (!per_column) return absl::StrCat("bias of shape ", ShapeToString(b.shape()), " is not one value per column");
    return "";
  }

  // MatMul(A, W) + bias [+ Gelu] -> MatMulBias / MatMulBiasGelu.
  absl::Status FuseMatMul(Graph& graph, Node* mm, PassContext& ctx, absl::flat_hash_set<const Node*>* erased) {
    Node* add = SoleUser(graph, mm->output(0));
    Value* bias = OtherOperand(add, "Add", mm->output(0));
    if (bias == nullptr) return absl::OkStatus();
    const std::string reason = MatMulBlocker(mm, bias);
    if (!reason.empty()) {
      if (ctx.explain()) ctx.Explain(absl::StrCat(mm->name(), " not fused with ", add->DebugName(), ": ", reason));
      return absl::OkStatus();
    }
    const Tensor& b = *bias->constant();
    Value* b1 = bias;
    if (b.rank() != 1) b1 = graph.AddConstant(bias->name() + "_1d", *b.Reshaped({b.num_elements()}));
    Node* gelu = GeluAfter(graph, add->output(0));
    Node* fused = graph.AddNode(gelu ? "MatMulBiasGelu" : "MatMulBias", {mm->input(0), mm->input(1), b1}, 1, mm->name());
    fused->set_domain(kTesselDomain);
    if (gelu) fused->SetAttr("approximate", Attribute::String(gelu->GetString("approximate", "none")));
    std::vector<Node*> dead = {mm, add};
    if (gelu) dead.push_back(gelu);
    ++ctx.stat(gelu ? "matmul-bias-gelu-fused" : "matmul-bias-fused");
    return Replace(graph, dead.back()->output(0), fused, dead, erased);
  }

  // Why Gemm(A, B, C) cannot become MatMulBiasGelu: needs plain A, constant B, per-column C; "".
  static std::string GemmBlocker(const Node* gemm) {
    if (gemm->GetInt("transA", 0) != 0) return "A is transposed";
    if (!IsF32Constant(gemm->input(1))) return "weight is not an f32 constant";
    const Tensor& b = *gemm->input(1)->constant();
    const int64_t n = gemm->GetInt("transB", 0) != 0 ? b.dim(0) : b.dim(1);
    const Value* cv = gemm->input(2);
    if (cv == nullptr) return "";
    if (!IsF32Constant(cv)) return "bias C is not an f32 constant";
    const Tensor& c = *cv->constant();
    if (c.num_elements() == 1 || (c.num_elements() == n && (c.rank() < 2 || c.dim(0) == 1))) return "";
    return absl::StrCat("bias C of shape ", ShapeToString(c.shape()), " varies per row");
  }

  // Gemm + Gelu -> MatMulBiasGelu(A, alpha * op(B), beta * C).
  absl::Status FuseGemm(Graph& graph, Node* gemm, PassContext& ctx, absl::flat_hash_set<const Node*>* erased) {
    Node* gelu = GeluAfter(graph, gemm->output(0));
    if (gelu == nullptr) return absl::OkStatus();
    const std::string reason = GemmBlocker(gemm);
    if (!reason.empty()) {
      if (ctx.explain()) ctx.Explain(absl::StrCat(gemm->name(), " not fused with ", gelu->DebugName(), ": ", reason));
      return absl::OkStatus();
    }
    const Value* bv = gemm->input(1);
    const Tensor& b = *bv->constant();
    const bool tb = gemm->GetInt("transB", 0) != 0;
    const int64_t k = tb ? b.dim(1) : b.dim(0);
    const int64_t n = tb ? b.dim(0) : b.dim(1);
    const double alpha = gemm->GetFloat("alpha", 1.0f);
    const double beta = gemm->GetFloat("beta", 1.0f);
    Tensor w(DType::kF32, {k, n});
    for (int64_t i = 0; i < k; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        w.data<float>()[i * n + j] = static_cast<float>(alpha * b.data<float>()[tb ? j * k + i : i * n + j]);
      }
    }
    const Value* cv = gemm->input(2);
    Tensor bias(DType::kF32, {n});
    for (int64_t j = 0; j < n && cv != nullptr; ++j) {
      const Tensor& c = *cv->constant();
      bias.data<float>()[j] = static_cast<float>(beta * c.data<float>()[c.num_elements() == 1 ? 0 : j]);
    }
    Value* wv = graph.AddConstant(absl::StrCat(bv->name(), "_kn"), std::move(w));
    Value* biasv = graph.AddConstant(cv ? cv->name() + "_n" : gemm->name() + ".bias", std::move(bias));
    Node* fused = graph.AddNode("MatMulBiasGelu", {gemm->input(0), wv, biasv}, 1, gemm->name());
    fused->set_domain(kTesselDomain);
    fused->SetAttr("approximate", Attribute::String(gelu->GetString("approximate", "none")));
    ++ctx.stat("matmul-bias-gelu-fused");
    return Replace(graph, gelu->output(0), fused, {gemm, gelu}, erased);
  }
};

}  // namespace

PassInfo FuseMatMulBiasGeluPassInfo() {
  return SimplePassInfo<FuseMatMulBiasGeluPass>(
      "fuse-matmul-bias-gelu",
      "recognize decomposed GELU; fuse MatMul/Gemm + bias (+ GELU) into tessel.MatMulBias(Gelu)");
}

}  // namespace tessel
