// Schemas and type inference for the neural-network operators (Conv, BatchNormalization, pooling,
// MatMul, Gemm, Einsum, Softmax, LayerNormalization, InstanceNormalization, GroupNormalization,
// ReduceMean/ReduceSum, Pad, Resize) in their opset-18 forms.
#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/onnx_data_type.h"
#include "graph/op_registry.h"
#include "graph/ops/einsum_spec.h"
#include "graph/ops/nn_params.h"
#include "graph/ops/shape_util.h"

namespace tessel {
namespace {

using InferResult = absl::StatusOr<std::vector<TensorType>>;

// "input W ('conv1.weight')" for messages.
std::string Label(const InferenceContext& ctx, int i, const char* role) {
  const Value* v = ctx.node.input(i);
  return v == nullptr ? absl::StrCat("input ", role) : absl::StrCat("input ", role, " ('", v->name(), "')");
}

absl::Status RequireFloat(const InferenceContext& ctx, int i, const char* role) {
  const DType t = ctx.type(i).dtype;
  if (IsFloat(t)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(Label(ctx, i, role), " has dtype ", DTypeName(t), "; expected f32, f16 or bf16"));
}

absl::Status RequireDType(const InferenceContext& ctx, int i, const char* role, DType want) {
  const DType t = ctx.type(i).dtype;
  if (t == want) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(Label(ctx, i, role), " has dtype ", DTypeName(t), "; expected ", DTypeName(want)));
}

absl::Status RequireRank(const InferenceContext& ctx, int i, const char* role, int rank) {
  const TensorType& t = ctx.type(i);
  if (t.rank() == rank) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(Label(ctx, i, role), " has type ", t.ToString(), "; expected rank ", rank));
}

// A 1-D per-channel input (bias, BatchNormalization statistics) of `channels` elements.
absl::Status RequireVector(const InferenceContext& ctx, int i, const char* role, const Dim& channels, DType dtype) {
  absl::Status s = RequireDType(ctx, i, role, dtype);
  if (!s.ok()) return s;
  s = RequireRank(ctx, i, role, 1);
  if (!s.ok()) return s;
  const Dim& d = ctx.type(i).dims[0];
  if (d.is_static() && channels.is_static() && d.value() != channels.value()) {
    return absl::InvalidArgumentError(
        absl::StrCat(Label(ctx, i, role), " has ", d.value(), " elements, expected ", channels.value()));
  }
  return absl::OkStatus();
}

// Numpy broadcasting of one pair of dims. A symbol against a static extent other than 1 resolves to the
// extent (the symbol must equal it, or be 1); two different symbols give an unknown extent.
absl::StatusOr<Dim> BroadcastDim(const Dim& a, const Dim& b) {
  if (a.is_static() && a.value() == 1) return b;
  if (b.is_static() && b.value() == 1) return a;
  if (a == b) return a;
  if (a.is_static() && b.is_static()) {
    return absl::InvalidArgumentError(absl::StrCat("extents ", a.value(), " and ", b.value(), " do not broadcast"));
  }
  if (a.is_static()) return a;
  if (b.is_static()) return b;
  return UnknownDim();
}

// Checks that `from` broadcasts to `to` without changing it (right-aligned; each extent 1 or equal).
absl::Status RequireUnidirectional(const InferenceContext& ctx, int i, const char* role, const std::vector<Dim>& to) {
  const std::vector<Dim>& from = ctx.type(i).dims;
  bool ok = from.size() <= to.size();
  for (size_t k = 0; ok && k < from.size(); ++k) {
    const Dim& f = from[from.size() - 1 - k];
    const Dim& t = to[to.size() - 1 - k];
    if (f.is_static() && f.value() != 1 && t.is_static() && f.value() != t.value()) ok = false;
  }
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(Label(ctx, i, role), " has type ", ctx.type(i).ToString(),
                                                 ", which does not broadcast to ",
                                                 TensorType(ctx.type(i).dtype, to).ToString()));
}

// Checks that inputs 0..count-1 are present before running `fn`: arity counts only up to the last
// given input, so an omitted input in the middle could otherwise leave a required one missing.
InferFn WithRequiredInputs(int count, InferResult (*fn)(const InferenceContext&)) {
  return [count, fn](const InferenceContext& ctx) -> InferResult {
    for (int i = 0; i < count; ++i) {
      if (!ctx.has_input(i)) return absl::InvalidArgumentError(absl::StrCat("required input ", i, " is missing"));
    }
    return fn(ctx);
  };
}

// Whether an optional input is given and not an empty tensor (opset 11 writes an empty scales tensor
// beside sizes).
bool HasNonEmptyInput(const InferenceContext& ctx, int i) {
  if (!ctx.has_input(i)) return false;
  return !(ctx.type(i).is_static() && ctx.type(i).NumElements() == 0);
}

InferResult InferConv(const InferenceContext& ctx) {
  absl::Status s = RequireFloat(ctx, 0, "X");
  if (!s.ok()) return s;
  const TensorType& x = ctx.type(0);
  const TensorType& w = ctx.type(1);
  s = RequireDType(ctx, 1, "W", x.dtype);
  if (!s.ok()) return s;
  absl::StatusOr<ConvParams> p = ResolveConvParams(ctx.node, x.dims, w.dims);
  if (!p.ok()) return p.status();
  if (ctx.has_input(2)) {
    s = RequireVector(ctx, 2, "B", w.dims[0], x.dtype);
    if (!s.ok()) return s;
  }
  std::vector<Dim> dims = {x.dims[0], w.dims[0]};
  dims.insert(dims.end(), p->output.begin(), p->output.end());
  return std::vector<TensorType>{TensorType(x.dtype, std::move(dims))};
}

// ConvTranspose: weights [C, M/group, kernel...], output [N, M, spatial...].
InferResult InferConvTranspose(const InferenceContext& ctx) {
  absl::Status s = RequireFloat(ctx, 0, "X");
  if (!s.ok()) return s;
  const TensorType& x = ctx.type(0);
  const TensorType& w = ctx.type(1);
  s = RequireDType(ctx, 1, "W", x.dtype);
  if (!s.ok()) return s;
  absl::StatusOr<ConvTransposeParams> p = ResolveConvTransposeParams(ctx.node, x.dims, w.dims);
  if (!p.ok()) return p.status();
  const Dim m = w.dims[1].is_static() ? Dim(w.dims[1].value() * p->group) : (p->group == 1 ? w.dims[1] : UnknownDim());
  if (ctx.has_input(2)) {
    s = RequireVector(ctx, 2, "B", m, x.dtype);
    if (!s.ok()) return s;
  }
  std::vector<Dim> dims = {x.dims[0], m};
  dims.insert(dims.end(), p->output.begin(), p->output.end());
  return std::vector<TensorType>{TensorType(x.dtype, std::move(dims))};
}

// Optional input i, when given, has dtype `dtype` and dims `want` (static extents compared).
absl::Status RequireOptionalDims(const InferenceContext& ctx, int i, const char* role, DType dtype,
                                 const std::vector<Dim>& want) {
  if (!ctx.has_input(i)) return absl::OkStatus();
  const TensorType& t = ctx.type(i);
  bool ok = t.dtype == dtype && t.rank() == static_cast<int>(want.size());
  for (size_t d = 0; ok && d < want.size(); ++d) {
    ok = !(t.dims[d].is_static() && want[d].is_static() && t.dims[d].value() != want[d].value());
  }
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(Label(ctx, i, role), " has type ", t.ToString(), "; expected ",
                                                 TensorType(dtype, want).ToString()));
}

