// Elementwise reference kernels and their type inference, checked against hand-computed values
// (tolerance 1e-6 absolute for transcendental functions, exact otherwise).
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "graph/graph.h"
#include "graph/op_registry.h"
#include "kernels/reference/reference.h"

namespace tessel {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

// One node fed by graph inputs; std::nullopt leaves an optional input out.
class OneNode {
 public:
  OneNode(const std::string& op, std::vector<std::optional<Tensor>> inputs, int num_outputs = 1)
      : inputs_(std::move(inputs)) {
    std::vector<Value*> values;
    for (size_t i = 0; i < inputs_.size(); ++i) {
      values.push_back(inputs_[i] ? graph_.AddInput("in" + std::to_string(i), inputs_[i]->type()) : nullptr);
    }
    node_ = graph_.AddNode(op, values, num_outputs, "n");
  }
  Node& node() { return *node_; }
  absl::StatusOr<std::vector<Tensor>> Run() {
    std::vector<const Tensor*> ptrs;
    for (const auto& t : inputs_) ptrs.push_back(t ? &*t : nullptr);
    std::vector<Tensor> outs;
    absl::Status s = RunReferenceNode(*node_, ptrs, &outs);
    if (!s.ok()) return s;
    return outs;
  }

 private:
  Graph graph_;
  Node* node_;
  std::vector<std::optional<Tensor>> inputs_;
};

Tensor F32(std::vector<int64_t> shape, std::vector<float> v) { return Tensor::FromVector<float>(shape, v); }
Tensor I64(std::vector<int64_t> shape, std::vector<int64_t> v) { return Tensor::FromVector<int64_t>(shape, v); }
Tensor I32(std::vector<int64_t> shape, std::vector<int32_t> v) { return Tensor::FromVector<int32_t>(shape, v); }
Tensor I8(std::vector<int64_t> shape, std::vector<int8_t> v) { return Tensor::FromVector<int8_t>(shape, v); }
Tensor U8(std::vector<int64_t> shape, std::vector<uint8_t> v) { return Tensor::FromVector<uint8_t>(shape, v); }
Tensor Bool(std::vector<int64_t> shape, std::vector<bool> v) {
  std::vector<uint8_t> bytes(v.begin(), v.end());
  Tensor t(DType::kBool, shape);
  for (size_t i = 0; i < bytes.size(); ++i) t.data<uint8_t>()[i] = bytes[i];
  return t;
}

std::vector<float> RunUnary(const std::string& op, std::vector<float> x,
                            std::vector<std::pair<std::string, Attribute>> attrs = {}) {
  OneNode n(op, {F32({static_cast<int64_t>(x.size())}, x)});
  for (auto& [k, a] : attrs) n.node().SetAttr(k, a);
  absl::StatusOr<std::vector<Tensor>> out = n.Run();
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? (*out)[0].ToFloatVector() : std::vector<float>{};
}

void ExpectNear(const std::vector<float>& got, const std::vector<double>& want, double tol = 1e-6) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

TEST(ElementwiseTest, Activations) {
  EXPECT_THAT(RunUnary("Relu", {-2, -0.5f, 0, 3}), ElementsAre(0, 0, 0, 3));
  ExpectNear(RunUnary("Sigmoid", {0, 2, -2}), {0.5, 0.8807970779778823, 0.11920292202211755});
  ExpectNear(RunUnary("Tanh", {0, 1, -1}), {0, 0.7615941559557649, -0.7615941559557649});
  // HardSigmoid defaults alpha 0.2, beta 0.5: 0.2 * 1 + 0.5 = 0.7; clamps at 0 and 1.
  ExpectNear(RunUnary("HardSigmoid", {1, -5, 5}), {0.7, 0, 1});
  ExpectNear(RunUnary("HardSigmoid", {1}, {{"alpha", Attribute::Float(0.5f)}, {"beta", Attribute::Float(0.0f)}}),
             {0.5});
  // x * clamp(x / 6 + 0.5, 0, 1): 1 -> 2/3, 3 -> 3, -3 -> 0, -1 -> -1/3.
  ExpectNear(RunUnary("HardSwish", {1, 3, -3, -1, 4}), {2.0 / 3, 3, 0, -1.0 / 3, 4});
}

TEST(ElementwiseTest, ErfAndGelu) {
  // erf(1), erf(0.5) from tables.
  ExpectNear(RunUnary("Erf", {0, 1, -0.5f}), {0, 0.8427007929497149, -0.5204998778130465});
  // Exact Gelu: x * Phi(x); Phi(1) = 0.8413447460685429.
  ExpectNear(RunUnary("Gelu", {0, 1, -1}), {0, 0.8413447460685429, -0.15865525393145707});
  // Tanh form: 0.5 * (1 + tanh(sqrt(2/pi) * 1.044715)) = 0.8411919906082768.
  ExpectNear(RunUnary("Gelu", {1}, {{"approximate", Attribute::String("tanh")}}), {0.8411919906082768});
}

TEST(ElementwiseTest, GeluRejectsUnknownApproximation) {
  OneNode n("Gelu", {F32({1}, {1})});
  n.node().SetAttr("approximate", Attribute::String("fast"));
  EXPECT_THAT(n.Run().status().message(), HasSubstr("approximate"));
}

TEST(ElementwiseTest, UnaryMath) {
  ExpectNear(RunUnary("Sqrt", {4, 2, 0}), {2, 1.4142135623730951, 0});
  ExpectNear(RunUnary("Reciprocal", {4, -0.5f}), {0.25, -2});
  ExpectNear(RunUnary("Exp", {0, 1, -1}), {1, 2.718281828459045, 0.36787944117144233});
  EXPECT_THAT(RunUnary("Neg", {1, -2, 0}), ElementsAre(-1, 2, 0));
}

// The ONNX math functions, against values computed by hand (or by numpy, digits as printed).
TEST(ElementwiseTest, MoreUnaryMath) {
  ExpectNear(RunUnary("Abs", {-2.5f, 0, 3}), {2.5, 0, 3});
  ExpectNear(RunUnary("Log", {1, 2.718281828459045f, 0.5f}), {0, 1, -0.6931471805599453});
  ExpectNear(RunUnary("Floor", {-1.5f, 1.5f, 2}), {-2, 1, 2});
  ExpectNear(RunUnary("Ceil", {-1.5f, 1.5f, 2}), {-1, 2, 2});
  ExpectNear(RunUnary("Round", {0.5f, 1.5f, 2.5f, -0.5f, -1.6f}), {0, 2, 2, 0, -2});  // halves to even
  ExpectNear(RunUnary("Sign", {-3, 0, 0.25f}), {-1, 0, 1});
  ExpectNear(RunUnary("Sin", {0, 1.5707963267948966f}), {0, 1});
  ExpectNear(RunUnary("Cos", {0, 3.141592653589793f}), {1, -1});
  ExpectNear(RunUnary("Tan", {0.7853981633974483f}), {1});
  ExpectNear(RunUnary("Asin", {1, -0.5f}), {1.5707963267948966, -0.5235987755982989});
  ExpectNear(RunUnary("Acos", {1, 0}), {0, 1.5707963267948966});
  ExpectNear(RunUnary("Atan", {1}), {0.7853981633974483});
  ExpectNear(RunUnary("Sinh", {1}), {1.1752011936438014});
  ExpectNear(RunUnary("Cosh", {1}), {1.5430806348152437});
  ExpectNear(RunUnary("Asinh", {1}), {0.881373587019543});
  ExpectNear(RunUnary("Acosh", {2}), {1.3169578969248166});
  ExpectNear(RunUnary("Atanh", {0.5f}), {0.5493061443340549});
  ExpectNear(RunUnary("Softplus", {0, 1, 100}), {0.6931471805599453, 1.3132616875182228, 100}, 1e-5);
  ExpectNear(RunUnary("Softsign", {1, -3}), {0.5, -0.75});
  ExpectNear(RunUnary("Elu", {-1, 2}, {{"alpha", Attribute::Float(2)}}), {-1.2642411176571153, 2});
  ExpectNear(RunUnary("Celu", {-1, 2}), {-0.6321205588285577, 2});
  ExpectNear(RunUnary("Selu", {-1, 2}), {-1.1113307378125628, 2.1014020442962646});
  ExpectNear(RunUnary("LeakyRelu", {-2, 3}), {-0.02, 3});
  ExpectNear(RunUnary("ThresholdedRelu", {0.5f, 1, 1.5f}), {0, 0, 1.5});
}

// Max, Min, Sum and Mean over three inputs broadcast together; NaN wins in Max and Min.
TEST(ElementwiseTest, VariadicOps) {
  const float nan = std::nanf("");
  auto run = [&](const std::string& op) {
    OneNode n(op, {F32({2, 2}, {1, 5, -3, nan}), F32({2}, {2, 0}), F32({1}, {4})});
    absl::StatusOr<std::vector<Tensor>> out = n.Run();
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? (*out)[0].ToFloatVector() : std::vector<float>{};
  };
  std::vector<float> max = run("Max"), min = run("Min");
  ASSERT_EQ(max.size(), 4u);
  EXPECT_THAT(std::vector<float>(max.begin(), max.begin() + 3), ElementsAre(4, 5, 4));
  EXPECT_TRUE(std::isnan(max[3]));
  EXPECT_THAT(std::vector<float>(min.begin(), min.begin() + 3), ElementsAre(1, 0, -3));
  EXPECT_TRUE(std::isnan(min[3]));
  EXPECT_THAT(run("Sum")[0], 7);
  ExpectNear({run("Mean")[1]}, {3});
  OneNode ints("Max", {I64({3}, {1, 9, -4}), I64({1}, {2})});
  absl::StatusOr<std::vector<Tensor>> out = ints.Run();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].ToFloatVector(), ElementsAre(2, 9, 2));
}

