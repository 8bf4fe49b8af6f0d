// Reference kernels for elementwise operators. Float math is done in double and rounded once, so that
// these stay an accurate oracle; integer arithmetic wraps (two's complement) instead of overflowing.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/ops/shape_util.h"
#include "kernels/reference/reference.h"

namespace tessel {
namespace {

using Inputs = absl::Span<const Tensor* const>;
using Outputs = absl::Span<Tensor>;

absl::Status Unsupported(const Node& node, DType t) {
  return absl::UnimplementedError(
      absl::StrCat(node.op_type(), ": the reference kernel does not support ", DTypeName(t), " tensors"));
}

// f(T()) for the element type `t` of the arithmetic operators: f32, f64 and the 8- to 64-bit integer
// types, signed and unsigned (ONNX's elementwise operators take every numeric type; these are the ones
// Tessel's tensors hold besides the 16-bit floats).
template <typename F>
absl::Status ForArithmeticType(const Node& node, DType t, F&& f) {
  switch (t) {
    case DType::kF32: return f(float{});
    case DType::kF64: return f(double{});
    case DType::kI8: return f(int8_t{});
    case DType::kU8: return f(uint8_t{});
    case DType::kI32: return f(int32_t{});
    case DType::kI64: return f(int64_t{});
    case DType::kI16: return f(int16_t{});
    case DType::kU16: return f(uint16_t{});
    case DType::kU32: return f(uint32_t{});
    case DType::kU64: return f(uint64_t{});
    default: return Unsupported(node, t);
  }
}

// Runs kernel `k` with every f16 input widened to f32 and its f16 outputs narrowed back (round to nearest
// even), so that the arithmetic kernels take float16 as numpy does (float32 arithmetic, one rounding to
// half per result).
template <absl::Status (*k)(const Node&, Inputs, Outputs)>
absl::Status WithF16AsF32(const Node& node, Inputs in, Outputs out) {
  bool any = false;
  for (const Tensor* t : in) any = any || (t != nullptr && t->dtype() == DType::kF16);
  if (!any) return k(node, in, out);
  std::vector<Tensor> wide(in.size());
  std::vector<const Tensor*> wide_in(in.size(), nullptr);
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == nullptr) continue;
    if (in[i]->dtype() != DType::kF16) {
      wide_in[i] = in[i];
      continue;
    }
    wide[i] = Tensor(DType::kF32, in[i]->shape());
    for (int64_t e = 0; e < in[i]->num_elements(); ++e) wide[i].data<float>()[e] = HalfToFloat(in[i]->data<uint16_t>()[e]);
    wide_in[i] = &wide[i];
  }
  std::vector<Tensor> wide_out;
  for (const Tensor& o : out) wide_out.emplace_back(o.dtype() == DType::kF16 ? DType::kF32 : o.dtype(), o.shape());
  if (absl::Status s = k(node, wide_in, absl::MakeSpan(wide_out)); !s.ok()) return s;
  for (size_t j = 0; j < out.size(); ++j) {
    if (out[j].dtype() != DType::kF16) {
      if (out[j].byte_size() > 0) std::memcpy(out[j].raw_data(), wide_out[j].raw_data(), out[j].byte_size());
      continue;
    }
    for (int64_t e = 0; e < out[j].num_elements(); ++e) out[j].data<uint16_t>()[e] = FloatToHalf(wide_out[j].data<float>()[e]);
  }
  return absl::OkStatus();
}

// x < 0, without a comparison that is always false for unsigned T.
template <typename T>
bool IsNegative(T x) {
  if constexpr (std::is_unsigned_v<T>) {
    return false;
  } else {
    return x < T{0};
  }
}

// ---- Unary float operators -------------------------------------------------------------------

struct SigmoidOp {
  explicit SigmoidOp(const Node&) {}
  double operator()(double x) const { return 1.0 / (1.0 + std::exp(-x)); }
};
struct HardSigmoidOp {
  explicit HardSigmoidOp(const Node& n) : alpha(n.GetFloat("alpha", 0.2f)), beta(n.GetFloat("beta", 0.5f)) {}
  double operator()(double x) const { return std::fmax(0.0, std::fmin(1.0, alpha * x + beta)); }
  double alpha, beta;
};
struct HardSwishOp {
  explicit HardSwishOp(const Node&) {}
  double operator()(double x) const { return x * std::fmax(0.0, std::fmin(1.0, x / 6.0 + 0.5)); }
};
struct TanhOp {
  explicit TanhOp(const Node&) {}
  double operator()(double x) const { return std::tanh(x); }
};
struct ErfOp {
  explicit ErfOp(const Node&) {}
  double operator()(double x) const { return std::erf(x); }
};
struct GeluOp {
  explicit GeluOp(const Node& n) : tanh_approx(n.GetString("approximate", "none") == "tanh") {}
  double operator()(double x) const {
    if (tanh_approx) {
      constexpr double kSqrt2OverPi = 0.79788456080286535588;
      return 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
    }
    return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
  }
  bool tanh_approx;
};
struct SqrtOp {
  explicit SqrtOp(const Node&) {}
  double operator()(double x) const { return std::sqrt(x); }
};
struct ReciprocalOp {
  explicit ReciprocalOp(const Node&) {}
  double operator()(double x) const { return 1.0 / x; }
};
struct ExpOp {
  explicit ExpOp(const Node&) {}
  double operator()(double x) const { return std::exp(x); }
};

