// The int8 path (GEMM with every kernel: AVX-512 VNNI, AVX-VNNI, AVX2, NEON dotprod, NEON i8mm, SVE; every
// depthwise kernel: AVX-512 VNNI, AVX2, NEON) against the reference QConv / QGemm kernels over awkward
// shapes (channel and K counts below, at and past the 8- and 16-channel tiles (SVE: 2 vectors, 8 to 32
// channels) and the 4-, 8- and 16-byte steps of K, primes, rows below and past the row tiles, strides,
// padding, residuals, ReLU clamps, multipliers above and below 1): outputs must be identical. Each
// kernel's cases skip on CPUs (or builds) without it; the SVE ones also run at vector lengths 128, 256
// and 512 (int8_kernels_sve_test).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#if defined(__aarch64__)
#include "kernels/int8/internal/requantize_sve_probe.h"
#include "kernels/int8/requantize_neon.h"
#endif

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "graph/op_registry.h"
#include "graph/ops/quant_ops.h"
#include "kernels/int8/int8_kernels.h"
#include "kernels/int8/int8_op_kernels.h"
#include "kernels/int8/qgemm.h"
#include "kernels/int8/requantize.h"
#include "kernels/int8/internal/int8_test_util.h"
#include "kernels/reference/quantized.h"
#include "kernels/reference/reference.h"

