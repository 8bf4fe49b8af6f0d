// Reference kernels for tensor-manipulation operators. Output shapes come from inference; these
// kernels only move bytes, so they work for every dtype of whole bytes (packed i4 is rejected where
// elements are addressed one by one).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/ops/shape_util.h"
#include "kernels/reference/reference.h"

namespace tessel {
namespace {

using Inputs = absl::Span<const Tensor* const>;
using Outputs = absl::Span<Tensor>;

// Element size in bytes; an error for i4, whose elements do not start on byte boundaries.
absl::StatusOr<size_t> ElementBytes(const Node& node, DType t) {
  if (DTypeBits(t) % 8 != 0) {
    return absl::UnimplementedError(
        absl::StrCat(node.op_type(), ": the reference kernel does not support packed ", DTypeName(t), " tensors"));
  }
  return static_cast<size_t>(DTypeBits(t) / 8);
}

// Copies the strided view of `src` starting at element `base` (one element stride per output
// dimension) into the contiguous `dst` of shape `shape`.
void StridedCopy(const char* src, int64_t base, const std::vector<int64_t>& strides,
                 const std::vector<int64_t>& shape, size_t elem, char* dst) {
  const int64_t n = NumElements(shape);
  const int rank = static_cast<int>(shape.size());
  if (n == 0) return;
  if (rank == 0) {
    std::memcpy(dst, src + base * elem, elem);
    return;
  }
  // Row by row along the last axis: a contiguous row is one copy, a broadcast one (stride 0) one
  // element repeated; otherwise element by element.
  const int64_t row = shape[rank - 1], step = strides[rank - 1];
  std::vector<int64_t> index(rank - 1, 0);
  int64_t offset = base;
  for (int64_t r = 0; r < n / row; ++r, dst += row * elem) {
    const char* from = src + offset * elem;
    if (step == 1) {
      std::memcpy(dst, from, row * elem);
    } else if (step == 0 && (elem == 4 || elem == 8)) {
      uint64_t v = 0;
      std::memcpy(&v, from, elem);
      if (elem == 4) {
        std::fill_n(reinterpret_cast<uint32_t*>(dst), row, static_cast<uint32_t>(v));
      } else {
        std::fill_n(reinterpret_cast<uint64_t*>(dst), row, v);
      }
    } else if (step == 0) {
      for (int64_t i = 0; i < row; ++i) std::memcpy(dst + i * elem, from, elem);
    } else {
      for (int64_t i = 0; i < row; ++i) std::memcpy(dst + i * elem, from + i * step * elem, elem);
    }
    for (int d = rank - 2; d >= 0; --d) {
      ++index[d];
      offset += strides[d];
      if (index[d] < shape[d]) break;
      offset -= strides[d] * shape[d];
      index[d] = 0;
    }
  }
}

// Reshape, Flatten, Squeeze and Unsqueeze keep the row-major element order.
absl::Status CopyData(const Node& node, Inputs in, Outputs out) {
  if (in[0]->byte_size() > 0) std::memcpy(out[0].raw_data(), in[0]->raw_data(), in[0]->byte_size());
  return absl::OkStatus();
}

absl::Status Transpose(const Node& node, Inputs in, Outputs out) {
  absl::StatusOr<size_t> elem = ElementBytes(node, in[0]->dtype());
  if (!elem.ok()) return elem.status();
  const int rank = in[0]->rank();
  std::vector<int64_t> perm = node.GetInts("perm");
  if (!node.HasAttr("perm")) {
    for (int i = rank - 1; i >= 0; --i) perm.push_back(i);
  }
  const std::vector<int64_t> in_strides = RowMajorStrides(in[0]->shape());
  std::vector<int64_t> strides;
  for (int64_t p : perm) strides.push_back(in_strides[p]);
  StridedCopy(static_cast<const char*>(in[0]->raw_data()), 0, strides, out[0].shape(), *elem,
              static_cast<char*>(out[0].raw_data()));
  return absl::OkStatus();
}

absl::Status Slice(const Node& node, Inputs in, Outputs out) {
  absl::StatusOr<size_t> elem = ElementBytes(node, in[0]->dtype());
  if (!elem.ok()) return elem.status();
  std::vector<int64_t> v[5];
  for (int i = 1; i < 5; ++i) {
    if (i >= static_cast<int>(in.size()) || in[i] == nullptr) continue;
    absl::StatusOr<std::vector<int64_t>> ints = ReadIntValues(*in[i], "Slice input");
    if (!ints.ok()) return ints.status();
    v[i] = std::move(*ints);
  }
  const bool has_axes = in.size() > 3 && in[3] != nullptr;
  const bool has_steps = in.size() > 4 && in[4] != nullptr;
  absl::StatusOr<SliceSpec> spec =
      ResolveSliceInputs(in[0]->rank(), v[1], v[2], has_axes ? &v[3] : nullptr, has_steps ? &v[4] : nullptr);
  if (!spec.ok()) return spec.status();
  const std::vector<int64_t> in_strides = RowMajorStrides(in[0]->shape());
  std::vector<int64_t> strides(in[0]->rank());
  int64_t base = 0;
  for (int d = 0; d < in[0]->rank(); ++d) {
    const SliceRange r = ClampSlice(in[0]->dim(d), spec->starts[d], spec->ends[d], spec->steps[d]);
    base += r.start * in_strides[d];
    strides[d] = spec->steps[d] * in_strides[d];
  }
  StridedCopy(static_cast<const char*>(in[0]->raw_data()), base, strides, out[0].shape(), *elem,
              static_cast<char*>(out[0].raw_data()));
  return absl::OkStatus();
}

absl::Status Expand(const Node& node, Inputs in, Outputs out) {
  absl::StatusOr<size_t> elem = ElementBytes(node, in[0]->dtype());
  if (!elem.ok()) return elem.status();
  const std::vector<int64_t>& out_shape = out[0].shape();
  const std::vector<int64_t> in_strides = RowMajorStrides(in[0]->shape());
  std::vector<int64_t> strides(out_shape.size(), 0);
  const size_t lead = out_shape.size() - in[0]->rank();
  for (int d = 0; d < in[0]->rank(); ++d) strides[lead + d] = in[0]->dim(d) == 1 ? 0 : in_strides[d];
  StridedCopy(static_cast<const char*>(in[0]->raw_data()), 0, strides, out_shape, *elem,
              static_cast<char*>(out[0].raw_data()));
  return absl::OkStatus();
}

// The node's axis attribute mapped to [0, rank) (inference has checked its range).
int AxisAttr(const Node& node, int rank) {
  const int64_t axis = node.GetInt("axis", 0);
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

// Row-major split of a shape around `axis`: elements before it and after it.
struct AxisSplit {
  int64_t outer;
  int64_t inner;
};
AxisSplit SplitAt(const std::vector<int64_t>& shape, int axis) {
  return {NumElements(absl::MakeConstSpan(shape).subspan(0, axis)),
          NumElements(absl::MakeConstSpan(shape).subspan(axis + 1))};
}

absl::Status Concat(const Node& node, Inputs in, Outputs out) {
  absl::StatusOr<size_t> elem = ElementBytes(node, out[0].dtype());
  if (!elem.ok()) return elem.status();
  const int axis = AxisAttr(node, out[0].rank());
  const AxisSplit s = SplitAt(out[0].shape(), axis);
  char* dst = static_cast<char*>(out[0].raw_data());
  for (int64_t o = 0; o < s.outer; ++o) {
    for (const Tensor* t : in) {
      const size_t chunk = t->dim(axis) * s.inner * *elem;
      std::memcpy(dst, static_cast<const char*>(t->raw_data()) + o * chunk, chunk);
      dst += chunk;
    }
  }
  return absl::OkStatus();
}

absl::Status Split(const Node& node, Inputs in, Outputs out) {
  absl::StatusOr<size_t> elem = ElementBytes(node, in[0]->dtype());
  if (!elem.ok()) return elem.status();
  const int axis = AxisAttr(node, in[0]->rank());
  const AxisSplit s = SplitAt(in[0]->shape(), axis);
  const char* src = static_cast<const char*>(in[0]->raw_data());
  for (int64_t o = 0; o < s.outer; ++o) {
    for (Tensor& t : out) {
      const size_t chunk = t.dim(axis) * s.inner * *elem;
      std::memcpy(static_cast<char*>(t.raw_data()) + o * chunk, src, chunk);
      src += chunk;
    }
  }
  return absl::OkStatus();
}

absl::Status Gather(const Node& node, Inputs in, Outputs out) {
  absl::StatusOr<size_t> elem = ElementBytes(node, in[0]->dtype());
  if (!elem.ok()) return elem.status();
  const Tensor& data = *in[0];
  const Tensor& indices = *in[1];
  const int axis = AxisAttr(node, data.rank());
  const int64_t extent = data.dim(axis);
  const AxisSplit s = SplitAt(data.shape(), axis);
  const int64_t count = indices.num_elements();
  std::vector<int64_t> rows(count);
  for (int64_t j = 0; j < count; ++j) {
    const int64_t idx = indices.GetAsInt64(j);
    if (idx < -extent || idx >= extent) {
      return absl::OutOfRangeError(absl::StrCat("Gather: index ", idx, " (element ", j, " of indices ",
                                                ShapeToString(indices.shape()), ") is out of range for axis ", axis,
                                                " of size ", extent, " (expected ", -extent, " to ", extent - 1,
                                                ")"));
    }
    rows[j] = idx < 0 ? idx + extent : idx;
  }
  const size_t row_bytes = s.inner * *elem;
  const char* src = static_cast<const char*>(data.raw_data());
  char* dst = static_cast<char*>(out[0].raw_data());
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t j = 0; j < count; ++j) {
      std::memcpy(dst, src + (o * extent + rows[j]) * row_bytes, row_bytes);
      dst += row_bytes;
    }
  }
  return absl::OkStatus();
}

// GatherElements and ScatterElements: walks indices in row-major order and calls visit(o, off) with each
// element's number o and the data offset it addresses (its own coordinate, with indices[o] on `axis`).
template <typename Visit>
absl::Status ForEachAxisElement(const Node& node, const Tensor& data, const Tensor& indices, Visit visit) {
  const int rank = data.rank();
  const int axis = AxisAttr(node, rank);
  const std::vector<int64_t> strides = RowMajorStrides(data.shape());
  if (indices.num_elements() == 0) return absl::OkStatus();
  for (int d = 0; d < rank; ++d) {
    if (d != axis && indices.dim(d) > data.dim(d)) {
      return absl::OutOfRangeError(absl::StrCat(node.op_type(), ": indices ", ShapeToString(indices.shape()),
                                                " reach past data ", ShapeToString(data.shape()), " on axis ", d));
    }
  }
  std::vector<int64_t> index(rank, 0);  // the coordinate in indices
  int64_t base = 0;                     // its offset in data, the axis left out
  const int64_t* idx64 = indices.dtype() == DType::kI64 ? indices.data<int64_t>() : nullptr;
  const int64_t extent = data.dim(axis);
  for (int64_t o = 0, n = indices.num_elements(); o < n; ++o) {
    int64_t idx = idx64 != nullptr ? idx64[o] : indices.GetAsInt64(o);
    if (idx < -extent || idx >= extent) {
      return absl::OutOfRangeError(absl::StrCat(node.op_type(), ": index ", idx, " (element ", o,
                                                ") is out of range for axis ", axis, " of size ", extent));
    }
    if (idx < 0) idx += extent;
    visit(o, base + idx * strides[axis]);
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t step = d == axis ? 0 : strides[d];
      base += step;
      if (++index[d] < indices.dim(d)) break;
      base -= step * indices.dim(d);
      index[d] = 0;
    }
  }
  return absl::OkStatus();
}

