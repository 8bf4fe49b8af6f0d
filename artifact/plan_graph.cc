#include "artifact/plan_graph.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/text.h"

namespace tessel {

void DecodePlanGraph(const artifact::Plan& plan, const PlanTensorResolver& resolve, Graph& graph,
                     std::vector<Value*>* values, std::vector<Node*>* nodes) {
  values->clear();
  nodes->clear();
  for (int i = 0; i < plan.tensors_size(); ++i) {
    const artifact::Tensor& t = plan.tensors(i);
    const std::vector<int64_t> shape(t.shape().begin(), t.shape().end());
    if (resolve && t.storage() == artifact::Tensor::WEIGHTS) {
      // Constants stay constants, so that a legality check reading one (Clip's bounds, a Reshape's
      // shape) sees at load what the compiler saw.
      artifact::TensorRef ref;
      ref.set_dtype(t.dtype());
      *ref.mutable_shape() = t.shape();
      ref.set_offset(t.offset());
      ref.set_bytes(t.bytes());
      values->push_back(graph.AddConstant(absl::StrCat("t", i), resolve(ref)));
      continue;
    }
    // An extent known only at run time (a HEAP tensor's -1) stays open.
    std::vector<Dim> dims;
    for (int64_t d : shape) dims.push_back(d >= 0 ? Dim(d) : UnknownDim());
    values->push_back(graph.AddInput(absl::StrCat("t", i), TensorType(static_cast<DType>(t.dtype()), std::move(dims))));
  }
  for (const artifact::Op& op : plan.ops()) {
    std::vector<Value*> inputs;
    for (int idx : op.inputs()) inputs.push_back(idx >= 0 && idx < plan.tensors_size() ? (*values)[idx] : nullptr);
    Node* n = graph.AddNode(op.op_type(), inputs, op.outputs_size(), op.name());
    n->set_domain(op.domain());
    for (const artifact::Attribute& a : op.attributes()) {
      switch (a.value_case()) {
        case artifact::Attribute::kI: n->SetAttr(a.name(), Attribute::Int(a.i())); break;
        case artifact::Attribute::kF: n->SetAttr(a.name(), Attribute::Float(a.f())); break;
        case artifact::Attribute::kS: n->SetAttr(a.name(), Attribute::String(a.s())); break;
        case artifact::Attribute::kInts:
          n->SetAttr(a.name(), Attribute::Ints({a.ints().values().begin(), a.ints().values().end()}));
          break;
        case artifact::Attribute::kFloats:
          n->SetAttr(a.name(), Attribute::Floats({a.floats().values().begin(), a.floats().values().end()}));
          break;
        case artifact::Attribute::kStrings:
          n->SetAttr(a.name(), Attribute::Strings({a.strings().values().begin(), a.strings().values().end()}));
          break;
        case artifact::Attribute::kTensor: {
          if (!resolve) break;
          Attribute attr;
          attr.kind = Attribute::Kind::kTensor;
          attr.t = resolve(a.tensor());
          n->SetAttr(a.name(), std::move(attr));
          break;
        }
        case artifact::Attribute::kGraph: {
          // A branch that does not parse stays unset: If then reports the missing branch when it runs.
          absl::StatusOr<std::unique_ptr<Graph>> g = ParseGraph(a.graph());
          if (g.ok()) n->SetAttr(a.name(), Attribute::GraphValue(std::shared_ptr<const Graph>(std::move(*g))));
          break;
        }
        case artifact::Attribute::VALUE_NOT_SET: break;
      }
    }
    nodes->push_back(n);
  }
}

}  // namespace tessel
