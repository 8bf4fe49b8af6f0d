// Type inference for tensor-manipulation operators (reshaping, slicing, gathering, concatenation and
// shape computation). Shape-determining inputs unknown at compile time give unknown extents; only an
// unknowable rank is an error, because Tessel's types always have a static rank.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/onnx_data_type.h"
#include "graph/op_registry.h"
#include "graph/ops/shape_util.h"

namespace tessel {
namespace {

using Types = absl::StatusOr<std::vector<TensorType>>;
using MaybeInts = absl::StatusOr<std::optional<std::vector<int64_t>>>;

// Guards allocation at run time: shapes computed from data must stay addressable.
constexpr int64_t kMaxElements = int64_t{1} << 40;

// a * b for non-negative extents, capped at kMaxElements + 1 so that it cannot overflow.
int64_t CappedProduct(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > (kMaxElements + 1) / b ? kMaxElements + 1 : std::min(a * b, kMaxElements + 1);
}

const std::string& Op(const InferenceContext& ctx) { return ctx.node.op_type(); }

absl::Status RequireIntInput(const InferenceContext& ctx, int i, absl::string_view what) {
  const DType t = ctx.type(i).dtype;
  if (t != DType::kI64 && t != DType::kI32) {
    return absl::InvalidArgumentError(absl::StrCat(Op(ctx), ": input '", what, "' must be int64 or int32, got ",
                                                   ctx.type(i).ToString()));
  }
  return absl::OkStatus();
}

// The values of integer input i when known; std::nullopt when they are only known at run time.
MaybeInts KnownInts(const InferenceContext& ctx, int i, absl::string_view what) {
  if (absl::Status s = RequireIntInput(ctx, i, what); !s.ok()) return s;
  if (ctx.type(i).rank() > 1) {
    return absl::InvalidArgumentError(absl::StrCat(Op(ctx), ": input '", what, "' must be 1-D, got ",
                                                   ctx.type(i).ToString()));
  }
  const Tensor* v = ctx.value(i);
  if (v == nullptr) return std::optional<std::vector<int64_t>>();
  absl::StatusOr<std::vector<int64_t>> ints = ReadIntValues(*v, absl::StrCat(Op(ctx), " input '", what, "'"));
  if (!ints.ok()) return ints.status();
  return std::optional<std::vector<int64_t>>(std::move(*ints));
}

// The length of a 1-D integer input whose values are unknown; an error when that is unknown too,
// because the output rank would depend on it.
absl::StatusOr<int64_t> RequireStaticLength(const InferenceContext& ctx, int i, absl::string_view what) {
  const int64_t n = StaticLength1D(ctx.type(i));
  if (n < 0) {
    return absl::UnimplementedError(absl::StrCat(
        Op(ctx), ": the output rank depends on input '", what, "' of type ", ctx.type(i).ToString(),
        ", whose length is unknown; Tessel needs static ranks (make the input constant or give it a static length)"));
  }
  return n;
}

std::vector<Dim> UnknownDims(int64_t n) {
  std::vector<Dim> dims;
  for (int64_t i = 0; i < n; ++i) dims.push_back(UnknownDim());
  return dims;
}

absl::Status RejectLegacyAttr(const InferenceContext& ctx, const char* attr, const char* input) {
  if (ctx.node.HasAttr(attr)) {
    return absl::InvalidArgumentError(absl::StrCat(Op(ctx), ": attribute '", attr,
                                                   "' is the pre-opset-13 form; the IR takes it as input '", input,
                                                   "' (the ONNX importer converts it)"));
  }
  return absl::OkStatus();
}

// Product of dims: static when all are; a lone symbol times static 1s stays that symbol.
Dim ProductDim(absl::Span<const Dim> dims) {
  int64_t p = 1;
  const Dim* symbol = nullptr;
  int symbols = 0;
  for (const Dim& d : dims) {
    if (d.is_static()) {
      p *= d.value();
    } else {
      symbol = &d;
      ++symbols;
    }
  }
  if (symbols == 0) return p;
  if (symbols == 1 && p == 1) return *symbol;
  return UnknownDim();
}

Types InferFlatten(const InferenceContext& ctx) {
  const TensorType& in = ctx.type(0);
  int64_t axis = ctx.node.GetInt("axis", 1);
  if (axis < -in.rank() || axis > in.rank()) {
    return absl::InvalidArgumentError(absl::StrCat("Flatten: axis ", axis, " is out of range for rank ", in.rank(),
                                                   " (expected ", -in.rank(), " to ", in.rank(), ")"));
  }
  if (axis < 0) axis += in.rank();
  absl::Span<const Dim> dims(in.dims);
  return std::vector<TensorType>{
      TensorType(in.dtype, {ProductDim(dims.subspan(0, axis)), ProductDim(dims.subspan(axis))})};
}

// Static element count and the multiset of symbols of a dims list.
struct DimProduct {
  int64_t value = 1;
  std::map<std::string, int> symbols;
  bool overflow = false;
};

DimProduct Multiply(absl::Span<const Dim> dims) {
  DimProduct p;
  for (const Dim& d : dims) {
    if (d.is_static()) {
      p.overflow = p.overflow || __builtin_mul_overflow(p.value, d.value(), &p.value);
    } else {
      ++p.symbols[d.symbol()];
    }
  }
  return p;
}

Types InferReshape(const InferenceContext& ctx) {
  const TensorType& in = ctx.type(0);
  MaybeInts shape = KnownInts(ctx, 1, "shape");
  if (!shape.ok()) return shape.status();
  if (!shape->has_value()) {
    absl::StatusOr<int64_t> n = RequireStaticLength(ctx, 1, "shape");
    if (!n.ok()) return n.status();
    return std::vector<TensorType>{TensorType(in.dtype, UnknownDims(*n))};
  }
  const std::vector<int64_t>& target = **shape;
  const bool allowzero = ctx.node.GetInt("allowzero", 0) != 0;
  const std::string target_str = ShapeToString(target);
  std::vector<Dim> out;
  int infer_at = -1;
  for (size_t i = 0; i < target.size(); ++i) {
    const int64_t s = target[i];
    if (s == -1) {
      if (infer_at >= 0) {
        return absl::InvalidArgumentError(absl::StrCat("Reshape: target shape ", target_str, " has more than one -1"));
      }
      infer_at = static_cast<int>(i);
      out.push_back(Dim(-1));
    } else if (s < -1) {
      return absl::InvalidArgumentError(absl::StrCat("Reshape: target shape ", target_str, " has negative extent ", s));
    } else if (s == 0 && !allowzero) {
      if (static_cast<int>(i) >= in.rank()) {
        return absl::InvalidArgumentError(absl::StrCat("Reshape: target shape ", target_str, " copies dimension ", i,
                                                       " (0) but the input ", DimsToString(in.dims), " has rank ",
                                                       in.rank()));
      }
      out.push_back(in.dims[i]);
    } else {
      out.push_back(s);
    }
  }
  if (allowzero && infer_at >= 0 && std::count(target.begin(), target.end(), 0) > 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("Reshape: target shape ", target_str, " has both 0 and -1 while allowzero=1"));
  }
  const DimProduct in_p = Multiply(in.dims);
  std::vector<Dim> known = out;
  if (infer_at >= 0) known.erase(known.begin() + infer_at);
  const DimProduct out_p = Multiply(known);
  if (in_p.overflow || out_p.overflow) {
    return absl::InvalidArgumentError(absl::StrCat("Reshape: the element count of ", DimsToString(in.dims), " or ",
                                                   target_str, " overflows int64"));
  }
  auto mismatch = [&] {
    return absl::InvalidArgumentError(absl::StrCat("Reshape: cannot reshape ", DimsToString(in.dims), " (",
                                                   in_p.symbols.empty() ? absl::StrCat(in_p.value) : "symbolic",
                                                   " elements) to ", target_str));
  };
  // Symbols of the input not matched by symbols of the target (-1 may absorb them).
  std::map<std::string, int> rest = in_p.symbols;
  bool target_symbols_covered = true;
  for (const auto& [sym, count] : out_p.symbols) {
    auto it = rest.find(sym);
    if (it == rest.end() || it->second < count) {
      target_symbols_covered = false;
      break;
    }
    it->second -= count;
    if (it->second == 0) rest.erase(it);
  }
  if (infer_at < 0) {
    if (target_symbols_covered && rest.empty() && in_p.value != out_p.value) return mismatch();
    return std::vector<TensorType>{TensorType(in.dtype, out)};
  }
  Dim inferred = UnknownDim();
  if (target_symbols_covered && rest.empty()) {
    if (out_p.value == 0) {
      return absl::InvalidArgumentError(absl::StrCat("Reshape: cannot infer the -1 in ", target_str, " for input ",
                                                     DimsToString(in.dims), ": the other extents multiply to 0"));
    }
    if (in_p.value % out_p.value != 0) return mismatch();
    inferred = in_p.value / out_p.value;
  } else if (target_symbols_covered && rest.size() == 1 && rest.begin()->second == 1 && in_p.value == out_p.value) {
    inferred = Dim::Symbol(rest.begin()->first);
  }
  out[infer_at] = inferred;
  return std::vector<TensorType>{TensorType(in.dtype, out)};
}

Types InferTranspose(const InferenceContext& ctx) {
  const TensorType& in = ctx.type(0);
  std::vector<int64_t> perm = ctx.node.GetInts("perm");
  if (!ctx.node.HasAttr("perm")) {
    for (int i = in.rank() - 1; i >= 0; --i) perm.push_back(i);
  }
  std::vector<bool> seen(in.rank(), false);
  bool valid = static_cast<int>(perm.size()) == in.rank();
  for (size_t i = 0; valid && i < perm.size(); ++i) {
    valid = perm[i] >= 0 && perm[i] < in.rank() && !seen[perm[i]];
    if (valid) seen[perm[i]] = true;
  }
  if (!valid) {
    return absl::InvalidArgumentError(absl::StrCat("Transpose: perm [", absl::StrJoin(perm, ","),
                                                   "] is not a permutation of 0..", in.rank() - 1, " for input ",
                                                   in.ToString()));
  }
  std::vector<Dim> dims;
  for (int64_t p : perm) dims.push_back(in.dims[p]);
  return std::vector<TensorType>{TensorType(in.dtype, dims)};
}

Types InferConcat(const InferenceContext& ctx) {
  const Attribute* axis_attr = ctx.node.FindAttr("axis");
  if (axis_attr == nullptr || axis_attr->kind != Attribute::Kind::kInt) {
    return absl::InvalidArgumentError("Concat: missing integer attribute 'axis'");
  }
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) return absl::InvalidArgumentError(absl::StrCat("Concat: input ", i, " is missing"));
  }
  const TensorType& first = ctx.type(0);
  absl::StatusOr<int> axis = NormalizeAxis(axis_attr->i, first.rank(), "Concat");
  if (!axis.ok()) return axis.status();
  std::vector<Dim> dims = first.dims;
  int64_t axis_sum = 0;
  bool axis_static = true;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const TensorType& t = ctx.type(i);
    if (t.dtype != first.dtype || t.rank() != first.rank()) {
      return absl::InvalidArgumentError(absl::StrCat("Concat: input ", i, " is ", t.ToString(), " but input 0 is ",
                                                     first.ToString(), "; all inputs need the same dtype and rank"));
    }
    for (int d = 0; d < t.rank(); ++d) {
      const Dim& x = t.dims[d];
      if (d == *axis) {
        axis_static = axis_static && x.is_static();
        if (x.is_static()) axis_sum += x.value();
        continue;
      }
      if (x.is_static() && dims[d].is_static() && x.value() != dims[d].value()) {
        return absl::InvalidArgumentError(absl::StrCat("Concat: input ", i, " ", t.ToString(), " differs from ",
                                                       first.ToString(), " in dimension ", d,
                                                       " (only the axis dimension ", *axis, " may differ)"));
      }
      // A static extent pins a symbol that must equal it at run time.
      if (x.is_static()) dims[d] = x;
    }
  }
  dims[*axis] = axis_static ? Dim(axis_sum) : UnknownDim();
  return std::vector<TensorType>{TensorType(first.dtype, dims)};
}