absl::Status GatherElements(const Node& node, Inputs in, Outputs out) {
  absl::StatusOr<size_t> elem = ElementBytes(node, in[0]->dtype());
  if (!elem.ok()) return elem.status();
  const char* src = static_cast<const char*>(in[0]->raw_data());
  char* dst = static_cast<char*>(out[0].raw_data());
  return ForEachAxisElement(node, *in[0], *in[1], [&](int64_t o, int64_t off) {
    std::memcpy(dst + o * *elem, src + off * *elem, *elem);
  });
}

enum class ScatterReduction { kNone, kAdd, kMul, kMax, kMin };

ScatterReduction ReductionAttr(const Node& node) {
  const std::string r = node.GetString("reduction", "none");
  if (r == "add") return ScatterReduction::kAdd;
  if (r == "mul") return ScatterReduction::kMul;
  if (r == "max") return ScatterReduction::kMax;
  if (r == "min") return ScatterReduction::kMin;
  return ScatterReduction::kNone;
}

template <typename T>
void CombineTyped(ScatterReduction r, const void* src, void* dst, int64_t n) {
  const T* a = static_cast<const T*>(src);
  T* y = static_cast<T*>(dst);
  for (int64_t i = 0; i < n; ++i) {
    switch (r) {
      case ScatterReduction::kAdd: y[i] = static_cast<T>(y[i] + a[i]); break;
      case ScatterReduction::kMul: y[i] = static_cast<T>(y[i] * a[i]); break;
      case ScatterReduction::kMax: y[i] = std::max(y[i], a[i]); break;
      case ScatterReduction::kMin: y[i] = std::min(y[i], a[i]); break;
      case ScatterReduction::kNone: y[i] = a[i]; break;
    }
  }
}