TEST(ElementwiseTest, UnaryFloatOpRejectsIntegers) {
  OneNode n("Sigmoid", {I64({2}, {1, 2})});
  absl::StatusOr<std::vector<Tensor>> out = n.Run();
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("float"));
}

TEST(ElementwiseTest, ReluAndNegOnIntegers) {
  OneNode relu("Relu", {I64({3}, {-4, 0, 9})});
  absl::StatusOr<std::vector<Tensor>> out = relu.Run();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].ToInt64Vector(), ElementsAre(0, 0, 9));
  OneNode neg("Neg", {I32({2}, {5, INT32_MIN})});
  out = neg.Run();
  ASSERT_TRUE(out.ok()) << out.status();
  // -INT32_MIN wraps to itself.
  EXPECT_THAT((*out)[0].ToInt64Vector(), ElementsAre(-5, INT32_MIN));
}

// The 8-bit integer types, as numpy computes them on int8 / uint8 arrays (wrapping arithmetic, floor
// division's truncation for C-style Div, Python's % for Mod with fmod=0), worked by hand.
std::vector<int64_t> RunInts(const std::string& op, std::vector<Tensor> in,
                             std::vector<std::pair<std::string, Attribute>> attrs = {}) {
  std::vector<std::optional<Tensor>> inputs(in.begin(), in.end());
  OneNode n(op, inputs);
  for (auto& [name, a] : attrs) n.node().SetAttr(name, a);
  absl::StatusOr<std::vector<Tensor>> out = n.Run();
  EXPECT_TRUE(out.ok()) << op << ": " << out.status();
  if (!out.ok()) return {};
  EXPECT_EQ((*out)[0].dtype(), in[0].dtype()) << op;
  return (*out)[0].ToInt64Vector();
}