Types InferSplit(const InferenceContext& ctx) {
  if (absl::Status s = RejectLegacyAttr(ctx, "split", "split"); !s.ok()) return s;
  const TensorType& in = ctx.type(0);
  absl::StatusOr<int> axis = NormalizeAxis(ctx.node.GetInt("axis", 0), in.rank(), "Split");
  if (!axis.ok()) return axis.status();
  const int n = ctx.node.num_outputs();
  const Attribute* num_outputs = ctx.node.FindAttr("num_outputs");
  if (num_outputs != nullptr) {
    if (ctx.has_input(1)) {
      return absl::InvalidArgumentError("Split: give either input 'split' or attribute 'num_outputs', not both");
    }
    if (num_outputs->i != n) {
      return absl::InvalidArgumentError(
          absl::StrCat("Split: attribute num_outputs is ", num_outputs->i, " but the node has ", n, " outputs"));
    }
  }
  const Dim& dim = in.dims[*axis];
  std::vector<Dim> sizes;
  if (ctx.has_input(1)) {
    MaybeInts split = KnownInts(ctx, 1, "split");
    if (!split.ok()) return split.status();
    if (split->has_value()) {
      const std::vector<int64_t>& v = **split;
      int64_t sum = 0;
      for (int64_t s : v) {
        if (s < 0) {
          return absl::InvalidArgumentError(absl::StrCat("Split: split [", absl::StrJoin(v, ","), "] has a negative size"));
        }
        sum += s;
        sizes.push_back(s);
      }
      if (static_cast<int>(v.size()) != n) {
        return absl::InvalidArgumentError(absl::StrCat("Split: split [", absl::StrJoin(v, ","), "] has ", v.size(),
                                                       " entries but the node has ", n, " outputs"));
      }
      if (dim.is_static() && sum != dim.value()) {
        return absl::InvalidArgumentError(absl::StrCat("Split: split [", absl::StrJoin(v, ","), "] sums to ", sum,
                                                       " but axis ", *axis, " of ", in.ToString(), " has ",
                                                       dim.value()));
      }
    } else {
      sizes = n == 1 ? std::vector<Dim>{dim} : UnknownDims(n);
    }
  } else if (!dim.is_static()) {
    sizes = n == 1 ? std::vector<Dim>{dim} : UnknownDims(n);
  } else if (num_outputs != nullptr) {
    // Opset 18: chunks of ceil(dim / n), the last one smaller.
    const int64_t chunk = (dim.value() + n - 1) / n;
    const int64_t last = dim.value() - chunk * (n - 1);
    if (last < 0) {
      return absl::InvalidArgumentError(absl::StrCat("Split: axis ", *axis, " of ", in.ToString(),
                                                     " cannot be split into ", n, " chunks of ", chunk));
    }
    sizes.assign(n - 1, chunk);
    sizes.push_back(last);
  } else {
    if (dim.value() % n != 0) {
      return absl::InvalidArgumentError(absl::StrCat("Split: axis ", *axis, " of ", in.ToString(),
                                                     " is not divisible into ", n,
                                                     " equal parts; give input 'split' or attribute 'num_outputs'"));
    }
    sizes.assign(n, dim.value() / n);
  }
  std::vector<TensorType> out;
  for (const Dim& s : sizes) {
    TensorType t = in;
    t.dims[*axis] = s;
    out.push_back(t);
  }
  return out;
}

