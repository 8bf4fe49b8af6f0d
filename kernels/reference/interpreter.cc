// Reference interpreter.
#include "kernels/reference/interpreter.h"

#include <chrono>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "kernels/reference/reference.h"

namespace tessel {

absl::StatusOr<ReferenceInterpreter> ReferenceInterpreter::Create(const Graph* graph) {
  ReferenceInterpreter interp(graph);
  absl::StatusOr<std::vector<Node*>> order = graph->TopologicalOrder();
  if (!order.ok()) return order.status();
  interp.order_ = std::move(*order);
  absl::flat_hash_map<const Value*, int> last_use;
  for (int i = 0; i < static_cast<int>(interp.order_.size()); ++i) {
    for (Value* in : interp.order_[i]->inputs()) {
      if (in != nullptr && !in->is_constant()) last_use[in] = i;
    }
  }
  interp.release_after_.resize(interp.order_.size());
  for (const auto& [v, i] : last_use) {
    if (!graph->IsGraphOutput(v)) interp.release_after_[i].push_back(v);
  }
  for (const auto& n : graph->nodes()) {
    if (!RunsOnReference(n->domain(), n->op_type())) {
      return absl::UnimplementedError(absl::StrCat("node ", n->DebugName(), ": no reference kernel for ",
                                                   n->domain().empty() ? "" : n->domain() + ".", n->op_type()));
    }
  }
  return interp;
}

absl::Status CheckInputs(const Graph& graph, const std::vector<Tensor>& inputs) {
  if (inputs.size() != graph.inputs().size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("graph '", graph.name(), "' takes ", graph.inputs().size(), " inputs, got ", inputs.size()));
  }
  absl::flat_hash_map<std::string, int64_t> symbols;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value* v = graph.inputs()[i];
    const Tensor& t = inputs[i];
    const TensorType& want = v->type();
    if (t.dtype() != want.dtype || t.rank() != want.rank()) {
      return absl::InvalidArgumentError(absl::StrCat("input '", v->name(), "' expects ", want.ToString(), ", got ",
                                                     DTypeName(t.dtype()), ShapeToString(t.shape())));
    }
    for (int d = 0; d < t.rank(); ++d) {
      const Dim& dim = want.dims[d];
      if (dim.is_static()) {
        if (dim.value() != t.dim(d)) {
          return absl::InvalidArgumentError(absl::StrCat("input '", v->name(), "' expects ", want.ToString(), ", got ",
                                                         DTypeName(t.dtype()), ShapeToString(t.shape()),
                                                         " (dimension ", d, ")"));
        }
      } else {
        auto [it, inserted] = symbols.emplace(dim.symbol(), t.dim(d));
        if (!inserted && it->second != t.dim(d)) {
          return absl::InvalidArgumentError(absl::StrCat("input '", v->name(), "' dimension ", d, " ('", dim.symbol(),
                                                         "') is ", t.dim(d), " but another input set it to ",
                                                         it->second));
        }
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Tensor>> ReferenceInterpreter::Run(const std::vector<Tensor>& inputs) {
  absl::Status s = CheckInputs(*graph_, inputs);
  if (!s.ok()) return s;
  absl::flat_hash_map<const Value*, Tensor> env;
  for (size_t i = 0; i < inputs.size(); ++i) env[graph_->inputs()[i]] = inputs[i];
  timings_.clear();
  std::vector<const Tensor*> in_ptrs;
  std::vector<Tensor> outs;
  for (size_t i = 0; i < order_.size(); ++i) {
    const Node* n = order_[i];
    in_ptrs.clear();
    for (Value* in : n->inputs()) {
      if (in == nullptr) {
        in_ptrs.push_back(nullptr);
      } else if (in->is_constant()) {
        in_ptrs.push_back(in->constant().get());
      } else {
        auto it = env.find(in);
        if (it == env.end()) return absl::InternalError(absl::StrCat("value '", in->name(), "' used before defined"));
        in_ptrs.push_back(&it->second);
      }
    }
    const auto start = std::chrono::steady_clock::now();
    s = RunReferenceNode(*n, in_ptrs, &outs);
    if (!s.ok()) return s;
    if (profile_) {
      timings_.push_back({n, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count()});
    }
    for (int o = 0; o < n->num_outputs(); ++o) env[n->output(o)] = std::move(outs[o]);
    for (const Value* dead : release_after_[i]) env.erase(dead);
  }
  std::vector<Tensor> results;
  for (const Value* o : graph_->outputs()) {
    if (o->is_constant()) {
      results.push_back(*o->constant());
      continue;
    }
    auto it = env.find(o);
    if (it == env.end()) return absl::InternalError(absl::StrCat("graph output '", o->name(), "' was not computed"));
    results.push_back(it->second);
  }
  return results;
}

absl::StatusOr<std::vector<Tensor>> ReferenceInterpreter::Run(const std::map<std::string, Tensor>& inputs_by_name) {
  std::vector<Tensor> inputs;
  for (const Value* v : graph_->inputs()) {
    auto it = inputs_by_name.find(v->name());
    if (it == inputs_by_name.end()) {
      return absl::InvalidArgumentError(absl::StrCat("missing input '", v->name(), "' (", v->type().ToString(), ")"));
    }
    inputs.push_back(it->second);
  }
  for (const auto& [name, t] : inputs_by_name) {
    bool known = false;
    for (const Value* v : graph_->inputs()) known |= v->name() == name;
    if (!known) return absl::InvalidArgumentError(absl::StrCat("graph has no input named '", name, "'"));
  }
  return Run(inputs);
}

}  // namespace tessel
