// Graph execution with observation hooks, and graph cloning.
#include "quant/int8/runner.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "kernels/reference/reference.h"
#include "kernels/reference/interpreter.h"

namespace tessel {

absl::Status RunNode(const Node& node, const std::vector<const Tensor*>& inputs, const KernelOverride& kernel,
                     std::vector<Tensor>* outputs) {
  outputs->clear();
  if (kernel) {
    std::vector<const TensorType*> in_types;
    std::vector<TensorType> owned;
    owned.reserve(inputs.size());
    for (const Tensor* t : inputs) {
      owned.push_back(t != nullptr ? t->type() : TensorType());
      in_types.push_back(t != nullptr ? &owned.back() : nullptr);
    }
    absl::StatusOr<std::vector<TensorType>> types = InferOutputTypes(node, in_types, inputs);
    if (!types.ok()) return types.status();
    bool known = true;  // If's outputs are known only once its branch ran
    for (const TensorType& t : *types) known = known && t.is_static();
    if (known) {
      for (const TensorType& t : *types) outputs->emplace_back(t.dtype, t.StaticShape());
      absl::StatusOr<bool> handled = kernel(node, inputs, absl::MakeSpan(*outputs));
      if (!handled.ok()) return handled.status();
      if (*handled) return absl::OkStatus();
      outputs->clear();
    }
  }
  return RunReferenceNode(node, inputs, outputs);
}

absl::StatusOr<std::vector<Tensor>> RunGraph(const Graph& graph, const std::vector<Tensor>& inputs,
                                             const RunHooks& hooks) {
  absl::Status s = CheckInputs(graph, inputs);
  if (!s.ok()) return s;
  absl::StatusOr<std::vector<Node*>> order = graph.TopologicalOrder();
  if (!order.ok()) return order.status();
  std::map<const Value*, Tensor> live;
  std::map<const Value*, int> remaining;
  for (const auto& v : graph.values()) remaining[v.get()] = static_cast<int>(v->uses().size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    live[graph.inputs()[i]] = inputs[i];
    if (hooks.observe) hooks.observe(*graph.inputs()[i], inputs[i]);
  }
  for (Node* n : *order) {
    std::vector<const Tensor*> in;
    for (Value* v : n->inputs()) {
      if (v == nullptr) {
        in.push_back(nullptr);
        continue;
      }
      if (v->is_constant()) {
        in.push_back(v->constant().get());
        continue;
      }
      auto it = live.find(v);
      if (it == live.end()) return absl::InternalError(absl::StrCat(n->DebugName(), ": input '", v->name(), "' not computed"));
      in.push_back(&it->second);
    }
    std::vector<Tensor> out;
    s = RunNode(*n, in, hooks.kernel, &out);
    if (!s.ok()) return absl::Status(s.code(), absl::StrCat(n->DebugName(), ": ", s.message()));
    for (int i = 0; i < n->num_outputs(); ++i) {
      if (hooks.observe) hooks.observe(*n->output(i), out[i]);
      live[n->output(i)] = std::move(out[i]);
    }
    for (Value* v : n->inputs()) {
      if (v != nullptr && !v->is_constant() && --remaining[v] == 0 && !graph.IsGraphOutput(v)) live.erase(v);
    }
  }
  std::vector<Tensor> results;
  for (Value* v : graph.outputs()) {
    if (v->is_constant()) {
      results.push_back(*v->constant());
      continue;
    }
    auto it = live.find(v);
    if (it == live.end()) return absl::InternalError(absl::StrCat("graph output '", v->name(), "' not computed"));
    results.push_back(it->second);
  }
  return results;
}

absl::StatusOr<std::unique_ptr<Graph>> CloneGraph(const Graph& graph) {
  auto g = std::make_unique<Graph>();
  g->set_name(graph.name());
  std::map<const Value*, Value*> map;
  for (Value* v : graph.inputs()) map[v] = g->AddInput(v->name(), v->type());
  for (Value* v : graph.Constants()) map[v] = g->AddConstant(v->name(), v->constant());
  absl::StatusOr<std::vector<Node*>> order = graph.TopologicalOrder();
  if (!order.ok()) return order.status();
  for (const Node* n : *order) {
    std::vector<Value*> in;
    for (Value* v : n->inputs()) in.push_back(v == nullptr ? nullptr : map.at(v));
    std::vector<std::string> names;
    for (Value* v : n->outputs()) names.push_back(v->name());
    Node* c = g->AddNode(n->op_type(), in, n->num_outputs(), n->name(), names);
    c->set_domain(n->domain());
    for (const auto& [k, a] : n->attributes()) c->SetAttr(k, a);
    for (int i = 0; i < n->num_outputs(); ++i) {
      c->output(i)->set_type(n->output(i)->type());
      map[n->output(i)] = c->output(i);
    }
  }
  for (Value* v : graph.outputs()) g->AddOutput(map.at(v));
  return g;
}

}  // namespace tessel
