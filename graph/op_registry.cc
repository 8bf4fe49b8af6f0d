// Operator registry and whole-graph type inference.
#include "graph/op_registry.h"

#include <atomic>

#include "absl/strings/str_cat.h"

namespace tessel {

Dim UnknownDim() {
  static std::atomic<int64_t> counter{0};
  return Dim::Symbol(absl::StrCat("?", counter.fetch_add(1)));
}

OpRegistry& OpRegistry::Global() {
  // Leaked on purpose: a trivially destructible global (no destruction-order issues at exit).
  static OpRegistry* registry = [] {
    auto* r = new OpRegistry();
    RegisterElementwiseOps(*r);
    RegisterNnOps(*r);
    RegisterTensorOps(*r);
    RegisterFusedCnnOps(*r);
    RegisterTransformerOps(*r);
    RegisterDetectionOps(*r);
    RegisterControlFlowOps(*r);
    RegisterLossOps(*r);
    return r;
  }();
  return *registry;
}

void OpRegistry::Register(OpSchema schema) {
  auto key = std::make_pair(schema.domain, schema.op_type);
  schemas_[key] = std::move(schema);
}

const OpSchema* OpRegistry::Find(const std::string& domain, const std::string& op_type) const {
  auto it = schemas_.find(std::make_pair(domain == "ai.onnx" ? std::string() : domain, op_type));
  return it == schemas_.end() ? nullptr : &it->second;
}

std::vector<const OpSchema*> OpRegistry::All() const {
  std::vector<const OpSchema*> out;
  for (const auto& [k, v] : schemas_) out.push_back(&v);
  return out;
}

absl::StatusOr<std::vector<TensorType>> InferOutputTypes(const Node& node,
                                                         std::vector<const TensorType*> input_types,
                                                         std::vector<const Tensor*> input_values) {
  const OpSchema* schema = OpRegistry::Global().Find(node.domain(), node.op_type());
  if (schema == nullptr) {
    return absl::UnimplementedError(absl::StrCat("node ", node.DebugName(), ": unsupported operator ",
                                                 node.domain().empty() ? "" : node.domain() + ".", node.op_type()));
  }
  // Trailing omitted optional inputs do not count.
  int n = node.num_inputs();
  while (n > 0 && input_types[n - 1] == nullptr) --n;
  if (n < schema->min_inputs || n > schema->max_inputs) {
    return absl::InvalidArgumentError(absl::StrCat("node ", node.DebugName(), ": has ", n, " inputs, expected ",
                                                   schema->min_inputs == schema->max_inputs
                                                       ? absl::StrCat(schema->min_inputs)
                                                       : absl::StrCat(schema->min_inputs, " to ", schema->max_inputs)));
  }
  if (node.num_outputs() < schema->min_outputs || node.num_outputs() > schema->max_outputs) {
    return absl::InvalidArgumentError(absl::StrCat("node ", node.DebugName(), ": has ", node.num_outputs(),
                                                   " outputs, expected ", schema->min_outputs, " to ",
                                                   schema->max_outputs));
  }
  input_values.resize(input_types.size(), nullptr);
  InferenceContext ctx{node, std::move(input_types), std::move(input_values)};
  absl::StatusOr<std::vector<TensorType>> out = schema->infer(ctx);
  if (!out.ok()) {
    return absl::Status(out.status().code(), absl::StrCat("node ", node.DebugName(), ": ", out.status().message()));
  }
  if (static_cast<int>(out->size()) < node.num_outputs()) {
    return absl::InternalError(absl::StrCat("node ", node.DebugName(), ": inference produced ", out->size(),
                                            " types for ", node.num_outputs(), " outputs"));
  }
  out->resize(node.num_outputs());
  return out;
}

namespace {

absl::StatusOr<std::vector<TensorType>> InferNode(const Node& n) {
  std::vector<const TensorType*> types;
  std::vector<const Tensor*> values;
  for (Value* in : n.inputs()) {
    types.push_back(in ? &in->type() : nullptr);
    values.push_back(in && in->is_constant() ? in->constant().get() : nullptr);
  }
  return InferOutputTypes(n, std::move(types), std::move(values));
}

}  // namespace

absl::Status InferNodeTypes(Node* node) {
  absl::StatusOr<std::vector<TensorType>> types = InferNode(*node);
  if (!types.ok()) return types.status();
  for (int i = 0; i < node->num_outputs(); ++i) node->output(i)->set_type((*types)[i]);
  return absl::OkStatus();
}

absl::Status InferShapes(Graph& graph) {
  absl::StatusOr<std::vector<Node*>> order = graph.TopologicalOrder();
  if (!order.ok()) return order.status();
  for (Node* n : *order) {
    absl::StatusOr<std::vector<TensorType>> types = InferNode(*n);
    if (!types.ok()) return types.status();
    for (int i = 0; i < n->num_outputs(); ++i) n->output(i)->set_type((*types)[i]);
  }
  return absl::OkStatus();
}

namespace {

// Symbols minted for unknown extents ("?N") differ between runs; compare them as wildcards.
bool SameType(const TensorType& a, const TensorType& b) {
  // The layout tag is metadata set by layout passes; inference does not track it.
  if (a.dtype != b.dtype || a.rank() != b.rank()) return false;
  for (int i = 0; i < a.rank(); ++i) {
    const Dim& x = a.dims[i];
    const Dim& y = b.dims[i];
    const bool xu = !x.is_static() && x.symbol()[0] == '?';
    const bool yu = !y.is_static() && y.symbol()[0] == '?';
    if (xu && yu) continue;
    if (x != y) return false;
  }
  return true;
}

}  // namespace

absl::Status VerifyTypes(const Graph& graph, const std::vector<Node*>& order) {
  for (Node* n : order) {
    absl::StatusOr<std::vector<TensorType>> types = InferNode(*n);
    if (!types.ok()) return types.status();
    for (int i = 0; i < n->num_outputs(); ++i) {
      if (!SameType(n->output(i)->type(), (*types)[i])) {
        return absl::FailedPreconditionError(absl::StrCat("node ", n->DebugName(), " output '", n->output(i)->name(),
                                                          "' has type ", n->output(i)->type().ToString(),
                                                          " but its inputs give ", (*types)[i].ToString()));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace tessel