Types InferSlice(const InferenceContext& ctx) {
  const TensorType& in = ctx.type(0);
  const char* names[] = {"data", "starts", "ends", "axes", "steps"};
  std::optional<std::vector<int64_t>> v[5];
  bool all_known = true;
  for (int i = 1; i < 5; ++i) {
    if (!ctx.has_input(i)) continue;
    MaybeInts ints = KnownInts(ctx, i, names[i]);
    if (!ints.ok()) return ints.status();
    v[i] = std::move(*ints);
    all_known = all_known && v[i].has_value();
  }
  if (all_known) {
    absl::StatusOr<SliceSpec> spec =
        ResolveSliceInputs(in.rank(), *v[1], *v[2], v[3] ? &*v[3] : nullptr, v[4] ? &*v[4] : nullptr);
    if (!spec.ok()) return spec.status();
    std::vector<Dim> dims = in.dims;
    for (int d = 0; d < in.rank(); ++d) {
      if (!spec->sliced[d]) continue;
      if (dims[d].is_static()) {
        dims[d] = ClampSlice(dims[d].value(), spec->starts[d], spec->ends[d], spec->steps[d]).length;
      } else if (!(spec->starts[d] == 0 && spec->steps[d] == 1 &&
                   spec->ends[d] >= std::numeric_limits<int32_t>::max())) {
        // Only "from 0 to the end" keeps a symbolic extent; anything else depends on its value.
        dims[d] = UnknownDim();
      }
    }
    return std::vector<TensorType>{TensorType(in.dtype, dims)};
  }
  // Some values unknown: the rank survives; extents of the sliced axes (all, if unknown) do not.
  std::vector<Dim> dims = in.dims;
  if (ctx.has_input(3) && v[3].has_value()) {
    for (int64_t a : *v[3]) {
      absl::StatusOr<int> axis = NormalizeAxis(a, in.rank(), "Slice");
      if (!axis.ok()) return axis.status();
      dims[*axis] = UnknownDim();
    }
  } else {
    const int64_t n = ctx.has_input(3) ? -1 : StaticLength1D(ctx.type(1));
    for (int d = 0; d < in.rank(); ++d) {
      if (n < 0 || d < n) dims[d] = UnknownDim();
    }
  }
  return std::vector<TensorType>{TensorType(in.dtype, dims)};
}

Types InferGather(const InferenceContext& ctx) {
  const TensorType& data = ctx.type(0);
  if (absl::Status s = RequireIntInput(ctx, 1, "indices"); !s.ok()) return s;
  absl::StatusOr<int> axis = NormalizeAxis(ctx.node.GetInt("axis", 0), data.rank(), "Gather");
  if (!axis.ok()) return axis.status();
  std::vector<Dim> dims(data.dims.begin(), data.dims.begin() + *axis);
  dims.insert(dims.end(), ctx.type(1).dims.begin(), ctx.type(1).dims.end());
  dims.insert(dims.end(), data.dims.begin() + *axis + 1, data.dims.end());
  return std::vector<TensorType>{TensorType(data.dtype, dims)};
}

// GatherElements: indices of the data's rank; the output has the indices' shape and the data's type.
Types InferGatherElements(const InferenceContext& ctx) {
  const TensorType& data = ctx.type(0);
  if (absl::Status s = RequireIntInput(ctx, 1, "indices"); !s.ok()) return s;
  if (ctx.type(1).rank() != data.rank() || data.rank() == 0) {
    return absl::InvalidArgumentError(absl::StrCat("GatherElements: indices ", ctx.type(1).ToString(),
                                                   " must have the rank of data ", data.ToString(), " (at least 1)"));
  }
  absl::StatusOr<int> axis = NormalizeAxis(ctx.node.GetInt("axis", 0), data.rank(), "GatherElements");
  if (!axis.ok()) return axis.status();
  return std::vector<TensorType>{TensorType(data.dtype, ctx.type(1).dims)};
}

// ScatterND / ScatterElements `reduction`: none replaces, the others combine, which needs arithmetic.
absl::Status CheckScatterReduction(const InferenceContext& ctx) {
  const std::string reduction = ctx.node.GetString("reduction", "none");
  if (reduction == "none") return absl::OkStatus();
  if (reduction != "add" && reduction != "mul" && reduction != "max" && reduction != "min") {
    return absl::InvalidArgumentError(absl::StrCat(Op(ctx), ": reduction '", reduction,
                                                   "' is not one of none, add, mul, max, min"));
  }
  const DType t = ctx.type(0).dtype;
  if (t != DType::kF32 && t != DType::kI32 && t != DType::kI64) {
    return absl::UnimplementedError(absl::StrCat(Op(ctx), ": reduction '", reduction, "' on ", DTypeName(t),
                                                 " data is not supported (f32, i32 or i64)"));
  }
  return absl::OkStatus();
}

absl::Status RequireUpdatesDType(const InferenceContext& ctx) {
  if (ctx.type(2).dtype == ctx.type(0).dtype) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(Op(ctx), ": updates ", ctx.type(2).ToString(),
                                                 " must have the dtype of data ", ctx.type(0).ToString()));
}

