// Schemas for quantized inference: ONNX QuantizeLinear / DequantizeLinear (per-tensor) and Tessel's
// integer operators (domain "tessel"), produced by the quantize-int8 pass:
//   QConv(X, W, B?, Residual?)   clamp(y_zp + rq(conv(X - x_zp, W) + B) + rq_r(Residual - r_zp))
//   QGemm(A, W, B?)              the same for A [M, K] and W [N, K] (one output channel per row of W)
//   QAdd(A, B)                   clamp(y_zp + rq_a(A - a_zp) + rq_b(B - b_zp)), same shapes
//   QMaxPool, QAvgPool, QGlobalAvgPool   pooling on quantized data; output scale and zero point = input's
// X, Residual, A and Y are u8 or i8 (one dtype per node); W is i8 (symmetric, per output channel); B is
// i32 in units of x_scale * w_scale[m]. rq(v) = RequantizeF32(v, RequantizeScale(multiplier[m], shift[m])):
// v times the f32 scale multiplier * 2^(shift - 31), rounded half to even (kernels/int8/requantize.h);
// `multiplier` / `shift` hold one entry per output channel or one for all.
// act_min / act_max are the output clamp (a folded ReLU or ReLU6, else the dtype's range). Convolution
// and pooling attributes are the ONNX ones plus `layout` ("nchw" or "nhwc", weights as FusedConv has them).
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/onnx_data_type.h"
#include "graph/op_registry.h"
#include "graph/ops/nn_params.h"
#include "graph/ops/quant_ops.h"
#include "graph/ops/shape_util.h"

namespace tessel {
namespace {

using InferResult = absl::StatusOr<std::vector<TensorType>>;

std::string Label(const InferenceContext& ctx, int i, const char* role) {
  const Value* v = ctx.node.input(i);
  return v == nullptr ? absl::StrCat("input ", role) : absl::StrCat("input ", role, " ('", v->name(), "')");
}

absl::Status RequireDType(const InferenceContext& ctx, int i, const char* role, DType want) {
  const DType t = ctx.type(i).dtype;
  if (t == want) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(Label(ctx, i, role), " has dtype ", DTypeName(t), "; expected ", DTypeName(want)));
}

absl::Status RequireQuantized(const InferenceContext& ctx, int i, const char* role) {
  const DType t = ctx.type(i).dtype;
  if (t == DType::kU8 || t == DType::kI8) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(Label(ctx, i, role), " has dtype ", DTypeName(t), "; expected u8 or i8"));
}

// A scale or zero point of QuantizeLinear / DequantizeLinear: one element (per tensor), or a vector with
// one entry per index of x along attribute `axis` (default 1; per axis, opset 13).
absl::Status RequireScalarOrAxis(const InferenceContext& ctx, int i, const char* role) {
  const TensorType& t = ctx.type(i);
  if (t.rank() == 0 || (t.rank() == 1 && t.dims[0].is_static() && t.dims[0].value() == 1)) return absl::OkStatus();
  const TensorType& x = ctx.type(0);
  int64_t axis = ctx.node.GetInt("axis", 1);
  if (axis < 0) axis += x.rank();
  if (axis < 0 || axis >= x.rank()) {
    return absl::InvalidArgumentError(absl::StrCat("attribute axis = ", ctx.node.GetInt("axis", 1),
                                                   " is outside x's rank ", x.rank(), " (per-axis ", role, ")"));
  }
  const Dim& n = x.dims[axis];
  if (t.rank() == 1 && t.dims[0].is_static() && n.is_static() && t.dims[0].value() == n.value()) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(Label(ctx, i, role), " has type ", t.ToString(),
                                                 "; expected one element (per tensor) or ", n.ToString(),
                                                 " (one per index of x along axis ", axis, ")"));
}

absl::Status CheckInDTypeRange(const Node& node, const char* attr, int64_t def, DType dt) {
  const int64_t v = node.GetInt(attr, def);
  const int64_t lo = dt == DType::kU8 ? 0 : -128;
  const int64_t hi = dt == DType::kU8 ? 255 : 127;
  if (v >= lo && v <= hi) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("attribute ", attr, " = ", v, " is outside the ", DTypeName(dt),
                                                 " range [", lo, ", ", hi, "]"));
}