// dst[0..n) = dst combined with src under `r`; kNone copies bytes, so it serves every whole-byte dtype.
// Inference allows the arithmetic reductions on f32, i32 and i64 only.
void Combine(ScatterReduction r, DType t, const void* src, void* dst, int64_t n, size_t elem) {
  if (r == ScatterReduction::kNone) {
    std::memcpy(dst, src, n * elem);
  } else if (t == DType::kF32) {
    CombineTyped<float>(r, src, dst, n);
  } else if (t == DType::kI32) {
    // Integer add and mul wrap: computed unsigned to keep overflow defined.
    if (r == ScatterReduction::kAdd || r == ScatterReduction::kMul) {
      CombineTyped<uint32_t>(r, src, dst, n);
    } else {
      CombineTyped<int32_t>(r, src, dst, n);
    }
  } else if (r == ScatterReduction::kAdd || r == ScatterReduction::kMul) {
    CombineTyped<uint64_t>(r, src, dst, n);
  } else {
    CombineTyped<int64_t>(r, src, dst, n);
  }
}

absl::Status ScatterND(const Node& node, Inputs in, Outputs out) {
  absl::StatusOr<size_t> elem = ElementBytes(node, in[0]->dtype());
  if (!elem.ok()) return elem.status();
  const Tensor& data = *in[0];
  const Tensor& indices = *in[1];
  const Tensor& updates = *in[2];
  const int64_t k = indices.dim(indices.rank() - 1);
  const int64_t count = k == 0 ? 0 : indices.num_elements() / k;
  const std::vector<int64_t> strides = RowMajorStrides(data.shape());
  const int64_t slice = NumElements(absl::MakeConstSpan(data.shape()).subspan(k));
  if (updates.num_elements() != count * slice) {
    return absl::InvalidArgumentError(absl::StrCat("ScatterND: updates ", ShapeToString(updates.shape()),
                                                   " do not match indices ", ShapeToString(indices.shape()),
                                                   " and data ", ShapeToString(data.shape())));
  }
  const ScatterReduction r = ReductionAttr(node);
  char* dst = static_cast<char*>(out[0].raw_data());
  const char* src = static_cast<const char*>(updates.raw_data());
  if (data.byte_size() > 0) std::memcpy(dst, data.raw_data(), data.byte_size());
  for (int64_t u = 0; u < count; ++u) {
    int64_t off = 0;
    for (int64_t d = 0; d < k; ++d) {
      int64_t idx = indices.GetAsInt64(u * k + d);
      const int64_t extent = data.dim(d);
      if (idx < -extent || idx >= extent) {
        return absl::OutOfRangeError(absl::StrCat("ScatterND: index ", idx, " (update ", u, ") is out of range for "
                                                  "axis ", d, " of size ", extent));
      }
      off += (idx < 0 ? idx + extent : idx) * strides[d];
    }
    Combine(r, data.dtype(), src + u * slice * *elem, dst + off * *elem, slice, *elem);
  }
  return absl::OkStatus();
}

