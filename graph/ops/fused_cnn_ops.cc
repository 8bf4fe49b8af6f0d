// Schemas and type inference for Tessel's fused CNN operators (domain "tessel"), produced by the CNN
// fusion and layout passes:
//   FusedConv(X, W, B?, Residual?)            act(conv(X, W) + B + Residual), in that order
//   DwPwConv(X, W_dw, B_dw?, W_pw, B_pw?, R?, W_exp?, B_exp?)
//                                             pw_act(conv1x1(dw_act(dwconv(E, W_dw) + B_dw), W_pw) + B_pw + R)
//                                             with E = X, or with W_exp (MobileNetV2's whole inverted-residual
//                                             block) E = exp_act(conv1x1(X, W_exp) + B_exp)
//   MaxPool, AveragePool, GlobalAveragePool   the ONNX operators with a `layout` attribute
//   MatMulBias(A, W, B), MatMulBiasGelu(A, W, B)   A @ W + B (then GELU) for a 2-D W
// Convolution and pooling attributes are the ONNX ones (read with nn_params.h). `activation` is one of
// none, relu, clip (with float clip_min and clip_max), hardswish, sigmoid, silu (x * sigmoid(x)).
// `layout` is "nchw" (default) or "nhwc": channels last for X, Residual and Y, and weights as
// [M, kernel..., C/group] (what channels-last convolution kernels such as XNNPACK's take).
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/ops/nn_params.h"
#include "graph/ops/shape_util.h"

namespace tessel {
namespace {

using InferResult = absl::StatusOr<std::vector<TensorType>>;

std::string Label(const InferenceContext& ctx, int i, const char* role) {
  const Value* v = ctx.node.input(i);
  return v == nullptr ? absl::StrCat("input ", role) : absl::StrCat("input ", role, " ('", v->name(), "')");
}

absl::Status RequireInput(const InferenceContext& ctx, int i, const char* role) {
  if (ctx.has_input(i)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("required input ", role, " (", i, ") is missing"));
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
  if (ctx.type(i).rank() == rank) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(Label(ctx, i, role), " has type ", ctx.type(i).ToString(), "; expected rank ", rank));
}

// A 1-D per-channel input (bias) of `channels` elements.
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

// The residual is added without broadcasting: same dtype, rank and (where known) extents as Y.
absl::Status RequireSameShape(const InferenceContext& ctx, int i, const char* role, const TensorType& y) {
  const TensorType& r = ctx.type(i);
  bool same = r.dtype == y.dtype && r.rank() == y.rank();
  for (int d = 0; same && d < r.rank(); ++d) {
    if (r.dims[d].is_static() && y.dims[d].is_static()) same = r.dims[d].value() == y.dims[d].value();
  }
  if (same) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(Label(ctx, i, role), " has type ", r.ToString(),
                                                 "; expected the output type ", y.ToString(), " (no broadcasting)"));
}

absl::StatusOr<bool> ChannelsLast(const Node& node) {
  const std::string layout = node.GetString("layout", "nchw");
  if (layout == "nchw") return false;
  if (layout == "nhwc") return true;
  return absl::InvalidArgumentError(absl::StrCat("attribute layout is '", layout, "'; expected \"nchw\" or \"nhwc\""));
}

// [N, spatial..., C] -> [N, C, spatial...]; the same move takes [M, kernel..., C/g] to [M, C/g, kernel...].
std::vector<Dim> ToChannelsFirst(const std::vector<Dim>& d) {
  std::vector<Dim> out = {d[0], d.back()};
  out.insert(out.end(), d.begin() + 1, d.end() - 1);
  return out;
}

std::vector<Dim> ToChannelsLast(const std::vector<Dim>& d) {
  std::vector<Dim> out = {d[0]};
  out.insert(out.end(), d.begin() + 2, d.end());
  out.push_back(d[1]);
  return out;
}

// Input `i` in channels-first order, after checking it has spatial dimensions.
absl::StatusOr<std::vector<Dim>> SpatialDims(const InferenceContext& ctx, int i, const char* role, bool channels_last) {
  const TensorType& t = ctx.type(i);
  if (t.rank() < 3) {
    return absl::InvalidArgumentError(absl::StrCat(Label(ctx, i, role), " has type ", t.ToString(),
                                                   "; expected rank 3 or more (batch, channels, spatial...)"));
  }
  return channels_last ? ToChannelsFirst(t.dims) : t.dims;
}