// A requantization: `<prefix>multiplier` and `<prefix>shift` with 1 or `channels` entries,
// multipliers in [0, 2^31) and shifts in [-31, 30] (what QuantizeMultiplier produces).
absl::Status CheckRequant(const Node& node, const std::string& prefix, const Dim& channels) {
  const std::vector<int64_t> m = node.GetInts(prefix + "multiplier");
  const std::vector<int64_t> s = node.GetInts(prefix + "shift");
  if (m.empty() || m.size() != s.size()) {
    return absl::InvalidArgumentError(absl::StrCat("attributes ", prefix, "multiplier and ", prefix,
                                                   "shift must be present with the same length; got ", m.size(),
                                                   " and ", s.size()));
  }
  if (m.size() != 1 && channels.is_static() && static_cast<int64_t>(m.size()) != channels.value()) {
    return absl::InvalidArgumentError(absl::StrCat("attribute ", prefix, "multiplier has ", m.size(),
                                                   " entries; expected 1 or ", channels.value(), " (one per channel)"));
  }
  for (size_t i = 0; i < m.size(); ++i) {
    if (m[i] < 0 || m[i] > 0x7fffffff || s[i] < -31 || s[i] > 30) {
      return absl::InvalidArgumentError(absl::StrCat("requantization ", prefix, "multiplier[", i, "] = ", m[i],
                                                     ", shift = ", s[i],
                                                     " out of range (multiplier in [0, 2^31), shift in [-31, 30])"));
    }
  }
  return absl::OkStatus();
}

