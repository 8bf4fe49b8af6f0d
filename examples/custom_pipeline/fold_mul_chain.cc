// fold-mul-chain: x * c1 * c2 → x * (c1*c2) for scalar f32 constants.
#include "fold_mul_chain.h"

namespace example {
namespace {

bool ScalarConstant(const tessel::Value* v, float* out) {
  if (v == nullptr || !v->is_constant() || v->constant()->num_elements() != 1 ||
      v->constant()->dtype() != tessel::DType::kF32) {
    return false;
  }
  *out = v->constant()->data<float>()[0];
  return true;
}

class FoldMulChain : public tessel::Pass {
 public:
  absl::Status Run(tessel::Graph& graph, tessel::PassContext& ctx) override {
    auto order = graph.TopologicalOrder();
    if (!order.ok()) return order.status();
    for (tessel::Node* outer : *order) {
      float c2, c1;
      if (outer->op_type() != "Mul" || !ScalarConstant(outer->input(1), &c2)) continue;
      tessel::Node* inner = outer->input(0)->producer();
      if (inner == nullptr || inner->op_type() != "Mul" || !ScalarConstant(inner->input(1), &c1)) continue;
      if (inner->output(0)->uses().size() != 1 || graph.IsGraphOutput(inner->output(0))) {
        ctx.Explain(inner->name() + " not merged: its result has other users");
        continue;
      }
      tessel::Value* c = graph.AddConstant(graph.UniqueValueName("merged_scale"),
                                           tessel::Tensor::FromVector<float>({}, {c1 * c2}));
      outer->SetInput(0, inner->input(0));
      outer->SetInput(1, c);
      absl::Status s = graph.EraseNode(inner);
      if (!s.ok()) return s;
      ++ctx.stat("muls-merged");
    }
    return absl::OkStatus();
  }
};

}  // namespace

tessel::PassInfo FoldMulChainPassInfo() {
  return tessel::SimplePassInfo<FoldMulChain>("fold-mul-chain", "merge chained multiplications by scalar constants");
}

}  // namespace example