TensorType OutputType(DType dtype, std::vector<Dim> channels_first, bool channels_last) {
  if (!channels_last) return TensorType(dtype, std::move(channels_first));
  return TensorType(dtype, ToChannelsLast(channels_first), Layout::kNHWC);
}

// `<prefix>activation` and its clip bounds.
absl::Status CheckActivation(const Node& node, const std::string& prefix) {
  const std::string key = prefix + "activation";
  const std::string act = node.GetString(key, "none");
  if (act != "none" && act != "relu" && act != "clip" && act != "hardswish" && act != "sigmoid" && act != "silu") {
    return absl::InvalidArgumentError(absl::StrCat(
        "attribute ", key, " is '", act, "'; expected none, relu, clip, hardswish, sigmoid or silu"));
  }
  for (const char* bound : {"clip_min", "clip_max"}) {
    const std::string name = prefix + bound;
    const Attribute* a = node.FindAttr(name);
    if (act == "clip" && (a == nullptr || a->kind != Attribute::Kind::kFloat)) {
      return absl::InvalidArgumentError(absl::StrCat(key, " 'clip' needs a float attribute ", name));
    }
    if (act != "clip" && a != nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("attribute ", name, " is only allowed with ", key, " 'clip'"));
    }
  }
  return absl::OkStatus();
}

InferResult InferFusedConv(const InferenceContext& ctx) {
  absl::StatusOr<bool> cl = ChannelsLast(ctx.node);
  if (!cl.ok()) return cl.status();
  absl::Status s = RequireFloat(ctx, 0, "X");
  if (!s.ok()) return s;
  const DType dt = ctx.type(0).dtype;
  s = RequireDType(ctx, 1, "W", dt);
  if (!s.ok()) return s;
  absl::StatusOr<std::vector<Dim>> x = SpatialDims(ctx, 0, "X", *cl);
  if (!x.ok()) return x.status();
  absl::StatusOr<std::vector<Dim>> w = SpatialDims(ctx, 1, "W", *cl);
  if (!w.ok()) return w.status();
  absl::StatusOr<ConvParams> p = ResolveConvParams(ctx.node, *x, *w);
  if (!p.ok()) return p.status();
  if (ctx.has_input(2)) {
    s = RequireVector(ctx, 2, "B", (*w)[0], dt);
    if (!s.ok()) return s;
  }
  std::vector<Dim> dims = {(*x)[0], (*w)[0]};
  dims.insert(dims.end(), p->output.begin(), p->output.end());
  TensorType y = OutputType(dt, std::move(dims), *cl);
  if (ctx.has_input(3)) {
    s = RequireSameShape(ctx, 3, "Residual", y);
    if (!s.ok()) return s;
  }
  s = CheckActivation(ctx.node, "");
  if (!s.ok()) return s;
  return std::vector<TensorType>{y};
}