// Static extents that differ (symbols may still be equal at run time).
bool Conflict(const Dim& a, const Dim& b) { return a.is_static() && b.is_static() && a.value() != b.value(); }

// ScatterND: indices [..., k] address slices data[i_0, ..., i_k-1]; updates are indices.shape[:-1] +
// data.shape[k:]. The output is data with those slices replaced or combined.
Types InferScatterND(const InferenceContext& ctx) {
  const TensorType& data = ctx.type(0);
  const TensorType& indices = ctx.type(1);
  const TensorType& updates = ctx.type(2);
  if (absl::Status s = RequireIntInput(ctx, 1, "indices"); !s.ok()) return s;
  if (absl::Status s = RequireUpdatesDType(ctx); !s.ok()) return s;
  if (absl::Status s = CheckScatterReduction(ctx); !s.ok()) return s;
  if (indices.rank() < 1 || data.rank() < 1) {
    return absl::InvalidArgumentError(absl::StrCat("ScatterND: data ", data.ToString(), " and indices ",
                                                   indices.ToString(), " need rank at least 1"));
  }
  const Dim& k = indices.dims.back();
  if (k.is_static()) {
    const int q = indices.rank();
    if (k.value() < 1 || k.value() > data.rank() || updates.rank() != q - 1 + data.rank() - k.value()) {
      return absl::InvalidArgumentError(absl::StrCat("ScatterND: indices ", indices.ToString(), " address ",
                                                     k.value(), " leading axes of data ", data.ToString(),
                                                     ", so updates must be indices.shape[:-1] + data.shape[",
                                                     k.value(), ":], got ", updates.ToString()));
    }
    for (int d = 0; d < updates.rank(); ++d) {
      const Dim& want = d < q - 1 ? indices.dims[d] : data.dims[k.value() + d - (q - 1)];
      if (Conflict(updates.dims[d], want)) {
        return absl::InvalidArgumentError(absl::StrCat("ScatterND: updates ", updates.ToString(), " must be ",
                                                       "indices.shape[:-1] + data.shape[", k.value(),
                                                       ":] for indices ", indices.ToString(), " and data ",
                                                       data.ToString()));
      }
    }
  }
  return std::vector<TensorType>{data};
}

// ScatterElements: out = data, then out[..., indices[i][j], ...] (index on `axis`) = updates[i][j].
Types InferScatterElements(const InferenceContext& ctx) {
  const TensorType& data = ctx.type(0);
  const TensorType& indices = ctx.type(1);
  if (absl::Status s = RequireIntInput(ctx, 1, "indices"); !s.ok()) return s;
  if (absl::Status s = RequireUpdatesDType(ctx); !s.ok()) return s;
  if (absl::Status s = CheckScatterReduction(ctx); !s.ok()) return s;
  if (indices.rank() != data.rank() || data.rank() == 0 || ctx.type(2).rank() != indices.rank()) {
    return absl::InvalidArgumentError(absl::StrCat(Op(ctx), ": indices ", indices.ToString(), " and updates ",
                                                   ctx.type(2).ToString(), " must have the rank of data ",
                                                   data.ToString(), " (at least 1)"));
  }
  for (int d = 0; d < indices.rank(); ++d) {
    if (Conflict(indices.dims[d], ctx.type(2).dims[d])) {
      return absl::InvalidArgumentError(absl::StrCat(Op(ctx), ": updates ", ctx.type(2).ToString(),
                                                     " must have the shape of indices ", indices.ToString()));
    }
  }
  absl::StatusOr<int> axis = NormalizeAxis(ctx.node.GetInt("axis", 0), data.rank(), Op(ctx));
  if (!axis.ok()) return axis.status();
  return std::vector<TensorType>{data};
}

// Tile: out.dims[d] = in.dims[d] * repeats[d]; repeats (1-D, one entry per input dimension) may be
// known only at run time, which leaves every extent unknown.
Types InferTile(const InferenceContext& ctx) {
  const TensorType& in = ctx.type(0);
  MaybeInts repeats = KnownInts(ctx, 1, "repeats");
  if (!repeats.ok()) return repeats.status();
  if (!repeats->has_value()) {
    const int64_t n = StaticLength1D(ctx.type(1));
    if (n >= 0 && n != in.rank()) {
      return absl::InvalidArgumentError(absl::StrCat("Tile: repeats ", ctx.type(1).ToString(), " has ", n,
                                                     " entries but the input ", in.ToString(), " has rank ",
                                                     in.rank(), "; give one repeat count per dimension"));
    }
    return std::vector<TensorType>{TensorType(in.dtype, UnknownDims(in.rank()))};
  }
  const std::vector<int64_t>& r = **repeats;
  if (static_cast<int>(r.size()) != in.rank()) {
    return absl::InvalidArgumentError(absl::StrCat("Tile: repeats ", ShapeToString(r), " has ", r.size(),
                                                   " entries but the input ", in.ToString(), " has rank ", in.rank(),
                                                   "; give one repeat count per dimension"));
  }
  std::vector<Dim> dims;
  int64_t elements = 1;
  for (int d = 0; d < in.rank(); ++d) {
    if (r[d] < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Tile: repeats ", ShapeToString(r), " has negative entry ", r[d], " for dimension ", d));
    }
    const Dim& x = in.dims[d];
    if (x.is_static()) {
      const int64_t extent = CappedProduct(x.value(), r[d]);
      dims.push_back(extent);
      elements = CappedProduct(elements, extent);
    } else {
      dims.push_back(r[d] == 1 ? x : r[d] == 0 ? Dim(0) : UnknownDim());
    }
  }
  if (elements > kMaxElements) {
    return absl::ResourceExhaustedError(absl::StrCat("Tile: ", in.ToString(), " repeated ", ShapeToString(r),
                                                     " times has too many elements"));
  }
  return std::vector<TensorType>{TensorType(in.dtype, dims)};
}

// GatherND: the first batch_dims axes of data and indices correspond; each index tuple (indices' last
// axis, k entries) addresses data[b..., i_0, ..., i_k-1, ...], so the output is indices.shape[:-1] +
// data.shape[batch_dims + k:].
Types InferGatherND(const InferenceContext& ctx) {
  const TensorType& data = ctx.type(0);
  const TensorType& indices = ctx.type(1);
  if (absl::Status s = RequireIntInput(ctx, 1, "indices"); !s.ok()) return s;
  const int64_t b = ctx.node.GetInt("batch_dims", 0);
  if (data.rank() < 1 || indices.rank() < 1 || b < 0 || b >= std::min(data.rank(), indices.rank())) {
    return absl::InvalidArgumentError(absl::StrCat("GatherND: batch_dims ", b, " must be at least 0 and below the ",
                                                   "ranks of data ", data.ToString(), " and indices ",
                                                   indices.ToString()));
  }
  const Dim& k = indices.dims.back();
  if (!k.is_static()) {
    return absl::UnimplementedError(absl::StrCat(
        "GatherND: the output rank depends on the last extent of indices ", indices.ToString(),
        ", which is unknown; Tessel needs static ranks (give indices a static last dimension)"));
  }
  if (k.value() < 1 || k.value() > data.rank() - b) {
    return absl::InvalidArgumentError(absl::StrCat("GatherND: indices ", indices.ToString(), " address ", k.value(),
                                                   " axes of data ", data.ToString(), " after batch_dims ", b,
                                                   "; expected 1 to ", data.rank() - b));
  }
  for (int d = 0; d < b; ++d) {
    if (Conflict(data.dims[d], indices.dims[d])) {
      return absl::InvalidArgumentError(absl::StrCat("GatherND: batch dimension ", d, " of data ", data.ToString(),
                                                     " and indices ", indices.ToString(), " differ"));
    }
  }
  std::vector<Dim> dims(indices.dims.begin(), indices.dims.end() - 1);
  dims.insert(dims.end(), data.dims.begin() + b + k.value(), data.dims.end());
  return std::vector<TensorType>{TensorType(data.dtype, dims)};
}

