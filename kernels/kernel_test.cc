// Runs every registered kernel (GEMM and weight-only GEMV, every ISA built for this target) against an
// independent double-precision computation over awkward shapes: below the tile, remainders, primes,
// empty. Float kernels are checked by normalized error; a kernel whose ISA this CPU lacks is skipped
// visibly. Also checks the operator entry points (selection, TESSEL_FORCE_BACKEND, thread split).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/gemm/gemm.h"
#include "kernels/gemm/gemm_direct.h"
#include "kernels/gemv/gemv.h"
#include "kernels/gemv/internal/q8_test_matrix.h"
#include "kernels/registry/registry.h"
#include "support/thread_pool.h"

namespace tessel {
namespace {

// Deterministic pseudo-random numbers (no dependence on the standard library's distributions).
using q8_test::Lcg;

// sum_p a[p] b[p * ldb + j] in double, and the sum of the products' magnitudes (the f32 error bound's
// scale).
double DoubleDot(const float* a, const float* b, int64_t ldb, int64_t j, int64_t k, double* abs_sum) {
  double sum = 0;
  *abs_sum = 0;
  for (int64_t p = 0; p < k; ++p) {
    sum += double(a[p]) * b[p * ldb + j];
    *abs_sum += std::fabs(double(a[p]) * b[p * ldb + j]);
  }
  return sum;
}

// Names each parameterized case after its kernel, for every family's entry type.
const auto TestName = [](const auto& info) { return info.param->name; };

template <typename Fn>
std::vector<const KernelEntry<Fn>*> AllOf(const KernelRegistry<Fn>& r) {
  std::vector<const KernelEntry<Fn>*> out;
  for (const KernelEntry<Fn>& e : r.entries()) out.push_back(&e);
  return out;
}

#define SKIP_IF_CPU_LACKS(entry)                                                                     \
  if (!CpuSupports((entry).isa)) {                                                                   \
    GTEST_SKIP() << (entry).name << ": this CPU lacks " << IsaName((entry).isa) << " ("             \
                 << GetCpuFeatures().ToString() << ")";                                              \
  }

// ---------------------------------------------------------------------------------------------------
// f32 GEMM

class GemmKernelTest : public testing::TestWithParam<const GemmKernel*> {};

TEST_P(GemmKernelTest, MatchesDoublePrecision) {
  const auto& e = *GetParam();
  SKIP_IF_CPU_LACKS(e);
  auto fn = e.fn;
  std::vector<char> workspace(e.workspace_bytes);
  struct Case {
    int64_t m, n, k, pad;  // pad: extra leading-dimension elements
  };
  const Case cases[] = {{0, 5, 7, 0},    {5, 0, 7, 0},     {4, 6, 0, 0},     {1, 1, 1, 0},     {3, 5, 7, 1},
                        {6, 16, 8, 0},   {14, 32, 256, 0}, {15, 33, 257, 3}, {13, 17, 19, 0},  {29, 67, 513, 2},
                        {8, 12, 31, 0},  {97, 41, 300, 0}, {200, 300, 70, 5}, {1, 1000, 37, 0}, {171, 2, 600, 0}};
  Lcg rng(42);
  for (const Case& c : cases) {
    const int64_t lda = c.k + c.pad, ldb = c.n + c.pad, ldc = c.n + c.pad;
    std::vector<float> a(std::max<int64_t>(c.m * lda, 1)), b(std::max<int64_t>(c.k * ldb, 1));
    for (float& v : a) v = rng.Uniform(-1, 1);
    for (float& v : b) v = rng.Uniform(-1, 1);
    const float kSentinel = 12345.0f;
    std::vector<float> got(std::max<int64_t>(c.m * ldc, 1), kSentinel);
    fn(c.m, c.n, c.k, a.data(), lda, b.data(), ldb, got.data(), ldc, workspace.data());
    double err2 = 0, ref2 = 0;
    for (int64_t i = 0; i < c.m; ++i) {
      for (int64_t j = 0; j < ldc; ++j) {
        const float g = got[i * ldc + j];
        if (j >= c.n) {
          ASSERT_EQ(g, kSentinel) << "wrote past n at (" << i << "," << j << ")";
          continue;
        }
        double abs_sum = 0;
        const double want = DoubleDot(a.data() + i * lda, b.data(), ldb, j, c.k, &abs_sum);
        // f32 accumulation of k products: error below k * 2^-24 * sum|a*b| (with margin).
        ASSERT_NEAR(g, want, 2e-7 * (c.k + 4) * abs_sum + 1e-30)
            << e.name << " m=" << c.m << " n=" << c.n << " k=" << c.k << " at (" << i << "," << j << ")";
        err2 += (g - want) * (g - want);
        ref2 += want * want;
      }
    }
    if (ref2 > 0) {
      EXPECT_LT(err2 / ref2, 1e-10) << e.name << " normalized error, m=" << c.m << " n=" << c.n;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Gemm, GemmKernelTest, testing::ValuesIn(AllOf(GemmKernels())), TestName);

TEST(GemmF32Test, ForcedReferenceAndRejectedShapes) {
  setenv("TESSEL_FORCE_BACKEND", "reference", 1);
  absl::StatusOr<GemmF32> op = GemmF32::Create(3, 4, 5);
  unsetenv("TESSEL_FORCE_BACKEND");
  ASSERT_TRUE(op.ok()) << op.status();
  EXPECT_EQ(op->kernel().name, "tessel_f32_gemm__reference");
  std::vector<float> a(15, 1.0f), b(20, 2.0f), c(12);
  op->Run(a.data(), 5, b.data(), 4, c.data(), 4);
  for (float v : c) EXPECT_EQ(v, 10.0f);  // 5 terms of 1 x 2
  EXPECT_EQ(GemmF32::Create(-1, 4, 5).status().code(), absl::StatusCode::kInvalidArgument);
  setenv("TESSEL_FORCE_BACKEND", "no_such_backend", 1);
  EXPECT_EQ(GemmF32::Create(3, 4, 5).status().code(), absl::StatusCode::kNotFound);
  unsetenv("TESSEL_FORCE_BACKEND");
  absl::StatusOr<GemmF32> best = GemmF32::Create(256, 256, 256);
  ASSERT_TRUE(best.ok());
  EXPECT_NE(best->kernel().backend, "reference") << "an optimized kernel should win on a large shape";
  std::printf("selected for 256^3: %s\n", best->kernel().name.c_str());
}

// Checks C (row stride ldc, m x n, columns past n still `sentinel`) against double precision:
// clamp_{[-0.5, 1.5] if clamp}(A B + bias + residual), residual laid out like C.
void ExpectEpilogueGemm(const std::string& name, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                        const float* b, const float* bias, const float* residual, bool clamp, const float* got,
                        int64_t ldc, float sentinel) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < ldc; ++j) {
      const float g = got[i * ldc + j];
      if (j >= n) {
        ASSERT_EQ(g, sentinel) << "wrote past n at (" << i << "," << j << ")";
        continue;
      }
      double abs_sum = 0;
      double want = DoubleDot(a + i * lda, b, n, j, k, &abs_sum);
      if (bias) want += bias[j], abs_sum += std::fabs(bias[j]);
      if (residual) want += residual[i * ldc + j], abs_sum += std::fabs(residual[i * ldc + j]);
      if (clamp) want = std::min(std::max(want, -0.5), 1.5);
      ASSERT_NEAR(g, want, 2e-7 * (k + 6) * abs_sum + 1e-30)
          << name << " m=" << m << " n=" << n << " k=" << k << " at (" << i << "," << j << ")";
    }
  }
}

// Prepacked weights with the fused epilogue (PackedGemmF32 over every prepacked microkernel): column
// ranges starting on a panel, bias, residual and clamp, against double precision. Full tiles of an
// epilogue without a residual take the tiles' in-register output stage where a microkernel has one
// (AVX2, NEON, SVE), after one K block or several.
class GemmPrepackedKernelTest : public testing::TestWithParam<const GemmPrepackedKernel*> {};

// Sets TESSEL_FORCE_BACKEND for a scope (also when an assertion returns early).
class ScopedForce {
 public:
  explicit ScopedForce(const std::string& backend) { setenv("TESSEL_FORCE_BACKEND", backend.c_str(), 1); }
  ~ScopedForce() { unsetenv("TESSEL_FORCE_BACKEND"); }
};

TEST_P(GemmPrepackedKernelTest, MatchesDoublePrecisionWithEpilogue) {
  const auto& e = *GetParam();
  SKIP_IF_CPU_LACKS(e);
  ScopedForce force(e.name);
  struct Case {
    int64_t m, n, k;
    bool bias, residual, clamp, split;  // split: two Runs over column halves starting on a panel
  };
  const Case cases[] = {{0, 5, 7, true, true, true, false},      {3, 4, 0, true, false, true, false},
                        {1, 1, 1, false, false, false, false},   {14, 32, 256, true, false, false, false},
                        {15, 33, 257, true, true, true, true},   {49, 96, 600, true, true, false, true},
                        {200, 24, 16, true, false, true, false}, {171, 70, 300, false, true, true, true},
                        {7, 1000, 37, true, false, false, true}, {16, 48, 300, false, false, true, true},
                        {24, 36, 40, true, false, true, false}};
  Lcg rng(7);
  for (const Case& c : cases) {
    const int64_t lda = c.k + 3, ldc = c.n + 2;
    std::vector<float> a(std::max<int64_t>(c.m * lda, 1)), b(std::max<int64_t>(c.k * c.n, 1)), bias(c.n),
        residual(std::max<int64_t>(c.m * ldc, 1));
    for (float& v : a) v = rng.Uniform(-1, 1);
    for (float& v : b) v = rng.Uniform(-1, 1);
    for (float& v : bias) v = rng.Uniform(-1, 1);
    for (float& v : residual) v = rng.Uniform(-1, 1);
    absl::StatusOr<PackedGemmF32> op = PackedGemmF32::Create(c.n, c.k, b.data(), c.n, c.m);
    ASSERT_TRUE(op.ok()) << op.status();
    ASSERT_EQ(op->kernel().name, e.name);
    GemmEpilogue ep;
    if (c.bias) ep.bias = bias.data();
    if (c.residual) ep.residual = residual.data(), ep.ldr = ldc;
    if (c.clamp) ep.lo = -0.5f, ep.hi = 1.5f;
    const float kSentinel = 12345.0f;
    std::vector<float> got(std::max<int64_t>(c.m * ldc, 1), kSentinel);
    std::vector<char> workspace(op->workspace_bytes());
    if (c.split) {
      const int64_t mid = std::min(c.n, (c.n / 2 + op->panel_width() - 1) / op->panel_width() * op->panel_width());
      op->Run(c.m, a.data(), lda, got.data(), ldc, ep, 0, mid, workspace.data());
      // The first range must leave the second one's columns alone.
      for (int64_t i = 0; i < c.m; ++i) {
        for (int64_t j = mid; j < ldc; ++j) ASSERT_EQ(got[i * ldc + j], kSentinel) << "first range wrote column " << j;
      }
      op->Run(c.m, a.data(), lda, got.data(), ldc, ep, mid, c.n, workspace.data());
    } else {
      op->Run(c.m, a.data(), lda, got.data(), ldc, ep, 0, c.n, workspace.data());
    }
    ExpectEpilogueGemm(e.name, c.m, c.n, c.k, a.data(), lda, b.data(), c.bias ? bias.data() : nullptr,
                       c.residual ? residual.data() : nullptr, c.clamp, got.data(), ldc, kSentinel);
    if (HasFatalFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(GemmPrepacked, GemmPrepackedKernelTest, testing::ValuesIn(AllOf(GemmPrepackedKernels())),
                         TestName);

// Direct-A GEMM (DirectGemmF32 over every registered microkernel): row and column remainders of
// both tiles (the 8x32 tile's last panels of 16 and 24 columns too), bias, residual (also stored in
// place of C) and clamp, against double precision.
class GemmDirectKernelTest : public testing::TestWithParam<const DirectGemmKernel*> {};

TEST_P(GemmDirectKernelTest, MatchesDoublePrecisionWithEpilogue) {
  const auto& e = *GetParam();
  SKIP_IF_CPU_LACKS(e);
  ScopedForce force(e.name);
  struct Case {
    int64_t m, n, k;
    bool bias, residual, clamp, in_place;
  };
  const Case cases[] = {{0, 5, 7, true, true, true, false},     {3, 4, 0, true, false, true, false},
                        {1, 1, 1, false, false, false, false},  {8, 32, 16, true, false, false, false},
                        {12, 16, 32, true, true, true, false},  {13, 17, 19, true, true, false, true},
                        {29, 24, 144, true, false, true, false}, {97, 96, 16, true, true, true, true},
                        {49, 160, 960, true, true, false, false}, {7, 33, 5, false, true, true, true},
                        {200, 48, 37, true, false, false, false}, {11, 15, 64, true, true, true, false},
                        {9, 56, 24, true, true, true, true},      {17, 144, 24, true, true, false, false}};
  Lcg rng(11);
  for (const Case& c : cases) {
    const int64_t lda = c.k + 3, ldc = c.n + 2;
    std::vector<float> a(std::max<int64_t>(c.m * lda, 1)), b(std::max<int64_t>(c.k * c.n, 1)), bias(c.n),
        residual(std::max<int64_t>(c.m * ldc, 1));
    for (float& v : a) v = rng.Uniform(-1, 1);
    for (float& v : b) v = rng.Uniform(-1, 1);
    for (float& v : bias) v = rng.Uniform(-1, 1);
    for (float& v : residual) v = rng.Uniform(-1, 1);
    absl::StatusOr<DirectGemmF32> op = DirectGemmF32::Create(c.n, c.k, b.data(), c.n, c.bias ? bias.data() : nullptr, c.m);
    ASSERT_TRUE(op.ok()) << op.status();
    ASSERT_EQ(op->kernel().name, e.name);
    const float kSentinel = 12345.0f;
    std::vector<float> got(std::max<int64_t>(c.m * ldc, 1), kSentinel);
    const float lo = c.clamp ? -0.5f : -std::numeric_limits<float>::infinity();
    const float hi = c.clamp ? 1.5f : std::numeric_limits<float>::infinity();
    const float* r = c.residual ? residual.data() : nullptr;
    if (c.in_place && c.residual) {
      for (int64_t i = 0; i < c.m; ++i) std::copy_n(residual.data() + i * ldc, c.n, got.data() + i * ldc);
      r = got.data();
    }
    // The same by column ranges (the threads' split of few rows), each a whole number of panels: the
    // same tiles on the same columns, so bit-identical to Run.
    std::vector<float> by_columns(got.size(), kSentinel);
    const float* r2 = c.residual ? residual.data() : nullptr;
    if (c.in_place && c.residual) {
      for (int64_t i = 0; i < c.m; ++i) std::copy_n(residual.data() + i * ldc, c.n, by_columns.data() + i * ldc);
      r2 = by_columns.data();
    }
    op->Run(c.m, a.data(), lda, got.data(), ldc, r, ldc, lo, hi);
    const int64_t pw = op->panel_width(), panels = (c.n + pw - 1) / pw;
    const int64_t split = (panels + 1) / 2 * pw;
    op->RunColumns(c.m, a.data(), lda, by_columns.data(), ldc, r2, ldc, lo, hi, split, c.n);
    op->RunColumns(c.m, a.data(), lda, by_columns.data(), ldc, r2, ldc, lo, hi, 0, split);
    ExpectEpilogueGemm(e.name, c.m, c.n, c.k, a.data(), lda, b.data(), c.bias ? bias.data() : nullptr,
                       c.residual ? residual.data() : nullptr, c.clamp, got.data(), ldc, kSentinel);
    if (HasFatalFailure()) return;
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(by_columns[i], got[i]) << e.name << " m=" << c.m << " n=" << c.n << " k=" << c.k << " element " << i
                                      << ": RunColumns split at " << split;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(GemmDirect, GemmDirectKernelTest, testing::ValuesIn(AllOf(DirectGemmKernels())), TestName);

TEST(DirectGemmF32Test, RejectsBadSizes) {
  std::vector<float> b(20);
  EXPECT_EQ(DirectGemmF32::Create(-1, 4, b.data(), 4, nullptr, 1).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(DirectGemmF32::Create(5, 4, b.data(), 4, nullptr, 1).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(DirectGemmF32::Create(4, 5, nullptr, 4, nullptr, 1).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(PackedGemmF32Test, RejectsBadSizes) {
  std::vector<float> b(20);
  EXPECT_EQ(PackedGemmF32::Create(-1, 4, b.data(), 4, 1).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PackedGemmF32::Create(5, 4, b.data(), 4, 1).status().code(), absl::StatusCode::kInvalidArgument);
}

// ---------------------------------------------------------------------------------------------------
// Weight-only GEMV

// Independent fp16 decoding (not the kernels' helper): (1 + m/1024) * 2^(e-15) for normal halves.
float DecodeHalf(uint16_t h) {
  const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  const float v = e == 0 ? std::ldexp(float(m), -24) : std::ldexp(1.0f + m / 1024.0f, e - 15);
  return (h & 0x8000) ? -v : v;
}
// A random positive normal half between 2^-9 and 2^-1.
uint16_t RandomHalf(Lcg& rng) { return static_cast<uint16_t>(((6 + rng.Next() % 9) << 10) | (rng.Next() & 0x3ff)); }

struct GemvCase {
  GemvFormat format;
  int64_t rows, cols, group;
  bool f16_scales, zeros;
};

// Quantized weights plus their dequantized f32 image, built from the format description in gemv.h.
struct QuantMatrix {
  std::vector<uint8_t> w;
  std::vector<uint16_t> scales16;
  std::vector<float> scales32;
  std::vector<uint8_t> zeros;
  std::vector<float> dense;  // rows x cols
  GemvArgs args;
};

QuantMatrix MakeMatrix(const GemvCase& c, Lcg& rng) {
  QuantMatrix q;
  q.dense.assign(c.rows * c.cols, 0.0f);
  q.args.rows = c.rows;
  q.args.cols = c.cols;
  if (c.format == GemvFormat::kQ4_0 || c.format == GemvFormat::kQ8_0) {
    const bool q4 = c.format == GemvFormat::kQ4_0;
    const int64_t block_bytes = q4 ? 18 : 34, nb = c.cols / 32;
    q.w.resize(std::max<int64_t>(c.rows * nb * block_bytes, 1));
    for (int64_t r = 0; r < c.rows; ++r) {
      for (int64_t b = 0; b < nb; ++b) {
        uint8_t* blk = q.w.data() + (r * nb + b) * block_bytes;
        const uint16_t d = RandomHalf(rng);
        std::memcpy(blk, &d, 2);
        for (int j = 0; j < (q4 ? 16 : 32); ++j) blk[2 + j] = static_cast<uint8_t>(rng.Next());
        for (int j = 0; j < 32; ++j) {
          const int v = q4 ? ((j < 16 ? blk[2 + j] & 0xf : blk[2 + j - 16] >> 4) - 8) : int8_t(blk[2 + j]);
          q.dense[r * c.cols + b * 32 + j] = DecodeHalf(d) * v;
        }
      }
    }
  } else {
    const int64_t ng = c.cols / c.group, half = c.group / 2;
    q.w.resize(std::max<int64_t>(c.rows * c.cols / 2, 1));
    for (uint8_t& v : q.w) v = static_cast<uint8_t>(rng.Next());
    q.scales16.resize(c.rows * ng + 1);
    q.scales32.resize(c.rows * ng + 1);
    q.zeros.resize(c.rows * ng + 1);
    for (int64_t i = 0; i < c.rows * ng; ++i) {
      q.scales16[i] = RandomHalf(rng);
      q.scales32[i] = rng.Uniform(-0.1f, 0.1f);
      q.zeros[i] = static_cast<uint8_t>(rng.Next() % 16);
    }
    for (int64_t r = 0; r < c.rows; ++r) {
      for (int64_t g = 0; g < ng; ++g) {
        const int64_t gi = r * ng + g;
        const float s = c.f16_scales ? DecodeHalf(q.scales16[gi]) : q.scales32[gi];
        const int z = c.zeros ? q.zeros[gi] : 8;
        for (int64_t j = 0; j < c.group; ++j) {
          const uint8_t byte = q.w[r * c.cols / 2 + g * half + (j % half)];
          const int nib = j < half ? byte & 0xf : byte >> 4;
          q.dense[r * c.cols + g * c.group + j] = s * (nib - z);
        }
      }
    }
    q.args.scales = c.f16_scales ? static_cast<const void*>(q.scales16.data()) : q.scales32.data();
    q.args.zeros = c.zeros ? q.zeros.data() : nullptr;
    q.args.group_size = c.group;
    q.args.f16_scales = c.f16_scales;
  }
  q.args.w = q.w.data();
  return q;
}

GemvFormat FormatOf(const KernelInfo& e) {
  if (e.dtypes == "q4_0xf32") return GemvFormat::kQ4_0;
  if (e.dtypes == "q8_0xf32") return GemvFormat::kQ8_0;
  return GemvFormat::kInt4Group;
}

std::vector<GemvCase> CasesFor(GemvFormat f) {
  std::vector<GemvCase> out;
  if (f == GemvFormat::kInt4Group) {
    for (int64_t group : {32, 64, 128}) {
      for (bool f16 : {true, false}) {
        for (bool zeros : {false, true}) {
          for (int64_t rows : {0, 1, 7, 19}) {
            for (int64_t mult : {0, 1, 3, 11}) out.push_back({f, rows, group * mult, group, f16, zeros});
          }
        }
      }
    }
  } else {
    for (int64_t rows : {0, 1, 2, 5, 17, 64}) {
      for (int64_t blocks : {0, 1, 2, 3, 7, 13, 128}) out.push_back({f, rows, 32 * blocks, 0, true, false});
    }
  }
  return out;
}

class GemvKernelTest : public testing::TestWithParam<const GemvKernel*> {};

TEST_P(GemvKernelTest, MatchesDequantizedDoublePrecision) {
  const auto& e = *GetParam();
  SKIP_IF_CPU_LACKS(e);
  auto fn = e.fn;
  Lcg rng(7);
  for (const GemvCase& c : CasesFor(FormatOf(e))) {
    ASSERT_TRUE(e.legal({c.rows, c.cols, 1, c.group}));
    QuantMatrix q = MakeMatrix(c, rng);
    std::vector<float> x(c.cols + 1);
    for (float& v : x) v = rng.Uniform(-2, 2);
    const float kSentinel = -777.0f;
    std::vector<float> y(c.rows + 1, kSentinel);
    q.args.x = x.data();
    q.args.y = y.data();
    // Compute an interior row range as well as the whole: threads call kernels on sub-ranges.
    const int64_t split = c.rows / 3;
    fn(q.args, 0, split);
    fn(q.args, split, c.rows);
    ASSERT_EQ(y[c.rows], kSentinel) << "wrote past the last row";
    for (int64_t r = 0; r < c.rows; ++r) {
      double want = 0, abs_sum = 0;
      for (int64_t j = 0; j < c.cols; ++j) {
        want += double(q.dense[r * c.cols + j]) * x[j];
        abs_sum += std::fabs(double(q.dense[r * c.cols + j]) * x[j]);
      }
      ASSERT_NEAR(y[r], want, 2e-7 * (c.cols + 8) * abs_sum + 1e-30)
          << e.name << " rows=" << c.rows << " cols=" << c.cols << " group=" << c.group << " f16=" << c.f16_scales
          << " zeros=" << c.zeros << " row " << r;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Gemv, GemvKernelTest, testing::ValuesIn(AllOf(GemvKernels())), TestName);

TEST(GemvEntryPointsTest, ThreadedEqualsSingleThreadAndReference) {
  Lcg rng(3);
  ThreadPool pool(3);
  for (GemvFormat f : {GemvFormat::kQ4_0, GemvFormat::kQ8_0, GemvFormat::kInt4Group}) {
    const GemvCase c{f, 203, 256, 64, true, true};
    ASSERT_TRUE(ValidateGemv(f, c.rows, c.cols, c.group).ok());
    QuantMatrix q = MakeMatrix(c, rng);
    std::vector<float> x(c.cols), y1(c.rows), y3(c.rows), yref(c.rows);
    for (float& v : x) v = rng.Uniform(-1, 1);
    Int4GroupWeights w4{q.w.data(), q.args.scales, q.args.zeros, c.group, true};
    auto run = [&](float* y, ThreadPool* p) {
      if (f == GemvFormat::kQ4_0) GemvQ4_0(q.w.data(), x.data(), y, c.rows, c.cols, p);
      if (f == GemvFormat::kQ8_0) GemvQ8_0(q.w.data(), x.data(), y, c.rows, c.cols, p);
      if (f == GemvFormat::kInt4Group) GemvInt4Group(w4, x.data(), y, c.rows, c.cols, p);
    };
    run(y1.data(), nullptr);
    run(y3.data(), &pool);
    q.args.x = x.data();
    q.args.y = yref.data();
    const GemvKernel* ref = GemvKernels().Find("gemv", SelectedGemvKernel(f).dtypes, SelectedGemvKernel(f).layout)[0];
    EXPECT_EQ(ref->backend, "reference");
    ref->fn(q.args, 0, c.rows);
    for (int64_t r = 0; r < c.rows; ++r) {
      ASSERT_EQ(y1[r], y3[r]) << "row split must not change a row's result, row " << r;
      ASSERT_NEAR(y1[r], yref[r], 1e-4 * (1 + std::fabs(yref[r]))) << SelectedGemvKernel(f).name << " row " << r;
    }
    std::printf("gemv %s -> %s\n", SelectedGemvKernel(f).dtypes.c_str(), SelectedGemvKernel(f).name.c_str());
  }
  EXPECT_EQ(ValidateGemv(GemvFormat::kQ4_0, 4, 33, 0).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidateGemv(GemvFormat::kInt4Group, 4, 128, 48).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidateGemv(GemvFormat::kInt4Group, 4, 96, 64).code(), absl::StatusCode::kInvalidArgument);
}

// Under qemu the wrapper sets TESSEL_SVE_VL; detection must report that vector length.
TEST(SveVectorLengthTest, DetectedLengthMatchesEmulated) {
  const CpuFeatures& f = GetCpuFeatures();
  if (!f.sve) GTEST_SKIP() << "no SVE on this CPU (" << f.ToString() << ")";
  const char* vl = std::getenv("TESSEL_SVE_VL");
  if (vl == nullptr) GTEST_SKIP() << "TESSEL_SVE_VL not set (not under the qemu wrapper)";
  EXPECT_EQ(f.sve_vector_bits, std::atoi(vl));
}

}  // namespace
}  // namespace tessel
