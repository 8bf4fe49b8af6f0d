// Graph -> artifact compilation.
#include "codegen/compiler.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/algorithm/container.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "artifact/artifact.h"
#include "codegen/memory_planner.h"
#include "codegen/shape_bounds.h"
#include "graph/op_registry.h"
#include "graph/text.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/op_kernels.h"
#include "passes/pass_manager.h"
#include "support/atomic_file.h"
#include "support/size_limits.h"

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

// The values whose extent depends on input values, each with its axes of data-dependent extent, and
// those of them that have no upper bound.
struct DynamicValues {
  absl::flat_hash_map<const Value*, std::vector<int>> axes;
  absl::flat_hash_set<const Value*> heap;
};

// With every input shape bound and shape arithmetic folded, a type still symbolic comes from an operator
// whose output extent depends on input values (NonZero, NonMaxSuppression, an If or Loop decided at run
// time) or from what it feeds. Those values get upper-bound types (codegen/shape_bounds.h), set on the
// graph for memory planning; a value without a bound keeps its symbolic type and lives outside the
// arena (the runtime allocates it when its op runs).
absl::StatusOr<DynamicValues> BoundDataDependentValues(Graph& graph, const std::vector<Node*>& order,
                                                       const CompileOptions& options) {
  for (const Node* n : order) {
    // The artifact stores If's branches and Loop's body in the text IR, which has no syntax for a nested
    // subgraph.
    for (const auto& [name, attr] : n->attributes()) {
      if (attr.kind != Attribute::Kind::kGraph || attr.g == nullptr) continue;
      if (ParseGraph(PrintGraph(*attr.g)).ok()) continue;
      return absl::UnimplementedError(absl::StrCat(
          "node ", n->DebugName(), ": its ", name, " holds control flow of its own, which compiled artifacts do not ",
          "store; run the ONNX file with `tessel run` (reference interpreter) instead"));
    }
  }
  absl::StatusOr<DataDependentBounds> bounds = BoundDataDependentShapes(graph, order);
  if (!bounds.ok()) return bounds.status();
  DynamicValues dynamic;
  for (const std::unique_ptr<Value>& v : graph.values()) {
    auto it = bounds->bounds.find(v.get());
    const bool heap = bounds->unbounded.contains(v.get());
    if (it == bounds->bounds.end() && !heap) continue;
    std::vector<int>& axes = dynamic.axes[v.get()];
    for (int d = 0; d < v->type().rank(); ++d) {
      if (!v->type().dims[d].is_static()) axes.push_back(d);
    }
    if (heap) {
      dynamic.heap.insert(v.get());
    } else {
      v->set_type(it->second);
    }
  }
  if (!dynamic.axes.empty()) {
    Progress(options, absl::StrCat(dynamic.axes.size(), " values have data-dependent extents: ",
                                   dynamic.axes.size() - dynamic.heap.size(), " planned at their upper bounds",
                                   dynamic.heap.empty() ? "" : absl::StrCat(", ", dynamic.heap.size(),
                                                                            " without one allocated as they run (",
                                                                            bounds->first_unbounded, ")")));
  }
  return dynamic;
}