InferResult InferDwPwConv(const InferenceContext& ctx) {
  absl::StatusOr<bool> cl = ChannelsLast(ctx.node);
  if (!cl.ok()) return cl.status();
  absl::Status s = RequireInput(ctx, 3, "W_pw");
  if (!s.ok()) return s;
  s = RequireFloat(ctx, 0, "X");
  if (!s.ok()) return s;
  const DType dt = ctx.type(0).dtype;
  for (int i : {1, 3}) {
    s = RequireDType(ctx, i, i == 1 ? "W_dw" : "W_pw", dt);
    if (!s.ok()) return s;
  }
  absl::StatusOr<std::vector<Dim>> x = SpatialDims(ctx, 0, "X", *cl);
  if (!x.ok()) return x.status();
  if (ctx.has_input(6)) {
    // The expansion: a 1x1 convolution from X's channels to the depthwise channels.
    s = RequireDType(ctx, 6, "W_exp", dt);
    if (!s.ok()) return s;
    absl::StatusOr<std::vector<Dim>> wexp = SpatialDims(ctx, 6, "W_exp", *cl);
    if (!wexp.ok()) return wexp.status();
    bool ok = wexp->size() == x->size() && (!(*wexp)[1].is_static() || !(*x)[1].is_static() ||
                                            (*wexp)[1].value() == (*x)[1].value());
    for (size_t i = 2; ok && i < wexp->size(); ++i) ok = (*wexp)[i].is_static() && (*wexp)[i].value() == 1;
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat(Label(ctx, 6, "W_exp"), " has type ", ctx.type(6).ToString(),
                                                     "; expected a 1x1 kernel over ", (*x)[1].ToString(),
                                                     " channels"));
    }
    if (ctx.has_input(7)) {
      s = RequireVector(ctx, 7, "B_exp", (*wexp)[0], dt);
      if (!s.ok()) return s;
    }
    s = CheckActivation(ctx.node, "exp_");
    if (!s.ok()) return s;
    (*x)[1] = (*wexp)[0];  // the depthwise convolution sees the expanded channels
  } else if (ctx.has_input(7)) {
    return absl::InvalidArgumentError(absl::StrCat(Label(ctx, 7, "B_exp"), " is given without W_exp"));
  }
  absl::StatusOr<std::vector<Dim>> wdw = SpatialDims(ctx, 1, "W_dw", *cl);
  if (!wdw.ok()) return wdw.status();
  absl::StatusOr<ConvParams> p = ResolveConvParams(ctx.node, *x, *wdw);
  if (!p.ok()) return p.status();
  const Dim& c = (*x)[1];
  const Dim& mid = (*wdw)[0];
  if (c.is_static() && mid.is_static() && (p->group != c.value() || mid.value() != c.value())) {
    return absl::InvalidArgumentError(absl::StrCat("the first convolution must be depthwise (group == input channels "
                                                   "== its output channels); got group ",
                                                   p->group, ", ", c.value(), " input and ", mid.value(),
                                                   " output channels"));
  }
  if (ctx.has_input(2)) {
    s = RequireVector(ctx, 2, "B_dw", mid, dt);
    if (!s.ok()) return s;
  }
  absl::StatusOr<std::vector<Dim>> wpw = SpatialDims(ctx, 3, "W_pw", *cl);
  if (!wpw.ok()) return wpw.status();
  bool pointwise = wpw->size() == x->size() && (!(*wpw)[1].is_static() || !mid.is_static() ||
                                                (*wpw)[1].value() == mid.value());
  for (size_t i = 2; pointwise && i < wpw->size(); ++i) pointwise = (*wpw)[i].is_static() && (*wpw)[i].value() == 1;
  if (!pointwise) {
    return absl::InvalidArgumentError(absl::StrCat(Label(ctx, 3, "W_pw"), " has type ", ctx.type(3).ToString(),
                                                   "; expected a 1x1 kernel over ", mid.ToString(), " channels"));
  }
  const Dim& m = (*wpw)[0];
  if (ctx.has_input(4)) {
    s = RequireVector(ctx, 4, "B_pw", m, dt);
    if (!s.ok()) return s;
  }
  std::vector<Dim> dims = {(*x)[0], m};
  dims.insert(dims.end(), p->output.begin(), p->output.end());
  TensorType y = OutputType(dt, std::move(dims), *cl);
  if (ctx.has_input(5)) {
    s = RequireSameShape(ctx, 5, "Residual", y);
    if (!s.ok()) return s;
  }
  for (const char* prefix : {"dw_", "pw_"}) {
    s = CheckActivation(ctx.node, prefix);
    if (!s.ok()) return s;
  }
  return std::vector<TensorType>{y};
}

// A pool's or norm's float X in channels-first order, with the node's layout in *channels_last.
absl::StatusOr<std::vector<Dim>> LayoutInput(const InferenceContext& ctx, bool* channels_last) {
  absl::StatusOr<bool> cl = ChannelsLast(ctx.node);
  if (!cl.ok()) return cl.status();
  *channels_last = *cl;
  absl::Status s = RequireFloat(ctx, 0, "X");
  if (!s.ok()) return s;
  return SpatialDims(ctx, 0, "X", *cl);
}

InferResult InferPool(const InferenceContext& ctx) {
  bool cl = false;
  absl::StatusOr<std::vector<Dim>> x = LayoutInput(ctx, &cl);
  if (!x.ok()) return x.status();
  std::vector<Dim> dims = {(*x)[0], (*x)[1]};
  if (ctx.node.op_type() == "GlobalAveragePool") {
    dims.resize(x->size(), Dim(1));
  } else {
    absl::StatusOr<PoolParams> p = ResolvePoolParams(ctx.node, *x);
    if (!p.ok()) return p.status();
    dims.insert(dims.end(), p->output.begin(), p->output.end());
  }
  return std::vector<TensorType>{OutputType(ctx.type(0).dtype, std::move(dims), cl)};
}

