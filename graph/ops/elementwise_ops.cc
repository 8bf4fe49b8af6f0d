// Type inference for elementwise operators: activations, unary math, broadcasting binary arithmetic,
// Where, Cast, CastLike, Identity and (inference-mode) Dropout.
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/onnx_data_type.h"
#include "graph/op_registry.h"
#include "graph/ops/shape_util.h"

namespace tessel {
namespace {

using Types = absl::StatusOr<std::vector<TensorType>>;

const std::string& Op(const InferenceContext& ctx) { return ctx.node.op_type(); }

absl::Status RequireFloat(const InferenceContext& ctx, int i, absl::string_view what) {
  if (!IsFloat(ctx.type(i).dtype)) {
    return absl::InvalidArgumentError(absl::StrCat(Op(ctx), ": ", what, " must be a float tensor, got ",
                                                   ctx.type(i).ToString()));
  }
  return absl::OkStatus();
}

// Float or integer (arithmetic is not defined on bool).
absl::Status RequireNumeric(const InferenceContext& ctx, int i, absl::string_view what) {
  const DType t = ctx.type(i).dtype;
  if (!IsFloat(t) && !IsInteger(t)) {
    return absl::InvalidArgumentError(absl::StrCat(Op(ctx), ": ", what, " must be a numeric tensor, got ",
                                                   ctx.type(i).ToString()));
  }
  return absl::OkStatus();
}

absl::Status RequireSameDType(const InferenceContext& ctx, int i, int j) {
  if (ctx.type(i).dtype != ctx.type(j).dtype) {
    return absl::InvalidArgumentError(absl::StrCat(Op(ctx), ": input ", i, " is ", ctx.type(i).ToString(),
                                                   " but input ", j, " is ", ctx.type(j).ToString(),
                                                   "; insert a Cast so the element types match"));
  }
  return absl::OkStatus();
}

// A scalar operand such as Clip's min/max: rank 0, or one element when the exporter used shape [1].
absl::Status RequireScalar(const InferenceContext& ctx, int i, absl::string_view what) {
  const TensorType& t = ctx.type(i);
  if (t.rank() != 0 && t.NumElements() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(Op(ctx), ": ", what, " must be a scalar, got ", t.ToString()));
  }
  return absl::OkStatus();
}

Types InferUnaryFloat(const InferenceContext& ctx) {
  if (absl::Status s = RequireFloat(ctx, 0, "input"); !s.ok()) return s;
  return std::vector<TensorType>{ctx.type(0)};
}

Types InferUnaryNumeric(const InferenceContext& ctx) {
  if (absl::Status s = RequireNumeric(ctx, 0, "input"); !s.ok()) return s;
  return std::vector<TensorType>{ctx.type(0)};
}

Types InferIdentity(const InferenceContext& ctx) { return std::vector<TensorType>{ctx.type(0)}; }

Types InferGelu(const InferenceContext& ctx) {
  const std::string approximate = ctx.node.GetString("approximate", "none");
  if (approximate != "none" && approximate != "tanh") {
    return absl::InvalidArgumentError(
        absl::StrCat("Gelu: attribute approximate is '", approximate, "'; expected \"none\" or \"tanh\""));
  }
  return InferUnaryFloat(ctx);
}

Types InferClip(const InferenceContext& ctx) {
  if (absl::Status s = RequireNumeric(ctx, 0, "input"); !s.ok()) return s;
  for (int i = 1; i <= 2; ++i) {
    if (!ctx.has_input(i)) continue;
    const char* what = i == 1 ? "min" : "max";
    if (absl::Status s = RequireScalar(ctx, i, what); !s.ok()) return s;
    if (absl::Status s = RequireSameDType(ctx, 0, i); !s.ok()) return s;
  }
  return std::vector<TensorType>{ctx.type(0)};
}

// Output layout survives only when both operands agree on it.
Layout MergedLayout(const TensorType& a, const TensorType& b) {
  return a.layout == b.layout && a.rank() == b.rank() ? a.layout : Layout::kAny;
}

Types InferBinaryArithmetic(const InferenceContext& ctx) {
  if (absl::Status s = RequireNumeric(ctx, 0, "input A"); !s.ok()) return s;
  if (absl::Status s = RequireSameDType(ctx, 0, 1); !s.ok()) return s;
  absl::StatusOr<std::vector<Dim>> dims = BroadcastDims(ctx.type(0).dims, ctx.type(1).dims, Op(ctx));
  if (!dims.ok()) return dims.status();
  return std::vector<TensorType>{TensorType(ctx.type(0).dtype, *dims, MergedLayout(ctx.type(0), ctx.type(1)))};
}

// BitShift: unsigned integers, broadcast like arithmetic.
Types InferBitShift(const InferenceContext& ctx) {
  const DType t = ctx.type(0).dtype;
  if (t != DType::kU8 && t != DType::kU16 && t != DType::kU32 && t != DType::kU64) {
    return absl::InvalidArgumentError(absl::StrCat("BitShift: input X is ", ctx.type(0).ToString(),
                                                   "; expected an unsigned integer tensor (u8, u16, u32 or u64)"));
  }
  const std::string dir = ctx.node.GetString("direction", "");
  if (dir != "LEFT" && dir != "RIGHT") {
    return absl::InvalidArgumentError(absl::StrCat("BitShift: direction is '", dir, "'; expected LEFT or RIGHT"));
  }
  return InferBinaryArithmetic(ctx);
}

// PRelu: the slope broadcasts to X (unidirectionally: the output has X's shape).
Types InferPRelu(const InferenceContext& ctx) {
  if (absl::Status s = RequireNumeric(ctx, 0, "input X"); !s.ok()) return s;
  if (absl::Status s = RequireSameDType(ctx, 0, 1); !s.ok()) return s;
  absl::StatusOr<std::vector<Dim>> dims = BroadcastDims(ctx.type(0).dims, ctx.type(1).dims, Op(ctx));
  if (!dims.ok()) return dims.status();
  if (dims->size() != ctx.type(0).dims.size()) {
    return absl::InvalidArgumentError(absl::StrCat("PRelu: slope ", ctx.type(1).ToString(), " has more dimensions than X ",
                                                   ctx.type(0).ToString(), " (it must broadcast to X)"));
  }
  for (size_t i = 0; i < dims->size(); ++i) {
    const Dim& x = ctx.type(0).dims[i];
    if (x.is_static() && (*dims)[i].is_static() && x.value() != (*dims)[i].value()) {
      return absl::InvalidArgumentError(absl::StrCat("PRelu: slope ", ctx.type(1).ToString(), " does not broadcast to X ",
                                                     ctx.type(0).ToString()));
    }
  }
  return std::vector<TensorType>{ctx.type(0)};
}

// Max, Min, Sum and Mean: any number of same-typed inputs, broadcast together.
Types InferVariadic(const InferenceContext& ctx) {
  if (absl::Status s = RequireNumeric(ctx, 0, "input 0"); !s.ok()) return s;
  std::vector<Dim> dims = ctx.type(0).dims;
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) return absl::InvalidArgumentError(absl::StrCat(Op(ctx), ": input ", i, " is missing"));
    if (absl::Status s = RequireSameDType(ctx, 0, i); !s.ok()) return s;
    absl::StatusOr<std::vector<Dim>> d = BroadcastDims(dims, ctx.type(i).dims, Op(ctx));
    if (!d.ok()) return d.status();
    dims = *std::move(d);
  }
  return std::vector<TensorType>{TensorType(ctx.type(0).dtype, dims)};
}

