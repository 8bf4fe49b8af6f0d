// Reference kernel registry and single-node execution.
#include "kernels/reference/reference.h"

#include <algorithm>
#include <cstring>
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
    RegisterSpectralReferenceKernels(*r);
    RegisterDetectionReferenceKernels(*r);
    RegisterLossReferenceKernels(*r);
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

// Runs subgraph g node by node on `inputs` (one per graph input) and returns its outputs. `what` names
// the node and the subgraph in errors.
absl::Status RunSubgraph(const Graph& g, const std::string& what, absl::Span<const Tensor* const> inputs,
                         std::vector<Tensor>* outputs) {
  absl::StatusOr<std::vector<Node*>> order = g.TopologicalOrder();
  if (!order.ok()) return order.status();
  std::map<const Value*, Tensor> env;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    if (inputs[i] == nullptr) return absl::InvalidArgumentError(absl::StrCat(what, ": input ", i, " is missing"));
    env[g.inputs()[i]] = *inputs[i];
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
      return absl::Status(s.code(), absl::StrCat(what, ": ", s.message()));
    }
    for (int o = 0; o < n->num_outputs(); ++o) env[n->output(o)] = std::move(out[o]);
  }
  outputs->clear();
  for (const Value* v : g.outputs()) {
    const Tensor* t = lookup(v);
    if (t == nullptr) return absl::InternalError(absl::StrCat(what, ": output '", v->name(), "' not computed"));
    outputs->push_back(*t);
  }
  return absl::OkStatus();
}

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
  return RunSubgraph(g, absl::StrCat("node ", node.DebugName(), ", ", taken ? "then" : "else", " branch"),
                     inputs.subspan(1), outputs);
}

// Unique: slices along `axis` (every element without one) compared element by element, as integers for
// integer types; Y sorted ascending (lexicographically for slices) or in order of first occurrence.
absl::Status RunUnique(const Node& node, absl::Span<const Tensor* const> inputs, std::vector<Tensor>* outputs) {
  if (inputs.empty() || inputs[0] == nullptr) return absl::InvalidArgumentError("Unique: X is required");
  const Tensor& x = *inputs[0];
  std::vector<TensorType> types(1, x.type());
  absl::StatusOr<std::vector<TensorType>> checked = InferOutputTypes(node, {&types[0]}, {});
  if (!checked.ok()) return checked.status();
  const bool has_axis = node.HasAttr("axis");
  int64_t axis = has_axis ? node.GetInt("axis", 0) : 0;
  if (axis < 0) axis += x.rank();
  // Slices: `outer` blocks of `slices` slices of `inner` elements (without an axis: every element a slice).
  const int64_t slices = has_axis ? x.dim(static_cast<int>(axis)) : x.num_elements();
  int64_t outer = 1, inner = 1;
  if (has_axis) {
    for (int d = 0; d < axis; ++d) outer *= x.dim(d);
    for (int d = static_cast<int>(axis) + 1; d < x.rank(); ++d) inner *= x.dim(d);
  }
  const bool integer = !IsFloat(x.dtype());
  auto at = [&](int64_t slice, int64_t k) {  // element k of a slice
    const int64_t o = k / inner, i = k % inner;
    return (o * slices + slice) * inner + i;
  };
  const int64_t len = outer * inner;
  auto compare = [&](int64_t a, int64_t b) {  // -1, 0, 1
    for (int64_t k = 0; k < len; ++k) {
      if (integer) {
        const int64_t u = x.GetAsInt64(at(a, k)), v = x.GetAsInt64(at(b, k));
        if (u != v) return u < v ? -1 : 1;
      } else {
        const double u = x.GetAsDouble(at(a, k)), v = x.GetAsDouble(at(b, k));
        if (u != v) return u < v ? -1 : 1;
      }
    }
    return 0;
  };
  std::vector<int64_t> order(static_cast<size_t>(slices));
  for (int64_t i = 0; i < slices; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return compare(a, b) < 0; });
  // Groups of equal slices in sorted order; each group's first occurrence is its smallest index.
  std::vector<int64_t> first, count, group_of(static_cast<size_t>(slices));
  for (size_t i = 0; i < order.size(); ++i) {
    if (i == 0 || compare(order[i - 1], order[i]) != 0) {
      first.push_back(order[i]);
      count.push_back(0);
    }
    first.back() = std::min(first.back(), order[i]);
    ++count.back();
    group_of[order[i]] = static_cast<int64_t>(first.size()) - 1;
  }
  std::vector<int64_t> rank(first.size());  // group -> position in Y
  for (size_t g = 0; g < first.size(); ++g) rank[g] = static_cast<int64_t>(g);
  if (node.GetInt("sorted", 1) == 0) {
    std::vector<int64_t> by_first(first.size());
    for (size_t g = 0; g < first.size(); ++g) by_first[g] = static_cast<int64_t>(g);
    std::sort(by_first.begin(), by_first.end(), [&](int64_t a, int64_t b) { return first[a] < first[b]; });
    for (size_t p = 0; p < by_first.size(); ++p) rank[by_first[p]] = static_cast<int64_t>(p);
  }
  const int64_t unique = static_cast<int64_t>(first.size());
  std::vector<int64_t> y_shape = has_axis ? x.shape() : std::vector<int64_t>{unique};
  if (has_axis) y_shape[axis] = unique;
  outputs->clear();
  outputs->emplace_back(x.dtype(), y_shape);
  const size_t elem = DTypeBits(x.dtype()) / 8;
  std::vector<int64_t> ys(static_cast<size_t>(unique)), idx(static_cast<size_t>(unique)), cnt(static_cast<size_t>(unique));
  for (int64_t g = 0; g < unique; ++g) {
    const int64_t p = rank[g];
    idx[p] = first[g];
    cnt[p] = count[g];
    for (int64_t k = 0; k < len; ++k) {
      const int64_t o = k / inner, i = k % inner;
      std::memcpy(static_cast<char*>(outputs->back().raw_data()) + ((o * unique + p) * inner + i) * elem,
                  static_cast<const char*>(x.raw_data()) + at(first[g], k) * elem, elem);
    }
  }
  const int n = node.num_outputs();
  if (n > 1) outputs->push_back(Tensor::FromVector<int64_t>({unique}, idx));
  if (n > 2) {
    std::vector<int64_t> inverse(static_cast<size_t>(slices));
    for (int64_t i = 0; i < slices; ++i) inverse[i] = rank[group_of[i]];
    outputs->push_back(Tensor::FromVector<int64_t>({slices}, inverse));
  }
  if (n > 3) outputs->push_back(Tensor::FromVector<int64_t>({unique}, cnt));
  return absl::OkStatus();
}