// tessel.InstanceNorm: ONNX InstanceNormalization with a layout attribute; scale and B per channel.
InferResult InferInstanceNorm(const InferenceContext& ctx) {
  bool cl = false;
  absl::StatusOr<std::vector<Dim>> x = LayoutInput(ctx, &cl);
  if (!x.ok()) return x.status();
  for (int i = 1; i <= 2; ++i) {
    absl::Status s = RequireVector(ctx, i, i == 1 ? "scale" : "B", (*x)[1], ctx.type(0).dtype);
    if (!s.ok()) return s;
  }
  return std::vector<TensorType>{OutputType(ctx.type(0).dtype, *std::move(x), cl)};
}

InferResult InferMatMulBias(const InferenceContext& ctx) {
  if (ctx.node.op_type() == "MatMulBiasGelu") {
    const std::string approximate = ctx.node.GetString("approximate", "none");
    if (approximate != "none" && approximate != "tanh") {
      return absl::InvalidArgumentError(
          absl::StrCat("attribute approximate is '", approximate, "'; expected \"none\" or \"tanh\""));
    }
  }
  absl::Status s = RequireFloat(ctx, 0, "A");
  if (!s.ok()) return s;
  const TensorType& a = ctx.type(0);
  s = RequireDType(ctx, 1, "W", a.dtype);
  if (!s.ok()) return s;
  s = RequireRank(ctx, 1, "W", 2);
  if (!s.ok()) return s;
  if (a.rank() < 1) return absl::InvalidArgumentError(absl::StrCat(Label(ctx, 0, "A"), " is a scalar"));
  const Dim& ka = a.dims.back();
  const Dim& kw = ctx.type(1).dims[0];
  if (ka.is_static() && kw.is_static() && ka.value() != kw.value()) {
    return absl::InvalidArgumentError(absl::StrCat("A ", a.ToString(), " and W ", ctx.type(1).ToString(),
                                                   " disagree on the contracted dimension (", ka.value(), " vs ",
                                                   kw.value(), ")"));
  }
  const Dim& n = ctx.type(1).dims[1];
  s = RequireVector(ctx, 2, "B", n, a.dtype);
  if (!s.ok()) return s;
  std::vector<Dim> dims(a.dims.begin(), a.dims.end() - 1);
  dims.push_back(n);
  return std::vector<TensorType>{TensorType(a.dtype, std::move(dims))};
}

// `required`: the leading inputs that must be present (DwPwConv checks its W_pw, after an optional one, itself).
void Reg(OpRegistry& r, const char* op, int min_in, int max_in, int required, InferFn fn, const char* summary) {
  r.Register(OpSchema{op, kTesselDomain, min_in, max_in, 1, 1, RequireInputs(required, std::move(fn)), summary});
}

}  // namespace

void RegisterFusedCnnOps(OpRegistry& r) {
  Reg(r, "FusedConv", 2, 4, 2, InferFusedConv,
      "act(conv(X, W) + B + Residual) with optional bias and residual, nchw or nhwc");
  Reg(r, "DwPwConv", 4, 8, 2, InferDwPwConv,
      "[1x1 expansion + activation,] depthwise conv + activation, then 1x1 conv + bias + residual + activation "
      "(the MobileNet block)");
  Reg(r, "MaxPool", 1, 1, 1, InferPool, "ONNX MaxPool with a layout attribute (nchw or nhwc)");
  Reg(r, "AveragePool", 1, 1, 1, InferPool, "ONNX AveragePool with a layout attribute (nchw or nhwc)");
  Reg(r, "GlobalAveragePool", 1, 1, 1, InferPool, "ONNX GlobalAveragePool with a layout attribute (nchw or nhwc)");
  Reg(r, "InstanceNorm", 3, 3, 3, InferInstanceNorm,
      "ONNX InstanceNormalization with a layout attribute (nchw or nhwc)");
  Reg(r, "MatMulBias", 3, 3, 3, InferMatMulBias, "A @ W + B for a 2-D weight W and a bias over its columns");
  Reg(r, "MatMulBiasGelu", 3, 3, 3, InferMatMulBias, "gelu(A @ W + B), exact or tanh approximation");
}

}  // namespace tessel