// The ONNX math and activation functions of one float, evaluated in double.
#define TESSEL_UNARY_MATH_OP(Name, expr)      \
  struct Name##Op {                           \
    explicit Name##Op(const Node&) {}         \
    double operator()(double x) const { return expr; } \
  };
TESSEL_UNARY_MATH_OP(Abs, std::fabs(x))
TESSEL_UNARY_MATH_OP(Log, std::log(x))
TESSEL_UNARY_MATH_OP(Floor, std::floor(x))
TESSEL_UNARY_MATH_OP(Ceil, std::ceil(x))
TESSEL_UNARY_MATH_OP(Round, std::nearbyint(x))  // halves to even, in the default rounding mode
TESSEL_UNARY_MATH_OP(Sign, x > 0 ? 1.0 : (x < 0 ? -1.0 : x))
TESSEL_UNARY_MATH_OP(Sin, std::sin(x))
TESSEL_UNARY_MATH_OP(Cos, std::cos(x))
TESSEL_UNARY_MATH_OP(Tan, std::tan(x))
TESSEL_UNARY_MATH_OP(Asin, std::asin(x))
TESSEL_UNARY_MATH_OP(Acos, std::acos(x))
TESSEL_UNARY_MATH_OP(Atan, std::atan(x))
TESSEL_UNARY_MATH_OP(Sinh, std::sinh(x))
TESSEL_UNARY_MATH_OP(Cosh, std::cosh(x))
TESSEL_UNARY_MATH_OP(Asinh, std::asinh(x))
TESSEL_UNARY_MATH_OP(Acosh, std::acosh(x))
TESSEL_UNARY_MATH_OP(Atanh, std::atanh(x))
TESSEL_UNARY_MATH_OP(Softplus, x > 30 ? x : std::log1p(std::exp(x)))
TESSEL_UNARY_MATH_OP(Softsign, x / (1 + std::fabs(x)))
#undef TESSEL_UNARY_MATH_OP

// Activations with an alpha (and gamma) attribute, defaults as ONNX gives them.
struct EluOp {
  explicit EluOp(const Node& n) : alpha(n.GetFloat("alpha", 1.0f)) {}
  double operator()(double x) const { return x < 0 ? alpha * std::expm1(x) : x; }
  double alpha;
};
struct CeluOp {
  explicit CeluOp(const Node& n) : alpha(n.GetFloat("alpha", 1.0f)) {}
  double operator()(double x) const { return std::fmax(0.0, x) + std::fmin(0.0, alpha * std::expm1(x / alpha)); }
  double alpha;
};
struct SeluOp {
  explicit SeluOp(const Node& n)
      : alpha(n.GetFloat("alpha", 1.67326319217681884765625f)), gamma(n.GetFloat("gamma", 1.05070102214813232421875f)) {}
  double operator()(double x) const { return gamma * (x > 0 ? x : alpha * std::expm1(x)); }
  double alpha, gamma;
};
struct LeakyReluOp {
  explicit LeakyReluOp(const Node& n) : alpha(n.GetFloat("alpha", 0.01f)) {}
  double operator()(double x) const { return x < 0 ? alpha * x : x; }
  double alpha;
};
struct ShrinkOp {
  explicit ShrinkOp(const Node& n) : lambd(n.GetFloat("lambd", 0.5f)), bias(n.GetFloat("bias", 0.0f)) {}
  double operator()(double x) const { return x < -lambd ? x + bias : x > lambd ? x - bias : 0.0; }
  double lambd, bias;
};
struct ThresholdedReluOp {
  explicit ThresholdedReluOp(const Node& n) : alpha(n.GetFloat("alpha", 1.0f)) {}
  double operator()(double x) const { return x > alpha ? x : 0.0; }
  double alpha;
};