TEST(ElementwiseTest, EightBitIntegers) {
  const Tensor a = U8({4}, {200, 7, 0, 255}), b = U8({4}, {100, 3, 9, 2});
  EXPECT_THAT(RunInts("Add", {a, b}), ElementsAre(44, 10, 9, 1));  // 300 and 257 wrap
  EXPECT_THAT(RunInts("Sub", {a, b}), ElementsAre(100, 4, 247, 253));
  EXPECT_THAT(RunInts("Mul", {a, b}), ElementsAre(32, 21, 0, 254));  // 20000 % 256, 510 % 256
  EXPECT_THAT(RunInts("Div", {a, b}), ElementsAre(2, 2, 0, 127));
  EXPECT_THAT(RunInts("Div", {U8({2}, {200, 255}), U8({2}, {255, 255})}), ElementsAre(0, 1));  // 255 is not -1
  EXPECT_THAT(RunInts("Max", {a, b}), ElementsAre(200, 7, 9, 255));
  EXPECT_THAT(RunInts("Min", {a, b}), ElementsAre(100, 3, 0, 2));
  EXPECT_THAT(RunInts("Mod", {a, b}), ElementsAre(0, 1, 0, 1));
  EXPECT_THAT(RunInts("Relu", {a}), ElementsAre(200, 7, 0, 255));
  EXPECT_THAT(RunInts("Clip", {a, U8({}, {5}), U8({}, {199})}), ElementsAre(199, 7, 5, 199));

  const Tensor x = I8({5}, {-128, -7, 4, 100, 127}), y = I8({5}, {-1, 3, -3, 50, 2});
  EXPECT_THAT(RunInts("Add", {x, y}), ElementsAre(127, -4, 1, -106, -127));  // -129 and 150, 129 wrap
  EXPECT_THAT(RunInts("Mul", {x, y}), ElementsAre(-128, -21, -12, -120, -2));  // 128 -> -128, 5000, 254 wrap
  EXPECT_THAT(RunInts("Div", {x, y}), ElementsAre(-128, -2, -1, 2, 63));  // -128 / -1 wraps; truncation
  EXPECT_THAT(RunInts("Mod", {x, y}), ElementsAre(0, 2, -2, 0, 1));  // the divisor's sign
  EXPECT_THAT(RunInts("Mod", {x, y}, {{"fmod", Attribute::Int(1)}}), ElementsAre(0, -1, 1, 0, 1));
  EXPECT_THAT(RunInts("Max", {x, y}), ElementsAre(-1, 3, 4, 100, 127));
  EXPECT_THAT(RunInts("Min", {x, y}), ElementsAre(-128, -7, -3, 50, 2));
  EXPECT_THAT(RunInts("Relu", {x}), ElementsAre(0, 0, 4, 100, 127));
  EXPECT_THAT(RunInts("Neg", {x}), ElementsAre(-128, 7, -4, -100, -127));  // -(-128) wraps
  EXPECT_THAT(RunInts("Clip", {x, I8({}, {-5}), I8({}, {50})}), ElementsAre(-5, -5, 4, 50, 50));
  EXPECT_THAT(RunInts("Clip", {x}), ElementsAre(-128, -7, 4, 100, 127));

  // What stays refused: Neg of unsigned, Mean of integers, a zero divisor.
  for (const auto& [op, in] : std::vector<std::pair<std::string, std::vector<Tensor>>>{
           {"Neg", {a}}, {"Mean", {a, b}}, {"Div", {a, U8({4}, {1, 0, 1, 1})}}}) {
    std::vector<std::optional<Tensor>> inputs(in.begin(), in.end());
    OneNode n(op, inputs);
    EXPECT_FALSE(n.Run().ok()) << op;
  }
}

