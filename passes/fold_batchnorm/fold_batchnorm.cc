// BatchNorm folding.
#include "passes/fold_batchnorm/fold_batchnorm.h"

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "passes/utils/pass_utils.h"
#include "passes/utils/rewrite.h"

namespace tessel {
namespace {

bool IsF32Constant(const Value* v) { return v != nullptr && v->is_constant() && v->constant()->dtype() == DType::kF32; }

// The BatchNormalization as y = x * scale[c] + shift[c], computed in double as its reference kernel does.
struct ScaleShift {
  std::vector<double> scale;
  std::vector<double> shift;
  int64_t channels() const { return static_cast<int64_t>(scale.size()); }
};

ScaleShift ReadBatchNorm(const Node& bn) {
  const double eps = bn.GetFloat("epsilon", 1e-5f);
  const Tensor& gamma = *bn.input(1)->constant();
  const Tensor& beta = *bn.input(2)->constant();
  const Tensor& mean = *bn.input(3)->constant();
  const Tensor& var = *bn.input(4)->constant();
  ScaleShift ss;
  for (int64_t c = 0; c < gamma.num_elements(); ++c) {
    const double a = gamma.data<float>()[c] / std::sqrt(static_cast<double>(var.data<float>()[c]) + eps);
    ss.scale.push_back(a);
    ss.shift.push_back(beta.data<float>()[c] - mean.data<float>()[c] * a);
  }
  return ss;
}

class FoldBatchNormPass : public Pass {
 public:
  absl::Status Run(Graph& graph, PassContext& ctx) override {
    absl::StatusOr<std::vector<Node*>> order = graph.TopologicalOrder();
    if (!order.ok()) return order.status();
    // Every rewrite erases only the BatchNormalization and nodes before it in this order.
    for (Node* bn : *order) {
      if (!IsOp(bn, "BatchNormalization")) continue;
      bool constant = bn->input(0)->type().dtype == DType::kF32 && bn->num_outputs() == 1;
      for (int i = 1; i < 5; ++i) {
        constant &= IsF32Constant(bn->input(i)) &&
                    bn->input(i)->constant()->num_elements() == bn->input(1)->type().NumElements();
      }
      if (!constant) {
        if (ctx.explain()) ctx.Explain(absl::StrCat(bn->DebugName(), " left alone: needs f32 data and constant statistics"));
        continue;
      }
      const ScaleShift ss = ReadBatchNorm(*bn);
      absl::StatusOr<bool> folded = FoldIntoProducer(graph, bn, ss, ctx);
      if (!folded.ok()) return folded.status();
      if (*folded) {
        ++ctx.stat("batchnorms-folded");
        continue;
      }
      absl::Status s = ToScaleShift(graph, bn, ss);
      if (!s.ok()) return s;
      ++ctx.stat("batchnorms-to-scale-shift");
    }
    graph.RemoveUnusedConstants();
    return absl::OkStatus();
  }

 private:
  // Folds into a Conv, Gemm or 2-D MatMul producer; false (with the reason when asked) when it cannot.
  absl::StatusOr<bool> FoldIntoProducer(Graph& graph, Node* bn, const ScaleShift& ss, PassContext& ctx) {
    Value* x = bn->input(0);
    Node* p = x->producer();
    if (!IsOp(p, "Conv") && !IsOp(p, "Gemm") && !IsOp(p, "MatMul")) return false;
    std::string reason;
    const int users = NumUsers(graph, x);
    if (users != 1) {
      reason = absl::StrCat("output has ", users, " users");
    } else if (!IsF32Constant(p->input(1))) {
      reason = "weight is not an f32 constant";
    } else if (p->op_type() == "Conv") {
      reason = FoldConv(graph, p, ss);
    } else if (p->op_type() == "Gemm") {
      reason = FoldGemm(graph, p, ss);
    } else {
      absl::StatusOr<std::string> r = FoldMatMul(graph, p, ss);
      if (!r.ok()) return r.status();
      reason = *r;
    }
    if (!reason.empty()) {
      if (ctx.explain()) {
        ctx.Explain(absl::StrCat(bn->DebugName(), " not folded into ", p->DebugName(), ": ", reason,
                                 "; becomes a scale and shift"));
      }
      return false;
    }
    // The producer now computes the normalized result; the BatchNormalization goes.
    absl::Status s = BypassNode(graph, bn, bn->input(0));
    if (!s.ok()) return s;
    return true;
  }

