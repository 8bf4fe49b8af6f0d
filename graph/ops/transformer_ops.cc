// Schemas and type inference for Tessel's fused transformer operators (domain "tessel"), which the
// transformer passes produce from their decomposed ONNX forms: RMSNorm, Rope and Attention.
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/ops/shape_util.h"

namespace tessel {
namespace {

using InferResult = absl::StatusOr<std::vector<TensorType>>;

// "input K ('k')" for messages (the caller names the node).
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

absl::Status RequireSameDType(const InferenceContext& ctx, int i, const char* role, DType want) {
  if (ctx.type(i).dtype == want) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(Label(ctx, i, role), " has dtype ", DTypeName(ctx.type(i).dtype),
                                                 "; expected ", DTypeName(want), " like the first input"));
}

// Input i must broadcast to `to` without changing it (right-aligned; each extent 1 or equal).
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
                                                 ", which does not broadcast to ", DimsToString(to)));
}

// Attributes of the wrong kind or unknown attributes are errors, so that a typo is not silently ignored.
absl::Status CheckAttributes(const Node& node, const std::map<std::string, Attribute::Kind>& allowed) {
  for (const auto& [name, attr] : node.attributes()) {
    auto it = allowed.find(name);
    if (it == allowed.end()) {
      std::string names;
      for (const auto& [k, kind] : allowed) absl::StrAppend(&names, names.empty() ? "" : ", ", k);
      return absl::InvalidArgumentError(absl::StrCat("unknown attribute '", name, "' (expected ", names, ")"));
    }
    // An int where a float is expected is accepted (epsilon = 0 reads as an int in the text form).
    const bool ok =
        attr.kind == it->second || (it->second == Attribute::Kind::kFloat && attr.kind == Attribute::Kind::kInt);
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat("attribute '", name, "' has the wrong kind"));
    }
  }
  return absl::OkStatus();
}

// RMSNorm(X, gain?) {epsilon = 1e-5, axis = -1}:
//   Y = X / sqrt(mean(X^2 over the dimensions from axis on) + epsilon) * gain
InferResult InferRMSNorm(const InferenceContext& ctx) {
  absl::Status s = CheckAttributes(ctx.node, {{"epsilon", Attribute::Kind::kFloat}, {"axis", Attribute::Kind::kInt}});
  if (!s.ok()) return s;
  s = RequireFloat(ctx, 0, "X");
  if (!s.ok()) return s;
  const TensorType& x = ctx.type(0);
  if (x.rank() == 0) return absl::InvalidArgumentError(absl::StrCat(Label(ctx, 0, "X"), " must have rank >= 1"));
  absl::StatusOr<int> axis = NormalizeAxis(ctx.node.GetInt("axis", -1), x.rank(), "tessel.RMSNorm");
  if (!axis.ok()) return axis.status();
  const float eps = ctx.node.GetFloat("epsilon", 1e-5f);
  if (!(eps >= 0) || std::isinf(eps)) {
    return absl::InvalidArgumentError(absl::StrCat("epsilon ", eps, " must be finite and >= 0"));
  }
  if (ctx.has_input(1)) {
    s = RequireSameDType(ctx, 1, "gain", x.dtype);
    if (!s.ok()) return s;
    s = RequireUnidirectional(ctx, 1, "gain", std::vector<Dim>(x.dims.begin() + *axis, x.dims.end()));
    if (!s.ok()) return s;
  }
  return std::vector<TensorType>{TensorType(x.dtype, x.dims)};
}

// Rope(X, cos, sin) {style = "half"}: Y = X * cos + rotate(X) * sin, where cos and sin broadcast to X
// and rotate pairs the last dimension's elements: "half" pairs i with i + D/2 (rotate_half: the
// first half becomes -x[D/2:], the second x[:D/2]); "interleaved" pairs 2i with 2i+1 (GGUF):
// (-x[2i+1], x[2i]).
InferResult InferRope(const InferenceContext& ctx) {
  absl::Status s = CheckAttributes(ctx.node, {{"style", Attribute::Kind::kString}});
  if (!s.ok()) return s;
  const std::string style = ctx.node.GetString("style", "half");
  if (style != "half" && style != "interleaved") {
    return absl::InvalidArgumentError(absl::StrCat("style '", style, "' is not one of \"half\", \"interleaved\""));
  }
  s = RequireFloat(ctx, 0, "X");
  if (!s.ok()) return s;
  const TensorType& x = ctx.type(0);
  if (x.rank() == 0) return absl::InvalidArgumentError(absl::StrCat(Label(ctx, 0, "X"), " must have rank >= 1"));
  const Dim& d = x.dims.back();
  if (d.is_static() && d.value() % 2 != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(Label(ctx, 0, "X"), " has type ", x.ToString(), "; the last dimension must be even"));
  }
  for (int i = 1; i <= 2; ++i) {
    const char* role = i == 1 ? "cos" : "sin";
    s = RequireSameDType(ctx, i, role, x.dtype);
    if (!s.ok()) return s;
    s = RequireUnidirectional(ctx, i, role, x.dims);
    if (!s.ok()) return s;
  }
  return std::vector<TensorType>{TensorType(x.dtype, x.dims)};
}

