// Reference kernel registry and single-node execution.
#include "kernels/reference/reference.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"

namespace tessel {

ReferenceKernelRegistry& ReferenceKernelRegistry::Global() {
  // Leaked on purpose: trivially destructible global.
  static ReferenceKernelRegistry* registry = [] {
    auto* r = new ReferenceKernelRegistry();
    RegisterElementwiseReferenceKernels(*r);
    RegisterNnReferenceKernels(*r);
    RegisterTensorReferenceKernels(*r);
    RegisterFusedCnnReferenceKernels(*r);
    RegisterTransformerReferenceKernels(*r);
    RegisterRnnReferenceKernels(*r);
    RegisterEinsumReferenceKernels(*r);
    RegisterDetectionReferenceKernels(*r);
    return r;
  }();
  return *registry;
}

void ReferenceKernelRegistry::Register(const std::string& domain, const std::string& op_type, ReferenceKernel kernel) {
  kernels_[std::make_pair(domain, op_type)] = kernel;
}

ReferenceKernel ReferenceKernelRegistry::Find(const std::string& domain, const std::string& op_type) const {
  auto it = kernels_.find(std::make_pair(domain == "ai.onnx" ? std::string() : domain, op_type));
  return it == kernels_.end() ? nullptr : it->second;
}

namespace {

// If: the taken branch, node by node, on the node's inputs after the condition (the branch's graph
// inputs). Its outputs' shapes are known only once it has run, so this is not a registered kernel.
absl::Status RunIf(const Node& node, absl::Span<const Tensor* const> inputs, std::vector<Tensor>* outputs) {
  if (inputs.empty() || inputs[0] == nullptr || inputs[0]->num_elements() != 1) {
    return absl::InvalidArgumentError(absl::StrCat("node ", node.DebugName(), ": the condition must have one element"));
  }
  const Tensor& c = *inputs[0];
  const bool taken = IsFloat(c.dtype()) ? c.GetAsDouble(0) != 0 : c.GetAsInt64(0) != 0;
  const Attribute* a = node.FindAttr(taken ? "then_branch" : "else_branch");
  if (a == nullptr || a->kind != Attribute::Kind::kGraph || a->g == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("node ", node.DebugName(), ": no ", taken ? "then" : "else",
                                                   "_branch subgraph"));
  }
  const Graph& g = *a->g;
  if (g.inputs().size() + 1 != inputs.size()) {
    return absl::InvalidArgumentError(absl::StrCat("node ", node.DebugName(), ": its branch reads ", g.inputs().size(),
                                                   " values, the node passes ", inputs.size() - 1));
  }
  absl::StatusOr<std::vector<Node*>> order = g.TopologicalOrder();
  if (!order.ok()) return order.status();
  std::map<const Value*, Tensor> env;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    if (inputs[i + 1] == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("node ", node.DebugName(), ": input ", i + 1, " is missing"));
    }
    env[g.inputs()[i]] = *inputs[i + 1];
  }
  auto lookup = [&env](const Value* v) -> const Tensor* {
    if (v->is_constant()) return v->constant().get();
    auto it = env.find(v);
    return it == env.end() ? nullptr : &it->second;
  };
  std::vector<const Tensor*> in;
  std::vector<Tensor> out;
  for (const Node* n : *order) {
    in.clear();
    for (const Value* v : n->inputs()) {
      in.push_back(v == nullptr ? nullptr : lookup(v));
      if (v != nullptr && in.back() == nullptr) {
        return absl::InternalError(absl::StrCat("node ", n->DebugName(), ": value '", v->name(), "' not computed"));
      }
    }
    if (absl::Status s = RunReferenceNode(*n, in, &out); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat("node ", node.DebugName(), ", ", taken ? "then" : "else", " branch: ",
                                                 s.message()));
    }
    for (int o = 0; o < n->num_outputs(); ++o) env[n->output(o)] = std::move(out[o]);
  }
  outputs->clear();
  for (const Value* v : g.outputs()) {
    const Tensor* t = lookup(v);
    if (t == nullptr) return absl::InternalError(absl::StrCat("node ", node.DebugName(), ": branch output '", v->name(), "' not computed"));
    outputs->push_back(*t);
  }
  return absl::OkStatus();
}

}  // namespace

bool RunsOnReference(const std::string& domain, const std::string& op_type) {
  return (domain.empty() && op_type == "If") || ReferenceKernelRegistry::Global().Find(domain, op_type) != nullptr;
}

bool ComputesItsOwnShape(const std::string& domain, const std::string& op_type) {
  return domain.empty() && (op_type == "If" || op_type == "NonMaxSuppression");
}

absl::Status RunReferenceNode(const Node& node, absl::Span<const Tensor* const> inputs, std::vector<Tensor>* outputs) {
  if (node.domain().empty() && node.op_type() == "If") return RunIf(node, inputs, outputs);
  if (node.domain().empty() && node.op_type() == "NonMaxSuppression") return RunNonMaxSuppression(node, inputs, outputs);
  ReferenceKernel kernel = ReferenceKernelRegistry::Global().Find(node.domain(), node.op_type());
  if (kernel == nullptr) {
    return absl::UnimplementedError(absl::StrCat("node ", node.DebugName(), ": no reference kernel for ",
                                                 node.domain().empty() ? "" : node.domain() + ".", node.op_type()));
  }
  std::vector<TensorType> in_types(inputs.size());
  std::vector<const TensorType*> type_ptrs(inputs.size(), nullptr);
  std::vector<const Tensor*> values(inputs.begin(), inputs.end());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i] == nullptr) continue;
    in_types[i] = inputs[i]->type();
    type_ptrs[i] = &in_types[i];
  }
  absl::StatusOr<std::vector<TensorType>> out_types = InferOutputTypes(node, type_ptrs, values);
  if (!out_types.ok()) return out_types.status();
  outputs->clear();
  for (const TensorType& t : *out_types) {
    if (!t.is_static()) {
      return absl::InternalError(absl::StrCat("node ", node.DebugName(), ": output type ", t.ToString(),
                                              " is not concrete although all inputs are"));
    }
    outputs->emplace_back(t.dtype, t.StaticShape());
    if (outputs->back().buffer() == nullptr) {
      return absl::ResourceExhaustedError(absl::StrCat("node ", node.DebugName(), ": cannot allocate ",
                                                       outputs->back().byte_size(), " bytes for output ", t.ToString()));
    }
  }
  absl::Status s = kernel(node, inputs, absl::MakeSpan(*outputs));
  if (!s.ok()) return absl::Status(s.code(), absl::StrCat("node ", node.DebugName(), ": ", s.message()));
  return absl::OkStatus();
}

}  // namespace tessel