absl::Status ScatterElements(const Node& node, Inputs in, Outputs out) {
  absl::StatusOr<size_t> elem = ElementBytes(node, in[0]->dtype());
  if (!elem.ok()) return elem.status();
  const Tensor& data = *in[0];
  const Tensor& indices = *in[1];
  const Tensor& updates = *in[2];
  if (updates.shape() != indices.shape()) {
    return absl::InvalidArgumentError(absl::StrCat("ScatterElements: updates ", ShapeToString(updates.shape()),
                                                   " must have the shape of indices ",
                                                   ShapeToString(indices.shape())));
  }
  const ScatterReduction r = ReductionAttr(node);
  char* dst = static_cast<char*>(out[0].raw_data());
  const char* src = static_cast<const char*>(updates.raw_data());
  if (data.byte_size() > 0) std::memcpy(dst, data.raw_data(), data.byte_size());
  if (r == ScatterReduction::kNone && *elem == 4) {  // plain stores of the common widths
    return ForEachAxisElement(node, data, indices, [&](int64_t o, int64_t off) {
      reinterpret_cast<uint32_t*>(dst)[off] = reinterpret_cast<const uint32_t*>(src)[o];
    });
  }
  return ForEachAxisElement(node, data, indices, [&](int64_t o, int64_t off) {
    Combine(r, data.dtype(), src + o * *elem, dst + off * *elem, 1, *elem);
  });
}