// The output clamp and zero point of a compute node whose output dtype is `dt`.
absl::Status CheckOutput(const Node& node, DType dt) {
  const int64_t lo = dt == DType::kU8 ? 0 : -128;
  const int64_t hi = dt == DType::kU8 ? 255 : 127;
  for (const absl::Status& s : {CheckInDTypeRange(node, "y_zero_point", 0, dt), CheckInDTypeRange(node, "act_min", lo, dt),
                                CheckInDTypeRange(node, "act_max", hi, dt)}) {
    if (!s.ok()) return s;
  }
  if (node.GetInt("act_min", lo) > node.GetInt("act_max", hi)) {
    return absl::InvalidArgumentError("attribute act_min is greater than act_max");
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> ChannelsLast(const Node& node) {
  const std::string layout = node.GetString("layout", "nchw");
  if (layout == "nchw") return false;
  if (layout == "nhwc") return true;
  return absl::InvalidArgumentError(absl::StrCat("attribute layout is '", layout, "'; expected \"nchw\" or \"nhwc\""));
}

std::vector<Dim> ToChannelsFirst(const std::vector<Dim>& d) {
  std::vector<Dim> out = {d[0], d.back()};
  out.insert(out.end(), d.begin() + 1, d.end() - 1);
  return out;
}

TensorType OutputType(DType dtype, std::vector<Dim> first, bool channels_last) {
  if (!channels_last) return TensorType(dtype, std::move(first));
  std::vector<Dim> last = {first[0]};
  last.insert(last.end(), first.begin() + 2, first.end());
  last.push_back(first[1]);
  return TensorType(dtype, std::move(last), Layout::kNHWC);
}

absl::StatusOr<std::vector<Dim>> SpatialDims(const InferenceContext& ctx, int i, const char* role, bool channels_last) {
  const TensorType& t = ctx.type(i);
  if (t.rank() < 3) {
    return absl::InvalidArgumentError(absl::StrCat(Label(ctx, i, role), " has type ", t.ToString(),
                                                   "; expected rank 3 or more (batch, channels, spatial...)"));
  }
  return channels_last ? ToChannelsFirst(t.dims) : t.dims;
}

absl::Status CheckBias(const InferenceContext& ctx, int i, const Dim& channels) {
  absl::Status s = RequireDType(ctx, i, "B", DType::kI32);
  if (!s.ok()) return s;
  const TensorType& t = ctx.type(i);
  if (t.rank() != 1 || (t.dims[0].is_static() && channels.is_static() && t.dims[0].value() != channels.value())) {
    return absl::InvalidArgumentError(
        absl::StrCat(Label(ctx, i, "B"), " has type ", t.ToString(), "; expected i32[", channels.ToString(), "]"));
  }
  return absl::OkStatus();
}

absl::Status CheckSameType(const InferenceContext& ctx, int i, const char* role, const TensorType& want) {
  const TensorType& t = ctx.type(i);
  bool same = t.dtype == want.dtype && t.rank() == want.rank();
  for (int d = 0; same && d < t.rank(); ++d) {
    if (t.dims[d].is_static() && want.dims[d].is_static()) same = t.dims[d].value() == want.dims[d].value();
  }
  if (same) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(Label(ctx, i, role), " has type ", t.ToString(), "; expected ", want.ToString()));
}

// Opset 21's blocked quantization (a scale per block_size elements along `axis`) is not supported.
absl::Status RefuseBlocks(const InferenceContext& ctx) {
  const int64_t block_size = ctx.node.GetInt("block_size", 0);
  if (block_size == 0) return absl::OkStatus();
  return absl::UnimplementedError(absl::StrCat(ctx.node.op_type(), ": attribute block_size = ", block_size,
                                               " (blocked quantization, opset 21) is not supported; Tessel "
                                               "quantizes per tensor"));
}

InferResult InferQuantizeLinear(const InferenceContext& ctx) {
  absl::Status s = RefuseBlocks(ctx);
  if (!s.ok()) return s;
  s = RequireDType(ctx, 0, "x", DType::kF32);
  if (!s.ok()) return s;
  s = RequireDType(ctx, 1, "y_scale", DType::kF32);
  if (!s.ok()) return s;
  s = RequireScalarOrAxis(ctx, 1, "y_scale");
  if (!s.ok()) return s;
  DType out = DType::kU8;
  if (ctx.has_input(2)) {
    s = RequireQuantized(ctx, 2, "y_zero_point");
    if (!s.ok()) return s;
    s = RequireScalarOrAxis(ctx, 2, "y_zero_point");
    if (!s.ok()) return s;
    out = ctx.type(2).dtype;
  }
  // Opset 21: output_dtype names the output type when there is no zero point, and must agree with it
  // when there is one.
  if (const Attribute* a = ctx.node.FindAttr("output_dtype"); a != nullptr && a->kind == Attribute::Kind::kInt &&
                                                             a->i != 0) {
    absl::StatusOr<DType> want = DTypeFromOnnxDataType(a->i);
    if (!want.ok() || (*want != DType::kU8 && *want != DType::kI8)) {
      return absl::UnimplementedError(absl::StrCat("QuantizeLinear: output_dtype ", OnnxDataTypeName(a->i),
                                                   " is not supported (UINT8 or INT8)"));
    }
    if (ctx.has_input(2) && *want != out) {
      return absl::InvalidArgumentError(absl::StrCat("QuantizeLinear: output_dtype ", OnnxDataTypeName(a->i),
                                                     " differs from y_zero_point's type ", DTypeName(out)));
    }
    out = *want;
  }
  return std::vector<TensorType>{TensorType(out, ctx.type(0).dims, ctx.type(0).layout)};
}

InferResult InferDequantizeLinear(const InferenceContext& ctx) {
  if (absl::Status blocks = RefuseBlocks(ctx); !blocks.ok()) return blocks;
  const DType t = ctx.type(0).dtype;
  if (t != DType::kU8 && t != DType::kI8 && t != DType::kI32) {
    return absl::InvalidArgumentError(
        absl::StrCat(Label(ctx, 0, "x"), " has dtype ", DTypeName(t), "; expected u8, i8 or i32"));
  }
  absl::Status s = RequireDType(ctx, 1, "x_scale", DType::kF32);
  if (!s.ok()) return s;
  s = RequireScalarOrAxis(ctx, 1, "x_scale");
  if (!s.ok()) return s;
  if (ctx.has_input(2)) {
    s = RequireDType(ctx, 2, "x_zero_point", t);
    if (!s.ok()) return s;
    s = RequireScalarOrAxis(ctx, 2, "x_zero_point");
    if (!s.ok()) return s;
  }
  return std::vector<TensorType>{TensorType(DType::kF32, ctx.type(0).dims, ctx.type(0).layout)};
}

// DynamicQuantizeLinear: f32 x to u8 y with the scale and zero point it computes from x's range (both
// scalars).
InferResult InferDynamicQuantizeLinear(const InferenceContext& ctx) {
  absl::Status s = RequireDType(ctx, 0, "x", DType::kF32);
  if (!s.ok()) return s;
  return std::vector<TensorType>{TensorType(DType::kU8, ctx.type(0).dims), TensorType(DType::kF32, std::vector<Dim>{}),
                                 TensorType(DType::kU8, std::vector<Dim>{})};
}

InferResult InferQConv(const InferenceContext& ctx) {
  absl::StatusOr<bool> cl = ChannelsLast(ctx.node);
  if (!cl.ok()) return cl.status();
  absl::Status s = RequireQuantized(ctx, 0, "X");
  if (!s.ok()) return s;
  const DType dt = ctx.type(0).dtype;
  s = RequireDType(ctx, 1, "W", DType::kI8);
  if (!s.ok()) return s;
  absl::StatusOr<std::vector<Dim>> x = SpatialDims(ctx, 0, "X", *cl);
  if (!x.ok()) return x.status();
  absl::StatusOr<std::vector<Dim>> w = SpatialDims(ctx, 1, "W", *cl);
  if (!w.ok()) return w.status();
  absl::StatusOr<ConvParams> p = ResolveConvParams(ctx.node, *x, *w);
  if (!p.ok()) return p.status();
  const Dim& m = (*w)[0];
  if (ctx.has_input(2)) {
    s = CheckBias(ctx, 2, m);
    if (!s.ok()) return s;
  }
  std::vector<Dim> dims = {(*x)[0], m};
  dims.insert(dims.end(), p->output.begin(), p->output.end());
  TensorType y = OutputType(dt, std::move(dims), *cl);
  for (const absl::Status& st : {CheckInDTypeRange(ctx.node, "x_zero_point", 0, dt), CheckRequant(ctx.node, "", m),
                           CheckOutput(ctx.node, dt)}) {
    if (!st.ok()) return st;
  }
  if (ctx.has_input(3)) {
    s = CheckSameType(ctx, 3, "Residual", y);
    if (!s.ok()) return s;
    s = CheckInDTypeRange(ctx.node, "r_zero_point", 0, dt);
    if (!s.ok()) return s;
    s = CheckRequant(ctx.node, "r_", Dim(1));
    if (!s.ok()) return s;
  }
  return std::vector<TensorType>{y};
}

InferResult InferQGemm(const InferenceContext& ctx) {
  absl::Status s = RequireQuantized(ctx, 0, "A");
  if (!s.ok()) return s;
  const DType dt = ctx.type(0).dtype;
  s = RequireDType(ctx, 1, "W", DType::kI8);
  if (!s.ok()) return s;
  const TensorType& a = ctx.type(0);
  const TensorType& w = ctx.type(1);
  if (a.rank() != 2 || w.rank() != 2) {
    return absl::InvalidArgumentError(absl::StrCat("A ", a.ToString(), " and W ", w.ToString(),
                                                   " must both be 2-D (A [M, K], W [N, K])"));
  }
  if (a.dims[1].is_static() && w.dims[1].is_static() && a.dims[1].value() != w.dims[1].value()) {
    return absl::InvalidArgumentError(absl::StrCat("A ", a.ToString(), " and W ", w.ToString(),
                                                   " disagree on K (W is [N, K])"));
  }
  const Dim& n = w.dims[0];
  if (ctx.has_input(2)) {
    s = CheckBias(ctx, 2, n);
    if (!s.ok()) return s;
  }
  for (const absl::Status& st : {CheckInDTypeRange(ctx.node, "x_zero_point", 0, dt), CheckRequant(ctx.node, "", n),
                                 CheckOutput(ctx.node, dt)}) {
    if (!st.ok()) return st;
  }
  return std::vector<TensorType>{TensorType(dt, {a.dims[0], n})};
}

InferResult InferQAdd(const InferenceContext& ctx) {
  absl::Status s = RequireQuantized(ctx, 0, "A");
  if (!s.ok()) return s;
  const TensorType& a = ctx.type(0);
  s = CheckSameType(ctx, 1, "B", a);
  if (!s.ok()) return s;
  for (const absl::Status& st :
       {CheckInDTypeRange(ctx.node, "a_zero_point", 0, a.dtype), CheckInDTypeRange(ctx.node, "b_zero_point", 0, a.dtype),
        CheckRequant(ctx.node, "a_", Dim(1)), CheckRequant(ctx.node, "b_", Dim(1)), CheckOutput(ctx.node, a.dtype)}) {
    if (!st.ok()) return st;
  }
  return std::vector<TensorType>{a};
}

InferResult InferQPool(const InferenceContext& ctx) {
  absl::StatusOr<bool> cl = ChannelsLast(ctx.node);
  if (!cl.ok()) return cl.status();
  absl::Status s = RequireQuantized(ctx, 0, "X");
  if (!s.ok()) return s;
  const DType dt = ctx.type(0).dtype;
  if (ctx.node.op_type() != "QMaxPool") {
    s = CheckInDTypeRange(ctx.node, "x_zero_point", 0, dt);
    if (!s.ok()) return s;
  }
  absl::StatusOr<std::vector<Dim>> x = SpatialDims(ctx, 0, "X", *cl);
  if (!x.ok()) return x.status();
  std::vector<Dim> dims = {(*x)[0], (*x)[1]};
  if (ctx.node.op_type() == "QGlobalAvgPool") {
    dims.resize(x->size(), Dim(1));
  } else {
    absl::StatusOr<PoolParams> p = ResolvePoolParams(ctx.node, *x);
    if (!p.ok()) return p.status();
    dims.insert(dims.end(), p->output.begin(), p->output.end());
  }
  return std::vector<TensorType>{OutputType(dt, std::move(dims), *cl)};
}

void Reg(OpRegistry& r, const char* domain, const char* op, int min_in, int max_in, int required, InferFn fn,
         const char* summary) {
  r.Register(OpSchema{op, domain, min_in, max_in, 1, 1, RequireInputs(required, std::move(fn)), summary});
}

}  // namespace