// A Loop that has not stopped after this many iterations, or whose scan outputs pass this many bytes, is
// an error rather than a hang or an exhausted memory.
constexpr int64_t kMaxLoopIterations = int64_t{1} << 20;
constexpr int64_t kMaxLoopScanBytes = int64_t{1} << 32;

// Loop: inputs M (trip count, or omitted), cond (or omitted), the `carried` initial values, then the
// enclosing values the body reads; body inputs (iteration, cond, carried..., enclosing...), outputs
// (cond, carried..., scan...). Outputs: the final carried values, then each scan output's per-iteration
// values stacked on a new leading axis.
absl::Status RunLoop(const Node& node, absl::Span<const Tensor* const> inputs, std::vector<Tensor>* outputs) {
  const std::string what = absl::StrCat("node ", node.DebugName());
  const Attribute* a = node.FindAttr("body");
  if (a == nullptr || a->kind != Attribute::Kind::kGraph || a->g == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": no body subgraph"));
  }
  const Graph& body = *a->g;
  const int64_t carried = node.GetInt("carried", 0);
  const int64_t n_in = static_cast<int64_t>(inputs.size());
  const int64_t scans = static_cast<int64_t>(body.outputs().size()) - 1 - carried;
  if (carried < 0 || 2 + carried > n_in || static_cast<int64_t>(body.inputs().size()) != n_in || scans < 0 ||
      static_cast<int64_t>(node.num_outputs()) != carried + scans) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": its body reads ", body.inputs().size(), " values and writes ",
                                                   body.outputs().size(), "; the node passes ", n_in, " with ",
                                                   carried, " carried and has ", node.num_outputs(), " outputs"));
  }
  auto scalar = [](const Tensor* t) { return IsFloat(t->dtype()) ? static_cast<int64_t>(t->GetAsDouble(0) != 0) : t->GetAsInt64(0); };
  for (int i = 0; i < 2; ++i) {
    if (inputs[i] != nullptr && inputs[i]->num_elements() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": ", i == 0 ? "M" : "cond", " must have one element"));
    }
  }
  const int64_t trips = inputs[0] != nullptr ? scalar(inputs[0]) : kMaxLoopIterations + 1;
  bool cond = inputs[1] != nullptr ? scalar(inputs[1]) != 0 : true;
  std::vector<Tensor> state;
  for (int64_t k = 0; k < carried; ++k) {
    if (inputs[2 + k] == nullptr) return absl::InvalidArgumentError(absl::StrCat(what, ": carried value ", k, " is missing"));
    state.push_back(*inputs[2 + k]);
  }
  std::vector<std::vector<Tensor>> scanned(static_cast<size_t>(scans));
  Tensor iteration(DType::kI64, {});
  Tensor cond_in(DType::kBool, {});
  std::vector<const Tensor*> body_in(static_cast<size_t>(n_in));
  std::vector<Tensor> body_out;
  int64_t i = 0, scan_bytes = 0;
  for (; i < trips && cond; ++i) {
    if (i >= kMaxLoopIterations) {
      return absl::ResourceExhaustedError(absl::StrCat(what, ": still running after ", kMaxLoopIterations,
                                                       " iterations (no trip count, and the condition stays true)"));
    }
    iteration.data<int64_t>()[0] = i;
    cond_in.data<bool>()[0] = true;
    body_in[0] = &iteration;
    body_in[1] = &cond_in;
    for (int64_t k = 0; k < carried; ++k) body_in[2 + k] = &state[k];
    for (int64_t k = 2 + carried; k < n_in; ++k) body_in[k] = inputs[k];
    absl::Status s = RunSubgraph(body, absl::StrCat(what, ", iteration ", i), body_in, &body_out);
    if (!s.ok()) return s;
    if (body_out[0].num_elements() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": the body's condition must have one element"));
    }
    cond = scalar(&body_out[0]) != 0;
    for (int64_t k = 0; k < carried; ++k) state[k] = std::move(body_out[1 + k]);
    for (int64_t k = 0; k < scans; ++k) {
      std::vector<Tensor>& list = scanned[k];
      const Tensor& v = body_out[1 + carried + k];
      if (!list.empty() && (v.shape() != list[0].shape() || v.dtype() != list[0].dtype())) {
        return absl::InvalidArgumentError(absl::StrCat(what, ": scan output ", k, " is ", v.type().ToString(),
                                                       " in iteration ", i, " but ", list[0].type().ToString(),
                                                       " in iteration 0"));
      }
      scan_bytes += static_cast<int64_t>(v.byte_size());
      if (scan_bytes > kMaxLoopScanBytes) {
        return absl::ResourceExhaustedError(absl::StrCat(what, ": its scan outputs pass ", kMaxLoopScanBytes,
                                                         " bytes after ", i + 1, " iterations"));
      }
      list.push_back(std::move(body_out[1 + carried + k]));
    }
  }
  outputs->clear();
  for (int64_t k = 0; k < carried; ++k) outputs->push_back(std::move(state[k]));
  for (int64_t k = 0; k < scans; ++k) {
    const std::vector<Tensor>& list = scanned[k];
    // No iteration: the body's declared element shape where static, else a [0] tensor.
    const TensorType& declared = body.outputs()[1 + carried + k]->type();
    std::vector<int64_t> shape = {static_cast<int64_t>(list.size())};
    if (!list.empty()) {
      shape.insert(shape.end(), list[0].shape().begin(), list[0].shape().end());
    } else if (declared.is_static()) {
      const std::vector<int64_t> d = declared.StaticShape();
      shape.insert(shape.end(), d.begin(), d.end());
    }
    Tensor stacked(list.empty() ? declared.dtype : list[0].dtype(), shape);
    if (stacked.byte_size() > 0 && stacked.buffer() == nullptr) {
      return absl::ResourceExhaustedError(absl::StrCat(what, ": cannot allocate scan output ", k, " (",
                                                       stacked.byte_size(), " bytes)"));
    }
    char* dst = static_cast<char*>(stacked.raw_data());
    for (const Tensor& t : list) {
      if (t.byte_size() > 0) std::memcpy(dst, t.raw_data(), t.byte_size());
      dst += t.byte_size();
    }
    outputs->push_back(std::move(stacked));
  }
  return absl::OkStatus();
}

}  // namespace

bool RunsOnReference(const std::string& domain, const std::string& op_type) {
  return (domain.empty() && (op_type == "If" || op_type == "Loop" || op_type == "Unique")) ||
         ReferenceKernelRegistry::Global().Find(domain, op_type) != nullptr;
}

bool ComputesItsOwnShape(const std::string& domain, const std::string& op_type) {
  return domain.empty() &&
         (op_type == "If" || op_type == "Loop" || op_type == "NonMaxSuppression" || op_type == "Unique");
}

absl::Status RunReferenceNode(const Node& node, absl::Span<const Tensor* const> inputs, std::vector<Tensor>* outputs) {
  if (node.domain().empty() && node.op_type() == "If") return RunIf(node, inputs, outputs);
  if (node.domain().empty() && node.op_type() == "Loop") return RunLoop(node, inputs, outputs);
  if (node.domain().empty() && node.op_type() == "Unique") return RunUnique(node, inputs, outputs);
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