// The number of non-zero elements (NaN counts; numpy's `x != 0`).
int64_t CountNonZero(const Tensor& t) {
  int64_t n = 0;
  const bool is_float = IsFloat(t.dtype());
  for (int64_t i = 0; i < t.num_elements(); ++i) n += is_float ? t.GetAsDouble(i) != 0.0 : t.GetAsInt64(i) != 0;
  return n;
}

// NonZero: int64 [rank, count] (a scalar counts as rank 1, as numpy's nonzero treats it). The count is
// known only from the input's value, so a graph input gives a data-dependent extent.
Types InferNonZero(const InferenceContext& ctx) {
  const TensorType& in = ctx.type(0);
  if (in.dtype == DType::kI4) {
    return absl::UnimplementedError("NonZero: packed i4 input is not supported");
  }
  const int64_t rank = std::max(in.rank(), 1);
  const Tensor* v = ctx.value(0);
  return std::vector<TensorType>{TensorType(DType::kI64, {rank, v ? Dim(CountNonZero(*v)) : UnknownDim()})};
}

// Unique: Y holds the distinct elements (or slices along `axis`), sorted or in order of first occurrence;
// indices (their first occurrences), inverse_indices (each element's or slice's place in Y) and counts.
// How many there are depends on the values: the reference interpreter computes them as it runs.
Types InferUnique(const InferenceContext& ctx) {
  const TensorType& x = ctx.type(0);
  if (x.dtype == DType::kI4) return absl::UnimplementedError("Unique: packed i4 input is not supported");
  std::vector<TensorType> out;
  int64_t axis = -1;
  if (ctx.node.HasAttr("axis")) {
    axis = ctx.node.GetInt("axis", 0);
    if (axis < -x.rank() || axis >= x.rank()) {
      return absl::InvalidArgumentError(absl::StrCat("Unique: axis ", axis, " is out of range for ", x.ToString()));
    }
    if (axis < 0) axis += x.rank();
    std::vector<Dim> dims = x.dims;
    dims[axis] = UnknownDim();
    out.emplace_back(x.dtype, std::move(dims));
  } else {
    out.emplace_back(x.dtype, std::vector<Dim>{UnknownDim()});
  }
  const int64_t n = ctx.node.num_outputs();
  if (n > 1) out.emplace_back(DType::kI64, std::vector<Dim>{UnknownDim()});
  if (n > 2) {
    const int64_t count = axis >= 0 ? (x.dims[axis].is_static() ? x.dims[axis].value() : -1) : x.NumElements();
    out.emplace_back(DType::kI64, std::vector<Dim>{count >= 0 ? Dim(count) : UnknownDim()});
  }
  if (n > 3) out.emplace_back(DType::kI64, std::vector<Dim>{UnknownDim()});
  return out;
}

// Compress: the slices along `axis` (or the elements of the flattened input, without axis) whose condition
// is true; the condition may be shorter than that extent (the rest dropped). The kept count is known when
// the condition is.
Types InferCompress(const InferenceContext& ctx) {
  const TensorType& in = ctx.type(0);
  const TensorType& cond = ctx.type(1);
  if (in.dtype == DType::kI4) return absl::UnimplementedError("Compress: packed i4 input is not supported");
  if (cond.dtype != DType::kBool || cond.rank() != 1) {
    return absl::InvalidArgumentError(absl::StrCat("Compress: condition is ", cond.ToString(), "; expected a 1-D bool tensor"));
  }
  Dim kept = UnknownDim();
  if (const Tensor* c = ctx.value(1); c != nullptr) kept = Dim(CountNonZero(*c));
  if (!ctx.node.HasAttr("axis")) return std::vector<TensorType>{TensorType(in.dtype, {kept})};
  int64_t axis = ctx.node.GetInt("axis", 0);
  if (axis < 0) axis += in.rank();
  if (axis < 0 || axis >= in.rank()) {
    return absl::InvalidArgumentError(absl::StrCat("Compress: axis ", ctx.node.GetInt("axis", 0), " is outside ", in.ToString()));
  }
  if (cond.dims[0].is_static() && in.dims[axis].is_static() && cond.dims[0].value() > in.dims[axis].value()) {
    return absl::InvalidArgumentError(absl::StrCat("Compress: condition ", cond.ToString(), " is longer than axis ", axis,
                                                   " of ", in.ToString()));
  }
  std::vector<Dim> dims = in.dims;
  dims[axis] = kept;
  return std::vector<TensorType>{TensorType(in.dtype, dims)};
}

// ReverseSequence: x of rank >= 2 with time_axis and batch_axis (0 and 1, either way round) and
// sequence_lens, one per batch entry; the output has x's type.
Types InferReverseSequence(const InferenceContext& ctx) {
  const TensorType& x = ctx.type(0);
  const int64_t t = ctx.node.GetInt("time_axis", 0), b = ctx.node.GetInt("batch_axis", 1);
  if (x.rank() < 2 || !((t == 0 && b == 1) || (t == 1 && b == 0))) {
    return absl::InvalidArgumentError(absl::StrCat("ReverseSequence: input ", x.ToString(), " with time_axis ", t,
                                                   " and batch_axis ", b, "; expected rank >= 2 and axes 0 and 1"));
  }
  const TensorType& lens = ctx.type(1);
  if ((lens.dtype != DType::kI64 && lens.dtype != DType::kI32) || lens.rank() != 1) {
    return absl::InvalidArgumentError(absl::StrCat("ReverseSequence: sequence_lens is ", lens.ToString(),
                                                   "; expected a 1-D integer tensor"));
  }
  if (lens.dims[0].is_static() && x.dims[b].is_static() && lens.dims[0].value() != x.dims[b].value()) {
    return absl::InvalidArgumentError(absl::StrCat("ReverseSequence: sequence_lens ", lens.ToString(),
                                                   " does not match the batch axis of ", x.ToString()));
  }
  return std::vector<TensorType>{x};
}