// LSTM, GRU and RNN: Y [seq, directions, batch, hidden] and the final Y_h (and LSTM's Y_c)
// [directions, batch, hidden]; with layout 1 the batch comes first in X, Y and the states.
InferResult InferRnn(const InferenceContext& ctx) {
  absl::Status s = RequireFloat(ctx, 0, "X");
  if (!s.ok()) return s;
  const TensorType& x = ctx.type(0);
  for (int i : {1, 2}) {
    s = RequireDType(ctx, i, i == 1 ? "W" : "R", x.dtype);
    if (!s.ok()) return s;
  }
  absl::StatusOr<RnnParams> p = ResolveRnnParams(ctx.node, x.dims, ctx.type(1).dims, ctx.type(2).dims);
  if (!p.ok()) return p.status();
  const Dim& seq = p->batch_first ? x.dims[1] : x.dims[0];
  const Dim& batch = p->batch_first ? x.dims[0] : x.dims[1];
  const Dim dirs(p->directions);
  auto times = [](int64_t k, const Dim& d) { return d.is_static() ? Dim(k * d.value()) : UnknownDim(); };
  const std::vector<Dim> state = p->batch_first ? std::vector<Dim>{batch, dirs, p->hidden}
                                                : std::vector<Dim>{dirs, batch, p->hidden};
  const bool lstm = p->gates == 4;
  s = RequireOptionalDims(ctx, 3, "B", x.dtype, {dirs, times(2 * p->gates, p->hidden)});
  if (s.ok() && ctx.has_input(4) && ctx.type(4).dtype == DType::kI64) {
    s = RequireOptionalDims(ctx, 4, "sequence_lens", DType::kI64, {batch});
  } else if (s.ok()) {
    s = RequireOptionalDims(ctx, 4, "sequence_lens", DType::kI32, {batch});
  }
  if (s.ok()) s = RequireOptionalDims(ctx, 5, "initial_h", x.dtype, state);
  if (s.ok() && lstm) s = RequireOptionalDims(ctx, 6, "initial_c", x.dtype, state);
  if (s.ok() && lstm) s = RequireOptionalDims(ctx, 7, "P", x.dtype, {dirs, times(3, p->hidden)});
  if (!s.ok()) return s;
  const std::vector<Dim> y = p->batch_first ? std::vector<Dim>{batch, seq, dirs, p->hidden}
                                            : std::vector<Dim>{seq, dirs, batch, p->hidden};
  std::vector<TensorType> out = {TensorType(x.dtype, y), TensorType(x.dtype, state)};
  if (lstm) out.push_back(TensorType(x.dtype, state));
  return out;
}

InferResult InferBatchNorm(const InferenceContext& ctx) {
  if (ctx.node.num_outputs() > 1 || ctx.node.GetInt("training_mode", 0) != 0) {
    return absl::InvalidArgumentError(
        "training mode not supported: BatchNormalization must have training_mode=0 and one output (Y)");
  }
  absl::Status s = RequireFloat(ctx, 0, "X");
  if (!s.ok()) return s;
  const TensorType& x = ctx.type(0);
  if (x.rank() < 2) {
    return absl::InvalidArgumentError(absl::StrCat("input X has type ", x.ToString(), "; expected [N, C, ...]"));
  }
  const char* roles[] = {"scale", "B", "input_mean", "input_var"};
  for (int i = 1; i <= 4; ++i) {
    s = RequireFloat(ctx, i, roles[i - 1]);
    if (!s.ok()) return s;
    s = RequireVector(ctx, i, roles[i - 1], x.dims[1], ctx.type(i).dtype);
    if (!s.ok()) return s;
  }
  return std::vector<TensorType>{TensorType(x.dtype, x.dims)};
}

InferResult InferPool(const InferenceContext& ctx) {
  if (ctx.node.num_outputs() > 1 && ctx.node.op_type() != "MaxPool") {
    return absl::InvalidArgumentError(absl::StrCat(ctx.node.op_type(), " has one output"));
  }
  const int64_t storage_order = ctx.node.GetInt("storage_order", 0);
  if (storage_order != 0 && storage_order != 1) {
    return absl::InvalidArgumentError(absl::StrCat("attribute 'storage_order' is ", storage_order, "; expected 0 or 1"));
  }
  // MaxPool also takes 8-bit integers (opset 12).
  const DType xt = ctx.type(0).dtype;
  if (ctx.node.op_type() != "MaxPool" || (xt != DType::kU8 && xt != DType::kI8)) {
    absl::Status s = RequireFloat(ctx, 0, "X");
    if (!s.ok()) return s;
  }
  const TensorType& x = ctx.type(0);
  absl::StatusOr<PoolParams> p = ResolvePoolParams(ctx.node, x.dims);
  if (!p.ok()) return p.status();
  std::vector<Dim> dims = {x.dims[0], x.dims[1]};
  dims.insert(dims.end(), p->output.begin(), p->output.end());
  std::vector<TensorType> out = {TensorType(x.dtype, dims)};
  // MaxPool's Indices: each maximum's flat index into X (int64).
  if (ctx.node.num_outputs() > 1) out.emplace_back(DType::kI64, std::move(dims));
  return out;
}

// MaxUnpool: X [N, C, spatial...] and its MaxPool Indices; the output's spatial extents are (in - 1) x
// stride + kernel - pads, or the optional output_shape input's (known when it is a constant).
InferResult InferMaxUnpool(const InferenceContext& ctx) {
  absl::Status s = RequireFloat(ctx, 0, "X");
  if (!s.ok()) return s;
  const TensorType& x = ctx.type(0);
  const TensorType& indices = ctx.type(1);
  if (x.rank() < 3 || indices.dtype != DType::kI64 || indices.rank() != x.rank()) {
    return absl::InvalidArgumentError(absl::StrCat("X ", x.ToString(), " and I ", indices.ToString(),
                                                   " must be [N, C, spatial...] and int64 of the same rank"));
  }
  const int ns = x.rank() - 2;
  if (ctx.has_input(2)) {
    const TensorType& shape = ctx.type(2);
    if (shape.dtype != DType::kI64 || shape.rank() != 1 || (shape.dims[0].is_static() && shape.dims[0].value() != x.rank())) {
      return absl::InvalidArgumentError(absl::StrCat("output_shape has type ", shape.ToString(), "; expected i64[",
                                                     x.rank(), "]"));
    }
    std::vector<Dim> dims;
    const Tensor* v = ctx.value(2);
    for (int d = 0; d < x.rank(); ++d) dims.push_back(v ? Dim(v->GetAsInt64(d)) : UnknownDim());
    return std::vector<TensorType>{TensorType(x.dtype, std::move(dims))};
  }
  const std::vector<int64_t> kernel = ctx.node.GetInts("kernel_shape");
  if (static_cast<int>(kernel.size()) != ns) {
    return absl::InvalidArgumentError(absl::StrCat("kernel_shape has ", kernel.size(), " values; expected ", ns));
  }
  std::vector<int64_t> strides = ctx.node.GetInts("strides"), pads = ctx.node.GetInts("pads");
  if (strides.empty()) strides.assign(ns, 1);
  if (pads.empty()) pads.assign(2 * ns, 0);
  if (static_cast<int>(strides.size()) != ns || static_cast<int>(pads.size()) != 2 * ns) {
    return absl::InvalidArgumentError("strides and pads must have one and two values per spatial axis");
  }
  std::vector<Dim> dims = {x.dims[0], x.dims[1]};
  for (int d = 0; d < ns; ++d) {
    const Dim& in = x.dims[2 + d];
    if (!in.is_static()) {
      dims.push_back(UnknownDim());
      continue;
    }
    const int64_t out = (in.value() - 1) * strides[d] + kernel[d] - pads[d] - pads[ns + d];
    if (out < 0) return absl::InvalidArgumentError(absl::StrCat("spatial axis ", d, " would have extent ", out));
    dims.push_back(Dim(out));
  }
  return std::vector<TensorType>{TensorType(x.dtype, std::move(dims))};
}

