// The VNNI int8 path (GEMM and depthwise) against the reference QConv / QGemm kernels over awkward shapes (channel and K
// counts below, at and past the 16-lane and 4-byte tiles, primes, strides, padding, residuals, ReLU
// clamps, multipliers above and below 1): outputs must be identical. Skips on CPUs without VNNI.
#include <algorithm>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "graph/op_registry.h"
#include "kernels/int8/int8_kernels.h"
#include "kernels/int8/int8_op_kernels.h"
#include "kernels/int8/qgemm.h"
#include "kernels/int8/requantize.h"
#include "kernels/reference/reference.h"

namespace tessel {
namespace {

Tensor Random(DType t, std::vector<int64_t> shape, std::mt19937& rng, int lo, int hi) {
  Tensor x(t, shape);
  std::uniform_int_distribution<int> d(lo, hi);
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    if (t == DType::kU8) x.data<uint8_t>()[i] = static_cast<uint8_t>(d(rng));
    if (t == DType::kI8) x.data<int8_t>()[i] = static_cast<int8_t>(d(rng));
    if (t == DType::kI32) x.data<int32_t>()[i] = d(rng);
  }
  return x;
}

void SetRequant(Node* n, const std::string& prefix, int64_t channels, std::mt19937& rng, double lo, double hi) {
  std::uniform_real_distribution<double> d(std::log(lo), std::log(hi));
  std::vector<int64_t> m, s;
  for (int64_t c = 0; c < channels; ++c) {
    const QuantizedMultiplier q = QuantizeMultiplier(std::exp(d(rng)));
    m.push_back(q.multiplier);
    s.push_back(q.shift);
  }
  n->SetAttr(prefix + "multiplier", Attribute::Ints(m));
  n->SetAttr(prefix + "shift", Attribute::Ints(s));
}

// Runs `node` both ways and compares every byte.
void ExpectBitExact(const Node& node, const std::vector<const Tensor*>& in) {
  std::vector<Tensor> want;
  ASSERT_TRUE(RunReferenceNode(node, in, &want).ok());
  std::vector<Tensor> got = {Tensor(want[0].dtype(), want[0].shape())};
  auto handled = RunInt8Node(node, in, absl::MakeSpan(got));
  ASSERT_TRUE(handled.ok()) << handled.status();
  ASSERT_TRUE(*handled) << node.DebugName() << " not served by the int8 path";
  int mismatches = 0;
  for (int64_t i = 0; i < want[0].num_elements(); ++i) {
    mismatches += want[0].data<uint8_t>()[i] != got[0].data<uint8_t>()[i];
  }
  EXPECT_EQ(mismatches, 0) << "of " << want[0].num_elements() << " outputs";
}

struct ConvCase {
  int64_t n, h, w, c, m, k, stride, pad;
  bool residual, relu;
};

class QConvVnniTest : public ::testing::TestWithParam<ConvCase> {};

TEST_P(QConvVnniTest, MatchesReferenceBitExactly) {
  if (!HasQGemmVnni()) GTEST_SKIP() << "CPU or build without AVX-512 VNNI";
  const ConvCase p = GetParam();
  std::mt19937 rng(p.c * 131 + p.m * 7 + p.k);
  Graph g;
  Tensor x = Random(DType::kU8, {p.n, p.h, p.w, p.c}, rng, 0, 255);
  Tensor w = Random(DType::kI8, {p.m, p.k, p.k, p.c}, rng, -127, 127);
  Tensor b = Random(DType::kI32, {p.m}, rng, -20000, 20000);
  const int64_t oh = (p.h + 2 * p.pad - p.k) / p.stride + 1, ow = (p.w + 2 * p.pad - p.k) / p.stride + 1;
  Tensor r = Random(DType::kU8, {p.n, oh, ow, p.m}, rng, 0, 255);
  std::vector<Value*> ins = {g.AddInput("x", x.type()), g.AddConstant("w", w), g.AddConstant("b", b)};
  if (p.residual) ins.push_back(g.AddInput("r", r.type()));
  Node* n = g.AddNode("QConv", ins, 1, "qconv");
  n->set_domain(kTesselDomain);
  n->SetAttr("layout", Attribute::String("nhwc"));
  n->SetAttr("kernel_shape", Attribute::Ints({p.k, p.k}));
  n->SetAttr("strides", Attribute::Ints({p.stride, p.stride}));
  n->SetAttr("pads", Attribute::Ints({p.pad, p.pad, p.pad, p.pad}));
  n->SetAttr("x_zero_point", Attribute::Int(37));
  n->SetAttr("y_zero_point", Attribute::Int(p.relu ? 0 : 121));
  n->SetAttr("act_min", Attribute::Int(p.relu ? 0 : 3));
  n->SetAttr("act_max", Attribute::Int(p.relu ? 200 : 255));
  // Accumulators reach ~255 * 127 * K; multipliers map them into a few hundred, some above 1.
  SetRequant(n, "", p.m, rng, 0.3 / (127.0 * 64 * p.k * p.k * p.c / 8 + 1), 1.5);
  if (p.residual) {
    n->SetAttr("r_zero_point", Attribute::Int(90));
    SetRequant(n, "r_", 1, rng, 0.4, 1.7);
  }
  std::vector<const Tensor*> in = {&x, &w, &b};
  if (p.residual) in.push_back(&r);
  ExpectBitExact(*n, in);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, QConvVnniTest,
    ::testing::Values(ConvCase{1, 5, 5, 1, 1, 3, 1, 1, false, true}, ConvCase{1, 7, 6, 3, 16, 3, 2, 1, false, true},
                      ConvCase{2, 8, 8, 16, 17, 3, 1, 1, true, true}, ConvCase{1, 9, 9, 5, 33, 1, 1, 0, true, false},
                      ConvCase{1, 6, 6, 32, 64, 1, 1, 0, false, false}, ConvCase{1, 11, 11, 13, 31, 7, 2, 3, false, true},
                      ConvCase{1, 4, 4, 64, 48, 3, 1, 1, true, true}, ConvCase{1, 3, 3, 7, 2, 1, 2, 0, false, false},
                      // Whole and partial 6-row x 64-channel tiles on the indirect (implicit GEMM) path.
                      ConvCase{1, 10, 9, 64, 128, 3, 1, 1, true, true}, ConvCase{2, 9, 7, 12, 200, 3, 2, 1, true, false},
                      ConvCase{1, 7, 7, 36, 80, 5, 1, 2, false, true}, ConvCase{1, 8, 8, 20, 112, 3, 2, 0, true, true}));

struct DwCase {
  int64_t n, h, w, c, k, stride, pad_begin, pad_end, dilation;
  bool relu6, per_channel;
};

// A depthwise QConv (group == C) on both paths; `residual` adds a residual input, which the depthwise
// kernel does not serve.
void CheckDepthwise(const DwCase& p, std::mt19937& rng) {
  SCOPED_TRACE(testing::Message() << "n " << p.n << " h " << p.h << " w " << p.w << " c " << p.c << " k " << p.k
                                  << " stride " << p.stride << " pads " << p.pad_begin << "," << p.pad_end
                                  << " dilation " << p.dilation << " relu6 " << p.relu6 << " per-channel "
                                  << p.per_channel);
  Graph g;
  Tensor x = Random(DType::kU8, {p.n, p.h, p.w, p.c}, rng, 0, 255);
  Tensor w = Random(DType::kI8, {p.c, p.k, p.k, 1}, rng, -128, 127);
  Tensor b = Random(DType::kI32, {p.c}, rng, -30000, 30000);
  Node* n = g.AddNode("QConv", {g.AddInput("x", x.type()), g.AddConstant("w", w), g.AddConstant("b", b)}, 1, "dw");
  n->set_domain(kTesselDomain);
  n->SetAttr("layout", Attribute::String("nhwc"));
  n->SetAttr("group", Attribute::Int(p.c));
  n->SetAttr("kernel_shape", Attribute::Ints({p.k, p.k}));
  n->SetAttr("strides", Attribute::Ints({p.stride, p.stride}));
  n->SetAttr("dilations", Attribute::Ints({p.dilation, p.dilation}));
  n->SetAttr("pads", Attribute::Ints({p.pad_begin, p.pad_begin, p.pad_end, p.pad_end}));
  n->SetAttr("x_zero_point", Attribute::Int(p.relu6 ? 0 : 129));
  // ReLU6 as MobileNetV2 folds it: y_zp 0, clamp to the u8 image of [0, 6].
  n->SetAttr("y_zero_point", Attribute::Int(p.relu6 ? 0 : 117));
  if (p.relu6) {
    n->SetAttr("act_min", Attribute::Int(0));
    n->SetAttr("act_max", Attribute::Int(191));
  }
  // Accumulators reach ~255 * 128 * K^2; multipliers map them into a few hundred, a few above 1.
  SetRequant(n, "", p.per_channel ? p.c : 1, rng, 0.2 / (127.0 * 16 * p.k * p.k + 1), 1.2);
  ExpectBitExact(*n, {&x, &w, &b});
}

TEST(QDwConvVnniTest, MatchesReferenceBitExactlyOverShapes) {
  if (!HasQGemmVnni()) GTEST_SKIP() << "CPU or build without AVX-512 VNNI";
  std::mt19937 rng(11);
  std::uniform_int_distribution<int64_t> side(1, 15);
  for (int64_t c : {1, 8, 17, 32, 63, 64, 65, 96, 144}) {
    for (int64_t stride : {1, 2}) {
      for (int64_t pad : {0, 1}) {
        for (bool relu6 : {false, true}) {
          for (bool per_channel : {false, true}) {
            int64_t h = side(rng), w = side(rng);
            // 3x3 needs h + 2 pad >= 3.
            h = std::max<int64_t>(h, 3 - 2 * pad), w = std::max<int64_t>(w, 3 - 2 * pad);
            CheckDepthwise({1, h, w, c, 3, stride, pad, pad, 1, relu6, per_channel}, rng);
          }
        }
      }
    }
  }
  // Every H/W from 1 to 15 at a MobileNetV2-like width, both strides.
  for (int64_t hw = 1; hw <= 15; ++hw) {
    CheckDepthwise({1, hw, 16 - hw, 40, 3, 1 + hw % 2, 1, 1, 1, hw % 3 == 0, true}, rng);
  }
  // Other kernel sizes, asymmetric padding, dilation, batches.
  CheckDepthwise({1, 9, 8, 24, 5, 1, 2, 2, 1, true, true}, rng);
  CheckDepthwise({1, 10, 10, 17, 5, 2, 2, 1, 1, false, true}, rng);
  CheckDepthwise({1, 6, 7, 96, 1, 1, 0, 0, 1, false, false}, rng);
  CheckDepthwise({1, 7, 7, 130, 7, 1, 3, 3, 1, true, true}, rng);
  CheckDepthwise({1, 11, 9, 33, 3, 1, 2, 2, 2, false, true}, rng);
  CheckDepthwise({2, 8, 8, 144, 3, 2, 0, 1, 1, true, true}, rng);
  CheckDepthwise({3, 5, 4, 9, 3, 1, 1, 1, 1, false, false}, rng);
  // MobileNetV2's first depthwise layer.
  CheckDepthwise({1, 112, 112, 32, 3, 1, 1, 1, 1, true, true}, rng);
}

// Through the operator-kernel registry, as the compiler and executor use it: selection picks the
// depthwise kernel for a depthwise QConv, and two runs of the created kernel equal the reference.
TEST(QDwConvVnniTest, RegisteredKernelIsSelectedAndBitExact) {
  if (!HasQGemmVnni()) GTEST_SKIP() << "CPU or build without AVX-512 VNNI";
  OpKernelRegistry registry;
  RegisterInt8OpKernels(registry);
  std::mt19937 rng(3);
  Graph g;
  Tensor x = Random(DType::kU8, {1, 9, 10, 48}, rng, 0, 255);
  Tensor w = Random(DType::kI8, {48, 3, 3, 1}, rng, -128, 127);
  Tensor b = Random(DType::kI32, {48}, rng, -30000, 30000);
  Node* n = g.AddNode("QConv", {g.AddInput("x", x.type()), g.AddConstant("w", w), g.AddConstant("b", b)}, 1, "dw");
  n->set_domain(kTesselDomain);
  n->SetAttr("layout", Attribute::String("nhwc"));
  n->SetAttr("group", Attribute::Int(48));
  n->SetAttr("kernel_shape", Attribute::Ints({3, 3}));
  n->SetAttr("strides", Attribute::Ints({2, 2}));
  n->SetAttr("pads", Attribute::Ints({1, 1, 1, 1}));
  n->SetAttr("x_zero_point", Attribute::Int(5));
  n->SetAttr("y_zero_point", Attribute::Int(0));
  n->SetAttr("act_max", Attribute::Int(191));
  SetRequant(n, "", 48, rng, 0.2 / (127.0 * 16 * 9), 0.05);
  std::vector<Tensor> want;
  ASSERT_TRUE(RunReferenceNode(*n, {&x, &w, &b}, &want).ok());
  const OperandInfo ins[] = {{true, false, x.type()}, {true, true, w.type()}, {true, true, b.type()}};
  const OperandInfo outs[] = {{true, false, want[0].type()}};
  const OpQuery q{*n, ins, outs};
  const OpKernelEntry* e = registry.Select(q, OpDTypes(q), "");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->name, "tessel_qu8_dwconv2d_nhwc__avx512vnni");
  Tensor got(DType::kU8, want[0].shape());
  const std::vector<const Tensor*> bound = {&x, &w, &b};
  absl::StatusOr<std::unique_ptr<OpKernel>> k = e->create(OpKernelArgs{*n, bound, absl::MakeSpan(&got, 1)});
  ASSERT_TRUE(k.ok()) << k.status();
  for (int run = 0; run < 2; ++run) {
    std::fill(got.data<uint8_t>(), got.data<uint8_t>() + got.num_elements(), uint8_t{77});
    ASSERT_TRUE((*k)->Run().ok());
    int mismatches = 0;
    for (int64_t i = 0; i < got.num_elements(); ++i) mismatches += got.data<uint8_t>()[i] != want[0].data<uint8_t>()[i];
    EXPECT_EQ(mismatches, 0) << "run " << run;
  }
}