// Tile: each output coordinate reads the input at that coordinate modulo the input's extent; whole
// input rows are copied at a time.
absl::Status Tile(const Node& node, Inputs in, Outputs out) {
  absl::StatusOr<size_t> elem = ElementBytes(node, in[0]->dtype());
  if (!elem.ok()) return elem.status();
  const Tensor& x = *in[0];
  Tensor& y = out[0];
  if (y.num_elements() == 0) return absl::OkStatus();
  const int rank = x.rank();
  if (rank == 0) {
    std::memcpy(y.raw_data(), x.raw_data(), *elem);
    return absl::OkStatus();
  }
  const std::vector<int64_t> strides = RowMajorStrides(x.shape());
  const int64_t row = x.dim(rank - 1);
  const size_t row_bytes = row * *elem;
  const int64_t rows = y.num_elements() / y.dim(rank - 1);  // output rows, each reps copies of an input row
  std::vector<int64_t> index(rank - 1, 0);  // the output coordinate of the current row
  const char* src = static_cast<const char*>(x.raw_data());
  char* dst = static_cast<char*>(y.raw_data());
  for (int64_t r = 0; r < rows; ++r) {
    int64_t off = 0;
    for (int d = 0; d < rank - 1; ++d) off += (index[d] % x.dim(d)) * strides[d];
    for (int64_t t = 0, reps = y.dim(rank - 1) / row; t < reps; ++t, dst += row_bytes) {
      std::memcpy(dst, src + off * *elem, row_bytes);
    }
    for (int d = rank - 2; d >= 0; --d) {
      if (++index[d] < y.dim(d)) break;
      index[d] = 0;
    }
  }
  return absl::OkStatus();
}

// GatherND: for each batch (the first batch_dims axes, shared by data and indices) and each index tuple
// in it, copies the data slice the tuple addresses.
absl::Status GatherND(const Node& node, Inputs in, Outputs out) {
  absl::StatusOr<size_t> elem = ElementBytes(node, in[0]->dtype());
  if (!elem.ok()) return elem.status();
  const Tensor& data = *in[0];
  const Tensor& indices = *in[1];
  const int b = static_cast<int>(node.GetInt("batch_dims", 0));
  const int64_t k = indices.dim(indices.rank() - 1);
  for (int d = 0; d < b; ++d) {
    if (data.dim(d) != indices.dim(d)) {
      return absl::InvalidArgumentError(absl::StrCat("GatherND: batch dimension ", d, " of data ",
                                                     ShapeToString(data.shape()), " and indices ",
                                                     ShapeToString(indices.shape()), " differ"));
    }
  }
  const auto shape = absl::MakeConstSpan(data.shape());
  const int64_t batches = NumElements(shape.subspan(0, b));
  const int64_t batch_size = NumElements(shape.subspan(b));  // data elements per batch
  const int64_t slice = NumElements(shape.subspan(b + k));
  const int64_t tuples = batches == 0 ? 0 : indices.num_elements() / k / batches;  // per batch
  const std::vector<int64_t> strides = RowMajorStrides(data.shape());
  const char* src = static_cast<const char*>(data.raw_data());
  char* dst = static_cast<char*>(out[0].raw_data());
  for (int64_t bi = 0; bi < batches; ++bi) {
    for (int64_t t = 0; t < tuples; ++t, dst += slice * *elem) {
      const int64_t tuple = bi * tuples + t;
      int64_t off = bi * batch_size;
      for (int64_t d = 0; d < k; ++d) {
        int64_t idx = indices.GetAsInt64(tuple * k + d);
        const int64_t extent = data.dim(b + d);
        if (idx < -extent || idx >= extent) {
          return absl::OutOfRangeError(absl::StrCat("GatherND: index ", idx, " (tuple ", tuple, " of indices ",
                                                    ShapeToString(indices.shape()), ") is out of range for axis ",
                                                    b + d, " of size ", extent));
        }
        off += (idx < 0 ? idx + extent : idx) * strides[b + d];
      }
      if (slice > 0) std::memcpy(dst, src + off * *elem, slice * *elem);
    }
  }
  return absl::OkStatus();
}

// NonZero: column j of the output holds the coordinate of the j-th non-zero element in row-major order.
absl::Status NonZero(const Node& node, Inputs in, Outputs out) {
  const Tensor& x = *in[0];
  Tensor& y = out[0];
  const int rank = x.rank();
  const int64_t count = y.dim(1);
  const bool is_float = IsFloat(x.dtype());
  std::vector<int64_t> index(rank, 0);
  int64_t j = 0;
  for (int64_t i = 0, n = x.num_elements(); i < n; ++i) {
    if (is_float ? x.GetAsDouble(i) != 0.0 : x.GetAsInt64(i) != 0) {
      if (j == count) break;  // inference counted the same elements; guards the output bounds
      for (int d = 0; d < rank; ++d) y.data<int64_t>()[d * count + j] = index[d];
      if (rank == 0) y.data<int64_t>()[j] = 0;
      ++j;
    }
    for (int d = rank - 1; d >= 0; --d) {
      if (++index[d] < x.dim(d)) break;
      index[d] = 0;
    }
  }
  return absl::OkStatus();
}

