// Broadcasting, axis normalization and small integer input decoding shared by inference and kernels.
#include "graph/ops/shape_util.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tessel {

InferFn RequireInputs(int count, InferFn fn) {
  return [count, fn = std::move(fn)](const InferenceContext& ctx) -> absl::StatusOr<std::vector<TensorType>> {
    for (int i = 0; i < count; ++i) {
      if (!ctx.has_input(i)) {
        return absl::InvalidArgumentError(absl::StrCat(ctx.node.op_type(), ": required input ", i, " is missing"));
      }
    }
    return fn(ctx);
  };
}

std::string DimsToString(absl::Span<const Dim> dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ",", [](std::string* out, const Dim& d) {
                        absl::StrAppend(out, d.ToString());
                      }),
                      "]");
}

absl::StatusOr<std::vector<Dim>> BroadcastDims(absl::Span<const Dim> a, absl::Span<const Dim> b,
                                               absl::string_view op) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<Dim> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Right-aligned: missing leading dimensions act as 1.
    const Dim x = i + a.size() >= rank ? a[i + a.size() - rank] : Dim(1);
    const Dim y = i + b.size() >= rank ? b[i + b.size() - rank] : Dim(1);
    Dim& o = out[i];
    if (x.is_static() && y.is_static()) {
      if (x.value() != y.value() && x.value() != 1 && y.value() != 1) {
        return absl::InvalidArgumentError(absl::StrCat(op, ": shapes ", DimsToString(a), " and ", DimsToString(b),
                                                       " do not broadcast (dimension ", i, ": ", x.value(), " vs ",
                                                       y.value(), ")"));
      }
      o = x.value() == 1 ? y : x;
    } else if (x.is_static()) {
      o = x.value() == 1 ? y : x;
    } else if (y.is_static()) {
      o = y.value() == 1 ? x : y;
    } else {
      o = x == y ? x : UnknownDim();
    }
  }
  return out;
}

absl::StatusOr<std::vector<int64_t>> BroadcastShapes(absl::Span<const int64_t> a, absl::Span<const int64_t> b,
                                                     absl::string_view op) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t x = i + a.size() >= rank ? a[i + a.size() - rank] : 1;
    const int64_t y = i + b.size() >= rank ? b[i + b.size() - rank] : 1;
    if (x != y && x != 1 && y != 1) {
      return absl::InvalidArgumentError(absl::StrCat(op, ": shapes ", ShapeToString(a), " and ", ShapeToString(b),
                                                     " do not broadcast (dimension ", i, ": ", x, " vs ", y, ")"));
    }
    out[i] = x == 1 ? y : x;
  }
  return out;
}

absl::StatusOr<int> NormalizeAxis(int64_t axis, int rank, absl::string_view op) {
  if (axis < -rank || axis >= rank) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": axis ", axis, " is out of range for rank ", rank, " (expected ", -rank, " to ", rank - 1, ")"));
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

absl::StatusOr<std::vector<int64_t>> ReadIntValues(const Tensor& t, absl::string_view what) {
  if (t.dtype() != DType::kI64 && t.dtype() != DType::kI32) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be an int64 or int32 tensor, got ", DTypeName(t.dtype())));
  }
  if (t.rank() > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be a scalar or 1-D tensor, got shape ", ShapeToString(t.shape())));
  }
  return t.ToInt64Vector();
}

int64_t StaticLength1D(const TensorType& t) {
  if (t.rank() == 0) return 1;
  if (t.rank() == 1 && t.dims[0].is_static()) return t.dims[0].value();
  return -1;
}

absl::StatusOr<SliceSpec> ResolveSliceInputs(int rank, absl::Span<const int64_t> starts,
                                             absl::Span<const int64_t> ends, const std::vector<int64_t>* axes,
                                             const std::vector<int64_t>* steps) {
  const size_t n = starts.size();
  if (ends.size() != n || (axes != nullptr && axes->size() != n) || (steps != nullptr && steps->size() != n)) {
    return absl::InvalidArgumentError(absl::StrCat("Slice: starts, ends, axes and steps must have the same length; got ",
                                                   n, ", ", ends.size(), ", ", axes ? axes->size() : n, ", ",
                                                   steps ? steps->size() : n));
  }
  if (axes == nullptr && n > static_cast<size_t>(rank)) {
    return absl::InvalidArgumentError(
        absl::StrCat("Slice: ", n, " starts given for a rank-", rank, " input and no axes"));
  }
  SliceSpec spec;
  spec.starts.assign(rank, 0);
  spec.ends.assign(rank, std::numeric_limits<int64_t>::max());
  spec.steps.assign(rank, 1);
  spec.sliced.assign(rank, false);
  for (size_t i = 0; i < n; ++i) {
    int axis = static_cast<int>(i);
    if (axes != nullptr) {
      absl::StatusOr<int> a = NormalizeAxis((*axes)[i], rank, "Slice");
      if (!a.ok()) return a.status();
      axis = *a;
    }
    if (spec.sliced[axis]) {
      return absl::InvalidArgumentError(absl::StrCat("Slice: axis ", axis, " appears more than once in axes"));
    }
    const int64_t step = steps ? (*steps)[i] : 1;
    if (step == 0) return absl::InvalidArgumentError(absl::StrCat("Slice: step for axis ", axis, " is 0"));
    spec.sliced[axis] = true;
    spec.starts[axis] = starts[i];
    spec.ends[axis] = ends[i];
    spec.steps[axis] = step;
  }
  return spec;
}

SliceRange ClampSlice(int64_t dim, int64_t start, int64_t end, int64_t step) {
  if (dim == 0) return {0, 0};
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    // Written as (n - 1) / step + 1 so that a huge step cannot overflow.
    return {start, end > start ? (end - start - 1) / step + 1 : 0};
  }
  start = std::clamp<int64_t>(start, 0, dim - 1);
  end = std::clamp<int64_t>(end, -1, dim - 1);
  const int64_t neg_step = step == std::numeric_limits<int64_t>::min() ? std::numeric_limits<int64_t>::max() : -step;
  return {start, start > end ? (start - end - 1) / neg_step + 1 : 0};
}

BroadcastIndexer::BroadcastIndexer(absl::Span<const int64_t> out_shape, std::vector<std::vector<int64_t>> in_shapes)
    : out_shape_(out_shape.begin(), out_shape.end()), index_(out_shape.size(), 0) {
  const size_t rank = out_shape.size();
  for (const std::vector<int64_t>& s : in_shapes) {
    std::vector<int64_t> strides(rank, 0);
    const size_t lead = rank - s.size();
    const std::vector<int64_t> row_major = RowMajorStrides(s);
    for (size_t d = 0; d < s.size(); ++d) strides[lead + d] = s[d] == 1 ? 0 : row_major[d];
    strides_.push_back(std::move(strides));
  }
}

void BroadcastIndexer::Next() {
  for (int d = static_cast<int>(out_shape_.size()) - 1; d >= 0; --d) {
    ++index_[d];
    for (size_t k = 0; k < strides_.size(); ++k) offsets_[k] += strides_[k][d];
    if (index_[d] < out_shape_[d]) return;
    for (size_t k = 0; k < strides_.size(); ++k) offsets_[k] -= strides_[k][d] * out_shape_[d];
    index_[d] = 0;
  }
}

}  // namespace tessel