TEST(QDwConvVnniTest, LeavesResidualAndDepthMultiplierToTheReference) {
  Graph g;
  Node* n = g.AddNode("QConv", {}, 1, "dw");
  n->set_domain(kTesselDomain);
  n->SetAttr("layout", Attribute::String("nhwc"));
  n->SetAttr("group", Attribute::Int(8));
  EXPECT_FALSE(Int8DepthwiseSupported(*n, DType::kU8, 4, 8, 8, 1, /*residual=*/true));
  EXPECT_FALSE(Int8DepthwiseSupported(*n, DType::kU8, 4, 8, 16, 1, false));  // depth multiplier 2
  EXPECT_FALSE(Int8DepthwiseSupported(*n, DType::kI8, 4, 8, 8, 1, false));
  EXPECT_EQ(Int8DepthwiseSupported(*n, DType::kU8, 4, 8, 8, 1, false), HasQGemmVnni());
}

TEST(QGemmVnniTest, MatchesReferenceBitExactlyOverShapes) {
  if (!HasQGemmVnni()) GTEST_SKIP() << "CPU or build without AVX-512 VNNI";
  std::mt19937 rng(5);
  for (int64_t rows : {1, 3, 4, 5, 6, 7, 9, 12, 13, 19}) {
    for (int64_t k : {1, 3, 4, 7, 64, 129}) {
      for (int64_t cols : {1, 15, 16, 17, 40, 63, 64, 65, 100, 129}) {
        SCOPED_TRACE(testing::Message() << rows << " x " << k << " x " << cols);
        Graph g;
        Tensor a = Random(DType::kU8, {rows, k}, rng, 0, 255);
        Tensor w = Random(DType::kI8, {cols, k}, rng, -127, 127);
        Tensor b = Random(DType::kI32, {cols}, rng, -5000, 5000);
        Node* n = g.AddNode("QGemm", {g.AddInput("a", a.type()), g.AddConstant("w", w), g.AddConstant("b", b)}, 1);
        n->set_domain(kTesselDomain);
        n->SetAttr("x_zero_point", Attribute::Int(128));
        n->SetAttr("y_zero_point", Attribute::Int(100));
        SetRequant(n, "", cols, rng, 0.5 / (127.0 * 128 * k), 2.0 / (127.0 * 16 * k) + 0.01);
        ExpectBitExact(*n, {&a, &w, &b});
      }
    }
  }
}