// Whether op n, which touches values of data-dependent extent, computes each row of its outputs from the
// same row of input 0 alone (its other inputs fixed): then, in a run where only input 0's leading extent
// differs from its bound, its optimized kernel can run over the bound of rows (artifact::Op::row_wise).
// The rows past the run's count hold what the arena held.
bool RowWise(const Node& n, const absl::flat_hash_map<const Value*, std::vector<int>>& dynamic) {
  const std::string& op = n.op_type();
  bool unary = false, matrix = false, batched = false, flatten = false;
  if (n.domain().empty()) {
    unary = op == "Relu" || op == "Sigmoid" || op == "Tanh" || op == "Exp" || op == "LeakyRelu" ||
            op == "HardSwish" || op == "HardSigmoid" || op == "Elu" || op == "Softplus";
    matrix = (op == "Gemm" && n.GetInt("transA", 0) == 0) || op == "MatMul";
    flatten = op == "Flatten" && n.GetInt("axis", 1) == 1;  // axis 2+ multiplies the rows
    // Images of a batch are independent: a detection head's convolutions over its regions.
    batched = op == "Conv" || op == "ConvTranspose" || op == "MaxPool" || op == "AveragePool" ||
              (op == "Transpose" && !n.GetInts("perm").empty() && n.GetInts("perm")[0] == 0);
  } else if (n.domain() == kTesselDomain) {
    batched = op == "FusedConv" || op == "DwPwConv" || op == "MaxPool" || op == "AveragePool" ||
              op == "GlobalAveragePool";
  }
  if (!unary && !matrix && !flatten && !batched) return false;
  if (n.num_inputs() < 1 || n.input(0) == nullptr || !dynamic.contains(n.input(0))) return false;
  if (n.input(0)->type().rank() < 1 || (matrix && n.input(0)->type().rank() != 2)) return false;
  for (int i = 1; i < n.num_inputs(); ++i) {
    if (n.input(i) != nullptr && dynamic.contains(n.input(i))) return false;
  }
  for (const Value* o : n.outputs()) {
    if (!dynamic.contains(o) || o->type().rank() < 1) return false;
  }
  return true;
}

// An op that reads or writes a value of data-dependent extent runs its reference kernel, which takes the
// extents of each run, unless it is row-wise (above).
bool TouchesDynamic(const Node& n, const absl::flat_hash_map<const Value*, std::vector<int>>& dynamic) {
  for (const Value* v : n.inputs()) {
    if (v != nullptr && dynamic.contains(v)) return true;
  }
  for (const Value* v : n.outputs()) {
    if (dynamic.contains(v)) return true;
  }
  return false;
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
    case Attribute::Kind::kGraph:
      // If's branches and Loop's body, run by the reference interpreter (CompileGraph checks that they
      // print and parse back).
      if (a.g) p->set_graph(PrintGraph(*a.g));
      break;
  }
}

// Tuning. The cache is one "key<TAB>kernel" line per choice; keys hold the CPU model, the op, its
// operand types and its attributes, so a cache moved to another machine or model simply misses.
class TuneCache {
 public:
  absl::Status Load(const std::string& path) {
    path_ = path;
    std::ifstream in(path);
    if (!in) return absl::OkStatus();  // a cache yet to be made
    std::string line;
    int line_no = 0;
    while (std::getline(in, line)) {
      ++line_no;
      if (line.empty()) continue;
      std::vector<std::string> parts = absl::StrSplit(line, '\t');
      if (parts.size() != 2) {
        return absl::DataLossError(absl::StrCat(path, ":", line_no, ": expected 'key<TAB>kernel'; delete the file to ",
                                                "tune again"));
      }
      entries_[parts[0]] = parts[1];
    }
    return absl::OkStatus();
  }
  const std::string* Find(const std::string& key) const {
    auto it = entries_.find(key);
    return it == entries_.end() ? nullptr : &it->second;
  }
  void Add(const std::string& key, const std::string& kernel) {
    entries_[key] = kernel;
    dirty_ = true;
  }
  absl::Status Save() const {
    if (!dirty_ || path_.empty()) return absl::OkStatus();
    std::string text;
    for (const auto& [key, kernel] : entries_) absl::StrAppend(&text, key, "\t", kernel, "\n");
    return WriteFileAtomically(path_, text);
  }

 private:
  std::string path_;
  std::map<std::string, std::string> entries_;
  bool dirty_ = false;
};

std::string AttributeText(const Attribute& a) {
  switch (a.kind) {
    case Attribute::Kind::kInt: return absl::StrCat(a.i);
    case Attribute::Kind::kFloat: return absl::StrCat(a.f);
    case Attribute::Kind::kString: return a.s;
    case Attribute::Kind::kInts: return absl::StrCat("[", absl::StrJoin(a.ints, ","), "]");
    case Attribute::Kind::kFloats: return absl::StrCat("[", absl::StrJoin(a.floats, ","), "]");
    case Attribute::Kind::kStrings: return absl::StrCat("[", absl::StrJoin(a.strings, ","), "]");
    case Attribute::Kind::kTensor: return a.t ? a.t->type().ToString() : "tensor";
    case Attribute::Kind::kGraph: return "graph";
  }
  return "";
}