// 16-bit integers and the unsigned 32- and 64-bit types: arithmetic modulo 2^bits (16-bit products
// must not overflow the int they would be promoted to), BitShift at every width, Pow with unsigned
// exponents, and Cast to and from them as numpy's astype.
TEST(ElementwiseTest, SixteenBitAndUnsignedWideIntegers) {
  auto u16 = [](std::vector<uint16_t> v) { return Tensor::FromVector<uint16_t>({static_cast<int64_t>(v.size())}, v); };
  auto i16 = [](std::vector<int16_t> v) { return Tensor::FromVector<int16_t>({static_cast<int64_t>(v.size())}, v); };
  auto u32 = [](std::vector<uint32_t> v) { return Tensor::FromVector<uint32_t>({static_cast<int64_t>(v.size())}, v); };
  auto u64 = [](std::vector<uint64_t> v) { return Tensor::FromVector<uint64_t>({static_cast<int64_t>(v.size())}, v); };
  const Tensor a = u16({65535, 300, 7}), b = u16({65535, 300, 2});
  EXPECT_THAT(RunInts("Mul", {a, b}), ElementsAre(1, 24464, 14));  // 65535^2 and 90000 mod 2^16
  EXPECT_THAT(RunInts("Add", {a, b}), ElementsAre(65534, 600, 9));
  EXPECT_THAT(RunInts("Sub", {b, a}), ElementsAre(0, 0, 65531));
  EXPECT_THAT(RunInts("Mod", {a, b}), ElementsAre(0, 0, 1));
  const Tensor x = i16({-32768, 100, -7}), y = i16({-1, -300, 2});
  EXPECT_THAT(RunInts("Div", {x, y}), ElementsAre(-32768, 0, -3));  // -32768 / -1 wraps
  EXPECT_THAT(RunInts("Mul", {x, y}), ElementsAre(-32768, -30000, -14));
  EXPECT_THAT(RunInts("Mod", {x, y}), ElementsAre(0, -200, 1));  // the divisor's sign
  EXPECT_THAT(RunInts("Max", {x, y}), ElementsAre(-1, 100, 2));
  EXPECT_THAT(RunInts("Min", {u32({4000000000u, 1}), u32({5, 2})}), ElementsAre(5, 1));
  EXPECT_THAT(RunInts("Sub", {u32({1}), u32({2})}), ElementsAre(4294967295LL));

  OneNode big("Max", {u64({~uint64_t{0}, 1}), u64({1, uint64_t{1} << 63})});
  absl::StatusOr<std::vector<Tensor>> out = big.Run();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].data<uint64_t>()[0], ~uint64_t{0});
  EXPECT_EQ((*out)[0].data<uint64_t>()[1], uint64_t{1} << 63);

  auto shift = [](const char* dir, Tensor v, Tensor s) {
    OneNode n("BitShift", {v, s});
    n.node().SetAttr("direction", Attribute::String(dir));
    absl::StatusOr<std::vector<Tensor>> r = n.Run();
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? (*r)[0] : Tensor();
  };
  const Tensor l64 = shift("LEFT", u64({1, 1, 3}), u64({63, 64, 1}));
  EXPECT_EQ(l64.data<uint64_t>()[0], uint64_t{1} << 63);
  EXPECT_EQ(l64.data<uint64_t>()[1], 0u);  // the width or more: 0
  EXPECT_EQ(l64.data<uint64_t>()[2], 6u);
  EXPECT_THAT(shift("RIGHT", u16({0x8001, 0x8001}), u16({15, 16})).ToInt64Vector(), ElementsAre(1, 0));
  EXPECT_THAT(shift("LEFT", u32({1, 0xFFFFFFFFu}), u32({31, 4})).ToInt64Vector(),
              ElementsAre(2147483648LL, 4294967280LL));  // the high bits fall off

  OneNode pow("Pow", {F32({3}, {2, 3, 0.5f}), u64({10, 0, 2})});
  out = pow.Run();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].ToFloatVector(), ElementsAre(1024, 1, 0.25f));

  auto cast = [](Tensor v, int to) {
    OneNode n("Cast", {v});
    n.node().SetAttr("to", Attribute::Int(to));
    absl::StatusOr<std::vector<Tensor>> r = n.Run();
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? (*r)[0] : Tensor();
  };
  const Tensor f = cast(u64({~uint64_t{0}, 5}), 1);  // to FLOAT: 2^64 - 1 rounds to 2^64
  EXPECT_THAT(f.ToFloatVector(), ElementsAre(18446744073709551616.0f, 5));
  EXPECT_THAT(cast(F32({2}, {70000.7f, -1.5f}), 4).ToInt64Vector(), ElementsAre(4464, 65535));  // UINT16 wraps
  EXPECT_THAT(cast(i16({-1, 7}), 12).ToInt64Vector(), ElementsAre(4294967295LL, 7));            // INT16 -> UINT32
  EXPECT_THAT(cast(u32({4294967295u}), 7).ToInt64Vector(), ElementsAre(4294967295LL));           // UINT32 -> INT64
  const Tensor back = cast(I64({2}, {-1, 3}), 13);                                               // INT64 -> UINT64
  EXPECT_EQ(back.data<uint64_t>()[0], ~uint64_t{0});
  EXPECT_EQ(back.data<uint64_t>()[1], 3u);
  EXPECT_THAT(cast(u16({40000}), 5).ToInt64Vector(), ElementsAre(-25536));  // UINT16 -> INT16 wraps
}

