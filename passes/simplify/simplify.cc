// Algebraic simplification.
#include "passes/simplify/simplify.h"

#include <vector>

#include "graph/op_registry.h"
#include "graph/ops/nn_params.h"
#include "passes/utils/pass_utils.h"
#include "passes/utils/rewrite.h"

namespace tessel {
namespace {

// A node's output can replace itself by `v` only when v already has the output's type (no implicit
// broadcast or dtype change would be lost).
bool SameType(const Value* a, const Value* b) { return a->type().dtype == b->type().dtype && a->type().dims == b->type().dims; }

// A Conv's kernel taps that read only padding for every output position contribute exact zeros: with
// static shapes they are cut from the weights, and the pads shrink to match. DeepLabV3's atrous
// pyramid (dilations 12, 24, 36) on a feature map smaller than the dilation is a 1x1 convolution with
// 8/9 of its multiply-adds on padding. Returns whether it rewrote `n`.
bool DropPaddingTaps(Graph& graph, Node* n) {
  const Value* x = n->input(0);
  const Value* w = n->num_inputs() > 1 ? n->input(1) : nullptr;
  if (w == nullptr || !w->is_constant() || w->constant()->dtype() != DType::kF32 || !x->type().is_static() ||
      !n->output(0)->type().is_static() || x->type().rank() < 3) {
    return false;
  }
  absl::StatusOr<ConvParams> p = ResolveConvParams(*n, x->type().dims, w->type().dims);
  if (!p.ok()) return false;
  const int spatial = p->num_spatial();
  const std::vector<int64_t> in = x->type().StaticShape(), out = n->output(0)->type().StaticShape();
  std::vector<int64_t> first(spatial), count(spatial), pads(2 * spatial);
  bool smaller = false;
  for (int a = 0; a < spatial; ++a) {
    const int64_t h = in[2 + a], o = out[2 + a], s = p->strides[a], d = p->dilations[a], k = p->kernel[a];
    const int64_t pb = p->pads_begin[a], pe = p->pads_end[a];
    int64_t lo = -1, hi = -1;
    for (int64_t t = 0; t < k; ++t) {
      // Tap t reads rows t*d - pb, ..., (o-1)*s + t*d - pb: live if that range meets [0, h).
      if (t * d - pb < h && (o - 1) * s + t * d - pb >= 0) {
        if (lo < 0) lo = t;
        hi = t;
      }
    }
    if (lo < 0) return false;  // every tap on padding: the output is the bias; rare, left alone
    first[a] = lo;
    count[a] = hi - lo + 1;
    pads[a] = pb - lo * d;
    pads[spatial + a] = pe - (k - 1 - hi) * d;
    if (pads[a] < 0 || pads[spatial + a] < 0) return false;
    // The output extent must not change.
    if ((h + pads[a] + pads[spatial + a] - d * (count[a] - 1) - 1) / s + 1 != o) return false;
    smaller |= count[a] < k;
  }
  if (!smaller) return false;
  const Tensor& weights = *w->constant();
  std::vector<int64_t> shape = weights.shape();
  for (int a = 0; a < spatial; ++a) shape[2 + a] = count[a];
  Tensor cut(DType::kF32, shape);
  const int rank = static_cast<int>(shape.size());
  std::vector<int64_t> index(rank, 0);
  for (int64_t i = 0; i < cut.num_elements(); ++i) {
    int64_t src = 0;
    for (int r = 0; r < rank; ++r) src = src * weights.dim(r) + index[r] + (r >= 2 ? first[r - 2] : 0);
    cut.data<float>()[i] = weights.data<float>()[src];
    for (int r = rank - 1; r >= 0 && ++index[r] == shape[r]; --r) index[r] = 0;
  }
  n->SetInput(1, graph.AddConstant(graph.UniqueValueName(w->name() + "_live_taps"), std::move(cut)));
  n->SetAttr("kernel_shape", Attribute::Ints(std::vector<int64_t>(shape.begin() + 2, shape.end())));
  n->SetAttr("pads", Attribute::Ints(pads));
  n->RemoveAttr("auto_pad");
  return true;
}

class SimplifyPass : public Pass {
 public:
  absl::Status Run(Graph& graph, PassContext& ctx) override {
    // Rewrites may enable others (a removed Identity exposes a transpose pair): iterate to a fixpoint.
    for (int round = 0; round < 8; ++round) {
      absl::StatusOr<std::vector<Node*>> order = graph.TopologicalOrder();
      if (!order.ok()) return order.status();
      int changes = 0;
      for (Node* n : *order) {
        absl::StatusOr<bool> changed = Simplify(graph, n, ctx);
        if (!changed.ok()) return changed.status();
        changes += *changed;
      }
      if (changes == 0) break;
      absl::Status s = InferShapes(graph);
      if (!s.ok()) return s;
    }
    graph.RemoveUnusedConstants();
    return absl::OkStatus();
  }