// Comparisons broadcast like arithmetic and produce bool.
Types InferCompare(const InferenceContext& ctx) {
  if (absl::Status s = RequireSameDType(ctx, 0, 1); !s.ok()) return s;
  absl::StatusOr<std::vector<Dim>> dims = BroadcastDims(ctx.type(0).dims, ctx.type(1).dims, Op(ctx));
  if (!dims.ok()) return dims.status();
  return std::vector<TensorType>{TensorType(DType::kBool, *dims)};
}

// And, Or, Xor: bool inputs, broadcast; Not: one bool input.
Types InferLogical(const InferenceContext& ctx) {
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    if (ctx.type(i).dtype != DType::kBool) {
      return absl::InvalidArgumentError(absl::StrCat(Op(ctx), ": input ", i, " must be bool, got ", ctx.type(i).ToString()));
    }
  }
  if (ctx.num_inputs() == 1) return std::vector<TensorType>{ctx.type(0)};
  absl::StatusOr<std::vector<Dim>> dims = BroadcastDims(ctx.type(0).dims, ctx.type(1).dims, Op(ctx));
  if (!dims.ok()) return dims.status();
  return std::vector<TensorType>{TensorType(DType::kBool, *dims)};
}

// IsNaN and IsInf: a float input, a bool output of its shape.
Types InferFloatTest(const InferenceContext& ctx) {
  if (absl::Status s = RequireFloat(ctx, 0, "input"); !s.ok()) return s;
  return std::vector<TensorType>{TensorType(DType::kBool, ctx.type(0).dims)};
}