template <typename OpT>
absl::Status UnaryFloat(const Node& node, Inputs in, Outputs out) {
  if (in[0]->dtype() != DType::kF32) return Unsupported(node, in[0]->dtype());
  const OpT op(node);
  const float* x = in[0]->data<float>();
  float* y = out[0].data<float>();
  for (int64_t i = 0, n = in[0]->num_elements(); i < n; ++i) y[i] = static_cast<float>(op(x[i]));
  return absl::OkStatus();
}

// ---- Relu, Neg and Clip: float or integer ----------------------------------------------------

template <typename T>
T WrapNeg(T x) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(U{0} - static_cast<U>(x));
}

template <typename T>
void ReluLoop(const Tensor& x, Tensor& y) {
  const T* a = x.data<T>();
  T* b = y.data<T>();
  // `a < 0 ? 0 : a` keeps NaN as NaN, as numpy's maximum does.
  for (int64_t i = 0, n = x.num_elements(); i < n; ++i) b[i] = IsNegative(a[i]) ? T{0} : a[i];
}

absl::Status Relu(const Node& node, Inputs in, Outputs out) {
  return ForArithmeticType(node, in[0]->dtype(), [&](auto tag) {
    ReluLoop<decltype(tag)>(*in[0], out[0]);
    return absl::OkStatus();
  });
}

template <typename T>
void NegLoop(const Tensor& x, Tensor& y) {
  const T* a = x.data<T>();
  T* b = y.data<T>();
  for (int64_t i = 0, n = x.num_elements(); i < n; ++i) {
    if constexpr (std::is_integral_v<T>) {
      b[i] = WrapNeg(a[i]);
    } else {
      b[i] = -a[i];
    }
  }
}

absl::Status Neg(const Node& node, Inputs in, Outputs out) {
  // ONNX's Neg takes signed types only.
  if (in[0]->dtype() == DType::kU8) return Unsupported(node, in[0]->dtype());
  return ForArithmeticType(node, in[0]->dtype(), [&](auto tag) {
    NegLoop<decltype(tag)>(*in[0], out[0]);
    return absl::OkStatus();
  });
}

template <typename T>
void ClipLoop(Inputs in, Tensor& y) {
  const T lo = in.size() > 1 && in[1] ? in[1]->data<T>()[0] : std::numeric_limits<T>::lowest();
  const T hi = in.size() > 2 && in[2] ? in[2]->data<T>()[0] : std::numeric_limits<T>::max();
  const T* a = in[0]->data<T>();
  T* b = y.data<T>();
  // max then min: when min > max every element becomes max, as ONNX specifies.
  for (int64_t i = 0, n = in[0]->num_elements(); i < n; ++i) {
    const T v = a[i] < lo ? lo : a[i];
    b[i] = v > hi ? hi : v;
  }
}

absl::Status Clip(const Node& node, Inputs in, Outputs out) {
  return ForArithmeticType(node, in[0]->dtype(), [&](auto tag) {
    ClipLoop<decltype(tag)>(in, out[0]);
    return absl::OkStatus();
  });
}

// ---- Broadcasting binary arithmetic ----------------------------------------------------------

// Float-to-integer conversion without undefined behaviour: truncate toward zero, NaN gives 0, values
// beyond int64 saturate, then two's-complement wrap to T (what numpy's astype does in range).
template <typename T>
T FloatToInt(double v) {
  if (std::isnan(v)) return T{0};
  v = std::trunc(v);
  int64_t i;
  if (v >= 9223372036854775807.0) {
    i = std::numeric_limits<int64_t>::max();
  } else if (v <= -9223372036854775808.0) {
    i = std::numeric_limits<int64_t>::min();
  } else {
    i = static_cast<int64_t>(v);
  }
  return static_cast<T>(static_cast<std::make_unsigned_t<T>>(i));
}

enum class BinOp { kAdd, kSub, kMul, kDiv };

template <typename T>
T Apply(BinOp op, T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    // Modulo 2^bits, in unsigned arithmetic at least as wide as unsigned int (16-bit operands would be
    // promoted to int, whose products overflow).
    using U = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
    switch (op) {
      case BinOp::kAdd: return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
      case BinOp::kSub: return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
      case BinOp::kMul: return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
      case BinOp::kDiv:
        // min / -1 overflows; it wraps back to min. Zero divisors were rejected before the loop.
        if constexpr (std::is_signed_v<T>) {
          if (b == T{-1}) return WrapNeg(a);
        }
        return static_cast<T>(a / b);
    }
  } else {
    switch (op) {
      case BinOp::kAdd: return a + b;
      case BinOp::kSub: return a - b;
      case BinOp::kMul: return a * b;
      case BinOp::kDiv: return a / b;
    }
  }
  return T{0};
}

