// Upper bounds for data-dependent shapes.
#include "codegen/shape_bounds.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/container/node_hash_map.h"
#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "kernels/reference/reference.h"

namespace tessel {
namespace {

// Largest value tracked: shape arithmetic, never activations.
constexpr int64_t kMaxTrackedElements = 1024;

struct Bound {
  TensorType type;              // static (unless unbounded)
  std::optional<Tensor> value;  // elementwise largest value, for small integer tensors
  bool unbounded = false;       // no bound: the extent is known only when the op runs
};

bool IsIntegerLike(DType t) {
  return t == DType::kI64 || t == DType::kI32 || t == DType::kI8 || t == DType::kU8 || t == DType::kBool;
}

int64_t AxisOf(const Node& n, int rank, int64_t fallback) {
  int64_t axis = n.GetInt("axis", fallback);
  return axis < 0 ? axis + rank : axis;
}

// The largest value of an integer scalar or 1-element tensor, when tracked.
std::optional<int64_t> ScalarBound(const Bound* b) {
  if (b == nullptr || !b->value || b->value->num_elements() != 1) return std::nullopt;
  return b->value->GetAsInt64(0);
}

// The ceilings of the operators whose output extent depends on input values; nullopt for the others.
std::optional<std::vector<TensorType>> DataDependentCeiling(const Node& n, const std::vector<const Bound*>& in) {
  if (!n.domain().empty()) return std::nullopt;
  const std::string& op = n.op_type();
  if (op == "NonZero" && in[0] != nullptr) {
    const TensorType& x = in[0]->type;
    return std::vector<TensorType>{TensorType::Static(DType::kI64, {std::max(x.rank(), 1), x.NumElements()})};
  }
  if (op == "NonMaxSuppression" && in.size() >= 2 && in[0] != nullptr && in[1] != nullptr) {
    const TensorType& scores = in[1]->type;  // [B, C, S]
    if (scores.rank() != 3) return std::nullopt;
    int64_t per_class = scores.dims[2].value();
    if (in.size() > 2) {
      if (std::optional<int64_t> m = ScalarBound(in[2])) per_class = std::min(per_class, std::max<int64_t>(*m, 0));
    }
    const int64_t count = scores.dims[0].value() * scores.dims[1].value() * per_class;
    return std::vector<TensorType>{TensorType::Static(DType::kI64, {count, 3})};
  }
  if (op == "TopK" && in.size() == 2 && in[0] != nullptr) {
    TensorType y = in[0]->type;
    const int64_t axis = AxisOf(n, y.rank(), -1);
    if (axis < 0 || axis >= y.rank()) return std::nullopt;
    int64_t k = y.dims[axis].value();
    if (std::optional<int64_t> m = ScalarBound(in[1])) k = std::min(k, std::max<int64_t>(*m, 0));
    y.dims[axis] = Dim(k);
    TensorType indices = y;
    indices.dtype = DType::kI64;
    return std::vector<TensorType>{y, indices};
  }
  if (op == "Unique" && !in.empty() && in[0] != nullptr) {
    // At most every element (every slice along axis) distinct.
    const TensorType& x = in[0]->type;
    int64_t slices = x.NumElements();
    TensorType y = TensorType::Static(x.dtype, {slices});
    if (n.HasAttr("axis")) {
      const int64_t axis = AxisOf(n, x.rank(), 0);
      if (axis < 0 || axis >= x.rank()) return std::nullopt;
      slices = x.dims[axis].value();
      y = x;
    }
    std::vector<TensorType> out = {y, TensorType::Static(DType::kI64, {slices}),
                                   TensorType::Static(DType::kI64, {slices}), TensorType::Static(DType::kI64, {slices})};
    out.resize(static_cast<size_t>(n.num_outputs()));
    return out;
  }
  if (op == "Compress" && in.size() == 2 && in[0] != nullptr && in[1] != nullptr) {
    TensorType y = in[0]->type;
    const int64_t kept = in[1]->type.NumElements();
    if (!n.HasAttr("axis")) return std::vector<TensorType>{TensorType::Static(y.dtype, {std::min(kept, y.NumElements())})};
    const int64_t axis = AxisOf(n, y.rank(), 0);
    if (axis < 0 || axis >= y.rank()) return std::nullopt;
    y.dims[axis] = Dim(std::min(kept, y.dims[axis].value()));
    return std::vector<TensorType>{y};
  }
  return std::nullopt;
}

// The largest value of Shape / Size of a bounded input, which has no value of its own.
std::optional<Tensor> ShapeValue(const Node& n, const Bound& x) {
  if (!n.domain().empty()) return std::nullopt;
  const std::vector<int64_t> dims = x.type.StaticShape();
  if (n.op_type() == "Size") return Tensor::FromVector<int64_t>({}, {x.type.NumElements()});
  if (n.op_type() != "Shape") return std::nullopt;
  const int rank = x.type.rank();
  int64_t start = n.GetInt("start", 0), end = n.GetInt("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  std::vector<int64_t> v(dims.begin() + start, dims.begin() + end);
  return Tensor::FromVector<int64_t>({static_cast<int64_t>(v.size())}, v);
}

// Node-based: BoundOf hands out pointers that later insertions must not move.
using BoundMap = absl::node_hash_map<const Value*, Bound>;

absl::Status BoundNodes(const std::vector<Node*>& order, BoundMap& bounds, std::string* first_unbounded);

// The bound of v: computed already, or its static type (and value, for a small integer constant).
const Bound* BoundOf(const Value* v, BoundMap& bounds) {
  if (v == nullptr) return nullptr;
  auto it = bounds.find(v);
  if (it != bounds.end()) return &it->second;
  if (!v->type().is_static()) return nullptr;
  Bound b{v->type(), std::nullopt};
  if (v->is_constant() && IsIntegerLike(v->type().dtype) && v->type().NumElements() <= kMaxTrackedElements) {
    b.value = *v->constant();
  }
  return &bounds.emplace(v, std::move(b)).first->second;
}

// If: each output's extents are the larger of the two branches', each branch bounded from the node's
// inputs (its graph inputs after the condition).
absl::StatusOr<std::vector<TensorType>> IfCeiling(const Node& n, const std::vector<const Bound*>& in) {
  std::vector<TensorType> types;
  for (const char* branch : {"then_branch", "else_branch"}) {
    const Attribute* a = n.FindAttr(branch);
    if (a == nullptr || a->kind != Attribute::Kind::kGraph || a->g == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("node ", n.DebugName(), ": no ", branch, " subgraph"));
    }
    const Graph& g = *a->g;
    if (g.inputs().size() + 1 != in.size() || g.outputs().size() != n.outputs().size()) {
      return absl::InvalidArgumentError(absl::StrCat("node ", n.DebugName(), ": its ", branch, " reads ",
                                                     g.inputs().size(), " values and writes ", g.outputs().size(),
                                                     "; the node has ", in.size() - 1, " and ", n.outputs().size()));
    }
    absl::StatusOr<std::vector<Node*>> order = g.TopologicalOrder();
    if (!order.ok()) return order.status();
    BoundMap sub;
    for (size_t k = 0; k < g.inputs().size(); ++k) {
      if (in[k + 1] == nullptr) return absl::InvalidArgumentError(absl::StrCat("node ", n.DebugName(), ": input ", k + 1, " is missing"));
      sub[g.inputs()[k]] = *in[k + 1];
    }
    std::string inner;
    absl::Status s = BoundNodes(*order, sub, &inner);
    if (!s.ok()) return absl::Status(s.code(), absl::StrCat("node ", n.DebugName(), ", ", branch, ": ", s.message()));
    for (size_t k = 0; k < g.outputs().size(); ++k) {
      const Bound* b = BoundOf(g.outputs()[k], sub);
      if (b == nullptr || b->unbounded) {
        return absl::UnimplementedError(absl::StrCat("node ", n.DebugName(), ", ", branch, ": ",
                                                     inner.empty() ? "an output has no bound" : inner));
      }
      if (types.size() <= k) {
        types.push_back(b->type);
        continue;
      }
      TensorType& t = types[k];
      if (t.rank() != b->type.rank() || t.dtype != b->type.dtype) {
        return absl::UnimplementedError(absl::StrCat("node ", n.DebugName(), ": output ", k, " is ", t.ToString(),
                                                     " in one branch and ", b->type.ToString(), " in the other"));
      }
      for (int d = 0; d < t.rank(); ++d) t.dims[d] = Dim(std::max(t.dims[d].value(), b->type.dims[d].value()));
    }
  }
  return types;
}

absl::Status BoundNodes(const std::vector<Node*>& order, BoundMap& bounds, std::string* first_unbounded) {
  for (const Node* n : order) {
    std::vector<const Bound*> in;
    bool inputs_known = true, inputs_unbounded = false;
    for (const Value* v : n->inputs()) {
      const Bound* b = BoundOf(v, bounds);
      if (v != nullptr && b == nullptr) {
        return absl::InternalError(absl::StrCat("node ", n->DebugName(), ": input '", v->name(), "' (",
                                                v->type().ToString(), ") was not bounded before its use"));
      }
      in.push_back(b);
      inputs_known = inputs_known && (b == nullptr || b->value.has_value());
      inputs_unbounded = inputs_unbounded || (b != nullptr && b->unbounded);
    }
    bool outputs_static = true;
    for (const Value* o : n->outputs()) outputs_static = outputs_static && o->type().is_static();
    const bool is_control_flow = n->domain().empty() && (n->op_type() == "If" || n->op_type() == "Loop");

    // The outputs' largest types; an error where an extent has no bound.
    absl::StatusOr<std::vector<TensorType>> types = std::vector<TensorType>();
    if (outputs_static) {
      for (const Value* o : n->outputs()) types->push_back(o->type());
    } else if (inputs_unbounded) {
      types = absl::UnimplementedError(absl::StrCat("node ", n->DebugName(), " reads a value without a bound"));
    } else if (n->domain().empty() && n->op_type() == "If") {
      types = IfCeiling(*n, in);
    } else if (std::optional<std::vector<TensorType>> ceiling = DataDependentCeiling(*n, in)) {
      types = std::move(*ceiling);
    } else {
      std::vector<TensorType> in_types(in.size());
      std::vector<const TensorType*> type_ptrs(in.size(), nullptr);
      std::vector<const Tensor*> values(in.size(), nullptr);
      for (size_t i = 0; i < in.size(); ++i) {
        if (in[i] == nullptr) continue;
        in_types[i] = in[i]->type;
        type_ptrs[i] = &in_types[i];
        if (in[i]->value) values[i] = &*in[i]->value;
      }
      types = InferOutputTypes(*n, type_ptrs, values);
      for (size_t i = 0; types.ok() && i < types->size() && i < n->outputs().size(); ++i) {
        if (!(*types)[i].is_static()) {
          types = absl::UnimplementedError(absl::StrCat(
              "node ", n->DebugName(), ": the data-dependent shape ", n->output(i)->type().ToString(), " of output '",
              n->output(i)->name(), "' hangs on values that are not shape arithmetic"));
        }
      }
    }
    if (!types.ok()) {
      // No bound: the non-static outputs are known only when the op runs (static ones keep their type).
      if (!inputs_unbounded && first_unbounded->empty()) *first_unbounded = std::string(types.status().message());
      for (const Value* o : n->outputs()) {
        bounds[o] = o->type().is_static() ? Bound{o->type(), std::nullopt, false} : Bound{o->type(), std::nullopt, true};
      }
      continue;
    }

    // Largest values of small integer outputs: Shape / Size from the bounded type, the rest by running
    // the reference kernel on the inputs' largest values.
    std::vector<std::optional<Tensor>> values(types->size());
    const bool small_ints = absl::c_all_of(*types, [](const TensorType& t) {
      return IsIntegerLike(t.dtype) && t.NumElements() <= kMaxTrackedElements;
    });
    if (small_ints && !inputs_unbounded && !in.empty() && in[0] != nullptr && types->size() == 1) {
      values[0] = ShapeValue(*n, *in[0]);
    }
    if (small_ints && !values.empty() && !values[0] && inputs_known && !is_control_flow &&
        RunsOnReference(n->domain(), n->op_type()) && !DataDependentCeiling(*n, in)) {
      std::vector<const Tensor*> inputs;
      for (const Bound* b : in) inputs.push_back(b ? &*b->value : nullptr);
      std::vector<Tensor> outputs;
      if (RunReferenceNode(*n, inputs, &outputs).ok()) {
        for (size_t i = 0; i < outputs.size() && i < values.size(); ++i) values[i] = std::move(outputs[i]);
      }
    }
    for (size_t i = 0; i < types->size() && i < n->outputs().size(); ++i) {
      bounds[n->output(i)] = Bound{(*types)[i], std::move(values[i])};
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<DataDependentBounds> BoundDataDependentShapes(const Graph& graph, const std::vector<Node*>& order) {
  DataDependentBounds result;
  bool any = false;
  for (const Node* n : order) {
    for (const Value* o : n->outputs()) any = any || !o->type().is_static();
  }
  if (!any) return result;
  BoundMap bounds;
  absl::Status s = BoundNodes(order, bounds, &result.first_unbounded);
  if (!s.ok()) return s;
  for (const Node* n : order) {
    for (const Value* o : n->outputs()) {
      if (o->type().is_static()) continue;
      const Bound& b = bounds.at(o);
      if (b.unbounded) {
        result.unbounded.insert(o);
        continue;
      }
      TensorType t = b.type;
      t.layout = o->type().layout;
      result.bounds[o] = std::move(t);
    }
  }
  return result;
}

}  // namespace tessel