// Det: the determinant of each square matrix in the last two axes.
InferResult InferDet(const InferenceContext& ctx) {
  absl::Status s = RequireFloat(ctx, 0, "X");
  if (!s.ok()) return s;
  const TensorType& x = ctx.type(0);
  if (x.rank() < 2 || (x.dims[x.rank() - 1].is_static() && x.dims[x.rank() - 2].is_static() &&
                       x.dims[x.rank() - 1].value() != x.dims[x.rank() - 2].value())) {
    return absl::InvalidArgumentError(absl::StrCat("X has type ", x.ToString(), "; expected [..., M, M]"));
  }
  return std::vector<TensorType>{TensorType(x.dtype, std::vector<Dim>(x.dims.begin(), x.dims.end() - 2))};
}

InferResult InferGlobalPool(const InferenceContext& ctx) {
  absl::Status s = RequireFloat(ctx, 0, "X");
  if (!s.ok()) return s;
  const TensorType& x = ctx.type(0);
  if (x.rank() < 2) {
    return absl::InvalidArgumentError(absl::StrCat("input X has type ", x.ToString(), "; expected [N, C, ...]"));
  }
  std::vector<Dim> dims(x.dims.begin(), x.dims.begin() + 2);
  dims.resize(x.rank(), Dim(1));
  return std::vector<TensorType>{TensorType(x.dtype, std::move(dims))};
}

// MeanVarianceNormalization: float x, the same out; axes (default [0, 2, 3]) within x's rank.
InferResult InferMvn(const InferenceContext& ctx) {
  absl::Status s = RequireFloat(ctx, 0, "X");
  if (!s.ok()) return s;
  const TensorType& x = ctx.type(0);
  for (int64_t a : ctx.node.GetInts("axes")) {
    if (a < -x.rank() || a >= x.rank()) {
      return absl::InvalidArgumentError(absl::StrCat("MeanVarianceNormalization: axis ", a, " is outside ", x.ToString()));
    }
  }
  if (!ctx.node.HasAttr("axes") && x.rank() < 4) {
    return absl::InvalidArgumentError(absl::StrCat("MeanVarianceNormalization: the default axes [0, 2, 3] need rank >= 4; X is ",
                                                   x.ToString()));
  }
  return std::vector<TensorType>{x};
}

// LRN: x [N, C, ...] in, the same out; `size` (required) is the odd or even window over channels.
InferResult InferLrn(const InferenceContext& ctx) {
  absl::Status s = RequireFloat(ctx, 0, "X");
  if (!s.ok()) return s;
  const TensorType& x = ctx.type(0);
  if (x.rank() < 3) {
    return absl::InvalidArgumentError(absl::StrCat("input X has type ", x.ToString(), "; expected [N, C, D1, ...]"));
  }
  if (!ctx.node.HasAttr("size") || ctx.node.GetInt("size", 0) < 1) {
    return absl::InvalidArgumentError("LRN: attribute size (the channel window, >= 1) is required");
  }
  return std::vector<TensorType>{x};
}

absl::Status RequireMatMulType(const InferenceContext& ctx, int i, const char* role) {
  const DType t = ctx.type(i).dtype;
  if (IsFloat(t) || t == DType::kI32 || t == DType::kI64) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(Label(ctx, i, role), " has dtype ", DTypeName(t), "; expected f32, f16, bf16, i32 or i64"));
}

// numpy matmul's output dims for A and B (a 1-D A is a row vector, a 1-D B a column vector, the added
// dimension dropped again; batch dimensions broadcast).
absl::StatusOr<std::vector<Dim>> MatMulDims(const TensorType& a, const TensorType& b) {
  if (a.rank() < 1 || b.rank() < 1) return absl::InvalidArgumentError("MatMul operands must have rank at least 1");
  std::vector<Dim> ad = a.dims;
  std::vector<Dim> bd = b.dims;
  if (a.rank() == 1) ad.insert(ad.begin(), Dim(1));
  if (b.rank() == 1) bd.push_back(Dim(1));
  const Dim& ka = ad[ad.size() - 1];
  const Dim& kb = bd[bd.size() - 2];
  if (ka.is_static() && kb.is_static() && ka.value() != kb.value()) {
    return absl::InvalidArgumentError(absl::StrCat("A ", a.ToString(), " and B ", b.ToString(),
                                                   " disagree on the contracted dimension (", ka.value(), " vs ",
                                                   kb.value(), ")"));
  }
  const size_t abatch = ad.size() - 2;
  const size_t bbatch = bd.size() - 2;
  const size_t batch = std::max(abatch, bbatch);
  std::vector<Dim> dims;
  for (size_t i = 0; i < batch; ++i) {
    const Dim x = i + abatch >= batch ? ad[i + abatch - batch] : Dim(1);
    const Dim y = i + bbatch >= batch ? bd[i + bbatch - batch] : Dim(1);
    absl::StatusOr<Dim> d = BroadcastDim(x, y);
    if (!d.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("batch dimensions of A ", a.ToString(), " and B ", b.ToString(),
                                                     " do not broadcast: ", d.status().message()));
    }
    dims.push_back(*d);
  }
  if (a.rank() > 1) dims.push_back(ad[ad.size() - 2]);
  if (b.rank() > 1) dims.push_back(bd[bd.size() - 1]);
  return dims;
}

InferResult InferMatMul(const InferenceContext& ctx) {
  absl::Status s = RequireMatMulType(ctx, 0, "A");
  if (!s.ok()) return s;
  s = RequireDType(ctx, 1, "B", ctx.type(0).dtype);
  if (!s.ok()) return s;
  absl::StatusOr<std::vector<Dim>> dims = MatMulDims(ctx.type(0), ctx.type(1));
  if (!dims.ok()) return dims.status();
  return std::vector<TensorType>{TensorType(ctx.type(0).dtype, *std::move(dims))};
}

// The u8 / i8 operand i of an integer operator (QLinearConv, QLinearMatMul, ConvInteger).
absl::Status RequireInt8Operand(const InferenceContext& ctx, int i, const char* role) {
  const DType t = ctx.type(i).dtype;
  if (t == DType::kU8 || t == DType::kI8) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(Label(ctx, i, role), " has dtype ", DTypeName(t), "; expected u8 or i8"));
}

// QLinearConv (x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point[, B]) and
// QLinearMatMul (a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point): u8 / i8
// operands, the output of y_zero_point's type, shaped as Conv / MatMul.
InferResult InferQLinear(const InferenceContext& ctx) {
  const bool conv = ctx.node.op_type() == "QLinearConv";
  for (int i : {0, 3, 7}) {
    absl::Status s = RequireInt8Operand(ctx, i, i == 0 ? "x" : i == 3 ? "w" : "y_zero_point");
    if (!s.ok()) return s;
  }
  for (int i : {1, 4, 6}) {
    absl::Status s = RequireDType(ctx, i, "scale", DType::kF32);
    if (!s.ok()) return s;
  }
  const TensorType& x = ctx.type(0);
  const TensorType& w = ctx.type(3);
  std::vector<Dim> dims;
  if (conv) {
    absl::StatusOr<ConvParams> p = ResolveConvParams(ctx.node, x.dims, w.dims);
    if (!p.ok()) return p.status();
    if (ctx.has_input(8)) {
      absl::Status s = RequireVector(ctx, 8, "B", w.dims[0], DType::kI32);
      if (!s.ok()) return s;
    }
    dims = {x.dims[0], w.dims[0]};
    dims.insert(dims.end(), p->output.begin(), p->output.end());
  } else {
    absl::StatusOr<std::vector<Dim>> d = MatMulDims(x, w);
    if (!d.ok()) return d.status();
    dims = *std::move(d);
  }
  return std::vector<TensorType>{TensorType(ctx.type(7).dtype, std::move(dims))};
}