void RegisterQuantOps(OpRegistry& r) {
  Reg(r, "", "QuantizeLinear", 2, 3, 2, InferQuantizeLinear,
      "saturate(round_half_even(x / y_scale) + y_zero_point), per tensor or per axis, to u8 (default) or i8");
  r.Register(OpSchema{"DynamicQuantizeLinear", "", 1, 1, 3, 3, RequireInputs(1, InferDynamicQuantizeLinear),
                      "u8 quantization with the scale and zero point of x's range (including 0), round half to even"});
  Reg(r, "", "DequantizeLinear", 2, 3, 2, InferDequantizeLinear, "(x - x_zero_point) * x_scale, per tensor or per axis");
  Reg(r, kTesselDomain, "QConv", 2, 4, 2, InferQConv,
      "int8 convolution: i32 accumulate, bias, f32 requantize per channel, residual, clamp");
  Reg(r, kTesselDomain, "QGemm", 2, 3, 2, InferQGemm, "int8 A[M,K] x W[N,K]^T with the QConv output stage");
  Reg(r, kTesselDomain, "QAdd", 2, 2, 2, InferQAdd, "quantized elementwise add of same-shaped tensors, clamped");
  Reg(r, kTesselDomain, "QMaxPool", 1, 1, 1, InferQPool, "max pooling on quantized data (nchw or nhwc)");
  Reg(r, kTesselDomain, "QAvgPool", 1, 1, 1, InferQPool, "average pooling on quantized data, rounded half away from 0");
  Reg(r, kTesselDomain, "QGlobalAvgPool", 1, 1, 1, InferQPool, "global average pooling on quantized data");
}

namespace {
// Until OpRegistry::Global() calls RegisterQuantOps itself, this library (alwayslink) adds them at
// static-initialization time.
const bool kQuantOpsRegistered = [] {
  RegisterQuantOps(OpRegistry::Global());
  return true;
}();
}  // namespace

}  // namespace tessel