template <typename T>
absl::Status BinaryLoop(const Node& node, BinOp op, const Tensor& a, const Tensor& b, Tensor& y) {
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  if constexpr (std::is_integral_v<T>) {
    if (op == BinOp::kDiv) {
      for (int64_t i = 0, n = b.num_elements(); i < n; ++i) {
        if (pb[i] == 0) {
          return absl::InvalidArgumentError(
              absl::StrCat("integer division by zero (element ", i, " of divisor ", ShapeToString(b.shape()), ")"));
        }
      }
    }
  }
  T* py = y.data<T>();
  BroadcastIndexer it(y.shape(), {a.shape(), b.shape()});
  for (int64_t i = 0, n = y.num_elements(); i < n; ++i, it.Next()) py[i] = Apply(op, pa[it.offset(0)], pb[it.offset(1)]);
  return absl::OkStatus();
}

template <BinOp kOp>
absl::Status Binary(const Node& node, Inputs in, Outputs out) {
  return ForArithmeticType(node, in[0]->dtype(), [&](auto tag) {
    return BinaryLoop<decltype(tag)>(node, kOp, *in[0], *in[1], out[0]);
  });
}

template <typename T>
void PowLoop(const Tensor& a, const Tensor& b, Tensor& y) {
  T* py = y.data<T>();
  BroadcastIndexer it(y.shape(), {a.shape(), b.shape()});
  for (int64_t i = 0, n = y.num_elements(); i < n; ++i, it.Next()) {
    const double v = std::pow(a.GetAsDouble(it.offset(0)), b.GetAsDouble(it.offset(1)));
    if constexpr (std::is_integral_v<T>) {
      py[i] = FloatToInt<T>(v);
    } else {
      py[i] = static_cast<T>(v);
    }
  }
}

absl::Status Pow(const Node& node, Inputs in, Outputs out) {
  const DType e = in[1]->dtype();
  // Any real exponent type: the loop reads it as a double.
  if (e != DType::kF32 && e != DType::kF64 && (!IsInteger(e) || e == DType::kI4)) return Unsupported(node, e);
  switch (in[0]->dtype()) {
    case DType::kF32: PowLoop<float>(*in[0], *in[1], out[0]); break;
    case DType::kI32: PowLoop<int32_t>(*in[0], *in[1], out[0]); break;
    case DType::kI64: PowLoop<int64_t>(*in[0], *in[1], out[0]); break;
    default: return Unsupported(node, in[0]->dtype());
  }
  return absl::OkStatus();
}

template <typename T>
void PReluLoop(const Tensor& x, const Tensor& slope, Tensor& y) {
  const T* px = x.data<T>();
  const T* ps = slope.data<T>();
  T* py = y.data<T>();
  BroadcastIndexer it(y.shape(), {x.shape(), slope.shape()});
  for (int64_t i = 0, n = y.num_elements(); i < n; ++i, it.Next()) {
    const T v = px[it.offset(0)];
    py[i] = IsNegative(v) ? Apply(BinOp::kMul, ps[it.offset(1)], v) : v;
  }
}

absl::Status PRelu(const Node& node, Inputs in, Outputs out) {
  return ForArithmeticType(node, in[0]->dtype(), [&](auto tag) {
    PReluLoop<decltype(tag)>(*in[0], *in[1], out[0]);
    return absl::OkStatus();
  });
}

// BitShift on unsigned integers: shifts of the type's width or more give 0, as numpy's (the C shift
// would be undefined there).
template <typename T>
absl::Status BitShiftLoop(bool left, const Tensor& in_x, const Tensor& in_s, Tensor& out) {
  constexpr uint64_t kBits = 8 * sizeof(T);
  const T* a = in_x.data<T>();
  const T* b = in_s.data<T>();
  T* y = out.data<T>();
  BroadcastIndexer it(out.shape(), {in_x.shape(), in_s.shape()});
  for (int64_t i = 0, n = out.num_elements(); i < n; ++i, it.Next()) {
    const uint64_t x = a[it.offset(0)], s = b[it.offset(1)];
    y[i] = s >= kBits ? T{0} : static_cast<T>(left ? x << s : x >> s);
  }
  return absl::OkStatus();
}

absl::Status BitShift(const Node& node, Inputs in, Outputs out) {
  const bool left = node.GetString("direction", "") == "LEFT";
  switch (in[0]->dtype()) {
    case DType::kU8: return BitShiftLoop<uint8_t>(left, *in[0], *in[1], out[0]);
    case DType::kU16: return BitShiftLoop<uint16_t>(left, *in[0], *in[1], out[0]);
    case DType::kU32: return BitShiftLoop<uint32_t>(left, *in[0], *in[1], out[0]);
    case DType::kU64: return BitShiftLoop<uint64_t>(left, *in[0], *in[1], out[0]);
    default: return Unsupported(node, in[0]->dtype());
  }
}