// ConvInteger (x, w, x_zero_point, w_zero_point): shaped as Conv, i32 out.
InferResult InferConvInteger(const InferenceContext& ctx) {
  for (int i : {0, 1}) {
    absl::Status s = RequireInt8Operand(ctx, i, i == 0 ? "x" : "w");
    if (!s.ok()) return s;
  }
  absl::StatusOr<ConvParams> p = ResolveConvParams(ctx.node, ctx.type(0).dims, ctx.type(1).dims);
  if (!p.ok()) return p.status();
  std::vector<Dim> dims = {ctx.type(0).dims[0], ctx.type(1).dims[0]};
  dims.insert(dims.end(), p->output.begin(), p->output.end());
  return std::vector<TensorType>{TensorType(DType::kI32, std::move(dims))};
}

// MatMulInteger: u8 / i8 A and B with optional zero points (A's per tensor or per row, B's per tensor or
// per column), i32 out.
InferResult InferMatMulInteger(const InferenceContext& ctx) {
  for (int i = 0; i < 2; ++i) {
    const DType t = ctx.type(i).dtype;
    if (t != DType::kU8 && t != DType::kI8) {
      return absl::InvalidArgumentError(absl::StrCat(Label(ctx, i, i == 0 ? "A" : "B"), " has dtype ", DTypeName(t),
                                                     "; expected u8 or i8"));
    }
    if (ctx.has_input(2 + i)) {
      absl::Status s = RequireDType(ctx, 2 + i, i == 0 ? "a_zero_point" : "b_zero_point", t);
      if (!s.ok()) return s;
      if (ctx.type(2 + i).rank() > 1) {
        return absl::InvalidArgumentError(absl::StrCat(Label(ctx, 2 + i, i == 0 ? "a_zero_point" : "b_zero_point"),
                                                       " has type ", ctx.type(2 + i).ToString(),
                                                       "; expected a scalar or a vector"));
      }
    }
  }
  absl::StatusOr<std::vector<Dim>> dims = MatMulDims(ctx.type(0), ctx.type(1));
  if (!dims.ok()) return dims.status();
  return std::vector<TensorType>{TensorType(DType::kI32, *std::move(dims))};
}

InferResult InferGemm(const InferenceContext& ctx) {
  absl::Status s = RequireMatMulType(ctx, 0, "A");
  if (!s.ok()) return s;
  const DType dt = ctx.type(0).dtype;
  s = RequireDType(ctx, 1, "B", dt);
  if (!s.ok()) return s;
  for (int i = 0; i < 2; ++i) {
    s = RequireRank(ctx, i, i == 0 ? "A" : "B", 2);
    if (!s.ok()) return s;
  }
  const std::vector<Dim>& a = ctx.type(0).dims;
  const std::vector<Dim>& b = ctx.type(1).dims;
  const bool ta = ctx.node.GetInt("transA", 0) != 0;
  const bool tb = ctx.node.GetInt("transB", 0) != 0;
  const Dim& m = a[ta ? 1 : 0];
  const Dim& ka = a[ta ? 0 : 1];
  const Dim& kb = b[tb ? 1 : 0];
  const Dim& n = b[tb ? 0 : 1];
  if (ka.is_static() && kb.is_static() && ka.value() != kb.value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("A ", ctx.type(0).ToString(), " (transA=", ta, ") and B ", ctx.type(1).ToString(), " (transB=", tb,
                     ") disagree on the contracted dimension (", ka.value(), " vs ", kb.value(), ")"));
  }
  std::vector<Dim> dims = {m, n};
  if (ctx.has_input(2)) {
    s = RequireDType(ctx, 2, "C", dt);
    if (!s.ok()) return s;
    s = RequireUnidirectional(ctx, 2, "C", dims);
    if (!s.ok()) return s;
  }
  return std::vector<TensorType>{TensorType(dt, std::move(dims))};
}

InferResult InferSoftmax(const InferenceContext& ctx) {
  absl::Status s = RequireFloat(ctx, 0, "input");
  if (!s.ok()) return s;
  absl::StatusOr<int> axis = ResolveAxisAttr(ctx.node, "axis", -1, ctx.type(0).rank());
  if (!axis.ok()) return axis.status();
  return std::vector<TensorType>{TensorType(ctx.type(0).dtype, ctx.type(0).dims)};
}

// Y, and optionally Mean and InvStdDev: X's shape with the normalized axes kept as 1, in f32 (stash_type 1,
// the only one ONNX defines).
InferResult InferLayerNorm(const InferenceContext& ctx) {
  if (ctx.node.num_outputs() > 1 && ctx.node.GetInt("stash_type", 1) != 1) {
    return absl::UnimplementedError("LayerNormalization: stash_type other than 1 (float) is not supported");
  }
  absl::Status s = RequireFloat(ctx, 0, "X");
  if (!s.ok()) return s;
  const TensorType& x = ctx.type(0);
  absl::StatusOr<int> axis = ResolveAxisAttr(ctx.node, "axis", -1, x.rank());
  if (!axis.ok()) return axis.status();
  const std::vector<Dim> normalized(x.dims.begin() + *axis, x.dims.end());
  for (int i = 1; i <= 2; ++i) {
    if (!ctx.has_input(i)) continue;
    const char* role = i == 1 ? "Scale" : "B";
    s = RequireDType(ctx, i, role, x.dtype);
    if (!s.ok()) return s;
    s = RequireUnidirectional(ctx, i, role, normalized);
    if (!s.ok()) return s;
  }
  std::vector<TensorType> out = {TensorType(x.dtype, x.dims)};
  std::vector<Dim> stats(x.dims.begin(), x.dims.begin() + *axis);
  stats.resize(x.dims.size(), Dim(1));
  for (int i = 1; i < ctx.node.num_outputs(); ++i) out.push_back(TensorType(DType::kF32, stats));
  return out;
}

// Einsum: every label's extent is the broadcast of the dimensions it names (numpy and PyTorch let an
// extent of 1 stretch); the output has the extents of its labels.
InferResult InferEinsum(const InferenceContext& ctx) {
  const Attribute* eq = ctx.node.FindAttr("equation");
  if (eq == nullptr || eq->kind != Attribute::Kind::kString) {
    return absl::InvalidArgumentError("Einsum: needs a string attribute 'equation'");
  }
  std::vector<int> ranks;
  const DType dtype = ctx.type(0).dtype;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) return absl::InvalidArgumentError(absl::StrCat("Einsum: input ", i, " is missing"));
    if (ctx.type(i).dtype != dtype) {
      return absl::InvalidArgumentError(absl::StrCat("Einsum equation '", eq->s, "': input ", i, " is ",
                                                     ctx.type(i).ToString(), " but input 0 is ",
                                                     ctx.type(0).ToString(), "; all inputs need one dtype"));
    }
    ranks.push_back(ctx.type(i).rank());
  }
  if (dtype != DType::kF32 && dtype != DType::kF64 && dtype != DType::kI32 && dtype != DType::kI64) {
    return absl::UnimplementedError(absl::StrCat("Einsum equation '", eq->s, "': dtype ", DTypeName(dtype),
                                                 " is not supported (f32, f64, i32 or i64)"));
  }
  absl::StatusOr<EinsumSpec> spec = ParseEinsum(eq->s, ranks);
  if (!spec.ok()) return spec.status();
  std::map<int, Dim> extent;
  for (size_t i = 0; i < spec->inputs.size(); ++i) {
    for (size_t d = 0; d < spec->inputs[i].size(); ++d) {
      const int label = spec->inputs[i][d];
      const Dim& dim = ctx.type(i).dims[d];
      auto it = extent.find(label);
      if (it == extent.end()) {
        extent.emplace(label, dim);
        continue;
      }
      absl::StatusOr<Dim> b = BroadcastDim(it->second, dim);
      if (!b.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Einsum equation '", eq->s, "': dimension ", d, " of input ", i, " ", ctx.type(i).ToString(),
            label < kEinsumEllipsisLabel ? " (a subscript" : " (under '...'", " shared with an earlier dimension): ",
            b.status().message()));
      }
      it->second = *b;
    }
  }
  std::vector<Dim> dims;
  for (int label : spec->output) dims.push_back(extent.at(label));
  return std::vector<TensorType>{TensorType(dtype, std::move(dims))};
}