std::string TuneKey(const Node& n) {
  std::string key = absl::StrCat(CpuModelName(), "|", n.domain(), ".", n.op_type(), "|");
  for (const Value* v : n.inputs()) {
    absl::StrAppend(&key, v ? v->type().ToString() : "-", v && v->is_constant() ? "c" : "", ";");
  }
  for (const auto& [name, attr] : n.attributes()) absl::StrAppend(&key, name, "=", AttributeText(attr), ";");
  return key;
}

// Median milliseconds of `entry` on the node's shapes (real weights, random activations), or an error
// when the kernel cannot be created.
// In a model run the previous layers have evicted an op's weights from the caches; timing the op alone,
// run after run, would keep them hot and favour kernels with large (transformed) weights. Writing over a
// buffer larger than the last-level cache before each timed run evicts them again. One buffer serves a
// whole compile: allocating (and page-faulting) 64 MiB per candidate cost more than the timing itself
// (MobileNetV2 tuned at 5 ms per candidate: 21 s, most of it in the buffer's first touch).
class CacheEvictor {
 public:
  void Evict(int fill) {
    if (buffer_.empty()) buffer_.resize(kBytes);
    std::memset(buffer_.data(), fill, buffer_.size());
  }

 private:
  static constexpr size_t kBytes = size_t{64} << 20;
  std::vector<char> buffer_;
};

absl::StatusOr<double> TimeKernel(const Node& n, const OpKernelEntry& entry, double seconds, CacheEvictor& evictor) {
  std::mt19937 rng(0);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<Tensor> storage;
  storage.reserve(n.num_inputs());
  std::vector<const Tensor*> inputs;
  for (const Value* v : n.inputs()) {
    if (v == nullptr) {
      inputs.push_back(nullptr);
    } else if (v->is_constant()) {
      inputs.push_back(v->constant().get());
    } else {
      Tensor t(v->type().dtype, v->type().StaticShape());
      if (t.dtype() == DType::kF32) {
        for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = dist(rng);
      }
      storage.push_back(std::move(t));
      inputs.push_back(&storage.back());
    }
  }
  std::vector<Tensor> outputs;
  for (const Value* v : n.outputs()) outputs.emplace_back(v->type().dtype, v->type().StaticShape());
  absl::StatusOr<std::unique_ptr<OpKernel>> k =
      entry.create(OpKernelArgs{n, inputs, absl::MakeSpan(outputs), nullptr, 1});
  if (!k.ok()) return k.status();
  absl::Status s = (*k)->Run();  // warm-up: caches, page faults
  if (!s.ok()) return s;
  std::vector<double> ms;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (ms.size() < 3 || (ms.size() < 50 && std::chrono::steady_clock::now() < deadline)) {
    evictor.Evict(static_cast<int>(ms.size()));
    const auto t0 = std::chrono::steady_clock::now();
    s = (*k)->Run();
    if (!s.ok()) return s;
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
  return ms[ms.size() / 2];
}

// "input 'x' f32[1000000000,4]", "value 'conv1_out' f32[1,64,112,112]".
std::string DescribeValue(const Value& v) {
  return absl::StrCat(v.is_graph_input() ? "input '" : "value '", v.name(), "' ", v.type().ToString());
}

OperandInfo Operand(const Value* v) {
  OperandInfo o;
  if (v == nullptr) return o;
  o.present = true;
  o.constant = v->is_constant();
  o.type = v->type();
  return o;
}

}  // namespace