// Pow lets the exponent have its own element type; the result has the base's.
Types InferPow(const InferenceContext& ctx) {
  if (absl::Status s = RequireNumeric(ctx, 0, "base X"); !s.ok()) return s;
  if (absl::Status s = RequireNumeric(ctx, 1, "exponent Y"); !s.ok()) return s;
  absl::StatusOr<std::vector<Dim>> dims = BroadcastDims(ctx.type(0).dims, ctx.type(1).dims, Op(ctx));
  if (!dims.ok()) return dims.status();
  return std::vector<TensorType>{TensorType(ctx.type(0).dtype, *dims, MergedLayout(ctx.type(0), ctx.type(1)))};
}

Types InferWhere(const InferenceContext& ctx) {
  if (ctx.type(0).dtype != DType::kBool) {
    return absl::InvalidArgumentError(
        absl::StrCat("Where: condition must be a bool tensor, got ", ctx.type(0).ToString()));
  }
  if (absl::Status s = RequireSameDType(ctx, 1, 2); !s.ok()) return s;
  absl::StatusOr<std::vector<Dim>> dims = BroadcastDims(ctx.type(0).dims, ctx.type(1).dims, "Where");
  if (!dims.ok()) return dims.status();
  dims = BroadcastDims(*dims, ctx.type(2).dims, "Where");
  if (!dims.ok()) return dims.status();
  return std::vector<TensorType>{TensorType(ctx.type(1).dtype, *dims)};
}

Types InferCast(const InferenceContext& ctx) {
  const Attribute* to = ctx.node.FindAttr("to");
  if (to == nullptr || to->kind != Attribute::Kind::kInt) {
    return absl::InvalidArgumentError("Cast: missing integer attribute 'to'");
  }
  // Opset 19's `saturate` only changes conversions to float8, which DTypeFromOnnxDataType refuses.
  absl::StatusOr<DType> dtype = DTypeFromOnnxDataType(to->i);
  if (!dtype.ok()) return absl::Status(dtype.status().code(), absl::StrCat("Cast: 'to': ", dtype.status().message()));
  TensorType out = ctx.type(0);
  out.dtype = *dtype;
  return std::vector<TensorType>{out};
}

// EyeLike: a 2-D tensor of input 0's shape with ones on diagonal k, of attribute dtype's type (default the
// input's).
Types InferEyeLike(const InferenceContext& ctx) {
  TensorType out = ctx.type(0);
  if (out.rank() != 2) {
    return absl::InvalidArgumentError(absl::StrCat("EyeLike: input has type ", out.ToString(), "; expected 2-D"));
  }
  if (const Attribute* a = ctx.node.FindAttr("dtype"); a != nullptr && a->kind == Attribute::Kind::kInt) {
    absl::StatusOr<DType> dtype = DTypeFromOnnxDataType(a->i);
    if (!dtype.ok()) return absl::Status(dtype.status().code(), absl::StrCat("EyeLike: 'dtype': ", dtype.status().message()));
    out.dtype = *dtype;
  }
  if (out.dtype == DType::kI4) return absl::UnimplementedError("EyeLike: packed i4 output");
  return std::vector<TensorType>{out};
}

// CastLike: Cast to the element type of input 1 (target_type), whose values are not read.
Types InferCastLike(const InferenceContext& ctx) {
  const DType to = ctx.type(1).dtype;
  if (to == DType::kI4 || ctx.type(0).dtype == DType::kI4) {
    return absl::UnimplementedError(absl::StrCat("CastLike: from ", ctx.type(0).ToString(), " to ", DTypeName(to),
                                                 " is not supported (packed i4)"));
  }
  TensorType out = ctx.type(0);
  out.dtype = to;
  return std::vector<TensorType>{out};
}

Types InferDropout(const InferenceContext& ctx) {
  if (ctx.has_input(1)) {
    if (absl::Status s = RequireFloat(ctx, 1, "ratio"); !s.ok()) return s;
    if (absl::Status s = RequireScalar(ctx, 1, "ratio"); !s.ok()) return s;
  }
  if (ctx.has_input(2)) {
    if (ctx.type(2).dtype != DType::kBool) {
      return absl::InvalidArgumentError(
          absl::StrCat("Dropout: training_mode must be a bool scalar, got ", ctx.type(2).ToString()));
    }
    if (absl::Status s = RequireScalar(ctx, 2, "training_mode"); !s.ok()) return s;
    const Tensor* mode = ctx.value(2);
    if (mode != nullptr && mode->GetAsInt64(0) != 0) {
      return absl::UnimplementedError(
          "Dropout: training_mode is true; Tessel runs inference only (export the model in eval mode)");
    }
  }
  TensorType mask = ctx.type(0);
  mask.dtype = DType::kBool;
  return std::vector<TensorType>{ctx.type(0), mask};
}