// X [N, C, ...]; epsilon must be non-negative so that the square root of the variance plus it is real.
absl::Status RequireNormInput(const InferenceContext& ctx) {
  absl::Status s = RequireFloat(ctx, 0, "X");
  if (!s.ok()) return s;
  const TensorType& x = ctx.type(0);
  if (x.rank() < 2) {
    return absl::InvalidArgumentError(absl::StrCat(Label(ctx, 0, "X"), " has type ", x.ToString(),
                                                   "; expected [N, C, ...]"));
  }
  const float eps = ctx.node.GetFloat("epsilon", 1e-5f);
  if (!(eps >= 0)) return absl::InvalidArgumentError(absl::StrCat("epsilon ", eps, " must be non-negative"));
  return absl::OkStatus();
}

// InstanceNormalization: each (n, c) plane normalized to zero mean and unit variance, then scaled and
// shifted per channel.
InferResult InferInstanceNorm(const InferenceContext& ctx) {
  absl::Status s = RequireNormInput(ctx);
  if (!s.ok()) return s;
  const TensorType& x = ctx.type(0);
  for (int i = 1; i <= 2; ++i) {
    s = RequireVector(ctx, i, i == 1 ? "scale" : "B", x.dims[1], x.dtype);
    if (!s.ok()) return s;
  }
  return std::vector<TensorType>{x};
}

// GroupNormalization: the C channels in num_groups groups of C / num_groups, each (n, group) normalized
// together. Scale and bias have one entry per group (opset 18) or per channel (opset 21); when
// num_groups == C the two forms are the same. The importer rejects the per-channel form in models
// below opset 21.
InferResult InferGroupNorm(const InferenceContext& ctx) {
  absl::Status s = RequireNormInput(ctx);
  if (!s.ok()) return s;
  const TensorType& x = ctx.type(0);
  const Attribute* groups = ctx.node.FindAttr("num_groups");
  if (groups == nullptr || groups->kind != Attribute::Kind::kInt || groups->i < 1) {
    return absl::InvalidArgumentError("GroupNormalization: needs a positive integer attribute 'num_groups'");
  }
  if (ctx.node.GetInt("stash_type", 1) != 1) {
    return absl::UnimplementedError("GroupNormalization: stash_type other than 1 (float) is not supported");
  }
  const Dim& c = x.dims[1];
  if (c.is_static() && c.value() % groups->i != 0) {
    return absl::InvalidArgumentError(absl::StrCat("GroupNormalization: ", c.value(), " channels of X ",
                                                   x.ToString(), " do not split into num_groups ", groups->i,
                                                   " equal groups"));
  }
  for (int i = 1; i <= 2; ++i) {
    const char* role = i == 1 ? "scale" : "bias";
    s = RequireDType(ctx, i, role, x.dtype);
    if (s.ok()) s = RequireRank(ctx, i, role, 1);
    if (!s.ok()) return s;
    const Dim& n = ctx.type(i).dims[0];
    if (n.is_static() && n.value() != groups->i && !(c.is_static() && n.value() == c.value())) {
      return absl::InvalidArgumentError(absl::StrCat(
          Label(ctx, i, role), " has ", n.value(), " elements; expected num_groups (", groups->i,
          ", opset 18) or the channel count (", c.is_static() ? absl::StrCat(c.value()) : c.symbol(), ", opset 21)"));
    }
  }
  if (ctx.has_input(1) && ctx.has_input(2) && ctx.type(1).dims[0].is_static() && ctx.type(2).dims[0].is_static() &&
      ctx.type(1).dims[0].value() != ctx.type(2).dims[0].value()) {
    return absl::InvalidArgumentError(absl::StrCat("GroupNormalization: scale ", ctx.type(1).ToString(), " and bias ",
                                                   ctx.type(2).ToString(), " must have the same length"));
  }
  return std::vector<TensorType>{x};
}

InferResult InferReduce(const InferenceContext& ctx) {
  const TensorType& x = ctx.type(0);
  if (!IsFloat(x.dtype) && x.dtype != DType::kI32 && x.dtype != DType::kI64) {
    return absl::InvalidArgumentError(
        absl::StrCat(Label(ctx, 0, "data"), " has dtype ", DTypeName(x.dtype), "; expected a float, i32 or i64"));
  }
  const Tensor* axes = nullptr;
  if (HasNonEmptyInput(ctx, 1)) {
    absl::Status s = RequireDType(ctx, 1, "axes", DType::kI64);
    if (!s.ok()) return s;
    s = RequireRank(ctx, 1, "axes", 1);
    if (!s.ok()) return s;
    axes = ctx.value(1);
    if (axes == nullptr) {
      // Which axes shrink is unknown until run time; without keepdims the output loses as many axes as
      // axes lists (its length must be known then).
      if (ctx.node.GetInt("keepdims", 1) == 0) {
        const Dim& count = ctx.type(1).dims[0];
        if (!count.is_static() || count.value() > x.rank()) {
          return absl::UnimplementedError(
              "axes must be a constant, or of a known length, when keepdims=0 (the output rank depends on it)");
        }
        return std::vector<TensorType>{
            TensorType(x.dtype, std::vector<Dim>(static_cast<size_t>(x.rank() - count.value()), UnknownDim()))};
      }
      std::vector<Dim> dims;
      for (int i = 0; i < x.rank(); ++i)
        dims.push_back(x.dims[i].is_static() && x.dims[i].value() == 1 ? Dim(1) : UnknownDim());
      return std::vector<TensorType>{TensorType(x.dtype, std::move(dims))};
    }
  }
  absl::StatusOr<ReduceParams> p = ResolveReduceParams(ctx.node, x.rank(), axes);
  if (!p.ok()) return p.status();
  std::vector<Dim> dims;
  for (int i = 0; i < x.rank(); ++i) {
    if (!p->reduced[i]) {
      dims.push_back(x.dims[i]);
    } else if (p->keepdims) {
      dims.push_back(Dim(1));
    }
  }
  return std::vector<TensorType>{TensorType(x.dtype, std::move(dims))};
}

// ArgMax and ArgMin: the index (i64) of the extreme along `axis`, kept as extent 1 or dropped.
InferResult InferArgExtreme(const InferenceContext& ctx) {
  const TensorType& x = ctx.type(0);
  if (!IsFloat(x.dtype) && x.dtype != DType::kI32 && x.dtype != DType::kI64) {
    return absl::InvalidArgumentError(
        absl::StrCat(Label(ctx, 0, "data"), " has dtype ", DTypeName(x.dtype), "; expected a float, i32 or i64"));
  }
  absl::StatusOr<int> axis = ResolveAxisAttr(ctx.node, "axis", 0, x.rank());
  if (!axis.ok()) return axis.status();
  std::vector<Dim> dims;
  for (int i = 0; i < x.rank(); ++i) {
    if (i != *axis) {
      dims.push_back(x.dims[i]);
    } else if (ctx.node.GetInt("keepdims", 1) != 0) {
      dims.push_back(Dim(1));
    }
  }
  return std::vector<TensorType>{TensorType(DType::kI64, std::move(dims))};
}