std::string CpuModelName() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, name, family, model;
  auto value = [&line] {
    const size_t colon = line.find(':');
    return colon == std::string::npos ? std::string() : std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
  };
  // x86: "model name", "cpu family", "model" of the first processor; Arm Linux kernels name no model.
  while (std::getline(in, line) && !(absl::StartsWith(line, "processor") && !name.empty())) {
    if (absl::StartsWith(line, "model name")) name = value();
    if (absl::StartsWith(line, "cpu family")) family = value();
    if (absl::StartsWith(line, "model") && !absl::StartsWith(line, "model name")) model = value();
  }
  // One brand string can cover several cores ("AMD EPYC" is Zen 3, 4 and 5), and TESSEL_MAX_ISA changes
  // what kernels can run: the family, model and usable features are part of the key.
  const std::string features = GetCpuFeatures().ToString();
  if (name.empty()) return features;
  return absl::StrCat(name, " (family ", family, " model ", model, "; ", features, ")");
}

namespace {

// The reference kernels are plain loops, priced from their work so that an estimate with reference ops
// in it is not silently optimistic: about 1.5 ns per multiply-add (a naive convolution or matmul) and
// 1 ns per output element otherwise (MobileNetV2 on reference convolutions, 2026-11-27, Emerald Rapids:
// 0.6 G multiply-adds/s).
double ReferenceSeconds(const Node& node) {
  double outputs = 0;
  for (const Value* v : node.outputs()) {
    if (v != nullptr && v->type().NumElements() > 0) outputs += static_cast<double>(v->type().NumElements());
  }
  double per_output = 0;  // multiply-adds per output element
  const std::string& op = node.op_type();
  const Value* a = node.num_inputs() > 0 ? node.input(0) : nullptr;
  const Value* w = node.num_inputs() > 1 ? node.input(1) : nullptr;
  if (absl::StrContains(op, "Conv") && w != nullptr && w->type().rank() >= 2 && w->type().NumElements() > 0) {
    const std::vector<Dim>& d = w->type().dims;
    if (d[0].is_static() && d[0].value() > 0) per_output = static_cast<double>(w->type().NumElements()) / d[0].value();
  } else if ((absl::StrContains(op, "Gemm") || absl::StrContains(op, "MatMul")) && a != nullptr &&
             a->type().rank() >= 1 && a->type().dims.back().is_static()) {
    per_output = static_cast<double>(a->type().dims.back().value());
  }
  return outputs * 1e-9 * (1 + per_output);
}

}  // namespace

namespace {

// Why no optimized kernel took a node, from selection's refusals ("<kernel>: <refusal>"), grouped by
// refusal: "2 kernels refuse its shape or attributes (xnn_f32_..., tessel_f32_...)".
std::string WhyReference(const OpQuery& query, const std::string& dtypes, const std::string& force,
                         const std::vector<std::string>& why_not) {
  if (force == "reference") return "TESSEL_FORCE_BACKEND=reference";
  if (why_not.empty()) return absl::StrCat("no optimized kernel for ", query.op(), " on ", dtypes);
  std::vector<std::pair<std::string, std::vector<std::string>>> by_refusal;
  for (const std::string& line : why_not) {
    const size_t colon = line.find(": ");
    const std::string refusal = colon == std::string::npos ? line : line.substr(colon + 2);
    auto it = std::find_if(by_refusal.begin(), by_refusal.end(), [&](const auto& r) { return r.first == refusal; });
    if (it == by_refusal.end()) it = by_refusal.insert(by_refusal.end(), {refusal, {}});
    it->second.push_back(line.substr(0, colon));
  }
  std::vector<std::string> parts;
  for (const auto& [refusal, kernels] : by_refusal) {
    const size_t shown = std::min<size_t>(kernels.size(), 2);
    parts.push_back(absl::StrCat(kernels.size(), kernels.size() == 1 ? " kernel: " : " kernels: ",
                                 refusal == "shape or attributes not supported" ? "its shape or attributes are not supported"
                                                                               : refusal,
                                 " (", absl::StrJoin(kernels.begin(), kernels.begin() + shown, ", "),
                                 shown < kernels.size() ? ", ..." : "", ")"));
  }
  return absl::StrJoin(parts, "; ");
}

}  // namespace