TEST(ElementwiseTest, HalfFloatArithmetic) {
  // f16 in f32 arithmetic, one rounding back to half: 2048 + 1 = 2049 is a tie between halves 2048 and
  // 2050 and goes to the even 2048.
  auto half = [](std::vector<float> v) {
    Tensor t(DType::kF16, {static_cast<int64_t>(v.size())});
    for (size_t i = 0; i < v.size(); ++i) t.data<uint16_t>()[i] = FloatToHalf(v[i]);
    return t;
  };
  for (const auto& [op, want] : std::vector<std::pair<std::string, std::vector<float>>>{
           {"Add", {1.5f, 2048, -1}}, {"Max", {1, 2048, 3}}, {"Min", {0.5f, 1, -4}}, {"Mul", {0.5f, 2048, -12}}}) {
    OneNode n(op, {half({1, 2048, 3}), half({0.5f, 1, -4})});
    absl::StatusOr<std::vector<Tensor>> out = n.Run();
    ASSERT_TRUE(out.ok()) << op << ": " << out.status();
    ASSERT_EQ((*out)[0].dtype(), DType::kF16) << op;
    EXPECT_THAT((*out)[0].ToFloatVector(), ElementsAreArray(want)) << op;
  }
}

TEST(ElementwiseTest, Shrink) {
  EXPECT_THAT(RunUnary("Shrink", {-2, -1, 0, 1, 2}, {{"lambd", Attribute::Float(1.5f)}, {"bias", Attribute::Float(0.5f)}}),
              ElementsAre(-1.5f, 0, 0, 0, 1.5f));
  EXPECT_THAT(RunUnary("Shrink", {-0.75f, 0.25f, 0.5f, 0.75f}), ElementsAre(-0.75f, 0, 0, 0.75f));  // lambd 0.5
}

TEST(ElementwiseTest, EyeLike) {
  // 3 x 4, diagonal k = 1: (0, 1), (1, 2), (2, 3); as int32 (ONNX INT32 = 6) from an f32 input.
  OneNode n("EyeLike", {F32({3, 4}, std::vector<float>(12, 7.0f))});
  n.node().SetAttr("k", Attribute::Int(1));
  n.node().SetAttr("dtype", Attribute::Int(6));
  absl::StatusOr<std::vector<Tensor>> out = n.Run();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), DType::kI32);
  EXPECT_THAT((*out)[0].ToInt64Vector(), ElementsAre(0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1));
  // k = -2 on a 3 x 3 f32 input keeps its type: only (2, 0).
  OneNode m("EyeLike", {F32({3, 3}, std::vector<float>(9, 0.0f))});
  m.node().SetAttr("k", Attribute::Int(-2));
  out = m.Run();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].ToFloatVector(), ElementsAre(0, 0, 0, 0, 0, 0, 1, 0, 0));
}