void Reg(OpRegistry& r, const char* op, int min_in, int max_in, int min_out, int max_out, InferFn fn,
         const char* summary) {
  r.Register(OpSchema{op, "", min_in, max_in, min_out, max_out, RequireInputs(min_in, std::move(fn)), summary});
}

}  // namespace

void RegisterElementwiseOps(OpRegistry& r) {
  constexpr int kVariadic = std::numeric_limits<int>::max();
  Reg(r, "Relu", 1, 1, 1, 1, InferUnaryNumeric, "max(x, 0)");
  Reg(r, "Neg", 1, 1, 1, 1, InferUnaryNumeric, "-x");
  Reg(r, "Clip", 1, 3, 1, 1, InferClip, "min(max(x, min), max) with optional scalar bounds");
  Reg(r, "Sigmoid", 1, 1, 1, 1, InferUnaryFloat, "1 / (1 + exp(-x))");
  Reg(r, "HardSigmoid", 1, 1, 1, 1, InferUnaryFloat, "max(0, min(1, alpha * x + beta))");
  Reg(r, "HardSwish", 1, 1, 1, 1, InferUnaryFloat, "x * max(0, min(1, x / 6 + 0.5))");
  Reg(r, "Tanh", 1, 1, 1, 1, InferUnaryFloat, "hyperbolic tangent");
  Reg(r, "Erf", 1, 1, 1, 1, InferUnaryFloat, "Gauss error function");
  Reg(r, "Gelu", 1, 1, 1, 1, InferGelu, "Gaussian error linear unit (exact, or tanh approximation)");
  Reg(r, "Sqrt", 1, 1, 1, 1, InferUnaryFloat, "square root");
  Reg(r, "Reciprocal", 1, 1, 1, 1, InferUnaryFloat, "1 / x");
  Reg(r, "Exp", 1, 1, 1, 1, InferUnaryFloat, "e^x");
  Reg(r, "Abs", 1, 1, 1, 1, InferUnaryFloat, "|x|");
  Reg(r, "Log", 1, 1, 1, 1, InferUnaryFloat, "natural logarithm");
  Reg(r, "Floor", 1, 1, 1, 1, InferUnaryFloat, "largest integer <= x");
  Reg(r, "Ceil", 1, 1, 1, 1, InferUnaryFloat, "smallest integer >= x");
  Reg(r, "Round", 1, 1, 1, 1, InferUnaryFloat, "nearest integer, halves to even");
  Reg(r, "Sign", 1, 1, 1, 1, InferUnaryFloat, "-1, 0 or 1 by the sign of x");
  Reg(r, "Sin", 1, 1, 1, 1, InferUnaryFloat, "sine");
  Reg(r, "Cos", 1, 1, 1, 1, InferUnaryFloat, "cosine");
  Reg(r, "Tan", 1, 1, 1, 1, InferUnaryFloat, "tangent");
  Reg(r, "Asin", 1, 1, 1, 1, InferUnaryFloat, "arcsine");
  Reg(r, "Acos", 1, 1, 1, 1, InferUnaryFloat, "arccosine");
  Reg(r, "Atan", 1, 1, 1, 1, InferUnaryFloat, "arctangent");
  Reg(r, "Sinh", 1, 1, 1, 1, InferUnaryFloat, "hyperbolic sine");
  Reg(r, "Cosh", 1, 1, 1, 1, InferUnaryFloat, "hyperbolic cosine");
  Reg(r, "Asinh", 1, 1, 1, 1, InferUnaryFloat, "inverse hyperbolic sine");
  Reg(r, "Acosh", 1, 1, 1, 1, InferUnaryFloat, "inverse hyperbolic cosine");
  Reg(r, "Atanh", 1, 1, 1, 1, InferUnaryFloat, "inverse hyperbolic tangent");
  Reg(r, "Softplus", 1, 1, 1, 1, InferUnaryFloat, "log(1 + e^x)");
  Reg(r, "Softsign", 1, 1, 1, 1, InferUnaryFloat, "x / (1 + |x|)");
  Reg(r, "Elu", 1, 1, 1, 1, InferUnaryFloat, "x < 0 ? alpha * (e^x - 1) : x");
  Reg(r, "Celu", 1, 1, 1, 1, InferUnaryFloat, "max(0, x) + min(0, alpha * (e^(x / alpha) - 1))");
  Reg(r, "Selu", 1, 1, 1, 1, InferUnaryFloat, "gamma * (x > 0 ? x : alpha * (e^x - 1))");
  Reg(r, "LeakyRelu", 1, 1, 1, 1, InferUnaryFloat, "x < 0 ? alpha * x : x");
  Reg(r, "ThresholdedRelu", 1, 1, 1, 1, InferUnaryFloat, "x > alpha ? x : 0");
  Reg(r, "PRelu", 2, 2, 1, 1, InferPRelu, "x < 0 ? slope * x : x, the slope broadcast to x");
  Reg(r, "BitShift", 2, 2, 1, 1, InferBitShift, "x << y or x >> y (direction) on unsigned integers, broadcast");
  Reg(r, "Shrink", 1, 1, 1, 1, InferUnaryFloat, "x < -lambd ? x + bias : x > lambd ? x - bias : 0");
  Reg(r, "Add", 2, 2, 1, 1, InferBinaryArithmetic, "a + b with broadcasting");
  Reg(r, "Sub", 2, 2, 1, 1, InferBinaryArithmetic, "a - b with broadcasting");
  Reg(r, "Mul", 2, 2, 1, 1, InferBinaryArithmetic, "a * b with broadcasting");
  Reg(r, "Div", 2, 2, 1, 1, InferBinaryArithmetic, "a / b with broadcasting (integers truncate toward zero)");
  Reg(r, "Pow", 2, 2, 1, 1, InferPow, "x ^ y with broadcasting");
  Reg(r, "Max", 1, kVariadic, 1, 1, InferVariadic, "elementwise maximum of its inputs, broadcast");
  Reg(r, "Min", 1, kVariadic, 1, 1, InferVariadic, "elementwise minimum of its inputs, broadcast");
  Reg(r, "Sum", 1, kVariadic, 1, 1, InferVariadic, "elementwise sum of its inputs, broadcast");
  Reg(r, "Mean", 1, kVariadic, 1, 1, InferVariadic, "elementwise mean of its inputs, broadcast");
  Reg(r, "Equal", 2, 2, 1, 1, InferCompare, "a == b elementwise with broadcasting (bool)");
  Reg(r, "Less", 2, 2, 1, 1, InferCompare, "a < b elementwise with broadcasting (bool)");
  Reg(r, "Greater", 2, 2, 1, 1, InferCompare, "a > b elementwise with broadcasting (bool)");
  Reg(r, "LessOrEqual", 2, 2, 1, 1, InferCompare, "a <= b elementwise with broadcasting (bool)");
  Reg(r, "GreaterOrEqual", 2, 2, 1, 1, InferCompare, "a >= b elementwise with broadcasting (bool)");
  Reg(r, "And", 2, 2, 1, 1, InferLogical, "logical and of bool tensors, broadcast");
  Reg(r, "Or", 2, 2, 1, 1, InferLogical, "logical or of bool tensors, broadcast");
  Reg(r, "Xor", 2, 2, 1, 1, InferLogical, "logical exclusive or of bool tensors, broadcast");
  Reg(r, "Not", 1, 1, 1, 1, InferLogical, "logical not of a bool tensor");
  Reg(r, "IsNaN", 1, 1, 1, 1, InferFloatTest, "x is NaN (bool)");
  Reg(r, "IsInf", 1, 1, 1, 1, InferFloatTest, "x is +-Inf, as detect_positive / detect_negative select (bool)");
  Reg(r, "Mod", 2, 2, 1, 1, InferBinaryArithmetic, "remainder with broadcasting: divisor's sign, or fmod=1 dividend's");
  Reg(r, "Where", 3, 3, 1, 1, InferWhere, "condition ? x : y with three-way broadcasting");
  Reg(r, "Cast", 1, 1, 1, 1, InferCast, "element type conversion");
  Reg(r, "CastLike", 2, 2, 1, 1, InferCastLike, "element type conversion to the type of the second input");
  Reg(r, "Identity", 1, 1, 1, 1, InferIdentity, "copy");
  Reg(r, "EyeLike", 1, 1, 1, 1, InferEyeLike, "ones on diagonal k of a 2-D tensor shaped like the input");
  Reg(r, "Dropout", 1, 3, 1, 2, InferDropout, "identity at inference; the optional mask is all true");
}

}  // namespace tessel