// TopK: the k largest (or smallest) entries along `axis` and their i64 indices. K is a one-element i64
// input; when it is not constant the extent along the axis is unknown until run time.
InferResult InferTopK(const InferenceContext& ctx) {
  const TensorType& x = ctx.type(0);
  if (!IsFloat(x.dtype) && x.dtype != DType::kI32 && x.dtype != DType::kI64) {
    return absl::InvalidArgumentError(
        absl::StrCat(Label(ctx, 0, "X"), " has dtype ", DTypeName(x.dtype), "; expected a float, i32 or i64"));
  }
  absl::Status s = RequireDType(ctx, 1, "K", DType::kI64);
  if (!s.ok()) return s;
  const TensorType& k_type = ctx.type(1);
  if (k_type.rank() > 1 || (k_type.is_static() && k_type.NumElements() != 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat(Label(ctx, 1, "K"), " has type ", k_type.ToString(), "; expected one element"));
  }
  absl::StatusOr<int> axis = ResolveAxisAttr(ctx.node, "axis", -1, x.rank());
  if (!axis.ok()) return axis.status();
  std::vector<Dim> dims = x.dims;
  dims[*axis] = UnknownDim();
  if (const Tensor* k = ctx.value(1)) {
    const int64_t kv = k->GetAsInt64(0);
    const Dim& extent = x.dims[*axis];
    if (kv < 0 || (extent.is_static() && kv > extent.value())) {
      return absl::InvalidArgumentError(absl::StrCat("TopK: k = ", kv, " is outside [0, ",
                                                     extent.is_static() ? absl::StrCat(extent.value()) : "axis extent",
                                                     "] for axis ", *axis, " of ", x.ToString()));
    }
    dims[*axis] = kv;
  }
  return std::vector<TensorType>{TensorType(x.dtype, dims), TensorType(DType::kI64, dims)};
}

// A scalar integer input's value when known (DFT's dft_length, STFT's frame_step and frame_length).
absl::StatusOr<std::optional<int64_t>> ScalarInt(const InferenceContext& ctx, int i, const char* role) {
  if (!ctx.has_input(i)) return std::optional<int64_t>();
  const TensorType& t = ctx.type(i);
  if ((t.dtype != DType::kI32 && t.dtype != DType::kI64) || (t.is_static() && t.NumElements() != 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat(Label(ctx, i, role), " has type ", t.ToString(), "; expected an i32 or i64 scalar"));
  }
  const Tensor* v = ctx.value(i);
  if (v == nullptr) return std::optional<int64_t>();
  const int64_t n = v->GetAsInt64(0);
  if (n < 1) return absl::InvalidArgumentError(absl::StrCat(Label(ctx, i, role), " is ", n, "; expected >= 1"));
  return std::optional<int64_t>(n);
}

// DFT (opset 17): input [batch, ..., 1 or 2] (real, or real and imaginary last), the transform along `axis`
// (not the batch or the last axis) of dft_length points (zero-padded or truncated; default the axis's
// extent), onesided keeping n / 2 + 1 bins; output [..., 2].
InferResult InferDft(const InferenceContext& ctx) {
  const TensorType& x = ctx.type(0);
  if (x.dtype != DType::kF32 && x.dtype != DType::kF64) {
    return absl::InvalidArgumentError(absl::StrCat(Label(ctx, 0, "input"), " has dtype ", DTypeName(x.dtype),
                                                   "; expected f32 or f64"));
  }
  const int rank = x.rank();
  if (rank < 3 || (x.dims[rank - 1].is_static() && x.dims[rank - 1].value() != 1 && x.dims[rank - 1].value() != 2)) {
    return absl::InvalidArgumentError(absl::StrCat(Label(ctx, 0, "input"), " has type ", x.ToString(),
                                                   "; expected [batch, ..., 1 or 2] of rank >= 3"));
  }
  int64_t axis = ctx.node.GetInt("axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 1 || axis > rank - 2) {
    return absl::InvalidArgumentError(absl::StrCat("axis ", ctx.node.GetInt("axis", 1), " must name a signal axis (1..",
                                                   rank - 2, ") of ", x.ToString()));
  }
  const bool inverse = ctx.node.GetInt("inverse", 0) != 0, onesided = ctx.node.GetInt("onesided", 0) != 0;
  if (inverse && onesided) return absl::UnimplementedError("DFT with both inverse and onesided is not supported");
  absl::StatusOr<std::optional<int64_t>> len = ScalarInt(ctx, 1, "dft_length");
  if (!len.ok()) return len.status();
  Dim n = x.dims[axis];
  if (ctx.has_input(1)) n = len->has_value() ? Dim(**len) : UnknownDim();
  std::vector<Dim> dims = x.dims;
  dims[axis] = onesided ? (n.is_static() ? Dim(n.value() / 2 + 1) : UnknownDim()) : n;
  dims[rank - 1] = 2;
  return std::vector<TensorType>{TensorType(x.dtype, dims)};
}

// STFT (opset 17): signal [batch, length, 1 or 2], frame_step, optional window [frame_length] and
// frame_length; output [batch, frames, bins, 2], frames = (length - frame_length) / step + 1, bins
// frame_length / 2 + 1 when onesided (the default) else frame_length.
InferResult InferStft(const InferenceContext& ctx) {
  const TensorType& x = ctx.type(0);
  if (x.dtype != DType::kF32 && x.dtype != DType::kF64) {
    return absl::InvalidArgumentError(absl::StrCat(Label(ctx, 0, "signal"), " has dtype ", DTypeName(x.dtype),
                                                   "; expected f32 or f64"));
  }
  if (x.rank() != 3 || (x.dims[2].is_static() && x.dims[2].value() != 1 && x.dims[2].value() != 2)) {
    return absl::InvalidArgumentError(absl::StrCat(Label(ctx, 0, "signal"), " has type ", x.ToString(),
                                                   "; expected [batch, length, 1 or 2]"));
  }
  absl::StatusOr<std::optional<int64_t>> step = ScalarInt(ctx, 1, "frame_step");
  if (!step.ok()) return step.status();
  absl::StatusOr<std::optional<int64_t>> length = ScalarInt(ctx, 3, "frame_length");
  if (!length.ok()) return length.status();
  Dim frame = UnknownDim();
  if (length->has_value()) {
    frame = **length;
  } else if (ctx.has_input(3)) {
    // frame_length known only at run time.
  } else if (ctx.has_input(2)) {
    const TensorType& w = ctx.type(2);
    if (w.rank() != 1 || w.dtype != x.dtype) {
      return absl::InvalidArgumentError(absl::StrCat(Label(ctx, 2, "window"), " has type ", w.ToString(),
                                                     "; expected a 1-D ", DTypeName(x.dtype), " tensor"));
    }
    frame = w.dims[0];
  } else {
    return absl::InvalidArgumentError("STFT needs a window or a frame_length");
  }
  const bool onesided = ctx.node.GetInt("onesided", 1) != 0;
  Dim frames = UnknownDim();
  if (frame.is_static() && step->has_value() && x.dims[1].is_static()) {
    if (frame.value() > x.dims[1].value()) {
      return absl::InvalidArgumentError(absl::StrCat("STFT frame_length ", frame.value(), " exceeds the signal's ",
                                                     x.dims[1].value(), " samples"));
    }
    frames = (x.dims[1].value() - frame.value()) / **step + 1;
  }
  const Dim bins = !frame.is_static() ? UnknownDim() : onesided ? Dim(frame.value() / 2 + 1) : frame;
  return std::vector<TensorType>{TensorType(x.dtype, {x.dims[0], frames, bins, Dim(2)})};
}