// Trilu: a batch of matrices (rank >= 2), an optional scalar k.
Types InferTrilu(const InferenceContext& ctx) {
  if (ctx.type(0).rank() < 2) {
    return absl::InvalidArgumentError(absl::StrCat("Trilu: input ", ctx.type(0).ToString(), " has rank below 2"));
  }
  if (ctx.has_input(1)) {
    if (absl::Status s = RequireIntInput(ctx, 1, "k"); !s.ok()) return s;
    if (ctx.type(1).NumElements() > 1) return absl::InvalidArgumentError("Trilu: k must be a scalar");
  }
  return std::vector<TensorType>{ctx.type(0)};
}

Types InferSize(const InferenceContext& ctx) { return std::vector<TensorType>{TensorType(DType::kI64, {})}; }

// Axes normalized against `rank`, rejecting repeats.
absl::StatusOr<std::vector<int>> NormalizeAxes(const std::vector<int64_t>& axes, int rank, absl::string_view op) {
  std::vector<int> out;
  std::vector<bool> seen(rank, false);
  for (int64_t a : axes) {
    absl::StatusOr<int> axis = NormalizeAxis(a, rank, op);
    if (!axis.ok()) return axis.status();
    if (seen[*axis]) return absl::InvalidArgumentError(absl::StrCat(op, ": axis ", a, " is repeated in axes"));
    seen[*axis] = true;
    out.push_back(*axis);
  }
  return out;
}

Types InferSqueeze(const InferenceContext& ctx) {
  if (absl::Status s = RejectLegacyAttr(ctx, "axes", "axes"); !s.ok()) return s;
  const TensorType& in = ctx.type(0);
  std::vector<Dim> dims;
  if (!ctx.has_input(1)) {
    // As in ONNX shape inference, a symbolic extent is assumed not to be 1 and is kept.
    for (const Dim& d : in.dims) {
      if (!(d.is_static() && d.value() == 1)) dims.push_back(d);
    }
    return std::vector<TensorType>{TensorType(in.dtype, dims)};
  }
  MaybeInts axes = KnownInts(ctx, 1, "axes");
  if (!axes.ok()) return axes.status();
  if (!axes->has_value()) {
    absl::StatusOr<int64_t> n = RequireStaticLength(ctx, 1, "axes");
    if (!n.ok()) return n.status();
    if (*n > in.rank()) {
      return absl::InvalidArgumentError(
          absl::StrCat("Squeeze: ", *n, " axes given for input ", in.ToString()));
    }
    return std::vector<TensorType>{TensorType(in.dtype, UnknownDims(in.rank() - *n))};
  }
  absl::StatusOr<std::vector<int>> norm = NormalizeAxes(**axes, in.rank(), "Squeeze");
  if (!norm.ok()) return norm.status();
  std::vector<bool> drop(in.rank(), false);
  for (int a : *norm) {
    if (in.dims[a].is_static() && in.dims[a].value() != 1) {
      return absl::InvalidArgumentError(absl::StrCat("Squeeze: cannot squeeze axis ", a, " of ", in.ToString(),
                                                     ": its extent is ", in.dims[a].value(), ", not 1"));
    }
    drop[a] = true;
  }
  for (int d = 0; d < in.rank(); ++d) {
    if (!drop[d]) dims.push_back(in.dims[d]);
  }
  return std::vector<TensorType>{TensorType(in.dtype, dims)};
}

Types InferUnsqueeze(const InferenceContext& ctx) {
  if (absl::Status s = RejectLegacyAttr(ctx, "axes", "axes"); !s.ok()) return s;
  const TensorType& in = ctx.type(0);
  MaybeInts axes = KnownInts(ctx, 1, "axes");
  if (!axes.ok()) return axes.status();
  if (!axes->has_value()) {
    absl::StatusOr<int64_t> n = RequireStaticLength(ctx, 1, "axes");
    if (!n.ok()) return n.status();
    return std::vector<TensorType>{TensorType(in.dtype, UnknownDims(in.rank() + *n))};
  }
  const int out_rank = in.rank() + static_cast<int>((*axes)->size());
  absl::StatusOr<std::vector<int>> norm = NormalizeAxes(**axes, out_rank, "Unsqueeze");
  if (!norm.ok()) return norm.status();
  std::vector<bool> inserted(out_rank, false);
  for (int a : *norm) inserted[a] = true;
  std::vector<Dim> dims;
  int next = 0;
  for (int d = 0; d < out_rank; ++d) dims.push_back(inserted[d] ? Dim(1) : in.dims[next++]);
  return std::vector<TensorType>{TensorType(in.dtype, dims)};
}

Types InferExpand(const InferenceContext& ctx) {
  const TensorType& in = ctx.type(0);
  MaybeInts shape = KnownInts(ctx, 1, "shape");
  if (!shape.ok()) return shape.status();
  std::vector<Dim> target;
  if (shape->has_value()) {
    for (int64_t s : **shape) {
      if (s < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("Expand: shape ", ShapeToString(**shape), " has negative extent ", s));
      }
      target.push_back(s);
    }
  } else {
    absl::StatusOr<int64_t> n = RequireStaticLength(ctx, 1, "shape");
    if (!n.ok()) return n.status();
    // Unknown target extents still broadcast correctly: a static input extent > 1 survives.
    target = UnknownDims(*n);
  }
  absl::StatusOr<std::vector<Dim>> dims = BroadcastDims(in.dims, target, "Expand");
  if (!dims.ok()) return dims.status();
  int64_t elements = 1;
  for (const Dim& d : *dims) {
    if (d.is_static()) elements = CappedProduct(elements, d.value());
  }
  if (elements > kMaxElements) {
    return absl::ResourceExhaustedError(
        absl::StrCat("Expand: result ", DimsToString(*dims), " has too many elements"));
  }
  return std::vector<TensorType>{TensorType(in.dtype, *dims)};
}

Types InferShape(const InferenceContext& ctx) {
  const int64_t rank = ctx.type(0).rank();
  int64_t start = ctx.node.GetInt("start", 0);
  int64_t end = ctx.node.GetInt("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  return std::vector<TensorType>{TensorType(DType::kI64, {std::max<int64_t>(end - start, 0)})};
}

Types InferConstantOfShape(const InferenceContext& ctx) {
  DType dtype = DType::kF32;
  if (const Attribute* value = ctx.node.FindAttr("value"); value != nullptr) {
    if (value->kind != Attribute::Kind::kTensor || value->t == nullptr || value->t->num_elements() != 1) {
      return absl::InvalidArgumentError("ConstantOfShape: attribute 'value' must be a one-element tensor");
    }
    dtype = value->t->dtype();
  }
  MaybeInts shape = KnownInts(ctx, 0, "input");
  if (!shape.ok()) return shape.status();
  if (!shape->has_value()) {
    absl::StatusOr<int64_t> n = RequireStaticLength(ctx, 0, "input");
    if (!n.ok()) return n.status();
    return std::vector<TensorType>{TensorType(dtype, UnknownDims(*n))};
  }
  int64_t elements = 1;
  for (int64_t s : **shape) {
    if (s < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("ConstantOfShape: shape ", ShapeToString(**shape), " has negative extent ", s));
    }
    elements = CappedProduct(elements, s);
  }
  if (elements > kMaxElements) {
    return absl::ResourceExhaustedError(
        absl::StrCat("ConstantOfShape: shape ", ShapeToString(**shape), " has too many elements"));
  }
  return std::vector<TensorType>{TensorType::Static(dtype, **shape)};
}