  // W[m, ...] *= scale[m]; B[m] = B[m] * scale[m] + shift[m]. Returns why not, or "".
  std::string FoldConv(Graph& graph, Node* conv, const ScaleShift& ss) {
    const Tensor& w = *conv->input(1)->constant();
    Value* b = conv->input(2);
    if (b != nullptr && !IsF32Constant(b)) return "bias is not an f32 constant";
    if (w.rank() < 3 || w.dim(0) != ss.channels()) return absl::StrCat("weight shape ", ShapeToString(w.shape()));
    Tensor nw(DType::kF32, w.shape());
    const int64_t per_channel = w.num_elements() / w.dim(0);
    for (int64_t m = 0; m < w.dim(0); ++m) {
      for (int64_t i = 0; i < per_channel; ++i) {
        const int64_t k = m * per_channel + i;
        nw.data<float>()[k] = static_cast<float>(w.data<float>()[k] * ss.scale[m]);
      }
    }
    Tensor nb(DType::kF32, {w.dim(0)});
    for (int64_t m = 0; m < w.dim(0); ++m) {
      const double old = b ? b->constant()->data<float>()[m] : 0.0;
      nb.data<float>()[m] = static_cast<float>(old * ss.scale[m] + ss.shift[m]);
    }
    conv->SetInput(1, graph.AddConstant(absl::StrCat(conv->input(1)->name(), "_bnfold"), std::move(nw)));
    Value* bias = graph.AddConstant(absl::StrCat(b ? b->name() : conv->name() + ".bias", "_bnfold"), std::move(nb));
    if (conv->num_inputs() > 2) {
      conv->SetInput(2, bias);
    } else {
      conv->AddInput(bias);
    }
    return "";
  }

  // Columns of op(B) scaled; the bias C (folded with beta) becomes C * scale + shift over the columns.
  std::string FoldGemm(Graph& graph, Node* gemm, const ScaleShift& ss) {
    const Tensor& w = *gemm->input(1)->constant();
    const bool tb = gemm->GetInt("transB", 0) != 0;
    const int64_t n = tb ? w.dim(0) : w.dim(1);
    if (n != ss.channels()) return absl::StrCat("weight shape ", ShapeToString(w.shape()));
    Value* c = gemm->input(2);
    if (c != nullptr) {
      if (!IsF32Constant(c)) return "bias C is not an f32 constant";
      const Tensor& ct = *c->constant();
      const bool per_column = ct.num_elements() == 1 || (ct.num_elements() == n && (ct.rank() < 2 || ct.dim(0) == 1));
      if (!per_column) return absl::StrCat("bias C of shape ", ShapeToString(ct.shape()), " varies per row");
    }
    Tensor nw(DType::kF32, w.shape());
    for (int64_t i = 0; i < w.dim(0); ++i) {
      for (int64_t j = 0; j < w.dim(1); ++j) {
        const int64_t k = i * w.dim(1) + j;
        nw.data<float>()[k] = static_cast<float>(w.data<float>()[k] * ss.scale[tb ? i : j]);
      }
    }
    const double beta = gemm->GetFloat("beta", 1.0f);
    Tensor nc(DType::kF32, {n});
    for (int64_t j = 0; j < n; ++j) {
      double old = 0;
      if (c != nullptr) old = beta * c->constant()->data<float>()[c->constant()->num_elements() == 1 ? 0 : j];
      nc.data<float>()[j] = static_cast<float>(old * ss.scale[j] + ss.shift[j]);
    }
    gemm->SetInput(1, graph.AddConstant(absl::StrCat(gemm->input(1)->name(), "_bnfold"), std::move(nw)));
    Value* bias = graph.AddConstant(absl::StrCat(c ? c->name() : gemm->name() + ".bias", "_bnfold"), std::move(nc));
    if (gemm->num_inputs() > 2) {
      gemm->SetInput(2, bias);
    } else {
      gemm->AddInput(bias);
    }
    gemm->RemoveAttr("beta");
    return "";
  }