// MelWeightMatrix (opset 17): num_mel_bins, dft_length, sample_rate (integer scalars), lower and upper
// edge hertz (float scalars) -> [dft_length / 2 + 1, num_mel_bins] of output_datatype (default f32).
InferResult InferMelWeightMatrix(const InferenceContext& ctx) {
  absl::StatusOr<std::optional<int64_t>> bins = ScalarInt(ctx, 0, "num_mel_bins");
  if (!bins.ok()) return bins.status();
  absl::StatusOr<std::optional<int64_t>> length = ScalarInt(ctx, 1, "dft_length");
  if (!length.ok()) return length.status();
  absl::StatusOr<std::optional<int64_t>> rate = ScalarInt(ctx, 2, "sample_rate");
  if (!rate.ok()) return rate.status();
  absl::StatusOr<DType> dtype = DTypeFromOnnxDataType(ctx.node.GetInt("output_datatype", 1));
  if (!dtype.ok()) return dtype.status();
  if (*dtype != DType::kF32 && *dtype != DType::kF64) {
    return absl::UnimplementedError(
        absl::StrCat("MelWeightMatrix output_datatype ", DTypeName(*dtype), " is not supported (f32 or f64)"));
  }
  const Dim rows = length->has_value() ? Dim(**length / 2 + 1) : UnknownDim();
  const Dim cols = bins->has_value() ? Dim(**bins) : UnknownDim();
  return std::vector<TensorType>{TensorType(*dtype, {rows, cols})};
}

// CumSum: running sums along the axis given as a scalar integer input (exclusive and reverse attributes).
InferResult InferCumSum(const InferenceContext& ctx) {
  const TensorType& x = ctx.type(0);
  if (x.dtype != DType::kF32 && x.dtype != DType::kF64 && x.dtype != DType::kI32 && x.dtype != DType::kI64) {
    return absl::InvalidArgumentError(
        absl::StrCat(Label(ctx, 0, "x"), " has dtype ", DTypeName(x.dtype), "; expected f32, f64, i32 or i64"));
  }
  const TensorType& axis = ctx.type(1);
  if ((axis.dtype != DType::kI32 && axis.dtype != DType::kI64) || axis.rank() > 1 ||
      (axis.is_static() && axis.NumElements() != 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat(Label(ctx, 1, "axis"), " has type ", axis.ToString(), "; expected an i32 or i64 scalar"));
  }
  if (const Tensor* a = ctx.value(1)) {
    absl::StatusOr<int> resolved = NormalizeAxis(a->GetAsInt64(0), x.rank(), "CumSum");
    if (!resolved.ok()) return resolved.status();
  }
  return std::vector<TensorType>{x};
}

InferResult InferPad(const InferenceContext& ctx) {
  const TensorType& x = ctx.type(0);
  if (x.dtype == DType::kI4) return absl::UnimplementedError("Pad of packed i4 data is not supported");
  absl::Status s = RequireDType(ctx, 1, "pads", DType::kI64);
  if (!s.ok()) return s;
  s = RequireRank(ctx, 1, "pads", 1);
  if (!s.ok()) return s;
  if (ctx.has_input(2)) {
    s = RequireDType(ctx, 2, "constant_value", x.dtype);
    if (!s.ok()) return s;
    const int64_t n = ctx.type(2).NumElements();
    if (ctx.type(2).rank() > 1 || (n >= 0 && n != 1)) {
      return absl::InvalidArgumentError(
          absl::StrCat(Label(ctx, 2, "constant_value"), " has type ", ctx.type(2).ToString(), "; expected a scalar"));
    }
  }
  const Tensor* axes_value = nullptr;
  if (ctx.has_input(3)) {
    const DType t = ctx.type(3).dtype;
    if (t != DType::kI32 && t != DType::kI64) {
      return absl::InvalidArgumentError(
          absl::StrCat(Label(ctx, 3, "axes"), " has dtype ", DTypeName(t), "; expected i32 or i64"));
    }
    s = RequireRank(ctx, 3, "axes", 1);
    if (!s.ok()) return s;
    axes_value = ctx.value(3);
  }
  absl::StatusOr<PadMode> mode = ResolvePadMode(ctx.node);
  if (!mode.ok()) return mode.status();
  std::vector<Dim> dims = x.dims;
  const bool axes_known = !ctx.has_input(3) || axes_value != nullptr;
  if (ctx.value(1) == nullptr || !axes_known) {
    if (!axes_known) {
      for (Dim& d : dims) d = UnknownDim();
    } else {
      absl::StatusOr<std::vector<int>> axes = ResolvePadAxes(x.rank(), axes_value);
      if (!axes.ok()) return axes.status();
      for (int a : *axes) dims[a] = UnknownDim();
    }
    return std::vector<TensorType>{TensorType(x.dtype, std::move(dims))};
  }
  absl::StatusOr<PadParams> p = ResolvePadParams(ctx.node, x.rank(), *ctx.value(1), axes_value);
  if (!p.ok()) return p.status();
  for (int i = 0; i < x.rank(); ++i) {
    const int64_t b = p->begin[i];
    const int64_t e = p->end[i];
    if (b == 0 && e == 0) continue;
    if (!x.dims[i].is_static()) {
      dims[i] = UnknownDim();
      continue;
    }
    const int64_t in = x.dims[i].value();
    if (in + b + e < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("pads ", b, ",", e, " crop axis ", i, " of extent ", in, " below zero"));
    }
    if (p->mode != PadMode::kConstant && in == 0 && (b > 0 || e > 0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot ", p->mode == PadMode::kEdge ? "edge" : "reflect", "-pad axis ", i, ", which is empty"));
    }
    dims[i] = in + b + e;
  }
  return std::vector<TensorType>{TensorType(x.dtype, std::move(dims))};
}

InferResult InferResize(const InferenceContext& ctx) {
  const TensorType& x = ctx.type(0);
  if (x.dtype == DType::kI4) return absl::UnimplementedError("Resize of packed i4 data is not supported");
  const bool has_scales = HasNonEmptyInput(ctx, 2);
  const bool has_sizes = HasNonEmptyInput(ctx, 3);
  if (has_scales) {
    absl::Status s = RequireDType(ctx, 2, "scales", DType::kF32);
    if (!s.ok()) return s;
  }
  if (has_sizes) {
    absl::Status s = RequireDType(ctx, 3, "sizes", DType::kI64);
    if (!s.ok()) return s;
  }
  absl::StatusOr<ResizeParams> p =
      ResolveResizeParams(ctx.node, x.dims, has_scales, ctx.value(2), has_sizes, ctx.value(3), ctx.value(1));
  if (!p.ok()) return p.status();
  if (p->mode != ResizeParams::Mode::kNearest) {
    absl::Status s = RequireFloat(ctx, 0, "X");
    if (!s.ok()) return s;
  }
  return std::vector<TensorType>{TensorType(x.dtype, p->output)};
}

}  // namespace