 private:
  // Each rule returns whether it rewrote (and possibly erased) `n`.
  absl::StatusOr<bool> Simplify(Graph& graph, Node* n, PassContext& ctx) {
    if (!n->domain().empty()) return false;
    const std::string& op = n->op_type();
    // A Dropout goes only where it is known to be inference's identity: a training_mode that is true or
    // read at run time stays, so that a true one is the kernel's error rather than a skipped dropout.
    const bool inference_dropout =
        op == "Dropout" && (n->num_inputs() < 3 || n->input(2) == nullptr ||
                            (n->input(2)->is_constant() && n->input(2)->constant()->num_elements() == 1 &&
                             n->input(2)->constant()->GetAsInt64(0) == 0));
    if (op == "Identity" || (inference_dropout && (n->num_outputs() == 1 || n->output(1)->uses().empty()) &&
                             !(n->num_outputs() > 1 && graph.IsGraphOutput(n->output(1))))) {
      return Bypass(graph, n, n->input(0), ctx, op == "Identity" ? "identities-removed" : "dropouts-removed");
    }
    if (op == "Add" || op == "Mul") {
      // Canonical order: constant on the right.
      if (n->input(0)->is_constant() && !n->input(1)->is_constant()) {
        Value* a = n->input(0);
        Value* b = n->input(1);
        n->SetInput(0, b);
        n->SetInput(1, a);
        ++ctx.stat("operands-reordered");
      }
      const double identity = op == "Add" ? 0.0 : 1.0;
      if (IsConstantFilledWith(n->input(1), identity) && SameType(n->input(0), n->output(0))) {
        return Bypass(graph, n, n->input(0), ctx, op == "Add" ? "add-zero-removed" : "mul-one-removed");
      }
      return false;
    }
    if (op == "Conv" && DropPaddingTaps(graph, n)) {
      ++ctx.stat("conv-padding-taps-dropped");
      return true;
    }
    if (op == "Sub" && IsConstantFilledWith(n->input(1), 0.0) && SameType(n->input(0), n->output(0))) {
      return Bypass(graph, n, n->input(0), ctx, "sub-zero-removed");
    }
    if (op == "Div" && n->input(1)->is_constant()) {
      if (IsConstantFilledWith(n->input(1), 1.0) && SameType(n->input(0), n->output(0))) {
        return Bypass(graph, n, n->input(0), ctx, "div-one-removed");
      }
      const Tensor& c = *n->input(1)->constant();
      if (c.dtype() == DType::kF32) {
        Tensor inv(DType::kF32, c.shape());
        for (int64_t i = 0; i < c.num_elements(); ++i) inv.data<float>()[i] = 1.0f / c.data<float>()[i];
        Value* k = graph.AddConstant(graph.UniqueValueName(n->input(1)->name() + "_reciprocal"), std::move(inv));
        n->set_op_type("Mul");
        n->SetInput(1, k);
        ++ctx.stat("div-to-mul");
        return true;
      }
      return false;
    }
    if (op == "Pow") {
      double e;
      if (!GetScalarConstant(n->input(1), &e) || n->input(0)->type().dtype != DType::kF32) return false;
      if (e == 1.0 && SameType(n->input(0), n->output(0))) return Bypass(graph, n, n->input(0), ctx, "pow-one-removed");
      if (e == 2.0) {
        Value* x = n->input(0);
        n->set_op_type("Mul");
        n->SetInput(1, x);
        ++ctx.stat("pow2-to-mul");
        return true;
      }
      if (e == 0.5) {
        n->set_op_type("Sqrt");
        n->RemoveLastInput();
        ++ctx.stat("pow-half-to-sqrt");
        return true;
      }
      return false;
    }
    if (op == "Transpose") {
      const int rank = n->input(0)->type().rank();
      std::vector<int64_t> perm = n->GetInts("perm");
      if (perm.empty()) {
        for (int i = rank - 1; i >= 0; --i) perm.push_back(i);
      }
      Node* p = n->input(0)->producer();
      if (IsOp(p, "Transpose") && p->output(0)->uses().size() == 1 && !graph.IsGraphOutput(p->output(0))) {
        std::vector<int64_t> inner = p->GetInts("perm");
        if (inner.empty()) {
          for (int i = rank - 1; i >= 0; --i) inner.push_back(i);
        }
        // out[i] = mid[perm[i]] = in[inner[perm[i]]].
        std::vector<int64_t> composed(rank);
        for (int i = 0; i < rank; ++i) composed[i] = inner[perm[i]];
        n->SetInput(0, p->input(0));
        n->SetAttr("perm", Attribute::Ints(composed));
        absl::Status s = graph.EraseNode(p);
        if (!s.ok()) return s;
        perm = composed;
        ++ctx.stat("transposes-merged");
      }
      bool identity = true;
      for (int i = 0; i < rank; ++i) identity &= perm[i] == i;
      if (identity) return Bypass(graph, n, n->input(0), ctx, "transposes-removed");
      return false;
    }
    if (op == "Reshape") {
      Node* p = n->input(0)->producer();
      bool changed = false;
      if (IsOp(p, "Reshape") && p->output(0)->uses().size() == 1 && !graph.IsGraphOutput(p->output(0)) &&
          n->GetInt("allowzero", 0) == 0 && n->input(1)->is_constant()) {
        // Only a fully explicit target (no 0 = copy-from-input) is independent of the inner shape.
        bool explicit_target = true;
        for (int64_t d : n->input(1)->constant()->ToInt64Vector()) explicit_target &= d != 0;
        if (explicit_target) {
          n->SetInput(0, p->input(0));
          absl::Status s = graph.EraseNode(p);
          if (!s.ok()) return s;
          ++ctx.stat("reshapes-merged");
          changed = true;
        }
      }
      if (n->input(0)->type().is_static() && SameType(n->input(0), n->output(0))) {
        return Bypass(graph, n, n->input(0), ctx, "reshapes-removed");
      }
      return changed;
    }
    if ((op == "Cast" || op == "Expand") && n->input(0)->type().is_static() && SameType(n->input(0), n->output(0))) {
      return Bypass(graph, n, n->input(0), ctx, op == "Cast" ? "casts-removed" : "expands-removed");
    }
    return false;
  }

  absl::StatusOr<bool> Bypass(Graph& graph, Node* n, Value* input, PassContext& ctx, const char* stat) {
    // A graph input flowing straight to a graph output keeps the node (the output needs its own name).
    if (input->is_graph_input() && graph.IsGraphOutput(n->output(0))) return false;
    absl::Status s = BypassNode(graph, n, input);
    if (!s.ok()) return s;
    ++ctx.stat(stat);
    return true;
  }
};

}  // namespace

PassInfo SimplifyPassInfo() {
  return SimplePassInfo<SimplifyPass>(
      "simplify", "algebraic simplification: x*1, x+0, x/c→x*(1/c), pow(x,2)→x*x, transpose/reshape pairs, no-ops");
}

}  // namespace tessel