absl::Status Trilu(const Node& node, Inputs in, Outputs out) {
  absl::StatusOr<size_t> elem = ElementBytes(node, in[0]->dtype());
  if (!elem.ok()) return elem.status();
  const Tensor& x = *in[0];
  const int64_t k = in.size() > 1 && in[1] != nullptr ? in[1]->GetAsInt64(0) : 0;
  const bool upper = node.GetInt("upper", 1) != 0;
  const int64_t rows = x.dim(x.rank() - 2), cols = x.dim(x.rank() - 1);
  const char* src = static_cast<const char*>(x.raw_data());
  char* dst = static_cast<char*>(out[0].raw_data());
  for (int64_t i = 0, n = x.num_elements(); i < n; ++i) {
    const int64_t c = i % cols, r = (i / cols) % rows;
    const bool keep = upper ? c - r >= k : c - r <= k;
    if (keep) {
      std::memcpy(dst + i * *elem, src + i * *elem, *elem);
    } else {
      std::memset(dst + i * *elem, 0, *elem);
    }
  }
  return absl::OkStatus();
}

absl::Status Size(const Node& node, Inputs in, Outputs out) {
  out[0].data<int64_t>()[0] = in[0]->num_elements();
  return absl::OkStatus();
}

absl::Status Shape(const Node& node, Inputs in, Outputs out) {
  const int64_t rank = in[0]->rank();
  int64_t start = node.GetInt("start", 0);
  if (start < 0) start += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  int64_t* dst = out[0].data<int64_t>();
  for (int64_t i = 0; i < out[0].num_elements(); ++i) dst[i] = in[0]->dim(static_cast<int>(start + i));
  return absl::OkStatus();
}

absl::Status ConstantOfShape(const Node& node, Inputs in, Outputs out) {
  const Attribute* value = node.FindAttr("value");
  if (value == nullptr) {
    if (out[0].byte_size() > 0) std::memset(out[0].raw_data(), 0, out[0].byte_size());
    return absl::OkStatus();
  }
  absl::StatusOr<size_t> elem = ElementBytes(node, out[0].dtype());
  if (!elem.ok()) return elem.status();
  char* dst = static_cast<char*>(out[0].raw_data());
  const int64_t n = out[0].num_elements();
  if (*elem == 4 || *elem == 8) {  // the common widths as one typed fill
    uint64_t v = 0;
    std::memcpy(&v, value->t->raw_data(), *elem);
    if (*elem == 4) {
      std::fill_n(reinterpret_cast<uint32_t*>(dst), n, static_cast<uint32_t>(v));
    } else {
      std::fill_n(reinterpret_cast<uint64_t*>(dst), n, v);
    }
    return absl::OkStatus();
  }
  for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * *elem, value->t->raw_data(), *elem);
  return absl::OkStatus();
}

template <typename T>
void RangeLoop(Inputs in, Tensor& out) {
  const T start = in[0]->data<T>()[0];
  const T delta = in[2]->data<T>()[0];
  T* dst = out.data<T>();
  // start + i * delta (not repeated addition), as the ONNX specification and numpy compute it.
  // Integers go through unsigned arithmetic: i * delta may overflow although the sum does not.
  for (int64_t i = 0, n = out.num_elements(); i < n; ++i) {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      dst[i] = static_cast<T>(static_cast<U>(start) + static_cast<U>(i) * static_cast<U>(delta));
    } else {
      dst[i] = start + static_cast<T>(i) * delta;
    }
  }
}

absl::Status Range(const Node& node, Inputs in, Outputs out) {
  switch (out[0].dtype()) {
    case DType::kF32: RangeLoop<float>(in, out[0]); break;
    case DType::kI32: RangeLoop<int32_t>(in, out[0]); break;
    case DType::kI64: RangeLoop<int64_t>(in, out[0]); break;
    default:
      return absl::UnimplementedError(absl::StrCat("Range: dtype ", DTypeName(out[0].dtype()), " is not supported"));
  }
  return absl::OkStatus();
}