  // A 2-D MatMul with a constant [K, N] weight becomes Gemm(A, W * scale, shift).
  absl::StatusOr<std::string> FoldMatMul(Graph& graph, Node* mm, const ScaleShift& ss) {
    const Tensor& w = *mm->input(1)->constant();
    if (mm->input(0)->type().rank() != 2 || w.rank() != 2) return std::string("operands are not both 2-D");
    if (w.dim(1) != ss.channels()) return absl::StrCat("weight shape ", ShapeToString(w.shape()));
    Tensor nw(DType::kF32, w.shape());
    for (int64_t k = 0; k < w.num_elements(); ++k) {
      nw.data<float>()[k] = static_cast<float>(w.data<float>()[k] * ss.scale[k % w.dim(1)]);
    }
    Tensor nb(DType::kF32, {w.dim(1)});
    for (int64_t j = 0; j < w.dim(1); ++j) nb.data<float>()[j] = static_cast<float>(ss.shift[j]);
    Value* nwv = graph.AddConstant(absl::StrCat(mm->input(1)->name(), "_bnfold"), std::move(nw));
    Value* nbv = graph.AddConstant(mm->name() + ".bias_bnfold", std::move(nb));
    Node* gemm = graph.AddNode("Gemm", {mm->input(0), nwv, nbv}, 1, mm->name());
    absl::Status s = InferNodeTypes(gemm);
    if (!s.ok()) return s;
    Value* out = mm->output(0);
    const std::string name = out->name();
    graph.ReplaceAllUsesWith(out, gemm->output(0));
    s = graph.EraseNode(mm);
    if (!s.ok()) return s;
    s = graph.RenameValue(gemm->output(0), name);
    if (!s.ok()) return s;
    return std::string();
  }

  // y = x * scale + shift with constants of shape [C, 1, ...] broadcasting over [N, C, ...].
  absl::Status ToScaleShift(Graph& graph, Node* bn, const ScaleShift& ss) {
    Value* x = bn->input(0);
    std::vector<int64_t> shape = {ss.channels()};
    shape.resize(x->type().rank() - 1, 1);
    Tensor scale(DType::kF32, shape), shift(DType::kF32, shape);
    for (int64_t c = 0; c < ss.channels(); ++c) {
      scale.data<float>()[c] = static_cast<float>(ss.scale[c]);
      shift.data<float>()[c] = static_cast<float>(ss.shift[c]);
    }
    Value* sv = graph.AddConstant(bn->name() + "/scale", std::move(scale));
    Value* hv = graph.AddConstant(bn->name() + "/shift", std::move(shift));
    Node* mul = graph.AddNode("Mul", {x, sv}, 1, bn->name() + "/mul");
    Node* add = graph.AddNode("Add", {mul->output(0), hv}, 1, bn->name() + "/add");
    for (Node* n : {mul, add}) {
      absl::Status s = InferNodeTypes(n);
      if (!s.ok()) return s;
    }
    Value* out = bn->output(0);
    const std::string name = out->name();
    graph.ReplaceAllUsesWith(out, add->output(0));
    absl::Status s = graph.EraseNode(bn);
    if (!s.ok()) return s;
    return graph.RenameValue(add->output(0), name);
  }
};

}  // namespace

PassInfo FoldBatchNormPassInfo() {
  return SimplePassInfo<FoldBatchNormPass>(
      "fold-batchnorm",
      "fold BatchNormalization into a preceding Conv/Gemm/MatMul; otherwise make it a per-channel scale and shift");
}

}  // namespace tessel
