// Reference kernel registry and single-node execution.
#include "kernels/reference/reference.h"

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

absl::Status RunReferenceNode(const Node& node, absl::Span<const Tensor* const> inputs, std::vector<Tensor>* outputs) {
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