// DepthToSpace / SpaceToDepth as index maps on [N, C, H, W] (any element type): output (n, c, h, w) of
// DepthToSpace reads channel (i b + j) C' + c (DCR) or c b^2 + i b + j (CRD) at (h / b, w / b), where
// i = h % b, j = w % b and C' the output's channels; SpaceToDepth is DCR's inverse.
absl::Status SpaceDepth(const Node& node, Inputs in, Outputs out) {
  const Tensor& x = *in[0];
  Tensor& y = out[0];
  if (x.dtype() == DType::kI4) return absl::UnimplementedError(absl::StrCat(node.op_type(), ": packed i4 tensors"));
  const int64_t b = node.GetInt("blocksize", 1);
  const bool to_space = node.op_type() == "DepthToSpace";
  const bool crd = to_space && node.GetString("mode", "DCR") == "CRD";
  const size_t bytes = DTypeBits(x.dtype()) / 8;
  const char* src = static_cast<const char*>(x.raw_data());
  char* dst = static_cast<char*>(y.raw_data());
  const int64_t n = y.dim(0), c = y.dim(1), h = y.dim(2), w = y.dim(3);
  const int64_t xc = x.dim(1), xh = x.dim(2), xw = x.dim(3);
  for (int64_t in_ = 0; in_ < n; ++in_) {
    for (int64_t ic = 0; ic < c; ++ic) {
      for (int64_t ih = 0; ih < h; ++ih) {
        for (int64_t iw = 0; iw < w; ++iw) {
          int64_t sc, sh, sw;
          if (to_space) {
            const int64_t i = ih % b, j = iw % b;
            sc = crd ? ic * b * b + i * b + j : (i * b + j) * c + ic;
            sh = ih / b, sw = iw / b;
          } else {
            // Output channel (i b + j) C + c' takes input channel c' at (h b + i, w b + j).
            const int64_t blk = ic / xc, i = blk / b, j = blk % b;
            sc = ic % xc, sh = ih * b + i, sw = iw * b + j;
          }
          const int64_t from = ((in_ * xc + sc) * xh + sh) * xw + sw;
          const int64_t to = ((in_ * c + ic) * h + ih) * w + iw;
          std::memcpy(dst + to * bytes, src + from * bytes, bytes);
        }
      }
    }
  }
  return absl::OkStatus();
}

// OneHot: output element (outer, d, inner) is on where indices[outer, inner] (negative ones + depth)
// equals d, else off; an index outside [-depth, depth) gives a row of off. Values of any type.
absl::Status OneHot(const Node& node, Inputs in, Outputs out) {
  const Tensor& indices = *in[0];
  const Tensor& values = *in[2];
  Tensor& y = out[0];
  if (values.dtype() == DType::kI4) return absl::UnimplementedError("OneHot: packed i4 values");
  int64_t axis = node.GetInt("axis", -1);
  if (axis < 0) axis += y.rank();
  const int64_t depth = y.dim(axis);
  const double given = in[1]->GetAsDouble(0);
  if (static_cast<double>(depth) != std::floor(given)) {
    return absl::InvalidArgumentError(absl::StrCat("OneHot: depth ", given, " differs from the output's extent ", depth));
  }
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < y.rank(); ++d) inner *= y.dim(d);
  const int64_t outer = indices.num_elements() / std::max<int64_t>(inner, 1);
  const size_t bytes = DTypeBits(values.dtype()) / 8;
  const char* off = static_cast<const char*>(values.raw_data());
  const char* on = off + bytes;
  char* dst = static_cast<char*>(y.raw_data());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const double v = indices.GetAsDouble(o * inner + i);
      int64_t hot = static_cast<int64_t>(std::trunc(v));
      if (hot < 0) hot += depth;
      for (int64_t d = 0; d < depth; ++d) {
        std::memcpy(dst + ((o * depth + d) * inner + i) * bytes, d == hot ? on : off, bytes);
      }
    }
  }
  return absl::OkStatus();
}

// The window functions as ONNX defines them: w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N), N = size
// (periodic, the default) or size - 1 (symmetric), in double, rounded to f32, then converted to the output
// type (integers truncate toward zero, as Cast does).
absl::Status WindowFunction(const Node& node, Inputs in, Outputs out) {
  const std::string& op = node.op_type();
  const double a0 = op == "HannWindow" ? 0.5 : op == "HammingWindow" ? 25.0 / 46.0 : 0.42;
  const double a1 = op == "HannWindow" ? 0.5 : op == "HammingWindow" ? 1.0 - 25.0 / 46.0 : 0.5;
  const double a2 = op == "BlackmanWindow" ? 0.08 : 0.0;
  Tensor& y = out[0];
  const int64_t size = y.dim(0);
  const double n_den = node.GetInt("periodic", 1) != 0 ? static_cast<double>(size) : static_cast<double>(size - 1);
  Tensor f(DType::kF32, {size});
  for (int64_t i = 0; i < size; ++i) {
    const double x = n_den == 0 ? 0.0 : 2.0 * M_PI * static_cast<double>(i) / n_den;
    f.data<float>()[i] = static_cast<float>(a0 - a1 * std::cos(x) + a2 * std::cos(2.0 * x));
  }
  if (y.dtype() == DType::kF32) {
    std::memcpy(y.raw_data(), f.raw_data(), f.byte_size());
    return absl::OkStatus();
  }
  for (int64_t i = 0; i < size; ++i) {
    const double v = f.data<float>()[i];
    switch (y.dtype()) {
      case DType::kF16: y.data<uint16_t>()[i] = FloatToHalf(static_cast<float>(v)); break;
      case DType::kBF16: y.data<uint16_t>()[i] = FloatToBF16(static_cast<float>(v)); break;
      case DType::kI8: y.data<int8_t>()[i] = static_cast<int8_t>(v); break;
      case DType::kU8: y.data<uint8_t>()[i] = static_cast<uint8_t>(v); break;
      case DType::kI32: y.data<int32_t>()[i] = static_cast<int32_t>(v); break;
      case DType::kI64: y.data<int64_t>()[i] = static_cast<int64_t>(v); break;
      default: return absl::UnimplementedError(absl::StrCat(op, ": output type ", DTypeName(y.dtype())));
    }
  }
  return absl::OkStatus();
}