// HannWindow, HammingWindow, BlackmanWindow: size (an integer scalar) -> a 1-D window of that length in
// output_datatype (default f32); the length is known when size is a constant.
Types InferWindow(const InferenceContext& ctx) {
  const TensorType& size = ctx.type(0);
  if ((size.dtype != DType::kI32 && size.dtype != DType::kI64) || (size.rank() != 0 && size.NumElements() != 1)) {
    return absl::InvalidArgumentError(absl::StrCat(ctx.node.op_type(), ": size has type ", size.ToString(),
                                                   "; expected an i32 or i64 scalar"));
  }
  absl::StatusOr<DType> dtype = DTypeFromOnnxDataType(ctx.node.GetInt("output_datatype", 1));
  if (!dtype.ok()) return dtype.status();
  if (*dtype == DType::kI4 || *dtype == DType::kBool) {
    return absl::UnimplementedError(absl::StrCat(ctx.node.op_type(), ": output_datatype ", DTypeName(*dtype)));
  }
  Dim n = UnknownDim();
  if (const Tensor* v = ctx.value(0); v != nullptr) {
    const int64_t len = v->GetAsInt64(0);
    if (len < 0 || len > kMaxElements) {
      return absl::InvalidArgumentError(absl::StrCat(ctx.node.op_type(), ": size is ", len, "; expected 0 to 2^40"));
    }
    n = Dim(len);
  }
  return std::vector<TensorType>{TensorType(*dtype, {n})};
}

Types InferRange(const InferenceContext& ctx) {
  const DType dtype = ctx.type(0).dtype;
  const char* names[] = {"start", "limit", "delta"};
  for (int i = 0; i < 3; ++i) {
    const TensorType& t = ctx.type(i);
    if (t.dtype != dtype) {
      return absl::InvalidArgumentError(absl::StrCat("Range: start is ", ctx.type(0).ToString(), " but ", names[i],
                                                     " is ", t.ToString(), "; all three need the same dtype"));
    }
    if (t.rank() != 0 && t.NumElements() != 1) {
      return absl::InvalidArgumentError(absl::StrCat("Range: ", names[i], " must be a scalar, got ", t.ToString()));
    }
  }
  if (dtype != DType::kF32 && dtype != DType::kI32 && dtype != DType::kI64) {
    return absl::UnimplementedError(
        absl::StrCat("Range: dtype ", DTypeName(dtype), " is not supported (expected f32, i32 or i64)"));
  }
  if (ctx.value(0) == nullptr || ctx.value(1) == nullptr || ctx.value(2) == nullptr) {
    return std::vector<TensorType>{TensorType(dtype, {UnknownDim()})};
  }
  double count;
  if (dtype == DType::kF32) {
    const double start = ctx.value(0)->GetAsDouble(0);
    const double limit = ctx.value(1)->GetAsDouble(0);
    const double delta = ctx.value(2)->GetAsDouble(0);
    if (delta == 0) return absl::InvalidArgumentError("Range: delta is 0");
    count = std::ceil((limit - start) / delta);
    if (std::isnan(count)) return absl::InvalidArgumentError("Range: start, limit or delta is not finite");
  } else {
    // 128-bit so that limit - start cannot overflow.
    const __int128 start = ctx.value(0)->GetAsInt64(0);
    const __int128 limit = ctx.value(1)->GetAsInt64(0);
    const __int128 delta = ctx.value(2)->GetAsInt64(0);
    if (delta == 0) return absl::InvalidArgumentError("Range: delta is 0");
    const __int128 diff = limit - start;
    // Ceiling division for either sign.
    __int128 q = diff / delta;
    if (diff % delta != 0 && ((diff < 0) == (delta < 0))) ++q;
    count = static_cast<double>(q);
  }
  if (count > static_cast<double>(kMaxElements)) {
    return absl::ResourceExhaustedError(absl::StrCat("Range: would produce ", count, " elements"));
  }
  return std::vector<TensorType>{TensorType(dtype, {static_cast<int64_t>(std::max(count, 0.0))})};
}

// OneHot: indices, depth (a scalar), values [off, on]: the indices' shape with depth inserted at `axis`
// (default -1, last), of the values' type. The depth's extent is known when depth is a constant.
Types InferOneHot(const InferenceContext& ctx) {
  const TensorType& indices = ctx.type(0);
  if (ctx.type(1).NumElements() != 1 && ctx.type(1).rank() != 0) {
    return absl::InvalidArgumentError(absl::StrCat("OneHot: depth has type ", ctx.type(1).ToString(), "; expected a scalar"));
  }
  if (ctx.type(2).rank() != 1 || (ctx.type(2).dims[0].is_static() && ctx.type(2).dims[0].value() != 2)) {
    return absl::InvalidArgumentError(
        absl::StrCat("OneHot: values has type ", ctx.type(2).ToString(), "; expected [off_value, on_value]"));
  }
  const int64_t rank = indices.rank() + 1;
  int64_t axis = ctx.node.GetInt("axis", -1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) {
    return absl::InvalidArgumentError(absl::StrCat("OneHot: axis = ", ctx.node.GetInt("axis", -1),
                                                   " is outside the output's rank ", rank));
  }
  Dim depth = UnknownDim();
  if (const Tensor* d = ctx.value(1); d != nullptr && d->num_elements() == 1) {
    const double v = d->GetAsDouble(0);
    if (!(v >= 1) || v > 1e9) {
      return absl::InvalidArgumentError(absl::StrCat("OneHot: depth is ", v, "; expected at least 1"));
    }
    depth = Dim(static_cast<int64_t>(v));
  }
  std::vector<Dim> dims = indices.dims;
  dims.insert(dims.begin() + axis, depth);
  int64_t elements = 1;
  for (const Dim& d : dims) {
    if (d.is_static()) elements = CappedProduct(elements, d.value());
  }
  if (elements > kMaxElements) {
    return absl::ResourceExhaustedError(absl::StrCat("OneHot: result ", DimsToString(dims), " has too many elements"));
  }
  return std::vector<TensorType>{TensorType(ctx.type(2).dtype, dims)};
}