TEST(RequantizeTest, MatchesExactRoundingWithinOneStep) {
  // Hand cases: 100 * 0.5 = 50; 3 * 0.5 = 1.5 -> 2, but -1.5 -> -1 (gemmlowp's doubling high multiply
  // breaks a negative tie toward zero, as TFLite does); 7 * 1.25 = 8.75 -> 9.
  auto rq = [](int32_t x, double m) {
    const QuantizedMultiplier q = QuantizeMultiplier(m);
    return MultiplyByQuantizedMultiplier(x, q.multiplier, q.shift);
  };
  EXPECT_EQ(rq(100, 0.5), 50);
  EXPECT_EQ(rq(-3, 0.5), -1);
  EXPECT_EQ(rq(3, 0.5), 2);
  EXPECT_EQ(rq(7, 1.25), 9);
  EXPECT_EQ(rq(1 << 20, 1.0 / (1 << 10)), 1 << 10);
  // Against double arithmetic: never more than one step away (the multiplier has 31 bits).
  std::mt19937 rng(1);
  std::uniform_int_distribution<int32_t> xs(-(1 << 24), 1 << 24);
  std::uniform_real_distribution<double> ms(-20, 1);
  for (int i = 0; i < 10000; ++i) {
    const int32_t x = xs(rng);
    const double m = std::exp2(ms(rng));
    EXPECT_LE(std::fabs(rq(x, m) - std::round(x * m)), 1.0) << x << " * " << m;
  }
}

}  // namespace
}  // namespace tessel