// ---- Max, Min, Sum, Mean: any number of inputs, folded into the output one at a time ---------

enum class VarOp { kMax, kMin, kSum, kMean };

template <typename T>
void VariadicLoop(VarOp op, Inputs in, Tensor& y) {
  T* py = y.data<T>();
  const int64_t n = y.num_elements();
  for (size_t k = 0; k < in.size(); ++k) {
    const T* p = in[k]->data<T>();
    BroadcastIndexer it(y.shape(), {in[k]->shape()});
    for (int64_t i = 0; i < n; ++i, it.Next()) {
      const T v = p[it.offset(0)];
      if (k == 0) {
        py[i] = v;
      } else if (op == VarOp::kMax) {
        // NaN wins, as in numpy's maximum and minimum.
        if (v > py[i] || v != v) py[i] = v;
      } else if (op == VarOp::kMin) {
        if (v < py[i] || v != v) py[i] = v;
      } else {
        py[i] = Apply(BinOp::kAdd, py[i], v);
      }
    }
  }
  if constexpr (std::is_floating_point_v<T>) {
    if (op == VarOp::kMean) {
      for (int64_t i = 0; i < n; ++i) py[i] /= static_cast<T>(in.size());
    }
  }
}

template <VarOp kOp>
absl::Status Variadic(const Node& node, Inputs in, Outputs out) {
  // Mean is defined for floats only.
  if (kOp == VarOp::kMean && in[0]->dtype() != DType::kF32) return Unsupported(node, in[0]->dtype());
  return ForArithmeticType(node, in[0]->dtype(), [&](auto tag) {
    VariadicLoop<decltype(tag)>(kOp, in, out[0]);
    return absl::OkStatus();
  });
}

// ---- Comparisons ------------------------------------------------------------------------------

enum class CmpOp { kEqual, kLess, kGreater, kLessOrEqual, kGreaterOrEqual };

template <CmpOp kOp, typename T>
bool CompareValues(T x, T y) {
  switch (kOp) {
    case CmpOp::kEqual: return x == y;
    case CmpOp::kLess: return x < y;
    case CmpOp::kGreater: return x > y;
    case CmpOp::kLessOrEqual: return x <= y;
    case CmpOp::kGreaterOrEqual: return x >= y;
  }
  return false;
}

template <CmpOp kOp>
absl::Status Compare(const Node& node, Inputs in, Outputs out) {
  const Tensor& a = *in[0];
  const Tensor& b = *in[1];
  if (a.dtype() == DType::kI4) return Unsupported(node, a.dtype());
  uint8_t* py = out[0].data<uint8_t>();
  BroadcastIndexer it(out[0].shape(), {a.shape(), b.shape()});
  const bool is_int = !IsFloat(a.dtype());
  for (int64_t i = 0, n = out[0].num_elements(); i < n; ++i, it.Next()) {
    bool r;
    if (is_int) {  // exact for int64, which doubles are not
      r = CompareValues<kOp>(a.GetAsInt64(it.offset(0)), b.GetAsInt64(it.offset(1)));
    } else {
      r = CompareValues<kOp>(a.GetAsDouble(it.offset(0)), b.GetAsDouble(it.offset(1)));
    }
    py[i] = r ? 1 : 0;
  }
  return absl::OkStatus();
}

// ---- And, Or, Xor, Not on bool; IsNaN, IsInf; Mod ---------------------------------------------

enum class LogicOp { kAnd, kOr, kXor };

template <LogicOp kOp>
absl::Status Logical(const Node& node, Inputs in, Outputs out) {
  const uint8_t* a = in[0]->data<uint8_t>();
  const uint8_t* b = in[1]->data<uint8_t>();
  uint8_t* y = out[0].data<uint8_t>();
  BroadcastIndexer it(out[0].shape(), {in[0]->shape(), in[1]->shape()});
  for (int64_t i = 0, n = out[0].num_elements(); i < n; ++i, it.Next()) {
    const bool x = a[it.offset(0)] != 0, z = b[it.offset(1)] != 0;
    y[i] = kOp == LogicOp::kAnd ? (x && z) : kOp == LogicOp::kOr ? (x || z) : (x != z);
  }
  return absl::OkStatus();
}

absl::Status Not(const Node& node, Inputs in, Outputs out) {
  const uint8_t* a = in[0]->data<uint8_t>();
  uint8_t* y = out[0].data<uint8_t>();
  for (int64_t i = 0, n = in[0]->num_elements(); i < n; ++i) y[i] = a[i] == 0;
  return absl::OkStatus();
}