void RegisterNnOps(OpRegistry& r) {
  r.Register({"Conv", "", 2, 3, 1, 1, WithRequiredInputs(2, InferConv),
              "N-d convolution with optional bias, groups, strides, dilations, pads or auto_pad"});
  r.Register({"ConvTranspose", "", 2, 3, 1, 1, WithRequiredInputs(2, InferConvTranspose),
              "N-d transposed convolution with groups, strides, dilations, pads, output_padding or output_shape"});
  r.Register({"RNN", "", 3, 6, 1, 2, WithRequiredInputs(3, InferRnn),
              "Elman RNN over a sequence (forward, reverse or bidirectional; layout 0 or 1)"});
  r.Register({"GRU", "", 3, 6, 1, 2, WithRequiredInputs(3, InferRnn),
              "GRU over a sequence (forward, reverse or bidirectional; linear_before_reset; layout 0 or 1)"});
  r.Register({"LSTM", "", 3, 8, 1, 3, WithRequiredInputs(3, InferRnn),
              "LSTM over a sequence (forward, reverse or bidirectional; peepholes; layout 0 or 1)"});
  r.Register({"BatchNormalization", "", 5, 5, 1, 3, WithRequiredInputs(5, InferBatchNorm),
              "inference-mode batch normalization with running statistics"});
  r.Register({"MaxPool", "", 1, 1, 1, 2, WithRequiredInputs(1, InferPool),
              "N-d max pooling; optional Indices: each maximum's flat index into X (storage_order 1: spatial axes "
              "column-major)"});
  r.Register({"AveragePool", "", 1, 1, 1, 1, WithRequiredInputs(1, InferPool),
              "N-d average pooling with count_include_pad and ceil_mode"});
  r.Register({"Det", "", 1, 1, 1, 1, WithRequiredInputs(1, InferDet),
              "determinant of each square matrix in the last two axes (LU with partial pivoting)"});
  r.Register({"MaxUnpool", "", 2, 3, 1, 1, WithRequiredInputs(2, InferMaxUnpool),
              "scatters X to the flat positions its MaxPool Indices give, zeros elsewhere"});
  r.Register({"GlobalAveragePool", "", 1, 1, 1, 1, WithRequiredInputs(1, InferGlobalPool),
              "mean over all spatial dimensions"});
  r.Register({"GlobalMaxPool", "", 1, 1, 1, 1, WithRequiredInputs(1, InferGlobalPool),
              "maximum over all spatial dimensions"});
  r.Register({"MeanVarianceNormalization", "", 1, 1, 1, 1, WithRequiredInputs(1, InferMvn),
              "(x - mean) / (sqrt(mean(x^2) - mean^2) + 1e-9) over axes (default 0, 2, 3)"});
  r.Register({"LRN", "", 1, 1, 1, 1, WithRequiredInputs(1, InferLrn),
              "local response normalization across channels: x / (bias + alpha / size * sum x^2)^beta"});
  r.Register({"MatMul", "", 2, 2, 1, 1, WithRequiredInputs(2, InferMatMul),
              "numpy matmul: 1-D operands and broadcast batch dimensions"});
  r.Register({"QLinearConv", "", 8, 9, 1, 1, WithRequiredInputs(8, InferQLinear),
              "u8 / i8 convolution with zero points and scales, requantized to y_scale, y_zero_point"});
  r.Register({"ConvInteger", "", 2, 4, 1, 1, WithRequiredInputs(2, InferConvInteger),
              "(x - x_zero_point) conv (w - w_zero_point) of u8 / i8 tensors in i32"});
  r.Register({"QLinearMatMul", "", 8, 8, 1, 1, WithRequiredInputs(8, InferQLinear),
              "u8 / i8 matmul with zero points and scales, requantized to y_scale, y_zero_point"});
  r.Register({"MatMulInteger", "", 2, 4, 1, 1, WithRequiredInputs(2, InferMatMulInteger),
              "(A - a_zero_point) x (B - b_zero_point) of u8 / i8 matrices in i32, numpy batching"});
  r.Register({"Gemm", "", 2, 3, 1, 1, WithRequiredInputs(2, InferGemm),
              "alpha * op(A) * op(B) + beta * C with optional transposes"});
  r.Register({"Einsum", "", 1, std::numeric_limits<int>::max(), 1, 1, WithRequiredInputs(1, InferEinsum),
              "sum of products over an Einstein-summation equation (implicit or explicit output, '...', diagonals)"});
  r.Register({"Softmax", "", 1, 1, 1, 1, WithRequiredInputs(1, InferSoftmax), "softmax along one axis (opset 13)"});
  r.Register({"ArgMax", "", 1, 1, 1, 1, WithRequiredInputs(1, InferArgExtreme),
              "index of the maximum along an axis (first, or last with select_last_index)"});
  r.Register({"ArgMin", "", 1, 1, 1, 1, WithRequiredInputs(1, InferArgExtreme),
              "index of the minimum along an axis (first, or last with select_last_index)"});
  r.Register({"LogSoftmax", "", 1, 1, 1, 1, WithRequiredInputs(1, InferSoftmax),
              "log of the softmax along one axis (opset 13)"});
  r.Register({"Hardmax", "", 1, 1, 1, 1, WithRequiredInputs(1, InferSoftmax),
              "one at the first maximum along one axis, zero elsewhere (opset 13)"});
  r.Register({"LayerNormalization", "", 2, 3, 1, 3, WithRequiredInputs(2, InferLayerNorm),
              "normalization over the trailing dimensions from axis, with scale and optional bias"});
  r.Register({"InstanceNormalization", "", 3, 3, 1, 1, WithRequiredInputs(3, InferInstanceNorm),
              "per-(sample, channel) normalization over the spatial dimensions, with per-channel scale and bias"});
  r.Register({"GroupNormalization", "", 3, 3, 1, 1, WithRequiredInputs(3, InferGroupNorm),
              "normalization over groups of channels, with per-group (opset 18) or per-channel (opset 21) scale"});
  r.Register({"ReduceMean", "", 1, 2, 1, 1, WithRequiredInputs(1, InferReduce),
              "mean over the axes given as input (opset 18)"});
  r.Register({"ReduceSum", "", 1, 2, 1, 1, WithRequiredInputs(1, InferReduce), "sum over the axes given as input"});
  r.Register({"ReduceMax", "", 1, 2, 1, 1, WithRequiredInputs(1, InferReduce), "maximum over the axes (opset 18)"});
  r.Register({"ReduceMin", "", 1, 2, 1, 1, WithRequiredInputs(1, InferReduce), "minimum over the axes (opset 18)"});
  r.Register({"ReduceProd", "", 1, 2, 1, 1, WithRequiredInputs(1, InferReduce), "product over the axes (opset 18)"});
  r.Register({"ReduceL1", "", 1, 2, 1, 1, WithRequiredInputs(1, InferReduce), "sum of |x| over the axes (opset 18)"});
  r.Register({"ReduceL2", "", 1, 2, 1, 1, WithRequiredInputs(1, InferReduce),
              "sqrt of the sum of x^2 over the axes (opset 18)"});
  r.Register({"ReduceLogSum", "", 1, 2, 1, 1, WithRequiredInputs(1, InferReduce),
              "log of the sum over the axes (opset 18)"});
  r.Register({"ReduceLogSumExp", "", 1, 2, 1, 1, WithRequiredInputs(1, InferReduce),
              "log of the sum of e^x over the axes (opset 18)"});
  r.Register({"ReduceSumSquare", "", 1, 2, 1, 1, WithRequiredInputs(1, InferReduce),
              "sum of x^2 over the axes (opset 18)"});
  r.Register({"TopK", "", 2, 2, 2, 2, WithRequiredInputs(2, InferTopK),
              "the k largest or smallest entries along an axis and their indices (ties: lower index first)"});
  r.Register({"CumSum", "", 2, 2, 1, 1, WithRequiredInputs(2, InferCumSum),
              "running sum along an axis (exclusive, reverse)"});
  r.Register({"DFT", "", 1, 2, 1, 1, WithRequiredInputs(1, InferDft),
              "discrete Fourier transform along an axis (inverse, onesided; real or complex as [..., 2])"});
  r.Register({"MelWeightMatrix", "", 5, 5, 1, 1, WithRequiredInputs(5, InferMelWeightMatrix),
              "triangular mel filter bank weights [dft_length / 2 + 1, num_mel_bins]"});
  r.Register({"STFT", "", 2, 4, 1, 1, WithRequiredInputs(2, InferStft),
              "short-time Fourier transform of [batch, length, 1 or 2] frames (window, onesided)"});
  r.Register({"Pad", "", 2, 4, 1, 1, WithRequiredInputs(2, InferPad),
              "constant, reflect or edge padding (negative pads crop)"});
  r.Register({"Resize", "", 1, 4, 1, 1, WithRequiredInputs(1, InferResize),
              "nearest or N-linear resize to scales or sizes, with ONNX coordinate transforms"});
}

}  // namespace tessel