TEST(ElementwiseTest, PReluBroadcastsTheSlopeToX) {
  // x [2, 3]: a slope per column (shape [3]); negative entries scaled, the rest kept.
  OneNode n("PRelu", {F32({2, 3}, {-2, 4, -6, 1, -1, 0}), F32({3}, {0.5f, 2, -1})});
  absl::StatusOr<std::vector<Tensor>> out = n.Run();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].ToFloatVector(), ElementsAre(-1, 4, 6, 1, -2, 0));
  // One slope for everything; int32 wraps like Mul.
  EXPECT_THAT(RunInts("PRelu", {I32({3}, {-3, 5, INT32_MIN}), I32({1}, {2})}), ElementsAre(-6, 5, 0));
}

TEST(ElementwiseTest, ClipWithOptionalBounds) {
  const Tensor x = F32({5}, {-3, -1, 0, 2, 5});
  {
    OneNode n("Clip", {x, Tensor::Scalar(-1.5f), Tensor::Scalar(2.5f)});
    absl::StatusOr<std::vector<Tensor>> out = n.Run();
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_THAT((*out)[0].ToFloatVector(), ElementsAre(-1.5f, -1, 0, 2, 2.5f));
  }
  {
    OneNode n("Clip", {x, std::nullopt, Tensor::Scalar(1.0f)});  // only max
    absl::StatusOr<std::vector<Tensor>> out = n.Run();
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_THAT((*out)[0].ToFloatVector(), ElementsAre(-3, -1, 0, 1, 1));
  }
  {
    OneNode n("Clip", {x, Tensor::Scalar(0.0f)});  // only min
    absl::StatusOr<std::vector<Tensor>> out = n.Run();
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_THAT((*out)[0].ToFloatVector(), ElementsAre(0, 0, 0, 2, 5));
  }
  {
    OneNode n("Clip", {x});
    absl::StatusOr<std::vector<Tensor>> out = n.Run();
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_THAT((*out)[0].ToFloatVector(), ElementsAre(-3, -1, 0, 2, 5));
  }
  {
    OneNode n("Clip", {x, Tensor::Scalar(3.0f), Tensor::Scalar(1.0f)});  // min > max: everything is max
    absl::StatusOr<std::vector<Tensor>> out = n.Run();
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_THAT((*out)[0].ToFloatVector(), ElementsAre(1, 1, 1, 1, 1));
  }
  {
    OneNode n("Clip", {I64({3}, {-7, 3, 70}), I64({}, {0}), I64({}, {10})});
    absl::StatusOr<std::vector<Tensor>> out = n.Run();
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_THAT((*out)[0].ToInt64Vector(), ElementsAre(0, 3, 10));
  }
}

TEST(ElementwiseTest, BroadcastingAddAcrossRanks) {
  // [2,1,3] + [4,1] -> [2,4,3]; out[i][j][k] = a[i][0][k] + b[j][0].
  std::vector<float> a = {1, 2, 3, 10, 20, 30};
  std::vector<float> b = {100, 200, 300, 400};
  OneNode n("Add", {F32({2, 1, 3}, a), F32({4, 1}, b)});
  absl::StatusOr<std::vector<Tensor>> out = n.Run();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].shape(), ElementsAre(2, 4, 3));
  std::vector<float> want;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 3; ++k) want.push_back(a[i * 3 + k] + b[j]);
  EXPECT_THAT((*out)[0].ToFloatVector(), ElementsAreArray(want));
}

TEST(ElementwiseTest, ScalarOperands) {
  OneNode n("Mul", {Tensor::Scalar(3), F32({2, 2}, {1, 2, 3, 4})});
  absl::StatusOr<std::vector<Tensor>> out = n.Run();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].shape(), ElementsAre(2, 2));
  EXPECT_THAT((*out)[0].ToFloatVector(), ElementsAre(3, 6, 9, 12));
  OneNode s("Sub", {Tensor::Scalar(3), Tensor::Scalar(5)});
  out = s.Run();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE((*out)[0].shape().empty());
  EXPECT_THAT((*out)[0].ToFloatVector(), ElementsAre(-2));
}

TEST(ElementwiseTest, Int64Arithmetic) {
  const Tensor a = I64({4}, {7, -7, 1LL << 40, INT64_MAX});
  const Tensor b = I64({4}, {2, 2, 3, 1});
  auto run = [&](const std::string& op) {
    OneNode n(op, {a, b});
    absl::StatusOr<std::vector<Tensor>> out = n.Run();
    EXPECT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].dtype(), DType::kI64);
    return (*out)[0].ToInt64Vector();
  };
  EXPECT_THAT(run("Add"), ElementsAre(9, -5, (1LL << 40) + 3, INT64_MIN));  // INT64_MAX + 1 wraps
  EXPECT_THAT(run("Sub"), ElementsAre(5, -9, (1LL << 40) - 3, INT64_MAX - 1));
  EXPECT_THAT(run("Mul"), ElementsAre(14, -14, 3LL << 40, INT64_MAX));
  // Integer division truncates toward zero (-7 / 2 = -3), as C and ONNX Runtime do.
  EXPECT_THAT(run("Div"), ElementsAre(3, -3, (1LL << 40) / 3, INT64_MAX));
}