absl::Status IsNaNOrInf(const Node& node, Inputs in, Outputs out) {
  if (in[0]->dtype() != DType::kF32) return Unsupported(node, in[0]->dtype());
  const bool nan = node.op_type() == "IsNaN";
  const bool pos = node.GetInt("detect_positive", 1) != 0, neg = node.GetInt("detect_negative", 1) != 0;
  const float* x = in[0]->data<float>();
  uint8_t* y = out[0].data<uint8_t>();
  for (int64_t i = 0, n = in[0]->num_elements(); i < n; ++i) {
    y[i] = nan ? std::isnan(x[i]) : std::isinf(x[i]) && ((x[i] > 0 && pos) || (x[i] < 0 && neg));
  }
  return absl::OkStatus();
}

// Mod: fmod=1 takes the dividend's sign (C's fmod; required for floats), fmod=0 the divisor's (Python's %).
template <typename T>
absl::Status ModLoop(const Node& node, bool fmod, const Tensor& a, const Tensor& b, Tensor& y) {
  T* py = y.data<T>();
  BroadcastIndexer it(y.shape(), {a.shape(), b.shape()});
  for (int64_t i = 0, n = y.num_elements(); i < n; ++i, it.Next()) {
    const T x = a.data<T>()[it.offset(0)], d = b.data<T>()[it.offset(1)];
    if constexpr (std::is_integral_v<T>) {
      if (d == 0) return absl::InvalidArgumentError(absl::StrCat("Mod: integer division by zero (element ", i, ")"));
      if (IsNegative(d) && d == static_cast<T>(-1)) {  // x % -1 is 0; computing it overflows for the minimum
        py[i] = 0;
        continue;
      }
      T r = static_cast<T>(x % d);
      if (!fmod && r != 0 && IsNegative(r) != IsNegative(d)) r = static_cast<T>(r + d);
      py[i] = r;
    } else {
      py[i] = static_cast<T>(std::fmod(x, d));
    }
  }
  return absl::OkStatus();
}

absl::Status Mod(const Node& node, Inputs in, Outputs out) {
  const bool fmod = node.GetInt("fmod", 0) != 0;
  if (in[0]->dtype() == DType::kF32 && !fmod) return absl::InvalidArgumentError("Mod: float inputs need fmod=1");
  return ForArithmeticType(node, in[0]->dtype(), [&](auto tag) {
    return ModLoop<decltype(tag)>(node, fmod, *in[0], *in[1], out[0]);
  });
}

// ---- Where, Cast, Identity, Dropout ----------------------------------------------------------

absl::Status Where(const Node& node, Inputs in, Outputs out) {
  const DType t = in[1]->dtype();
  if (t == DType::kI4) return Unsupported(node, t);
  const size_t bytes = DTypeBits(t) / 8;
  const uint8_t* cond = in[0]->data<uint8_t>();
  const char* x = static_cast<const char*>(in[1]->raw_data());
  const char* y = static_cast<const char*>(in[2]->raw_data());
  char* o = static_cast<char*>(out[0].raw_data());
  BroadcastIndexer it(out[0].shape(), {in[0]->shape(), in[1]->shape(), in[2]->shape()});
  for (int64_t i = 0, n = out[0].num_elements(); i < n; ++i, it.Next()) {
    const char* src = cond[it.offset(0)] ? x + it.offset(1) * bytes : y + it.offset(2) * bytes;
    std::memcpy(o + i * bytes, src, bytes);
  }
  return absl::OkStatus();
}

template <typename T>
void StoreInt(Tensor& out, int64_t i, int64_t v) {
  out.data<T>()[i] = static_cast<T>(static_cast<std::make_unsigned_t<T>>(v));
}

// Element i of an integer `out` from a float source `f` (truncated, as astype) or an integer one `v`
// (wrapped).
template <typename T>
void StoreIntFrom(Tensor& out, int64_t i, bool from_float, double f, int64_t v) {
  if (from_float) {
    out.data<T>()[i] = FloatToInt<T>(f);
  } else {
    StoreInt<T>(out, i, v);
  }
}