namespace tessel {
namespace {

using int8_test::Random;

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

constexpr QGemmKernel kKernels[] = {QGemmKernel::kAvx512Vnni, QGemmKernel::kAvxVnni, QGemmKernel::kAvx2,
                                    QGemmKernel::kNeonDot,    QGemmKernel::kNeonI8mm, QGemmKernel::kSve,
                                    QGemmKernel::kSveI8mm};

std::string KernelName(QGemmKernel k) {
  switch (k) {
    case QGemmKernel::kAvx512Vnni: return "avx512vnni";
    case QGemmKernel::kNeonDot: return "neondot";
    case QGemmKernel::kNeonI8mm: return "neoni8mm";
    case QGemmKernel::kSve: return "sve";
    case QGemmKernel::kSveI8mm: return "svei8mm";
    case QGemmKernel::kAvx2: return "avx2";
    case QGemmKernel::kAvxVnni: return "avxvnni";
  }
  return "?";
}

int CountMismatches(const Tensor& want, const Tensor& got) {
  int mismatches = 0;
  for (int64_t i = 0; i < want.num_elements(); ++i) mismatches += want.data<uint8_t>()[i] != got.data<uint8_t>()[i];
  return mismatches;
}

// Creates operator kernel `e` for `node` on `inputs` and runs it `runs` times (the output refilled with
// 77 each time), on the calling thread and then split over a pool of 3: every run equals `want`.
void ExpectEntryBitExact(const OpKernelEntry& e, const Node& node, const std::vector<const Tensor*>& inputs,
                         const Tensor& want, int runs) {
  pthreadpool_t pool = pthreadpool_create(3);
  for (const int threads : {1, 3}) {
    SCOPED_TRACE(threads);
    Tensor got(DType::kU8, want.shape());
    OpKernelArgs args{node, inputs, absl::MakeSpan(&got, 1)};
    if (threads > 1) args.threadpool = pool, args.num_threads = threads;
    absl::StatusOr<std::unique_ptr<OpKernel>> k = e.create(args);
    ASSERT_TRUE(k.ok()) << k.status();
    for (int run = 0; run < runs; ++run) {
      std::fill(got.data<uint8_t>(), got.data<uint8_t>() + got.num_elements(), uint8_t{77});
      ASSERT_TRUE((*k)->Run().ok());
      EXPECT_EQ(CountMismatches(want, got), 0) << "run " << run;
    }
  }
  pthreadpool_destroy(pool);
}

// Runs `node` through the reference and through `Prepared` (PreparedInt8Node, PreparedQDwConv) with
// `kernel` (twice: the second run reuses the indirection buffer) and compares every byte.
template <typename Prepared, typename Kernel>
void ExpectPreparedBitExact(const Node& node, const std::vector<const Tensor*>& in, Kernel kernel) {
  std::vector<Tensor> want;
  const absl::Status ref = RunReferenceNode(node, in, &want);
  ASSERT_TRUE(ref.ok()) << ref;
  Tensor got(want[0].dtype(), want[0].shape());
  auto p = Prepared::Create(node, in, got, kernel);
  ASSERT_TRUE(p.ok()) << p.status();
  for (int run = 0; run < 2; ++run) {
    std::fill(got.data<uint8_t>(), got.data<uint8_t>() + got.num_elements(), uint8_t{77});
    (*p)->Run(in, got);
    EXPECT_EQ(CountMismatches(want[0], got), 0) << "of " << want[0].num_elements() << " outputs, run " << run;
  }
}

void ExpectGemmBitExact(const Node& node, const std::vector<const Tensor*>& in, QGemmKernel kernel) {
  ExpectPreparedBitExact<PreparedInt8Node>(node, in, kernel);
}

// Runs `node` both ways (RunInt8Node's own choice of kernel) and compares every byte.
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
  // Channel 0's scale (and the residual's) past what the x86 kernels requantize unclamped
  // (ScaledAccumulatorsFitInt32, ScaledResidualFitsUnclamped), so the layer takes the clamped stage.
  bool huge_scale = false;
};

// Sets channel 0's requantization scale of `n` to `scale`.
void SetChannel0Scale(Node* n, const std::string& prefix, double scale) {
  std::vector<int64_t> m = n->GetInts(prefix + "multiplier"), s = n->GetInts(prefix + "shift");
  const QuantizedMultiplier q = QuantizeMultiplier(scale);
  m[0] = q.multiplier, s[0] = q.shift;
  n->SetAttr(prefix + "multiplier", Attribute::Ints(m));
  n->SetAttr(prefix + "shift", Attribute::Ints(s));
}

class QConvGemmTest : public ::testing::TestWithParam<std::tuple<QGemmKernel, ConvCase>> {};

TEST_P(QConvGemmTest, MatchesReferenceBitExactly) {
  const QGemmKernel kernel = std::get<0>(GetParam());
  if (!QGemmKernelAvailable(kernel)) GTEST_SKIP() << "CPU or build without " << KernelName(kernel);
  const ConvCase p = std::get<1>(GetParam());
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
  if (p.huge_scale) {
    SetChannel0Scale(n, "", 3000.0);
    if (p.residual) SetChannel0Scale(n, "r_", 9000.0);
  }
  std::vector<const Tensor*> in = {&x, &w, &b};
  if (p.residual) in.push_back(&r);
  ExpectGemmBitExact(*n, in, kernel);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, QConvGemmTest,
    ::testing::Combine(
        ::testing::ValuesIn(kKernels),
        ::testing::Values(
            ConvCase{1, 5, 5, 1, 1, 3, 1, 1, false, true}, ConvCase{1, 7, 6, 3, 16, 3, 2, 1, false, true},
            ConvCase{2, 8, 8, 16, 17, 3, 1, 1, true, true}, ConvCase{1, 9, 9, 5, 33, 1, 1, 0, true, false},
            ConvCase{1, 6, 6, 32, 64, 1, 1, 0, false, false}, ConvCase{1, 11, 11, 13, 31, 7, 2, 3, false, true},
            ConvCase{1, 4, 4, 64, 48, 3, 1, 1, true, true}, ConvCase{1, 3, 3, 7, 2, 1, 2, 0, false, false},
            // Whole and partial 6- and 8-row tiles x 64-channel blocks on the indirect (implicit GEMM) path.
            ConvCase{1, 10, 9, 64, 128, 3, 1, 1, true, true}, ConvCase{2, 9, 7, 12, 200, 3, 2, 1, true, false},
            ConvCase{1, 7, 7, 36, 80, 5, 1, 2, false, true}, ConvCase{1, 8, 8, 20, 112, 3, 2, 0, true, true},
            // Per-tap runs of 4, 8 and 24 bytes (the i8mm layout pads each to 8) and odd row counts.
            ConvCase{1, 5, 5, 4, 9, 3, 1, 1, true, false}, ConvCase{1, 6, 5, 8, 24, 3, 1, 0, false, true},
            ConvCase{1, 7, 5, 24, 40, 3, 1, 1, true, true}, ConvCase{1, 5, 3, 4, 8, 1, 1, 0, false, false},
            // The clamped output stage (a scale past the unclamped range), with and without a residual.
            ConvCase{1, 6, 6, 32, 40, 3, 1, 1, false, false, true},
            ConvCase{1, 6, 6, 32, 40, 3, 1, 1, true, true, true})),
    [](const ::testing::TestParamInfo<std::tuple<QGemmKernel, ConvCase>>& info) {
      return KernelName(std::get<0>(info.param)) + "_" + std::to_string(info.index);
    });

struct DwCase {
  int64_t n, h, w, c, k, stride, pad_begin, pad_end, dilation;
  bool relu6, per_channel;
  // 0: random inputs and weights; 1: inputs 0 and every weight -128 (two such taps overflow 16 bits, so
  // the NEON kernel takes its widening path); 2: inputs 0 and weights alternating -128, -127 over the taps
  // (a pair's products reach 128 x 128 + 128 x 127, the most its 16-bit pair sums hold).
  int extreme = 0;
  // Channel 0's scale past what the AVX2 kernel requantizes unclamped (ScaledAccumulatorsFitInt32).
  bool huge_scale = false;
  // Weights in [-64, 64] (7 bits): the AVX2 kernel's byte form (PackedQDwConvAvx2Weights::byte_pairs).
  bool seven_bit = false;
};

constexpr QDwConvKernel kDwKernels[] = {QDwConvKernel::kAvx512Vnni, QDwConvKernel::kAvx2, QDwConvKernel::kNeon,
                                        QDwConvKernel::kSveI8mm};

std::string DwKernelName(QDwConvKernel k) {
  switch (k) {
    case QDwConvKernel::kAvx512Vnni: return "avx512vnni";
    case QDwConvKernel::kAvx2: return "avx2";
    case QDwConvKernel::kNeon: return "neon";
    case QDwConvKernel::kSveI8mm: return "svei8mm";
  }
  return "?";
}

// A depthwise QConv (group == C) through the reference and `kernel`.
void CheckDepthwiseKernel(const DwCase& p, std::mt19937& rng, QDwConvKernel kernel) {
  SCOPED_TRACE(testing::Message() << "n " << p.n << " h " << p.h << " w " << p.w << " c " << p.c << " k " << p.k
                                  << " stride " << p.stride << " pads " << p.pad_begin << "," << p.pad_end
                                  << " dilation " << p.dilation << " relu6 " << p.relu6 << " per-channel "
                                  << p.per_channel);
  Graph g;
  Tensor x = Random(DType::kU8, {p.n, p.h, p.w, p.c}, rng, 0, 255);
  Tensor w = Random(DType::kI8, {p.c, p.k, p.k, 1}, rng, p.seven_bit ? -64 : -128, p.seven_bit ? 64 : 127);
  Tensor b = Random(DType::kI32, {p.c}, rng, -30000, 30000);
  if (p.seven_bit) {  // the pair bound exactly: -64 and 64 side by side at every pair of taps of channel 0
    for (int64_t t = 0; t < p.k * p.k; ++t) w.data<int8_t>()[t] = static_cast<int8_t>(t % 2 == 0 ? -64 : 64);
  }
  if (p.extreme != 0) {
    std::fill(x.data<uint8_t>(), x.data<uint8_t>() + x.num_elements(), uint8_t{0});
    for (int64_t i = 0; i < w.num_elements(); ++i) {
      w.data<int8_t>()[i] = static_cast<int8_t>(p.extreme == 1 || i % (p.k * p.k) % 2 == 0 ? -128 : -127);
    }
  }
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
  if (p.huge_scale) SetChannel0Scale(n, "", 30000.0);
  if (p.c == 1) {
    // group 1: an ordinary convolution, which the GEMM path serves.
    ExpectBitExact(*n, {&x, &w, &b});
  } else {
    ExpectPreparedBitExact<PreparedQDwConv>(*n, {&x, &w, &b}, kernel);
  }
}

class QDwConvKernelTest : public ::testing::TestWithParam<QDwConvKernel> {};

// Every depthwise kernel: AVX-512 VNNI and AVX2 on x86-64, NEON on aarch64.
TEST_P(QDwConvKernelTest, MatchesReferenceBitExactlyOverShapes) {
  const QDwConvKernel kernel = GetParam();
  if (!QDwConvKernelAvailable(kernel)) GTEST_SKIP() << "CPU or build without " << DwKernelName(kernel);
  auto CheckDepthwise = [kernel](const DwCase& p, std::mt19937& rng) { CheckDepthwiseKernel(p, rng, kernel); };
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
  // The extreme products, on both NEON paths, with x_zero_point 129 (padding reads 129, not 0).
  for (int extreme : {1, 2}) {
    CheckDepthwise({1, 6, 5, 40, 3, 1, 1, 1, 1, false, true, extreme}, rng);
    CheckDepthwise({1, 7, 7, 17, 5, 2, 2, 2, 1, false, false, extreme}, rng);
  }
  // The clamped output stage (a scale past the unclamped range), in the 32-channel step and the tail.
  CheckDepthwise({1, 6, 5, 40, 3, 1, 1, 1, 1, false, true, 0, true}, rng);
  CheckDepthwise({1, 5, 5, 47, 3, 2, 1, 1, 1, true, true, 0, true}, rng);
  // 7-bit weights (the AVX2 kernel multiplies them as bytes): channel counts around its 16- and 32-channel
  // steps and its tail, 3x3 and the odd 1x1 / 5x5 tap counts, both output stages.
  for (int64_t c : {15, 16, 31, 32, 47, 48, 49, 144}) {
    CheckDepthwise({1, 7, 6, c, 3, 1 + c % 2, 1, 1, 1, c % 3 == 0, true, 0, false, true}, rng);
  }
  CheckDepthwise({1, 6, 5, 40, 1, 1, 0, 0, 1, false, true, 0, false, true}, rng);
  CheckDepthwise({1, 8, 8, 33, 5, 1, 2, 2, 1, true, false, 0, false, true}, rng);
  CheckDepthwise({1, 6, 5, 40, 3, 1, 1, 1, 1, false, true, 0, true, true}, rng);
  // Channel counts around the AVX2 kernel's 16- and 32-channel steps and its copied tail, at every
  // number of taps from 1x1 to 4x4 (odd counts pad a pair).
  for (int64_t c : {15, 16, 31, 47, 48, 49}) {
    for (int64_t k = 1; k <= 4; ++k) CheckDepthwise({1, 6, 5, c, k, 1, k / 2, (k - 1) / 2, 1, c % 2 == 0, true}, rng);
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, QDwConvKernelTest, ::testing::ValuesIn(kDwKernels),
                         [](const ::testing::TestParamInfo<QDwConvKernel>& info) {
                           return DwKernelName(info.param);
                         });

// RunInt8Node's own choice (the best depthwise kernel) equals the reference too.
TEST(QDwConvTest, RunInt8NodeServesDepthwise) {
  if (!HasQDwConvKernel()) GTEST_SKIP() << "CPU or build without a depthwise int8 kernel";
  std::mt19937 rng(13);
  Graph g;
  Tensor x = Random(DType::kU8, {1, 9, 7, 40}, rng, 0, 255);
  Tensor w = Random(DType::kI8, {40, 3, 3, 1}, rng, -128, 127);
  Tensor b = Random(DType::kI32, {40}, rng, -30000, 30000);
  Node* n = g.AddNode("QConv", {g.AddInput("x", x.type()), g.AddConstant("w", w), g.AddConstant("b", b)}, 1, "dw");
  n->set_domain(kTesselDomain);
  n->SetAttr("layout", Attribute::String("nhwc"));
  n->SetAttr("group", Attribute::Int(40));
  n->SetAttr("kernel_shape", Attribute::Ints({3, 3}));
  n->SetAttr("pads", Attribute::Ints({1, 1, 1, 1}));
  n->SetAttr("x_zero_point", Attribute::Int(3));
  n->SetAttr("y_zero_point", Attribute::Int(100));
  SetRequant(n, "", 40, rng, 0.2 / (127.0 * 16 * 9), 0.05);
  ExpectBitExact(*n, {&x, &w, &b});
}

// Through the operator-kernel registry, as the compiler and executor use it: selection picks the
// depthwise kernel for a depthwise QConv, and two runs of the created kernel equal the reference, on the
// calling thread and with the output pixels split over a pool of 3 (650 pixels x 48 channels x 9 taps:
// past the 2^18 multiply-adds where a session's pool splits them).
TEST(QDwConvTest, RegisteredKernelIsSelectedAndBitExact) {
  if (!HasQDwConvKernel()) GTEST_SKIP() << "CPU or build without a depthwise int8 kernel";
  OpKernelRegistry registry;
  RegisterInt8OpKernels(registry);
  std::mt19937 rng(3);
  Graph g;
  Tensor x = Random(DType::kU8, {1, 50, 52, 48}, rng, 0, 255);
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
  // The best kernel unforced, and the AVX2 one when forced on a CPU that has it (an AVX-512 one too).
  std::vector<std::pair<std::string, std::string>> cases;  // force, expected entry
#if defined(__aarch64__)
  // SVE's i8mm kernel where the CPU has it (the lab's neoverse-v1 row ranks it ahead of NEON).
  cases.push_back(
      {"", HasQGemmSveI8mm() ? "tessel_qu8_dwconv2d_nhwc__svei8mm" : "tessel_qu8_dwconv2d_nhwc__neon"});
#else
  cases.push_back({"", HasQGemmVnni() ? "tessel_qu8_dwconv2d_nhwc__avx512vnni" : "tessel_qu8_dwconv2d_nhwc__avx2"});
  if (QDwConvKernelAvailable(QDwConvKernel::kAvx2)) {
    cases.push_back({"tessel_qu8_dwconv2d_nhwc__avx2", "tessel_qu8_dwconv2d_nhwc__avx2"});
  }
#endif
  for (const auto& [force, expected] : cases) {
    SCOPED_TRACE(expected);
    const OpKernelEntry* e = registry.Select(q, OpDTypes(q), force);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->name, expected);
    ExpectEntryBitExact(*e, *n, {&x, &w, &b}, want[0], 2);
  }
}

TEST(QDwConvTest, LeavesResidualAndDepthMultiplierToTheReference) {
  Graph g;
  Node* n = g.AddNode("QConv", {}, 1, "dw");
  n->set_domain(kTesselDomain);
  n->SetAttr("layout", Attribute::String("nhwc"));
  n->SetAttr("group", Attribute::Int(8));
  EXPECT_FALSE(Int8DepthwiseSupported(*n, DType::kU8, 4, 8, 8, 1, /*residual=*/true));
  EXPECT_FALSE(Int8DepthwiseSupported(*n, DType::kU8, 4, 8, 16, 1, false));  // depth multiplier 2
  EXPECT_FALSE(Int8DepthwiseSupported(*n, DType::kI8, 4, 8, 8, 1, false));
  EXPECT_EQ(Int8DepthwiseSupported(*n, DType::kU8, 4, 8, 8, 1, false), HasQDwConvKernel());
}

class QGemmTest : public ::testing::TestWithParam<QGemmKernel> {};

TEST_P(QGemmTest, MatchesReferenceBitExactlyOverShapes) {
  const QGemmKernel kernel = GetParam();
  if (!QGemmKernelAvailable(kernel)) GTEST_SKIP() << "CPU or build without " << KernelName(kernel);
  std::mt19937 rng(5);
  for (int64_t rows : {1, 3, 4, 5, 6, 7, 8, 9, 12, 13, 17, 19}) {
    // kp = 4, 4, 4, 8, 24, 28, 64, 132: every remainder of the 16-, 8- and 4-byte steps.
    for (int64_t k : {1, 3, 4, 7, 24, 27, 64, 129}) {
      // 129 and 260 columns at fewer than 8 rows: 2 and 4 column parts (PreparedInt8Node::column_parts).
      for (int64_t cols : {1, 15, 16, 17, 40, 63, 64, 65, 100, 129, 260}) {
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
        ExpectGemmBitExact(*n, {&a, &w, &b}, kernel);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, QGemmTest, ::testing::ValuesIn(kKernels),
                         [](const ::testing::TestParamInfo<QGemmKernel>& info) { return KernelName(info.param); });

// Weights whose byte pairs fit int16 after x 255 (7-bit weights): the packing says so, and the AVX2 kernel
// multiplies them as bytes (vpmaddubsw), bit-exact against the reference, the pairs at the bound (64 + 64,
// -128 + 0) met by activations of 255, as a GEMM and as an implicit-GEMM convolution. One weight past the
// bound and the packing says no (and the AVX2 kernel widens).
TEST(QGemmBytePairsTest, SevenBitWeightsAreExactOnEveryKernel) {
  std::mt19937 rng(23);
  for (int64_t k : {5, 64, 131}) {
    Tensor w = Random(DType::kI8, {40, k}, rng, -64, 64);
    int8_t* wd = w.data<int8_t>();
    for (int64_t c = 0; c < 40; ++c) {
      if (c % 3 == 0) wd[c * k] = 64, wd[c * k + 1] = 64;
      if (c % 3 == 1) wd[c * k] = -128, wd[c * k + 1] = 0;
    }
    const PackedQGemmWeights fit = PackQGemmWeights(wd, 40, k, nullptr, 0, {1 << 30}, {0}, 0, /*wide=*/true);
    EXPECT_TRUE(fit.byte_pairs_fit_int16) << "k " << k;
    EXPECT_TRUE(fit.wide_panels.empty()) << "k " << k;
    std::vector<int8_t> past(wd, wd + 40 * k);
    past[k] = 64, past[k + 1] = 65;  // channel 1's first pair: 129
    const PackedQGemmWeights over = PackQGemmWeights(past.data(), 40, k, nullptr, 0, {1 << 30}, {0}, 0, /*wide=*/true);
    EXPECT_FALSE(over.byte_pairs_fit_int16) << "k " << k;
    EXPECT_FALSE(over.wide_panels.empty()) << "k " << k;
    for (QGemmKernel kernel : kKernels) {
      if (!QGemmKernelAvailable(kernel)) continue;
      SCOPED_TRACE(testing::Message() << KernelName(kernel) << " k " << k);
      for (int64_t rows : {1, 6, 13}) {
        Graph g;
        Tensor a = Random(DType::kU8, {rows, k}, rng, 0, 255);
        for (int64_t i = 0; i < rows * k; i += 3) a.data<uint8_t>()[i] = 255;
        Tensor b = Random(DType::kI32, {40}, rng, -5000, 5000);
        Node* n = g.AddNode("QGemm", {g.AddInput("a", a.type()), g.AddConstant("w", w), g.AddConstant("b", b)}, 1);
        n->set_domain(kTesselDomain);
        n->SetAttr("x_zero_point", Attribute::Int(3));
        n->SetAttr("y_zero_point", Attribute::Int(100));
        SetRequant(n, "", 40, rng, 0.5 / (64.0 * 255 * k), 2.0 / (64.0 * 32 * k) + 0.01);
        ExpectGemmBitExact(*n, {&a, &w, &b}, kernel);
      }
      // A 3x3 convolution over 7-bit weights (the indirect path).
      Graph g;
      Tensor x = Random(DType::kU8, {1, 7, 6, 24}, rng, 0, 255);
      Tensor cw = Random(DType::kI8, {20, 3, 3, 24}, rng, -64, 64);
      Tensor cb = Random(DType::kI32, {20}, rng, -20000, 20000);
      Node* n = g.AddNode("QConv", {g.AddInput("x", x.type()), g.AddConstant("w", cw), g.AddConstant("b", cb)}, 1);
      n->set_domain(kTesselDomain);
      n->SetAttr("layout", Attribute::String("nhwc"));
      n->SetAttr("kernel_shape", Attribute::Ints({3, 3}));
      n->SetAttr("pads", Attribute::Ints({1, 1, 1, 1}));
      n->SetAttr("x_zero_point", Attribute::Int(37));
      n->SetAttr("y_zero_point", Attribute::Int(121));
      SetRequant(n, "", 20, rng, 0.3 / (64.0 * 64 * 9 * 24 / 8 + 1), 1.5);
      ExpectGemmBitExact(*n, {&x, &cw, &cb}, kernel);
    }
  }
}

// Through the operator-kernel registry: every QConv / QGemm GEMM entry this CPU runs, forced by name, is
// created and runs bit-exactly, on one thread and split over a pool; unforced selection picks an int8
// GEMM entry whenever one is available.
class QGemmOpKernelTest : public ::testing::TestWithParam<int64_t> {};

// C = 12: the implicit GEMM (indirection); C = 7: im2col rows, which each task writes for its own rows.
TEST_P(QGemmOpKernelTest, EveryRunnableEntryIsBitExact) {
  const int64_t c = GetParam();
  OpKernelRegistry registry;
  RegisterInt8OpKernels(registry);
  std::mt19937 rng(9);
  Graph g;
  // 380 output rows x 21 x 9 C: enough work (> 2^18 MACs) that a session's pool splits the rows.
  Tensor x = Random(DType::kU8, {1, 20, 19, c}, rng, 0, 255);
  Tensor w = Random(DType::kI8, {21, 3, 3, c}, rng, -127, 127);
  Tensor b = Random(DType::kI32, {21}, rng, -20000, 20000);
  Node* n = g.AddNode("QConv", {g.AddInput("x", x.type()), g.AddConstant("w", w), g.AddConstant("b", b)}, 1, "conv");
  n->set_domain(kTesselDomain);
  n->SetAttr("layout", Attribute::String("nhwc"));
  n->SetAttr("kernel_shape", Attribute::Ints({3, 3}));
  n->SetAttr("pads", Attribute::Ints({1, 1, 1, 1}));
  n->SetAttr("x_zero_point", Attribute::Int(40));
  n->SetAttr("y_zero_point", Attribute::Int(10));
  SetRequant(n, "", 21, rng, 0.3 / (127.0 * 64 * 9 * c / 8), 0.01);
  std::vector<Tensor> want;
  ASSERT_TRUE(RunReferenceNode(*n, {&x, &w, &b}, &want).ok());
  const OperandInfo ins[] = {{true, false, x.type()}, {true, true, w.type()}, {true, true, b.type()}};
  const OperandInfo outs[] = {{true, false, want[0].type()}};
  const OpQuery q{*n, ins, outs};
  const OpKernelEntry* best = registry.Select(q, OpDTypes(q), "");
  if (QGemmKernelAvailable(BestQGemmKernel())) {
    ASSERT_NE(best, nullptr);
#if defined(__aarch64__)
    // On aarch64 the Arm lab's cost table ranks the int8 GEMMs per core model (lab_costs_test checks
    // that choice), which need not be BestQGemmKernel's fixed order.
    EXPECT_EQ(best->name.rfind("tessel_qu8_conv2d_nhwc__", 0), 0u) << best->name;
#else
    EXPECT_EQ(best->name, "tessel_qu8_conv2d_nhwc__" + KernelName(BestQGemmKernel()));
#endif
  }
  int ran = 0;
  for (const OpKernelEntry& e : registry.entries()) {
    if (e.name.find("tessel_qu8_conv2d_nhwc__") != 0 || !CpuSupports(e.isa)) continue;
    SCOPED_TRACE(e.name);
    const OpKernelEntry* chosen = registry.Select(q, OpDTypes(q), e.name);
    ASSERT_EQ(chosen, &e);
    // On the calling thread, then with the rows split over a pool of 3.
    ExpectEntryBitExact(e, *n, {&x, &w, &b}, want[0], 1);
    ++ran;
  }
  if (ran == 0) GTEST_SKIP() << "no int8 GEMM kernel runs on this CPU";
  std::printf("%d int8 conv entries ran\n", ran);
}

INSTANTIATE_TEST_SUITE_P(Channels, QGemmOpKernelTest, ::testing::Values(12, 7));

// A batch-1 fully connected layer splits its columns over the threads (4 parts of whole 64-column
// blocks, the last one partial), with per-channel scales; every runnable entry, on the calling thread and
// on a pool of 3, bit-exact.
TEST(QGemmColumnPartsTest, BatchOneColumnPartsRunOnThreads) {
  OpKernelRegistry registry;
  RegisterInt8OpKernels(registry);
  std::mt19937 rng(31);
  Graph g;
  const int64_t k = 1101, cols = 260;  // 286K multiply-adds: enough for the pool
  Tensor a = Random(DType::kU8, {1, k}, rng, 0, 255);
  Tensor w = Random(DType::kI8, {cols, k}, rng, -64, 64);
  Tensor b = Random(DType::kI32, {cols}, rng, -5000, 5000);
  Node* n = g.AddNode("QGemm", {g.AddInput("a", a.type()), g.AddConstant("w", w), g.AddConstant("b", b)}, 1, "fc");
  n->set_domain(kTesselDomain);
  n->SetAttr("x_zero_point", Attribute::Int(128));
  n->SetAttr("y_zero_point", Attribute::Int(100));
  SetRequant(n, "", cols, rng, 0.5 / (127.0 * 128 * k), 2.0 / (127.0 * 16 * k) + 0.01);
  std::vector<Tensor> want;
  ASSERT_TRUE(RunReferenceNode(*n, {&a, &w, &b}, &want).ok());
  if (QGemmKernelAvailable(BestQGemmKernel())) {
    auto p = PreparedInt8Node::Create(*n, {&a, &w, &b}, want[0]);
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ((*p)->column_parts(), 4);
  }
  int ran = 0;
  for (const OpKernelEntry& e : registry.entries()) {
    if (e.name.find("tessel_qu8_fully_connected__") != 0 || !CpuSupports(e.isa)) continue;
    SCOPED_TRACE(e.name);
    ExpectEntryBitExact(e, *n, {&a, &w, &b}, want[0], 2);
    ++ran;
  }
  if (ran == 0) GTEST_SKIP() << "no int8 GEMM kernel runs on this CPU";
}

// The boundary ops' kernels (portable, and the vector QuantizeLinear ones) against the reference
// QuantizeLinear / DequantizeLinear, element for element: ties of x / scale (half to even) and their
// neighbours, values far outside the range, infinities, NaN, both
// signednesses, several zero points, a length that is not a multiple of the 16-element chunks.
TEST(QuantizeOpKernelTest, EqualsTheReferenceElementForElement) {
  OpKernelRegistry registry;
  RegisterInt8OpKernels(registry);
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> d(-300.0f, 300.0f);
  const float scale = 0.37f;
  std::vector<float> xs;
  for (int i = 0; i < 1000; ++i) xs.push_back(d(rng));
  for (int k = -300; k <= 300; ++k) {
    const float tie = (k + 0.5f) * scale;  // ties, as close as f32 gets, and their neighbours
    for (float v : {tie, std::nextafter(tie, INFINITY), std::nextafter(tie, -INFINITY)}) xs.push_back(v);
  }
  // Quotients at the clamp (1024) and past 2^22, where x times the reciprocal of the scale and x / scale
  // could part.
  for (float q : {1023.5f, 1024.0f, 1024.5f, 4194304.0f, 8388609.0f}) {
    xs.push_back(q * scale), xs.push_back(-q * scale), xs.push_back(std::nextafter(q * scale, INFINITY));
  }
  for (float v : {0.0f, -0.0f, 1e30f, -1e30f, 3e9f, -3e9f, INFINITY, -INFINITY}) xs.push_back(v);
  xs.push_back(NAN);
  const Tensor x = Tensor::FromVector<float>({static_cast<int64_t>(xs.size())}, xs);
  const Tensor s = Tensor::FromVector<float>({}, {scale});
  int ran = 0;
  for (const DType qtype : {DType::kU8, DType::kI8}) {
    for (const int zp : {0, 3, 128, -5}) {
      if (qtype == DType::kU8 && zp < 0) continue;
      if (qtype == DType::kI8 && zp > 127) continue;
      SCOPED_TRACE(testing::Message() << DTypeName(qtype) << " zero point " << zp);
      Tensor z = qtype == DType::kU8 ? Tensor::FromVector<uint8_t>({}, {static_cast<uint8_t>(zp)})
                                     : Tensor::FromVector<int8_t>({}, {static_cast<int8_t>(zp)});
      Graph g;
      Node* qn =
          g.AddNode("QuantizeLinear", {g.AddInput("x", x.type()), g.AddConstant("s", s), g.AddConstant("z", z)}, 1);
      std::vector<Tensor> want_q;
      ASSERT_TRUE(RunReferenceNode(*qn, {&x, &s, &z}, &want_q).ok());
      Node* dn = g.AddNode("DequantizeLinear", {g.AddInput("q", want_q[0].type()), g.AddConstant("s2", s),
                                               g.AddConstant("z2", z)}, 1);
      std::vector<Tensor> want_d;
      ASSERT_TRUE(RunReferenceNode(*dn, {&want_q[0], &s, &z}, &want_d).ok());
      struct Op {
        Node* node;
        const Tensor* in;
        const Tensor* want;
      };
      for (const Op& op : {Op{qn, &x, &want_q[0]}, Op{dn, &want_q[0], &want_d[0]}}) {
        const OperandInfo ins[] = {{true, false, op.in->type()}, {true, true, s.type()}, {true, true, z.type()}};
        const OperandInfo outs[] = {{true, false, op.want->type()}};
        const OpQuery q{*op.node, ins, outs};
        const OpKernelEntry* best = registry.Select(q, OpDTypes(q), "");
        ASSERT_NE(best, nullptr) << op.node->op_type();
#if defined(__aarch64__)
        if (op.node == qn) {
          EXPECT_EQ(best->name, "tessel_f32_quantize__neon");
        }
#else
        if (op.node == qn && CpuSupports(Isa::kAvx2)) {
          EXPECT_EQ(best->name, "tessel_f32_quantize__avx2");
        }
#endif
        // Every kernel of the op that runs on this CPU, not only the one selected.
        for (const OpKernelEntry& entry : registry.entries()) {
          if (entry.op != op.node->op_type() || entry.dtypes != OpDTypes(q) || !CpuSupports(entry.isa)) continue;
          const OpKernelEntry* e = registry.Select(q, OpDTypes(q), entry.name);
          ASSERT_EQ(e, &entry);
          Tensor got(op.want->dtype(), op.want->shape());
          const std::vector<const Tensor*> bound = {op.in, &s, &z};
          absl::StatusOr<std::unique_ptr<OpKernel>> k =
              e->create(OpKernelArgs{*op.node, bound, absl::MakeSpan(&got, 1)});
          ASSERT_TRUE(k.ok()) << k.status();
          ASSERT_TRUE((*k)->Run().ok());
          for (int64_t i = 0; i < got.num_elements(); ++i) {
            ASSERT_EQ(got.GetAsDouble(i), op.want->GetAsDouble(i)) << e->name << " element " << i << " x " << xs[i];
          }
          ++ran;
        }
      }
    }
  }
  // 6 types and zero points x (QuantizeLinear, DequantizeLinear), a vector QuantizeLinear beside the
  // portable one where the CPU has it.
  const bool vector_quantize = CpuSupports(Isa::kAvx2) || CpuSupports(Isa::kNeon);
  EXPECT_EQ(ran, vector_quantize ? 18 : 12);
}

// DynamicQuantizeLinear on ONNX's own documented example, and MatMulInteger against a hand computation
// (A's zero point per tensor, B's per column).
TEST(QuantizeOpKernelTest, DynamicQuantizeLinearAndMatMulInteger) {
  const Tensor x = Tensor::FromVector<float>({6}, {0, 2, -3, -2.5f, 1.34f, 0.5f});
  Graph g;
  Node* dq = g.AddNode("DynamicQuantizeLinear", {g.AddInput("x", x.type())}, 3);
  std::vector<Tensor> q;
  ASSERT_TRUE(RunReferenceNode(*dq, {&x}, &q).ok());
  EXPECT_THAT(q[0].ToInt64Vector(), ::testing::ElementsAre(153, 255, 0, 26, 221, 179));
  EXPECT_FLOAT_EQ(q[1].data<float>()[0], 5.0f / 255.0f);
  EXPECT_EQ(q[2].data<uint8_t>()[0], 153);

  const Tensor a = Tensor::FromVector<uint8_t>({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor b = Tensor::FromVector<uint8_t>({3, 2}, {1, 0, 0, 1, 2, 2});
  const Tensor azp = Tensor::FromVector<uint8_t>({}, {1});
  const Tensor bzp = Tensor::FromVector<uint8_t>({2}, {0, 1});
  Node* mm = g.AddNode("MatMulInteger", {g.AddInput("a", a.type()), g.AddInput("b", b.type()),
                                         g.AddConstant("azp", azp), g.AddConstant("bzp", bzp)}, 1);
  std::vector<Tensor> y;
  ASSERT_TRUE(RunReferenceNode(*mm, {&a, &b, &azp, &bzp}, &y).ok());
  EXPECT_EQ(y[0].dtype(), DType::kI32);
  EXPECT_THAT(y[0].ToInt64Vector(), ::testing::ElementsAre(4, 2, 13, 2));
}

// Per-axis QuantizeLinear / DequantizeLinear (opset 13) on the reference kernels, against hand-computed
// values: x [2, 3, 2], axis 1, scales {0.5, 1, 2}, u8 zero points {0, 10, 128}; round half to even, then
// saturate. The per-tensor kernels decline the node (one-element parameters only).
TEST(QuantizeOpKernelTest, PerAxisOnTheReference) {
  const Tensor x = Tensor::FromVector<float>({2, 3, 2}, {1, -1, 2.5f, 3.5f, 4, -300, 0.25f, 0.75f, -12, 250, 1, 3});
  const Tensor s = Tensor::FromVector<float>({3}, {0.5f, 1, 2});
  const Tensor z = Tensor::FromVector<uint8_t>({3}, {0, 10, 128});
  for (const int64_t axis : {1, -2}) {
    SCOPED_TRACE(testing::Message() << "axis " << axis);
    Graph g;
    Node* qn = g.AddNode("QuantizeLinear", {g.AddInput("x", x.type()), g.AddConstant("s", s), g.AddConstant("z", z)}, 1);
    qn->SetAttr("axis", Attribute::Int(axis));
    std::vector<Tensor> q;
    ASSERT_TRUE(RunReferenceNode(*qn, {&x, &s, &z}, &q).ok());
    EXPECT_THAT(q[0].ToInt64Vector(), ::testing::ElementsAre(2, 0, 12, 14, 130, 0, 0, 2, 0, 255, 128, 130));
    Node* dn = g.AddNode("DequantizeLinear", {g.AddInput("q", q[0].type()), g.AddConstant("s2", s),
                                             g.AddConstant("z2", z)}, 1);
    dn->SetAttr("axis", Attribute::Int(axis));
    std::vector<Tensor> d;
    ASSERT_TRUE(RunReferenceNode(*dn, {&q[0], &s, &z}, &d).ok());
    EXPECT_THAT(d[0].ToFloatVector(), ::testing::ElementsAre(1, 0, 2, 4, 4, -256, 0, 1, -10, 245, 0, 4));

    OpKernelRegistry registry;
    RegisterInt8OpKernels(registry);
    const OperandInfo ins[] = {{true, false, x.type()}, {true, true, s.type()}, {true, true, z.type()}};
    const OperandInfo outs[] = {{true, false, q[0].type()}};
    const OpQuery query{*qn, ins, outs};
    EXPECT_EQ(registry.Select(query, OpDTypes(query), ""), nullptr);
  }
  // Scales that do not match x along the axis are an error naming both.
  Graph g;
  const Tensor two = Tensor::FromVector<float>({2}, {1, 2});
  Node* bad = g.AddNode("QuantizeLinear", {g.AddInput("x", x.type()), g.AddConstant("s", two)}, 1);
  std::vector<Tensor> out;
  const absl::Status st = RunReferenceNode(*bad, {&x, &two}, &out);
  EXPECT_FALSE(st.ok());
}

TEST(RequantizeTest, RoundsTheFloatProductHalfToEven) {
  // 3 * 0.5 = 1.5 -> 2, -3 * 0.5 -> -2, 5 * 0.5 = 2.5 -> 2 (ties to even, as np.rint and ONNX's reference
  // QLinearConv), 7 * 1.25 = 8.75 -> 9; 2^20 * 2^-10 = 2^10; a product past the bound clamps to it.
  auto rq = [](int32_t x, double m) {
    const QuantizedMultiplier q = QuantizeMultiplier(m);
    return RequantizeF32(x, RequantizeScale(q.multiplier, q.shift));
  };
  EXPECT_EQ(rq(3, 0.5), 2);
  EXPECT_EQ(rq(-3, 0.5), -2);
  EXPECT_EQ(rq(5, 0.5), 2);
  EXPECT_EQ(rq(-5, 0.5), -2);
  EXPECT_EQ(rq(7, 1.25), 9);
  EXPECT_EQ(rq(100, 0.5), 50);
  EXPECT_EQ(rq(1 << 20, 1.0 / (1 << 10)), 1 << 10);
  EXPECT_EQ(rq(std::numeric_limits<int32_t>::max(), 1.0), static_cast<int32_t>(kRequantizeBound));
  EXPECT_EQ(rq(std::numeric_limits<int32_t>::min(), 0.75), -static_cast<int32_t>(kRequantizeBound));
  EXPECT_EQ(RequantizeClamp(1000, 0.25f, 0, 10, 0, 255), 255);
  EXPECT_EQ(RequantizeClamp(-1000, 0.25f, 0, 10, 0, 255), 0);
  EXPECT_EQ(RequantizeClamp(41, 0.25f, 3, 10, 0, 255), 23);  // 10.25 -> 10, + 3 + 10
  // Against double arithmetic: never more than one step away where the product is within the bound
  // (x is exact in f32 up to 2^24, the scale within 2^-24 of the multiplier).
  std::mt19937 rng(1);
  std::uniform_int_distribution<int32_t> xs(-(1 << 24), 1 << 24);
  std::uniform_real_distribution<double> ms(-20, -2);
  for (int i = 0; i < 10000; ++i) {
    const int32_t x = xs(rng);
    const double m = std::exp2(ms(rng));
    EXPECT_LE(std::fabs(rq(x, m) - std::round(x * m)), 1.0) << x << " * " << m;
  }
}

TEST(RequantizeTest, UnclampedRangeChecks) {
  // |bias - x_zp * sum w| + 255 * sum |w|, times the scale, against 2^29.
  EXPECT_TRUE(ScaledAccumulatorsFitInt32(1 << 29, 0, 0, 0, 1.0f));
  EXPECT_FALSE(ScaledAccumulatorsFitInt32((1 << 29) + 1, 0, 0, 0, 1.0f));
  EXPECT_TRUE(ScaledAccumulatorsFitInt32(-(1 << 29), 0, 0, 0, 1.0f));
  EXPECT_TRUE(ScaledAccumulatorsFitInt32(0, 10, -5, 2, 0.5f));                  // (50 + 510) * 0.5
  EXPECT_TRUE(ScaledAccumulatorsFitInt32(0, 128, 1 << 22, 0, 1.0f));            // x_zp * sum w = 2^29
  EXPECT_FALSE(ScaledAccumulatorsFitInt32(0, 128, 1 << 22, 1, 1.0f));           // 2^29 + 255
  EXPECT_FALSE(ScaledAccumulatorsFitInt32(0, 0, 0, (int64_t{1} << 31) / 255 + 1, 0.0f));  // accumulator past int32
  EXPECT_TRUE(ScaledAccumulatorsFitInt32(0, 0, 0, 1 << 20, 2.0f));              // 255 * 2^21 < 2^29
  EXPECT_FALSE(ScaledAccumulatorsFitInt32(0, 0, 0, 1 << 20, 4.0f));             // 255 * 2^22 > 2^29
  // 255 * |r_scale| against 2^21.
  EXPECT_TRUE(ScaledResidualFitsUnclamped(8224.0f));   // 2097120
  EXPECT_FALSE(ScaledResidualFitsUnclamped(8225.0f));  // 2097375
  EXPECT_TRUE(ScaledResidualFitsUnclamped(-1.5f));
}

// Packing flags the layers whose scaled accumulators fit the unclamped stage; the kernel tests above run
// both kinds (huge_scale).
TEST(QGemmPackTest, FlagsLayersWhoseScaledAccumulatorsFitInt32) {
  std::vector<int8_t> w(8 * 20);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int8_t>(static_cast<int>(i * 37 % 255) - 127);
  std::vector<int32_t> bias(8, -1000);
  const QuantizedMultiplier small = QuantizeMultiplier(1e-3), huge = QuantizeMultiplier(3000.0);
  std::vector<int64_t> m(8, small.multiplier), s(8, small.shift);
  EXPECT_TRUE(PackQGemmWeights(w.data(), 8, 20, bias.data(), 7, m, s).scaled_fits_int32);
  EXPECT_TRUE(PackQDwConvAvx2Weights(w.data(), 8, 20, bias.data(), 7, m, s).scaled_fits_int32);
  EXPECT_FALSE(PackQDwConvAvx2Weights(w.data(), 8, 20, bias.data(), 7, m, s).byte_pairs);  // 8-bit weights
  std::vector<int8_t> w7(w.size());
  for (size_t i = 0; i < w.size(); ++i) w7[i] = static_cast<int8_t>(w[i] / 2);
  EXPECT_TRUE(PackQDwConvAvx2Weights(w7.data(), 8, 20, bias.data(), 7, m, s).byte_pairs);
  m[5] = huge.multiplier, s[5] = huge.shift;
  EXPECT_FALSE(PackQGemmWeights(w.data(), 8, 20, bias.data(), 7, m, s).scaled_fits_int32);
  EXPECT_FALSE(PackQDwConvAvx2Weights(w.data(), 8, 20, bias.data(), 7, m, s).scaled_fits_int32);
}

#if defined(__aarch64__)
// Inputs for the vector output stages against requantize.h: ties (x * scale = k + 1/2 exactly, both signs),
// the int32 extremes, products past the clamp bound, random values; scales from random (multiplier,
// shift) pairs over every shift, and 0.
struct RequantizeCase {
  std::vector<int32_t> x;
  std::vector<float> scale;
};

RequantizeCase RequantizeCases(int n) {
  constexpr int32_t kMin = std::numeric_limits<int32_t>::min(), kMax = std::numeric_limits<int32_t>::max();
  std::mt19937 rng(2);
  std::uniform_int_distribution<int32_t> any(kMin, kMax), mults(1 << 30, kMax), shifts(-31, 30);
  RequantizeCase c;
  for (int i = 0; i < n; ++i) {
    const int kind = i % 6;
    if (kind == 0) {  // x * 2^-e = k + 1/2
      const int e = 1 + i % 20;
      c.scale.push_back(std::ldexp(1.0f, -e));
      c.x.push_back(static_cast<int32_t>(((2 * (i % 1000) + 1) << (e - 1)) * (i % 12 < 6 ? 1 : -1)));
    } else if (kind == 1) {
      c.scale.push_back(RequantizeScale(mults(rng), shifts(rng)));
      c.x.push_back(i % 4 == 1 ? kMin : kMax);
    } else if (kind == 2) {
      c.scale.push_back(i % 4 == 2 ? 0.0f : RequantizeScale(mults(rng), 0));
      c.x.push_back(any(rng));
    } else {
      c.scale.push_back(RequantizeScale(mults(rng), -1 - i % 25));
      c.x.push_back(any(rng) >> (i % 31));
    }
  }
  return c;
}

// requantize_neon.h against requantize.h lane by lane: RoundScaledClamped exactly; RoundScaled exactly
// within the bound and beyond it of the same sign and past the bound (what the kernels' saturating narrows
// need).
TEST(RequantizeNeonTest, MatchesScalarExactly) {
  const RequantizeCase c = RequantizeCases(4000);
  const float32x4_t bound = vdupq_n_f32(kRequantizeBound);
  for (size_t i = 0; i + 4 <= c.x.size(); i += 4) {
    int32_t clamped[4], plain[4];
    vst1q_s32(clamped, requantize_neon::RoundScaledClamped(vld1q_s32(&c.x[i]), vld1q_f32(&c.scale[i]), bound));
    vst1q_s32(plain, requantize_neon::RoundScaled(vld1q_s32(&c.x[i]), vld1q_f32(&c.scale[i])));
    for (int l = 0; l < 4; ++l) {
      const int32_t want = RequantizeF32(c.x[i + l], c.scale[i + l]);
      SCOPED_TRACE(testing::Message() << c.x[i + l] << " * " << c.scale[i + l]);
      EXPECT_EQ(clamped[l], want);
      if (std::abs(want) < static_cast<int32_t>(kRequantizeBound)) {
        EXPECT_EQ(plain[l], want);
      } else {
        EXPECT_GE(static_cast<int64_t>(plain[l]) * (want > 0 ? 1 : -1), static_cast<int64_t>(kRequantizeBound));
      }
    }
  }
}

// requantize_sve.h against requantize.h on arrays longer than any vector (so predicated tails too), with
// the bound's clamp and with an output range's.
TEST(RequantizeSveTest, MatchesScalarExactly) {
  if (!HasQGemmSve()) GTEST_SKIP() << "CPU without SVE";
  const RequantizeCase c = RequantizeCases(4003);
  const int64_t n = static_cast<int64_t>(c.x.size());
  std::vector<int32_t> got(n);
  requantize_sve_probe::RoundScaled(c.x.data(), c.scale.data(), -kRequantizeBound, kRequantizeBound, got.data(), n);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(got[i], RequantizeF32(c.x[i], c.scale[i])) << c.x[i] << " * " << c.scale[i];
  requantize_sve_probe::RoundScaled(c.x.data(), c.scale.data(), -10.0f, 245.0f, got.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(got[i], RequantizeClamp(c.x[i], c.scale[i], 0, 10, 0, 255) - 10) << c.x[i] << " * " << c.scale[i];
  }
}
#endif

}  // namespace
}  // namespace tessel