TEST(ElementwiseTest, IntegerDivisionByZeroIsAnError) {
  OneNode n("Div", {I32({2}, {1, 2}), I32({2}, {1, 0})});
  absl::StatusOr<std::vector<Tensor>> out = n.Run();
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("division by zero"));
}

TEST(ElementwiseTest, MismatchedDTypesAndShapesAreRejected) {
  OneNode dt("Add", {F32({2}, {1, 2}), I64({2}, {1, 2})});
  EXPECT_THAT(dt.Run().status().message(), HasSubstr("Cast"));
  OneNode sh("Add", {F32({2, 3}, {}), F32({4}, {})});
  absl::StatusOr<std::vector<Tensor>> out = sh.Run();
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("do not broadcast"));
}

TEST(ElementwiseTest, PowWithIntegerExponent) {
  OneNode n("Pow", {F32({2, 2}, {2, 3, 4, 0.5f}), I64({2}, {2, 3})});
  absl::StatusOr<std::vector<Tensor>> out = n.Run();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), DType::kF32);
  EXPECT_THAT((*out)[0].ToFloatVector(), ElementsAre(4, 27, 16, 0.125f));
}

TEST(ElementwiseTest, WhereBroadcastsThreeWays) {
  // cond [2,1], x [1,3], y scalar -> [2,3].
  OneNode n("Where", {Bool({2, 1}, {true, false}), F32({1, 3}, {1, 2, 3}), Tensor::Scalar(-1)});
  absl::StatusOr<std::vector<Tensor>> out = n.Run();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].shape(), ElementsAre(2, 3));
  EXPECT_THAT((*out)[0].ToFloatVector(), ElementsAre(1, 2, 3, -1, -1, -1));
  OneNode bad("Where", {F32({1}, {1}), F32({1}, {1}), F32({1}, {1})});
  EXPECT_THAT(bad.Run().status().message(), HasSubstr("condition must be a bool"));
}

TEST(ElementwiseTest, CastToEveryTarget) {
  const Tensor x = F32({4}, {-1.75f, 0, 2.5f, 300.1f});
  auto cast = [&](int to) {
    OneNode n("Cast", {x});
    n.node().SetAttr("to", Attribute::Int(to));
    absl::StatusOr<std::vector<Tensor>> out = n.Run();
    EXPECT_TRUE(out.ok()) << out.status();
    return *out;
  };
  EXPECT_THAT(cast(7)[0].ToInt64Vector(), ElementsAre(-1, 0, 2, 300));  // int64 truncates toward zero
  EXPECT_THAT(cast(6)[0].ToInt64Vector(), ElementsAre(-1, 0, 2, 300));
  EXPECT_THAT(cast(3)[0].ToInt64Vector(), ElementsAre(-1, 0, 2, 44));   // int8: 300 wraps to 44
  EXPECT_THAT(cast(2)[0].ToInt64Vector(), ElementsAre(255, 0, 2, 44));  // uint8: -1 wraps to 255
  std::vector<Tensor> b = cast(9);
  EXPECT_EQ(b[0].dtype(), DType::kBool);
  EXPECT_THAT(b[0].ToInt64Vector(), ElementsAre(1, 0, 1, 1));
  std::vector<Tensor> h = cast(10);
  EXPECT_EQ(h[0].dtype(), DType::kF16);
  // -1.75 and 2.5 are exact in half; 300.1 rounds to 300 (half spacing is 0.25 there).
  EXPECT_THAT(h[0].ToFloatVector(), ElementsAre(-1.75f, 0, 2.5f, 300));
  std::vector<Tensor> bf = cast(16);
  EXPECT_EQ(bf[0].dtype(), DType::kBF16);
  // bfloat16 spacing is 2 there: 300.1 -> 300.
  EXPECT_THAT(bf[0].ToFloatVector(), ElementsAre(-1.75f, 0, 2.5f, 300));
  EXPECT_THAT(cast(1)[0].ToFloatVector(), ElementsAre(-1.75f, 0, 2.5f, 300.1f));
}

