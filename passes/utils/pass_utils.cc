// Pass helpers.
#include "passes/utils/pass_utils.h"

#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "kernels/reference/reference.h"

namespace tessel {

absl::StatusOr<bool> TryFoldNode(Graph& graph, Node* n, int64_t max_elements) {
  std::vector<const Tensor*> inputs;
  for (Value* in : n->inputs()) {
    if (in != nullptr && !in->is_constant()) return false;
    inputs.push_back(in ? in->constant().get() : nullptr);
  }
  if (!RunsOnReference(n->domain(), n->op_type())) return false;
  // An output's extent may hang on an input that only became constant during this walk (Range's limit,
  // a Reshape's target): infer it again from the constant values.
  for (Value* o : n->outputs()) {
    if (o->type().NumElements() < 0) {
      if (!InferNodeTypes(n).ok()) return false;
      break;
    }
  }
  int64_t total = 0;
  for (Value* o : n->outputs()) {
    const int64_t count = o->type().NumElements();
    if (count < 0) return false;
    total += count;
  }
  if (total > max_elements) return false;
  std::vector<Tensor> outputs;
  absl::Status s = RunReferenceNode(*n, inputs, &outputs);
  if (!s.ok()) return s;
  // Replace all outputs, erase the node, then give the constants the outputs' names.
  std::vector<Value*> outs = n->outputs();
  std::vector<std::string> names;
  std::vector<Value*> constants;
  for (size_t i = 0; i < outs.size(); ++i) {
    names.push_back(outs[i]->name());
    constants.push_back(graph.AddConstant(graph.UniqueValueName(outs[i]->name()), std::move(outputs[i])));
    graph.ReplaceAllUsesWith(outs[i], constants.back());
  }
  s = graph.EraseNode(n);
  if (!s.ok()) return s;
  for (size_t i = 0; i < constants.size(); ++i) {
    s = graph.RenameValue(constants[i], names[i]);
    if (!s.ok()) return s;
  }
  return true;
}

absl::Status ReplaceWithConstant(Graph& graph, Value* v, Tensor data) {
  const std::string name = v->name();
  Value* c = graph.AddConstant(graph.UniqueValueName(name), std::move(data));
  graph.ReplaceAllUsesWith(v, c);
  Node* producer = v->producer();
  if (producer != nullptr) {
    bool unused = true;
    for (Value* o : producer->outputs()) unused &= o->uses().empty() && !graph.IsGraphOutput(o);
    if (unused) {
      absl::Status s = graph.EraseNode(producer);
      if (!s.ok()) return s;
      return graph.RenameValue(c, name);
    }
  }
  return absl::OkStatus();
}

absl::Status BypassNode(Graph& graph, Node* n, Value* input) {
  Value* out = n->output(0);
  const bool was_output = graph.IsGraphOutput(out);
  const std::string name = out->name();
  graph.ReplaceAllUsesWith(out, input);
  for (int i = 1; i < n->num_outputs(); ++i) {
    if (!n->output(i)->uses().empty() || graph.IsGraphOutput(n->output(i))) {
      return absl::FailedPreconditionError(absl::StrCat(n->DebugName(), ": cannot bypass, output ", i, " is used"));
    }
  }
  absl::Status s = graph.EraseNode(n);
  if (!s.ok()) return s;
  // Keep a graph output's name (users see it as the output file name) unless the value is a graph
  // input, whose name is part of the model's interface too.
  if (was_output && !input->is_graph_input()) {
    int output_refs = 0;
    for (const Value* o : graph.outputs()) output_refs += o == input;
    if (output_refs == 1) return graph.RenameValue(input, name);
  }
  return absl::OkStatus();
}

bool AllEqual(const std::vector<int64_t>& v, int64_t x) {
  for (int64_t e : v) {
    if (e != x) return false;
  }
  return true;
}

int NumUsers(const Graph& graph, const Value* v) {
  int n = static_cast<int>(v->uses().size());
  for (const Value* o : graph.outputs()) n += o == v;
  return n;
}

bool GetScalarConstant(const Value* v, double* out) {
  if (v == nullptr || !v->is_constant() || v->constant()->num_elements() != 1) return false;
  *out = v->constant()->GetAsDouble(0);
  return true;
}

bool IsConstantFilledWith(const Value* v, double x) {
  if (v == nullptr || !v->is_constant()) return false;
  const Tensor& t = *v->constant();
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    if (t.GetAsDouble(i) != x) return false;
  }
  return true;
}

}  // namespace tessel