// Whether two extents can be equal (a symbol may be anything).
bool Compatible(const Dim& a, const Dim& b) { return !a.is_static() || !b.is_static() || a.value() == b.value(); }

// Attention(Q, K, V, mask?) {scale = 1/sqrt(D), causal = 0}:
//   Q [B, Hq, Sq, D], K [B, Hkv, Sk, D], V [B, Hkv, Sk, Dv] with Hq a multiple of Hkv (grouped-query
//   attention: query head h reads key/value head h / (Hq / Hkv)); mask is additive and broadcasts to
//   [B, Hq, Sq, Sk]; causal lets query i see keys j <= i + Sk - Sq only. Y is [B, Hq, Sq, Dv].
InferResult InferAttention(const InferenceContext& ctx) {
  absl::Status s = CheckAttributes(ctx.node, {{"scale", Attribute::Kind::kFloat}, {"causal", Attribute::Kind::kInt}});
  if (!s.ok()) return s;
  const int64_t causal = ctx.node.GetInt("causal", 0);
  if (causal != 0 && causal != 1) {
    return absl::InvalidArgumentError(absl::StrCat("causal is ", causal, "; expected 0 or 1"));
  }
  const float scale = ctx.node.GetFloat("scale", 1.0f);
  if (!std::isfinite(scale)) {
    return absl::InvalidArgumentError("scale must be finite");
  }
  const char* roles[] = {"Q", "K", "V"};
  for (int i = 0; i < 3; ++i) {
    s = i == 0 ? RequireFloat(ctx, 0, "Q") : RequireSameDType(ctx, i, roles[i], ctx.type(0).dtype);
    if (!s.ok()) return s;
    if (ctx.type(i).rank() != 4) {
      return absl::InvalidArgumentError(absl::StrCat(Label(ctx, i, roles[i]), " has type ", ctx.type(i).ToString(),
                                                     "; expected rank 4 [batch, heads, sequence, head size]"));
    }
  }
  const std::vector<Dim>& q = ctx.type(0).dims;
  const std::vector<Dim>& k = ctx.type(1).dims;
  const std::vector<Dim>& v = ctx.type(2).dims;
  auto mismatch = [&](const char* what) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " (Q ", DimsToString(q), ", K ", DimsToString(k), ", V ", DimsToString(v), ")"));
  };
  if (!Compatible(q[0], k[0]) || !Compatible(q[0], v[0])) return mismatch("batch sizes differ");
  if (!Compatible(k[1], v[1])) return mismatch("K and V have different head counts");
  if (!Compatible(k[2], v[2])) return mismatch("K and V have different sequence lengths");
  if (!Compatible(q[3], k[3])) return mismatch("Q and K have different head sizes");
  if (q[1].is_static() && k[1].is_static() && (k[1].value() == 0 || q[1].value() % k[1].value() != 0)) {
    return mismatch("the query head count is not a multiple of the key/value head count");
  }
  std::vector<Dim> out = {q[0], q[1], q[2], v[3]};
  if (ctx.has_input(3)) {
    s = RequireSameDType(ctx, 3, "mask", ctx.type(0).dtype);
    if (!s.ok()) return s;
    s = RequireUnidirectional(ctx, 3, "mask", {q[0], q[1], q[2], k[2]});
    if (!s.ok()) return s;
  }
  return std::vector<TensorType>{TensorType(ctx.type(0).dtype, std::move(out))};
}

}  // namespace

void RegisterTransformerOps(OpRegistry& r) {
  r.Register({"RMSNorm", kTesselDomain, 1, 2, 1, 1, RequireInputs(1, InferRMSNorm),
              "root-mean-square normalization over the dimensions from axis on, times an optional gain"});
  r.Register({"Rope", kTesselDomain, 3, 3, 1, 1, RequireInputs(3, InferRope),
              "rotary position embedding X * cos + rotate(X) * sin (rotate-half or interleaved pairs)"});
  r.Register({"Attention", kTesselDomain, 3, 4, 1, 1, RequireInputs(3, InferAttention),
              "softmax(scale * Q K^T + mask) V with optional causal masking and grouped-query K/V"});
}

}  // namespace tessel