// One element, converted as numpy's astype does (integers wrap, floats truncate toward zero).
void CastElement(const Tensor& in, Tensor& out, int64_t i) {
  const bool from_float = IsFloat(in.dtype()), from_u64 = in.dtype() == DType::kU64;
  const double f = from_float ? in.GetAsDouble(i) : 0.0;
  const int64_t v = from_float ? 0 : in.GetAsInt64(i);  // u64 wraps, which the integer stores undo
  // An integer source as float: u64 past 2^63 from its unsigned value.
  const auto int_as = [&](auto tag) {
    using F = decltype(tag);
    return from_u64 ? static_cast<F>(static_cast<uint64_t>(v)) : static_cast<F>(v);
  };
  switch (out.dtype()) {
    case DType::kF32: out.data<float>()[i] = from_float ? static_cast<float>(f) : int_as(float{}); break;
    case DType::kF64: out.data<double>()[i] = from_float ? f : int_as(double{}); break;
    case DType::kF16:
      out.data<uint16_t>()[i] = FloatToHalf(from_float ? static_cast<float>(f) : int_as(float{}));
      break;
    case DType::kBF16:
      out.data<uint16_t>()[i] = FloatToBF16(from_float ? static_cast<float>(f) : int_as(float{}));
      break;
    case DType::kBool: out.data<uint8_t>()[i] = from_float ? f != 0.0 : v != 0; break;
    case DType::kI8: StoreIntFrom<int8_t>(out, i, from_float, f, v); break;
    case DType::kU8: StoreIntFrom<uint8_t>(out, i, from_float, f, v); break;
    case DType::kI16: StoreIntFrom<int16_t>(out, i, from_float, f, v); break;
    case DType::kU16: StoreIntFrom<uint16_t>(out, i, from_float, f, v); break;
    case DType::kI32: StoreIntFrom<int32_t>(out, i, from_float, f, v); break;
    case DType::kU32: StoreIntFrom<uint32_t>(out, i, from_float, f, v); break;
    case DType::kI64: StoreIntFrom<int64_t>(out, i, from_float, f, v); break;
    case DType::kU64: StoreIntFrom<uint64_t>(out, i, from_float, f, v); break;
    case DType::kI4: break;  // rejected by Cast() before the loop
  }
}

absl::Status Cast(const Node& node, Inputs in, Outputs out) {
  if (in[0]->dtype() == DType::kI4) return Unsupported(node, in[0]->dtype());
  if (out[0].dtype() == DType::kI4) return Unsupported(node, out[0].dtype());
  if (in[0]->dtype() == out[0].dtype()) {  // to its own type: the same bytes
    if (in[0]->byte_size() > 0) std::memcpy(out[0].raw_data(), in[0]->raw_data(), in[0]->byte_size());
    return absl::OkStatus();
  }
  for (int64_t i = 0, n = in[0]->num_elements(); i < n; ++i) CastElement(*in[0], out[0], i);
  return absl::OkStatus();
}

// Ones on diagonal k (row i, column i + k), zeros elsewhere, in the output's type (a 1 converted as Cast
// converts it).
absl::Status EyeLike(const Node& node, Inputs in, Outputs out) {
  Tensor& y = out[0];
  if (y.byte_size() > 0) std::memset(y.raw_data(), 0, y.byte_size());
  const Tensor one = Tensor::FromVector<float>({}, {1.0f});
  Tensor one_y(y.dtype(), {});
  CastElement(one, one_y, 0);
  const size_t bytes = DTypeBits(y.dtype()) / 8;
  const int64_t rows = y.dim(0), cols = y.dim(1), k = node.GetInt("k", 0);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t c = r + k;
    if (c >= 0 && c < cols) std::memcpy(static_cast<char*>(y.raw_data()) + (r * cols + c) * bytes, one_y.raw_data(), bytes);
  }
  return absl::OkStatus();
}

absl::Status Identity(const Node& node, Inputs in, Outputs out) {
  if (in[0]->byte_size() > 0) std::memcpy(out[0].raw_data(), in[0]->raw_data(), in[0]->byte_size());
  return absl::OkStatus();
}

absl::Status Dropout(const Node& node, Inputs in, Outputs out) {
  // Inference checks a known training_mode; one read at run time is checked here.
  if (in.size() > 2 && in[2] != nullptr && in[2]->num_elements() == 1 && in[2]->GetAsInt64(0) != 0) {
    return absl::UnimplementedError(
        "Dropout: training_mode is true; Tessel runs inference only (export the model in eval mode)");
  }
  if (in[0]->byte_size() > 0) std::memcpy(out[0].raw_data(), in[0]->raw_data(), in[0]->byte_size());
  if (out.size() > 1 && out[1].byte_size() > 0) std::memset(out[1].raw_data(), 1, out[1].byte_size());
  return absl::OkStatus();
}

}  // namespace