// Compress: copies the kept slices (axis) or elements (no axis) in order, any element type.
absl::Status Compress(const Node& node, Inputs in, Outputs out) {
  const Tensor& x = *in[0];
  const Tensor& cond = *in[1];
  if (x.dtype() == DType::kI4) return absl::UnimplementedError("Compress: packed i4 input");
  const uint8_t* c = cond.data<uint8_t>();
  const size_t bytes = DTypeBits(x.dtype()) / 8;
  const char* src = static_cast<const char*>(x.raw_data());
  char* dst = static_cast<char*>(out[0].raw_data());
  int64_t outer = 1, extent = x.num_elements(), inner = 1;
  if (node.HasAttr("axis")) {
    int64_t axis = node.GetInt("axis", 0);
    if (axis < 0) axis += x.rank();
    extent = x.dim(axis);
    for (int64_t d = 0; d < axis; ++d) outer *= x.dim(d);
    for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= x.dim(d);
  }
  const int64_t n = std::min(extent, cond.num_elements());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < n; ++i) {
      if (c[i] == 0) continue;
      std::memcpy(dst, src + ((o * extent + i) * inner) * bytes, inner * bytes);
      dst += inner * bytes;
    }
  }
  return absl::OkStatus();
}

// ReverseSequence: batch entry b's steps t < len[b] read step len[b] - 1 - t; the rest are copied.
absl::Status ReverseSequence(const Node& node, Inputs in, Outputs out) {
  const Tensor& x = *in[0];
  const Tensor& lens = *in[1];
  if (x.dtype() == DType::kI4) return absl::UnimplementedError("ReverseSequence: packed i4 input");
  const bool time_first = node.GetInt("time_axis", 0) == 0;
  const int64_t steps = x.dim(time_first ? 0 : 1), batch = x.dim(time_first ? 1 : 0);
  const int64_t inner = x.num_elements() / std::max<int64_t>(steps * batch, 1);
  const size_t bytes = DTypeBits(x.dtype()) / 8;
  const char* src = static_cast<const char*>(x.raw_data());
  char* dst = static_cast<char*>(out[0].raw_data());
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t len = lens.GetAsInt64(b);
    if (len < 0 || len > steps) {
      return absl::InvalidArgumentError(absl::StrCat("ReverseSequence: sequence_lens[", b, "] = ", len,
                                                     " is outside [0, ", steps, "]"));
    }
    for (int64_t t = 0; t < steps; ++t) {
      const int64_t from = t < len ? len - 1 - t : t;
      auto at = [&](int64_t step) { return (time_first ? step * batch + b : b * steps + step) * inner; };
      std::memcpy(dst + at(t) * bytes, src + at(from) * bytes, inner * bytes);
    }
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterTensorReferenceKernels(ReferenceKernelRegistry& r) {
  r.Register("", "Flatten", CopyData);
  r.Register("", "Reshape", CopyData);
  r.Register("", "Squeeze", CopyData);
  r.Register("", "Unsqueeze", CopyData);
  r.Register("", "Transpose", Transpose);
  r.Register("", "DepthToSpace", SpaceDepth);
  r.Register("", "OneHot", OneHot);
  r.Register("", "Compress", Compress);
  r.Register("", "ReverseSequence", ReverseSequence);
  for (const char* w : {"HannWindow", "HammingWindow", "BlackmanWindow"}) r.Register("", w, WindowFunction);
  r.Register("", "SpaceToDepth", SpaceDepth);
  r.Register("", "Concat", Concat);
  r.Register("", "Split", Split);
  r.Register("", "Slice", Slice);
  r.Register("", "Gather", Gather);
  r.Register("", "GatherElements", GatherElements);
  r.Register("", "ScatterND", ScatterND);
  r.Register("", "ScatterElements", ScatterElements);
  r.Register("", "GatherND", GatherND);
  r.Register("", "Tile", Tile);
  r.Register("", "NonZero", NonZero);
  r.Register("", "Trilu", Trilu);
  r.Register("", "Size", Size);
  r.Register("", "Expand", Expand);
  r.Register("", "Shape", Shape);
  r.Register("", "ConstantOfShape", ConstantOfShape);
  r.Register("", "Range", Range);
}

}  // namespace tessel
