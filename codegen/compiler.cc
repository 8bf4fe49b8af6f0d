// Graph -> artifact compilation.
#include "codegen/compiler.h"

#include <cstring>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "codegen/artifact.h"
#include "graph/op_registry.h"
#include "passes/pass_manager.h"
#include "runtime/memory_planner.h"

namespace tessel {
namespace {

void Progress(const CompileOptions& o, const std::string& line) {
  if (o.progress) o.progress(line);
}

// Binds symbolic input dims to the given values, then re-infers every type.
absl::Status BindShapes(Graph& graph, const std::map<std::string, int64_t>& dim_values) {
  for (Value* v : graph.inputs()) {
    TensorType t = v->type();
    for (Dim& d : t.dims) {
      if (d.is_static()) continue;
      auto it = dim_values.find(d.symbol());
      if (it == dim_values.end()) {
        return absl::InvalidArgumentError(absl::StrCat("input '", v->name(), "' has symbolic dimension '", d.symbol(),
                                                       "' (", v->type().ToString(), "); give it a value, e.g. --dim ",
                                                       d.symbol(), "=1"));
      }
      d = Dim(it->second);
    }
    v->set_type(t);
  }
  return InferShapes(graph);
}

void ToProtoAttribute(const std::string& name, const Attribute& a, artifact::Attribute* p, std::string* weights) {
  p->set_name(name);
  switch (a.kind) {
    case Attribute::Kind::kInt: p->set_i(a.i); break;
    case Attribute::Kind::kFloat: p->set_f(a.f); break;
    case Attribute::Kind::kString: p->set_s(a.s); break;
    case Attribute::Kind::kInts:
      for (int64_t v : a.ints) p->mutable_ints()->add_values(v);
      break;
    case Attribute::Kind::kFloats:
      for (float v : a.floats) p->mutable_floats()->add_values(v);
      break;
    case Attribute::Kind::kStrings:
      for (const std::string& v : a.strings) p->mutable_strings()->add_values(v);
      break;
    case Attribute::Kind::kTensor: {
      auto* r = p->mutable_tensor();
      if (!a.t) break;
      weights->resize((weights->size() + 63) / 64 * 64, '\0');
      r->set_dtype(static_cast<int>(a.t->dtype()));
      for (int64_t d : a.t->shape()) r->add_shape(d);
      r->set_offset(weights->size());
      r->set_bytes(a.t->byte_size());
      weights->append(static_cast<const char*>(a.t->raw_data()), a.t->byte_size());
      break;
    }
  }
}

}  // namespace

std::string ResolveTarget(const std::string& target) {
  if (target != "host") return target;
  return RuntimeTargetFamily() == "aarch64" ? "aarch64-neon" : "x86_64";
}

absl::StatusOr<CompileResult> CompileGraph(Graph& graph, const CompileOptions& options) {
  const std::string target = ResolveTarget(options.target);
  if (target != "x86_64" && target != "aarch64-neon" && target != "aarch64-sve") {
    return absl::InvalidArgumentError(absl::StrCat("unknown target '", options.target,
                                                   "' (expected host, aarch64-neon or aarch64-sve)"));
  }
  CompileResult result;
  result.nodes_before = graph.num_nodes();
  absl::Status s = BindShapes(graph, options.dim_values);
  if (!s.ok()) return s;
  Progress(options, absl::StrCat("optimizing with pipeline '", options.pipeline, "'"));
  absl::StatusOr<PassManager> pm = PassManager::Create(options.pipeline);
  if (!pm.ok()) return pm.status();
  s = pm->Run(graph);
  if (!s.ok()) return s;
  s = graph.Verify();
  if (!s.ok()) return s;
  result.nodes_after = graph.num_nodes();
  result.pass_report = pm->Report();
  absl::StatusOr<std::vector<Node*>> order = graph.TopologicalOrder();
  if (!order.ok()) return order.status();

  Progress(options, "planning memory");
  absl::StatusOr<GraphLifetimes> lifetimes = ComputeLifetimes(graph, *order, /*allow_in_place=*/true);
  if (!lifetimes.ok()) return lifetimes.status();
  absl::StatusOr<MemoryPlan> mem = PlanMemory(lifetimes->tensors, options.memory_algorithm);
  if (!mem.ok()) return mem.status();
  s = VerifyMemoryPlan(lifetimes->tensors, *mem);
  if (!s.ok()) return s;

  artifact::Plan& plan = result.plan;
  plan.set_graph_name(graph.name());
  plan.set_target(target);
  plan.set_pipeline(pm->pipeline());
  plan.set_producer("tessel");
  plan.set_arena_bytes(mem->arena_bytes);
  plan.set_arena_lower_bound(mem->lower_bound);
  plan.set_memory_algorithm(mem->algorithm);
  absl::flat_hash_map<const Value*, int> index;
  for (size_t i = 0; i < lifetimes->values.size(); ++i) {
    const Value* v = lifetimes->values[i];
    auto* t = plan.add_tensors();
    t->set_name(v->name());
    t->set_dtype(static_cast<int>(v->type().dtype));
    for (const Dim& d : v->type().dims) t->add_shape(d.value());
    t->set_storage(artifact::Tensor::ARENA);
    t->set_offset(mem->offsets[i]);
    t->set_bytes(lifetimes->tensors[i].bytes);
    index[v] = static_cast<int>(i);
  }
  // Constants read by the scheduled ops, each 64-byte aligned in the weights section.
  for (const Node* n : *order) {
    for (const Value* in : n->inputs()) {
      if (in == nullptr || !in->is_constant() || index.contains(in)) continue;
      const Tensor& data = *in->constant();
      result.weights.resize((result.weights.size() + 63) / 64 * 64, '\0');
      auto* t = plan.add_tensors();
      t->set_name(in->name());
      t->set_dtype(static_cast<int>(data.dtype()));
      for (int64_t d : data.shape()) t->add_shape(d);
      t->set_storage(artifact::Tensor::WEIGHTS);
      t->set_offset(result.weights.size());
      t->set_bytes(data.byte_size());
      result.weights.append(static_cast<const char*>(data.raw_data()), data.byte_size());
      index[in] = plan.tensors_size() - 1;
    }
  }
  // Graph outputs that are constants (folded completely) also live in the weights.
  for (const Value* o : graph.outputs()) {
    if (index.contains(o)) continue;
    if (!o->is_constant()) return absl::InternalError(absl::StrCat("output '", o->name(), "' has no storage"));
    const Tensor& data = *o->constant();
    result.weights.resize((result.weights.size() + 63) / 64 * 64, '\0');
    auto* t = plan.add_tensors();
    t->set_name(o->name());
    t->set_dtype(static_cast<int>(data.dtype()));
    for (int64_t d : data.shape()) t->add_shape(d);
    t->set_storage(artifact::Tensor::WEIGHTS);
    t->set_offset(result.weights.size());
    t->set_bytes(data.byte_size());
    result.weights.append(static_cast<const char*>(data.raw_data()), data.byte_size());
    index[o] = plan.tensors_size() - 1;
  }
  Progress(options, "selecting kernels");
  for (const Node* n : *order) {
    auto* op = plan.add_ops();
    op->set_name(n->name());
    op->set_domain(n->domain());
    op->set_op_type(n->op_type());
    // Until the optimized kernel registry is wired in, every op runs its reference kernel.
    op->set_kernel(absl::StrCat("reference/", n->domain().empty() ? "" : n->domain() + ".", n->op_type()));
    for (const Value* in : n->inputs()) op->add_inputs(in ? index[in] : -1);
    for (const Value* o : n->outputs()) op->add_outputs(index[o]);
    for (const auto& [name, attr] : n->attributes()) ToProtoAttribute(name, attr, op->add_attributes(), &result.weights);
  }
  for (const Value* v : graph.inputs()) plan.add_inputs(index[v]);
  for (const Value* v : graph.outputs()) plan.add_outputs(index[v]);
  result.weights.resize((result.weights.size() + 63) / 64 * 64, '\0');
  return result;
}

}  // namespace tessel