void RegisterElementwiseReferenceKernels(ReferenceKernelRegistry& r) {
  r.Register("", "Relu", WithF16AsF32<Relu>);
  r.Register("", "Neg", WithF16AsF32<Neg>);
  r.Register("", "Clip", WithF16AsF32<Clip>);
  r.Register("", "Sigmoid", UnaryFloat<SigmoidOp>);
  r.Register("", "HardSigmoid", UnaryFloat<HardSigmoidOp>);
  r.Register("", "HardSwish", UnaryFloat<HardSwishOp>);
  r.Register("", "Tanh", UnaryFloat<TanhOp>);
  r.Register("", "Erf", UnaryFloat<ErfOp>);
  r.Register("", "Gelu", UnaryFloat<GeluOp>);
  r.Register("", "Sqrt", UnaryFloat<SqrtOp>);
  r.Register("", "Reciprocal", UnaryFloat<ReciprocalOp>);
  r.Register("", "Exp", UnaryFloat<ExpOp>);
  r.Register("", "Abs", UnaryFloat<AbsOp>);
  r.Register("", "Log", UnaryFloat<LogOp>);
  r.Register("", "Floor", UnaryFloat<FloorOp>);
  r.Register("", "Ceil", UnaryFloat<CeilOp>);
  r.Register("", "Round", UnaryFloat<RoundOp>);
  r.Register("", "Sign", UnaryFloat<SignOp>);
  r.Register("", "Sin", UnaryFloat<SinOp>);
  r.Register("", "Cos", UnaryFloat<CosOp>);
  r.Register("", "Tan", UnaryFloat<TanOp>);
  r.Register("", "Asin", UnaryFloat<AsinOp>);
  r.Register("", "Acos", UnaryFloat<AcosOp>);
  r.Register("", "Atan", UnaryFloat<AtanOp>);
  r.Register("", "Sinh", UnaryFloat<SinhOp>);
  r.Register("", "Cosh", UnaryFloat<CoshOp>);
  r.Register("", "Asinh", UnaryFloat<AsinhOp>);
  r.Register("", "Acosh", UnaryFloat<AcoshOp>);
  r.Register("", "Atanh", UnaryFloat<AtanhOp>);
  r.Register("", "Softplus", UnaryFloat<SoftplusOp>);
  r.Register("", "Softsign", UnaryFloat<SoftsignOp>);
  r.Register("", "Elu", UnaryFloat<EluOp>);
  r.Register("", "Celu", UnaryFloat<CeluOp>);
  r.Register("", "Selu", UnaryFloat<SeluOp>);
  r.Register("", "LeakyRelu", UnaryFloat<LeakyReluOp>);
  r.Register("", "ThresholdedRelu", UnaryFloat<ThresholdedReluOp>);
  r.Register("", "PRelu", WithF16AsF32<PRelu>);
  r.Register("", "Shrink", UnaryFloat<ShrinkOp>);
  r.Register("", "BitShift", BitShift);
  r.Register("", "Add", WithF16AsF32<Binary<BinOp::kAdd>>);
  r.Register("", "Sub", WithF16AsF32<Binary<BinOp::kSub>>);
  r.Register("", "Mul", WithF16AsF32<Binary<BinOp::kMul>>);
  r.Register("", "Div", WithF16AsF32<Binary<BinOp::kDiv>>);
  r.Register("", "Pow", Pow);
  r.Register("", "Max", WithF16AsF32<Variadic<VarOp::kMax>>);
  r.Register("", "Min", WithF16AsF32<Variadic<VarOp::kMin>>);
  r.Register("", "Sum", WithF16AsF32<Variadic<VarOp::kSum>>);
  r.Register("", "Mean", WithF16AsF32<Variadic<VarOp::kMean>>);
  r.Register("", "Equal", Compare<CmpOp::kEqual>);
  r.Register("", "Less", Compare<CmpOp::kLess>);
  r.Register("", "Greater", Compare<CmpOp::kGreater>);
  r.Register("", "LessOrEqual", Compare<CmpOp::kLessOrEqual>);
  r.Register("", "GreaterOrEqual", Compare<CmpOp::kGreaterOrEqual>);
  r.Register("", "And", Logical<LogicOp::kAnd>);
  r.Register("", "Or", Logical<LogicOp::kOr>);
  r.Register("", "Xor", Logical<LogicOp::kXor>);
  r.Register("", "Not", Not);
  r.Register("", "IsNaN", IsNaNOrInf);
  r.Register("", "IsInf", IsNaNOrInf);
  r.Register("", "Mod", WithF16AsF32<Mod>);
  r.Register("", "Where", Where);
  r.Register("", "Cast", Cast);
  r.Register("", "CastLike", Cast);  // the output type, from inference, is the target
  r.Register("", "Identity", Identity);
  r.Register("", "EyeLike", EyeLike);
  r.Register("", "Dropout", Dropout);
}

}  // namespace tessel