std::string SelectKernel(const Node& node, const std::string& force, std::string* backend, double* seconds,
                         std::string* why_reference) {
  std::vector<OperandInfo> inputs, outputs;
  for (const Value* v : node.inputs()) inputs.push_back(Operand(v));
  for (const Value* v : node.outputs()) outputs.push_back(Operand(v));
  const OpQuery query{node, inputs, outputs};
  const std::string dtypes = OpDTypes(query);
  std::vector<std::string> why_not;
  const OpKernelEntry* e = force == "reference" ? nullptr : OpKernels().Select(query, dtypes, force, &why_not);
  if (e != nullptr) {
    if (backend) *backend = e->backend;
    if (seconds) *seconds = OpKernels().Cost(*e, query);
    return e->name;
  }
  if (backend) *backend = "reference";
  if (seconds) *seconds = ReferenceSeconds(node);
  if (why_reference) *why_reference = WhyReference(query, dtypes, force, why_not);
  return absl::StrCat("reference/", node.domain().empty() ? "" : node.domain() + ".", node.op_type());
}

namespace {

// The tuned choice for `n` among its legal kernels (nullptr: fewer than two candidates, keep the
// cost model's). Cached choices are reused when still legal.
absl::StatusOr<const OpKernelEntry*> TuneKernel(const Node& n, const CompileOptions& options, const std::string& label,
                                                TuneCache& cache, CacheEvictor& evictor, CompileResult& result) {
  std::vector<OperandInfo> inputs, outputs;
  for (const Value* v : n.inputs()) inputs.push_back(Operand(v));
  for (const Value* v : n.outputs()) outputs.push_back(Operand(v));
  const OpQuery query{n, inputs, outputs};
  const std::string dtypes = OpDTypes(query);
  std::vector<const OpKernelEntry*> candidates;
  for (const OpKernelEntry& e : OpKernels().entries()) {
    if (e.op != query.op() || e.dtypes != dtypes || !CpuSupports(e.isa)) continue;
    if (!ForceAllows(options.force_backend, e.backend, e.name)) {
      continue;
    }
    if (e.legal && !e.legal(query)) continue;
    candidates.push_back(&e);
  }
  if (candidates.size() < 2) return nullptr;
  const std::string key = TuneKey(n);
  if (const std::string* cached = cache.Find(key)) {
    for (const OpKernelEntry* e : candidates) {
      if (e->name == *cached) {
        result.cached_ops++;
        return e;
      }
    }
  }
  const OpKernelEntry* best = nullptr;
  double best_ms = 0;
  std::string line = absl::StrCat("tune ", label, " ", n.name(), ":");
  for (const OpKernelEntry* e : candidates) {
    absl::StatusOr<double> ms = TimeKernel(n, *e, options.tune_seconds_per_candidate, evictor);
    if (!ms.ok()) {
      absl::StrAppend(&line, " ", e->name, " failed (", ms.status().message(), ");");
      continue;
    }
    absl::StrAppend(&line, " ", e->name, " ", absl::StrFormat("%.3f", *ms), " ms;");
    if (best == nullptr || *ms < best_ms) {
      best = e;
      best_ms = *ms;
    }
  }
  if (best == nullptr) return nullptr;
  Progress(options, absl::StrCat(line, " -> ", best->name));
  cache.Add(key, best->name);
  result.tuned_ops++;
  return best;
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
  std::string pipeline = pm->pipeline();
  // Memory is planned from static shapes. A pipeline that left shapes to be computed at run time (-O0
  // on an exported transformer: Expand fed by Shape arithmetic) gets the one pass that computes them
  // now, so that what runs also compiles; the artifact records it.
  const bool symbolic = absl::c_any_of(graph.values(), [](const std::unique_ptr<Value>& v) {
    return !v->type().is_static();
  });
  if (symbolic) {
    absl::StatusOr<PassManager> shapes = PassManager::Create("fold-shape-ops");
    if (!shapes.ok()) return shapes.status();
    s = shapes->Run(graph);
    if (!s.ok()) return s;
    pipeline = pipeline.empty() ? "fold-shape-ops" : absl::StrCat(pipeline, ",fold-shape-ops");
    Progress(options, "ran fold-shape-ops: the pipeline left shapes that static memory planning needs");
  }
  s = graph.Verify();
  if (!s.ok()) return s;
  result.nodes_after = graph.num_nodes();
  result.pass_report = pm->Report();
  absl::StatusOr<std::vector<Node*>> order = graph.TopologicalOrder();
  if (!order.ok()) return order.status();
  absl::StatusOr<DynamicValues> dynamic = BoundDataDependentValues(graph, *order, options);
  if (!dynamic.ok()) return dynamic.status();
  absl::flat_hash_set<const Value*> no_in_place;
  for (const Node* n : *order) {
    if (!TouchesDynamic(*n, dynamic->axes)) continue;
    for (const Value* o : n->outputs()) no_in_place.insert(o);
  }

  Progress(options, "planning memory");
  absl::StatusOr<GraphLifetimes> lifetimes =
      ComputeLifetimes(graph, *order, /*allow_in_place=*/true, &no_in_place, &dynamic->heap);
  if (!lifetimes.ok()) return lifetimes.status();
  // Shapes come from the model file and --dim: an activation, or the arena that holds them, larger than
  // this machine's memory is an error here rather than a failed allocation when the artifact runs.
  size_t largest = 0;
  for (size_t i = 0; i < lifetimes->tensors.size(); ++i) {
    if (lifetimes->tensors[i].bytes > lifetimes->tensors[largest].bytes) largest = i;
    s = CheckFitsInMemory(lifetimes->tensors[i].bytes, DescribeValue(*lifetimes->values[i]));
    if (!s.ok()) return s;
  }
  absl::StatusOr<MemoryPlan> mem = PlanMemory(lifetimes->tensors, options.memory_algorithm);
  if (!mem.ok()) return mem.status();
  s = VerifyMemoryPlan(lifetimes->tensors, *mem);
  if (!s.ok()) return s;
  if (!lifetimes->tensors.empty()) {
    s = CheckFitsInMemory(mem->arena_bytes, absl::StrCat("the activation arena (largest tensor: ",
                                                         DescribeValue(*lifetimes->values[largest]), ", ",
                                                         FormatBytes(lifetimes->tensors[largest].bytes), ")"));
    if (!s.ok()) return s;
  }

  artifact::Plan& plan = result.plan;
  plan.set_graph_name(graph.name());
  plan.set_target(target);
  plan.set_pipeline(pipeline);
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
    const bool heap = dynamic->heap.contains(v);
    for (const Dim& d : v->type().dims) t->add_shape(d.is_static() ? d.value() : -1);
    t->set_storage(heap ? artifact::Tensor::HEAP : artifact::Tensor::ARENA);
    t->set_offset(heap ? 0 : mem->offsets[i]);
    t->set_bytes(heap ? 0 : lifetimes->tensors[i].bytes);
    if (auto it = dynamic->axes.find(v); it != dynamic->axes.end()) {
      t->set_dynamic(true);
      for (int d : it->second) t->add_dynamic_axes(d);
    }
    index[v] = static_cast<int>(i);
  }
  // Constants read by the scheduled ops, each 64-byte aligned in the weights section, which is sized
  // once: growing it by doubling copied and page-faulted ResNet-50's 100 MB several times over.
  // Each constant once, as the loops below store it (a weight read by several ops is stored once).
  size_t weight_bytes = 0;
  absl::flat_hash_set<const Value*> counted;
  auto count = [&](const Value* v) {
    if (v != nullptr && v->is_constant() && !index.contains(v) && counted.insert(v).second) {
      weight_bytes += v->constant()->byte_size() + 64;
    }
  };
  for (const Node* n : *order) {
    for (const Value* in : n->inputs()) count(in);
    for (const auto& [name, attr] : n->attributes()) {
      if (attr.kind == Attribute::Kind::kTensor && attr.t) weight_bytes += attr.t->byte_size() + 64;
    }
  }
  for (const Value* o : graph.outputs()) count(o);
  result.weights.reserve(result.weights.size() + weight_bytes);
  // Stores constant v at the next 64-byte boundary of the weights section.
  auto store = [&](const Value* v) {
    const Tensor& data = *v->constant();
    result.weights.resize((result.weights.size() + 63) / 64 * 64, '\0');
    auto* t = plan.add_tensors();
    t->set_name(v->name());
    t->set_dtype(static_cast<int>(data.dtype()));
    for (int64_t d : data.shape()) t->add_shape(d);
    t->set_storage(artifact::Tensor::WEIGHTS);
    t->set_offset(result.weights.size());
    t->set_bytes(data.byte_size());
    result.weights.append(static_cast<const char*>(data.raw_data()), data.byte_size());
    index[v] = plan.tensors_size() - 1;
  };
  for (const Node* n : *order) {
    for (const Value* in : n->inputs()) {
      if (in != nullptr && in->is_constant() && !index.contains(in)) store(in);
    }
  }
  // Graph outputs that are constants (folded completely) also live in the weights.
  for (const Value* o : graph.outputs()) {
    if (index.contains(o)) continue;
    if (!o->is_constant()) return absl::InternalError(absl::StrCat("output '", o->name(), "' has no storage"));
    store(o);
  }
  Progress(options, options.tune ? "selecting kernels (tuning: timing candidates per op)" : "selecting kernels");
  TuneCache cache;
  CacheEvictor evictor;
  if (options.tune && !options.tune_cache.empty()) {
    s = cache.Load(options.tune_cache);
    if (!s.ok()) return s;
  }
  int op_index = 0;
  for (const Node* n : *order) {
    ++op_index;
    auto* op = plan.add_ops();
    op->set_name(n->name());
    op->set_domain(n->domain());
    op->set_op_type(n->op_type());
    std::string backend;
    double seconds = 0;
    std::string why_reference;
    const bool data_dependent = TouchesDynamic(*n, dynamic->axes);
    auto in_heap = [&](const Value* v) { return v != nullptr && dynamic->heap.contains(v); };
    const bool heap = absl::c_any_of(n->inputs(), in_heap) || absl::c_any_of(n->outputs(), in_heap);
    const bool row_wise = data_dependent && !heap && RowWise(*n, dynamic->axes);
    op->set_kernel(SelectKernel(*n, heap ? "reference" : options.force_backend, &backend, &seconds, &why_reference));
    if (heap) why_reference = "an operand's extent is known only as it runs";
    if (data_dependent && !row_wise && backend != "reference") {
      // Only a kernel that reads each run's extents serves the other ops of data-dependent extent.
      const OpKernelEntry* e = OpKernels().FindByName(op->kernel());
      if (e == nullptr || !e->any_extent) {
        op->set_kernel(SelectKernel(*n, "reference", &backend, &seconds, &why_reference));
        why_reference = "an operand's extent depends on input values";
      }
    }
    op->set_row_wise(row_wise && backend != "reference");
    if (options.tune && backend != "reference" && !data_dependent) {
      absl::StatusOr<const OpKernelEntry*> tuned =
          TuneKernel(*n, options, absl::StrCat("op ", op_index, "/", order->size()), cache, evictor, result);
      if (!tuned.ok()) return tuned.status();
      if (*tuned != nullptr) {
        op->set_kernel((*tuned)->name);
        backend = (*tuned)->backend;
      }
    }
    result.kernels_per_backend[backend]++;
    result.estimated_seconds += seconds;
    result.op_seconds[n->name()] = seconds;
    if (backend == "reference") {
      result.reference_ops.push_back(
          {n->name(), n->domain().empty() ? n->op_type() : absl::StrCat(n->domain(), ".", n->op_type()), why_reference,
           seconds});
    }
    for (const Value* in : n->inputs()) op->add_inputs(in ? index[in] : -1);
    for (const Value* o : n->outputs()) op->add_outputs(index[o]);
    for (const auto& [name, attr] : n->attributes())
      ToProtoAttribute(name, attr, op->add_attributes(), &result.weights);
  }
  if (options.tune) {
    s = cache.Save();
    if (!s.ok()) return s;
  }
  for (const Value* v : graph.inputs()) plan.add_inputs(index[v]);
  for (const Value* v : graph.outputs()) plan.add_outputs(index[v]);
  result.weights.resize((result.weights.size() + 63) / 64 * 64, '\0');
  return result;
}

}  // namespace tessel