TEST(ElementwiseTest, CastFromIntegersAndBool) {
  OneNode n("Cast", {I64({3}, {-1, 1LL << 33, 5})});
  n.node().SetAttr("to", Attribute::Int(6));
  absl::StatusOr<std::vector<Tensor>> out = n.Run();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].ToInt64Vector(), ElementsAre(-1, 0, 5));  // 2^33 wraps to 0 in int32
  OneNode b("Cast", {Bool({2}, {true, false})});
  b.node().SetAttr("to", Attribute::Int(1));
  out = b.Run();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].ToFloatVector(), ElementsAre(1, 0));
}

TEST(ElementwiseTest, CastToUnsupportedTypeIsUnimplemented) {
  OneNode n("Cast", {F32({1}, {1})});
  n.node().SetAttr("to", Attribute::Int(8));  // STRING
  EXPECT_EQ(n.Run().status().code(), absl::StatusCode::kUnimplemented);
}

TEST(ElementwiseTest, DropoutIsIdentityWithTrueMask) {
  OneNode n("Dropout", {F32({2}, {1.5f, -2}), Tensor::Scalar(0.3f)}, 2);
  absl::StatusOr<std::vector<Tensor>> out = n.Run();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].ToFloatVector(), ElementsAre(1.5f, -2));
  EXPECT_EQ((*out)[1].dtype(), DType::kBool);
  EXPECT_THAT((*out)[1].ToInt64Vector(), ElementsAre(1, 1));
  OneNode train("Dropout", {F32({2}, {1.5f, -2}), std::nullopt, Bool({}, {true})});
  EXPECT_EQ(train.Run().status().code(), absl::StatusCode::kUnimplemented);
}

TEST(ElementwiseTest, IdentityCopiesAnyDType) {
  OneNode n("Identity", {I64({2}, {3, -4})});
  absl::StatusOr<std::vector<Tensor>> out = n.Run();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].ToInt64Vector(), ElementsAre(3, -4));
}

// ---- Inference with symbolic dimensions ------------------------------------------------------

absl::StatusOr<std::vector<TensorType>> Infer(const std::string& op, const std::vector<TensorType>& types) {
  Graph g;
  std::vector<Value*> ins;
  for (size_t i = 0; i < types.size(); ++i) ins.push_back(g.AddInput("in" + std::to_string(i), types[i]));
  Node* n = g.AddNode(op, ins, 1, "n");
  std::vector<const TensorType*> ptrs;
  for (const TensorType& t : types) ptrs.push_back(&t);
  return InferOutputTypes(*n, ptrs, {});
}

TEST(ElementwiseInferenceTest, PReluKeepsXShape) {
  absl::StatusOr<std::vector<TensorType>> t =
      Infer("PRelu", {TensorType(DType::kF32, {1, 16, 8, 8}), TensorType(DType::kF32, {16, 1, 1})});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)[0], TensorType(DType::kF32, {1, 16, 8, 8}));
  // A slope that does not broadcast to x (it would grow the output) is refused.
  EXPECT_THAT(Infer("PRelu", {TensorType(DType::kF32, {3}), TensorType(DType::kF32, {2, 3})}).status().message(),
              HasSubstr("broadcast to X"));
  EXPECT_THAT(Infer("PRelu", {TensorType(DType::kF32, {1, 3}), TensorType(DType::kF32, {2, 1})}).status().message(),
              HasSubstr("broadcast to X"));
}

TEST(ElementwiseInferenceTest, BroadcastPropagatesSymbols) {
  const Dim n = Dim::Symbol("N");
  absl::StatusOr<std::vector<TensorType>> t =
      Infer("Add", {TensorType(DType::kF32, {n, 1, 4}), TensorType(DType::kF32, {3, 1})});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)[0], TensorType(DType::kF32, {n, 3, 4}));
  // N against 1 keeps N, N against N keeps N, N against 5 gives 5.
  t = Infer("Mul", {TensorType(DType::kF32, {n, n, n}), TensorType(DType::kF32, {1, n, 5})});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)[0], TensorType(DType::kF32, {n, n, 5}));
  // Two different symbols give an unknown extent.
  t = Infer("Sub", {TensorType(DType::kF32, {n}), TensorType(DType::kF32, {Dim::Symbol("M")})});
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ((*t)[0].rank(), 1);
  EXPECT_FALSE((*t)[0].dims[0].is_static());
  EXPECT_NE((*t)[0].dims[0], n);
}

TEST(ElementwiseInferenceTest, WhereAndCastTypes) {
  const Dim s = Dim::Symbol("S");
  absl::StatusOr<std::vector<TensorType>> t = Infer(
      "Where", {TensorType(DType::kBool, {1, s}), TensorType(DType::kI64, {2, 1}), TensorType(DType::kI64, {})});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)[0], TensorType(DType::kI64, {2, s}));
}

}  // namespace
}  // namespace tessel