// DepthToSpace and SpaceToDepth on [N, C, H, W]: blocksize b moves b x b blocks of channels into space
// (C / b^2, H * b, W * b) or back (C * b^2, H / b, W / b). Symbolic extents stay unknown.
Types InferSpaceDepth(const InferenceContext& ctx) {
  const TensorType& x = ctx.type(0);
  const bool to_space = ctx.node.op_type() == "DepthToSpace";
  const int64_t b = ctx.node.GetInt("blocksize", 0);
  if (x.rank() != 4) {
    return absl::InvalidArgumentError(absl::StrCat(ctx.node.op_type(), ": input has type ", x.ToString(),
                                                   "; expected [N, C, H, W]"));
  }
  if (b < 1 || b > (int64_t{1} << 20)) {
    return absl::InvalidArgumentError(absl::StrCat(ctx.node.op_type(), ": blocksize = ", b, "; expected 1 to 2^20"));
  }
  if (to_space) {
    const std::string mode = ctx.node.GetString("mode", "DCR");
    if (mode != "DCR" && mode != "CRD") {
      return absl::InvalidArgumentError(absl::StrCat("DepthToSpace: mode '", mode, "'; expected DCR or CRD"));
    }
  }
  std::vector<Dim> dims = x.dims;
  // The divided extent must divide; the multiplied ones grow.
  auto divide = [&](int axis, int64_t by) -> absl::Status {
    const Dim& d = x.dims[axis];
    if (!d.is_static()) {
      dims[axis] = UnknownDim();
      return absl::OkStatus();
    }
    if (d.value() % by != 0) {
      return absl::InvalidArgumentError(absl::StrCat(ctx.node.op_type(), ": dimension ", axis, " of ", x.ToString(),
                                                     " is not a multiple of ", by, " (blocksize ", b, ")"));
    }
    dims[axis] = Dim(d.value() / by);
    return absl::OkStatus();
  };
  auto multiply = [&](int axis, int64_t by) {
    dims[axis] = x.dims[axis].is_static() ? Dim(CappedProduct(x.dims[axis].value(), by)) : UnknownDim();
  };
  if (to_space) {
    if (absl::Status s = divide(1, b * b); !s.ok()) return s;
    multiply(2, b);
    multiply(3, b);
  } else {
    multiply(1, b * b);
    if (absl::Status s = divide(2, b); !s.ok()) return s;
    if (absl::Status s = divide(3, b); !s.ok()) return s;
  }
  int64_t elements = 1;
  for (const Dim& d : dims) {
    if (d.is_static()) elements = CappedProduct(elements, d.value());
  }
  if (elements > kMaxElements) {
    return absl::ResourceExhaustedError(absl::StrCat(ctx.node.op_type(), ": result ", DimsToString(dims),
                                                     " has too many elements"));
  }
  return std::vector<TensorType>{TensorType(x.dtype, dims)};
}

void Reg(OpRegistry& r, const char* op, int min_in, int max_in, int min_out, int max_out, InferFn fn,
         const char* summary) {
  r.Register(OpSchema{op, "", min_in, max_in, min_out, max_out, RequireInputs(min_in, std::move(fn)), summary});
}

}  // namespace

void RegisterTensorOps(OpRegistry& r) {
  constexpr int kVariadic = std::numeric_limits<int>::max();
  Reg(r, "Flatten", 1, 1, 1, 1, InferFlatten, "to 2-D [prod(dims[:axis]), prod(dims[axis:])]");
  Reg(r, "Reshape", 2, 2, 1, 1, InferReshape, "new shape (0 copies a dimension, -1 is inferred)");
  Reg(r, "DepthToSpace", 1, 1, 1, 1, InferSpaceDepth, "channel blocks into b x b spatial blocks (DCR or CRD order)");
  for (const char* w : {"HannWindow", "HammingWindow", "BlackmanWindow"}) {
    Reg(r, w, 1, 1, 1, 1, InferWindow, "a 1-D window function of length size (periodic or symmetric)");
  }
  Reg(r, "ReverseSequence", 2, 2, 1, 1, InferReverseSequence,
      "reverses the first sequence_lens[b] steps along time_axis of every batch entry b");
  Reg(r, "Compress", 2, 2, 1, 1, InferCompress, "the slices along axis (or flattened elements) where condition is true");
  Reg(r, "OneHot", 3, 3, 1, 1, InferOneHot, "on_value where the index along a new axis of size depth matches, else off_value");
  Reg(r, "SpaceToDepth", 1, 1, 1, 1, InferSpaceDepth, "b x b spatial blocks into channels");
  Reg(r, "Transpose", 1, 1, 1, 1, InferTranspose, "permute dimensions (default: reverse)");
  Reg(r, "Concat", 1, kVariadic, 1, 1, InferConcat, "join along an axis");
  Reg(r, "Split", 1, 2, 1, kVariadic, InferSplit, "cut along an axis into given or equal parts");
  Reg(r, "Slice", 3, 5, 1, 1, InferSlice, "strided sub-range per axis");
  Reg(r, "Gather", 2, 2, 1, 1, InferGather, "pick entries along an axis by index");
  Reg(r, "GatherElements", 2, 2, 1, 1, InferGatherElements, "y[i][j] = data[indices[i][j]][j] along an axis");
  Reg(r, "ScatterND", 3, 3, 1, 1, InferScatterND,
      "data with the slices that indices address replaced by (or combined with) updates");
  Reg(r, "ScatterElements", 3, 3, 1, 1, InferScatterElements,
      "out[..][indices[i][j]][..] = updates[i][j] along an axis (none, add, mul, max, min)");
  Reg(r, "GatherND", 2, 2, 1, 1, InferGatherND,
      "slices of data addressed by index tuples (indices' last axis), after batch_dims shared axes");
  Reg(r, "Tile", 2, 2, 1, 1, InferTile, "repeat the input repeats[d] times along each dimension d");
  Reg(r, "Unique", 1, 1, 1, 4, InferUnique,
      "distinct elements or slices (sorted or by first occurrence), with first indices, inverse indices and counts");
  Reg(r, "NonZero", 1, 1, 1, 1, InferNonZero,
      "int64 coordinates [rank, count] of the non-zero elements, row-major (a data-dependent shape)");
  Reg(r, "Trilu", 1, 2, 1, 1, InferTrilu, "upper (default) or lower triangle of each matrix, from diagonal k");
  Reg(r, "Size", 1, 1, 1, 1, InferSize, "the input's element count as an int64 scalar");
  Reg(r, "Squeeze", 1, 2, 1, 1, InferSqueeze, "drop size-1 dimensions");
  Reg(r, "Unsqueeze", 2, 2, 1, 1, InferUnsqueeze, "insert size-1 dimensions");
  Reg(r, "Expand", 2, 2, 1, 1, InferExpand, "broadcast to a shape");
  Reg(r, "Shape", 1, 1, 1, 1, InferShape, "the input's shape as int64 (optionally a start:end range)");
  Reg(r, "ConstantOfShape", 1, 1, 1, 1, InferConstantOfShape, "a tensor of the given shape filled with a value");
  Reg(r, "Range", 3, 3, 1, 1, InferRange, "start, start + delta, ... up to limit (exclusive)");
}

}  // namespace tessel
