// The int8-input GEMV family (GemvQ8Kernels): every registered kernel against an independent
// computation (x quantized here per 32-block, exact integer dot products, double accumulation) over
// awkward shapes (no rows, one row, below and across the 4-row and 4-block steps, tails of 1..3 blocks),
// and against the f32 dot product within the activation-rounding bound that gemv.h states.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/gemv/gemv.h"
#include "kernels/gemv/internal/q8_test_matrix.h"
#include "kernels/registry/registry.h"

namespace tessel {
namespace {

using q8_test::DecodeHalf;
using q8_test::Lcg;
using q8_test::MakeMatrix;
using q8_test::Matrix;


struct Input {
  std::vector<int8_t> q;
  std::vector<int32_t> bias;
  std::vector<float> scale;
  GemvQ8Input view() { return {q.data(), bias.data(), scale.data()}; }
};

Input Quantize(GemvFormat f, const std::vector<float>& x) {
  const int64_t cols = static_cast<int64_t>(x.size());
  Input in;
  in.q.assign(GemvQ8PaddedCols(f, cols), 99);  // garbage the quantizer must overwrite with padding
  in.bias.assign(GemvQ8Lanes(f, cols), 99);
  in.scale.assign(GemvQ8Lanes(f, cols), 99.0f);
  QuantizeGemvInput(f, x.data(), cols, in.view());
  return in;
}

const char* DtypesOf(GemvFormat f) { return f == GemvFormat::kQ4_0 ? "q4_0xq8" : "q8_0xq8"; }

std::vector<const GemvKernel*> AllQ8Kernels() {
  std::vector<const GemvKernel*> out;
  for (const GemvKernel& e : GemvQ8Kernels().entries()) out.push_back(&e);
  return out;
}

class GemvQ8KernelTest : public testing::TestWithParam<const GemvKernel*> {};

TEST_P(GemvQ8KernelTest, MatchesIntegerDotAndF32WithinRoundingBound) {
  const GemvKernel& e = *GetParam();
  if (!CpuSupports(e.isa)) GTEST_SKIP() << e.name << ": this CPU lacks " << IsaName(e.isa);
  const GemvFormat f = e.dtypes == "q4_0xq8" ? GemvFormat::kQ4_0 : GemvFormat::kQ8_0;
  auto fn = e.fn;
  Lcg rng(11);
  for (int64_t rows : {0, 1, 3, 4, 5, 9, 16, 21, 64}) {
    for (int64_t blocks : {0, 1, 2, 3, 4, 5, 6, 7, 13, 128}) {
      const int64_t cols = 32 * blocks, nb = blocks;
      ASSERT_TRUE(e.legal({rows, cols, 1, 0}));
      const Matrix m = MakeMatrix(f, rows, cols, rng);
      std::vector<float> x(cols);
      for (float& v : x) v = rng.Uniform(-2, 2);
      if (blocks > 2) std::fill(x.begin() + 32, x.begin() + 64, 0.0f);  // an all-zero block: dx = 0
      Input in = Quantize(f, x);
      // The independent quantization of x (round to nearest even, dx = max|x| / 127).
      std::vector<int> xq(cols);
      std::vector<double> dx(nb);
      for (int64_t b = 0; b < nb; ++b) {
        float amax = 0;
        for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[b * 32 + j]));
        dx[b] = amax / 127.0f;
        for (int j = 0; j < 32; ++j) {
          xq[b * 32 + j] = amax > 0 ? static_cast<int>(std::nearbyint(x[b * 32 + j] * (127 / amax))) : 0;
        }
      }
      GemvArgs a;
      a.w = m.bytes.data();
      a.rows = rows;
      a.cols = cols;
      SetGemvQ8Input(in.view(), a);
      std::vector<float> y(rows + 1, -777.0f);
      a.y = y.data();
      const int64_t split = rows / 3;  // threads call kernels on sub-ranges
      fn(a, 0, split);
      fn(a, split, rows);
      ASSERT_EQ(y[rows], -777.0f) << "wrote past the last row";
      for (int64_t r = 0; r < rows; ++r) {
        double want = 0, mag = 0, f32 = 0, bound = 0;
        for (int64_t b = 0; b < nb; ++b) {
          int64_t dot = 0;
          double wabs = 0;
          for (int j = 0; j < 32; ++j) {
            const int64_t k = b * 32 + j;
            dot += int64_t{m.q[r * cols + k]} * xq[k];
            mag += std::fabs(m.scale[r * nb + b] * dx[b] * m.q[r * cols + k] * xq[k]);
            f32 += m.scale[r * nb + b] * m.q[r * cols + k] * x[k];
            wabs += std::fabs(m.scale[r * nb + b] * m.q[r * cols + k]);
          }
          want += m.scale[r * nb + b] * dx[b] * dot;
          bound += dx[b] / 2 * wabs;
        }
        // float accumulation of the scaled lanes: a few ulps per block, relative to the magnitude.
        ASSERT_NEAR(y[r], want, 1e-6 * mag + 1e-30) << e.name << " rows=" << rows << " cols=" << cols << " row " << r;
        ASSERT_NEAR(y[r], f32, bound * 1.001 + 1e-6 * mag + 1e-30) << e.name << " cols=" << cols << " row " << r;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(GemvQ8, GemvQ8KernelTest, testing::ValuesIn(AllQ8Kernels()),
                         [](const testing::TestParamInfo<const GemvKernel*>& info) { return info.param->name; });

TEST(GemvQ8InputTest, LayoutAndPadding) {
  EXPECT_EQ(GemvQ8PaddedCols(GemvFormat::kQ4_0, 32), 128);
  EXPECT_EQ(GemvQ8PaddedCols(GemvFormat::kQ4_0, 5632), 5632);
  EXPECT_EQ(GemvQ8Lanes(GemvFormat::kQ4_0, 160), 32);
  EXPECT_EQ(GemvQ8PaddedCols(GemvFormat::kQ8_0, 96), 128);
  EXPECT_EQ(GemvQ8Lanes(GemvFormat::kQ8_0, 96), 32);
  // x = 0..31, 127 / 31 per unit: block 0 of Q4_0 layout, lane 1 covers elements 4..7 and 20..23.
  std::vector<float> x(32);
  for (int j = 0; j < 32; ++j) x[j] = static_cast<float>(j);
  Input in = Quantize(GemvFormat::kQ4_0, x);
  const auto q = [](int j) { return static_cast<int>(std::nearbyint(j * 127.0f / 31)); };
  EXPECT_EQ(in.q[5], q(5));
  EXPECT_EQ(in.q[64 + 5], q(21));
  EXPECT_EQ(in.q[16], 0) << "block 1 is padding";
  EXPECT_EQ(in.bias[1], -8 * (q(4) + q(5) + q(6) + q(7) + q(20) + q(21) + q(22) + q(23)));
  EXPECT_FLOAT_EQ(in.scale[3], 31.0f / 127);
  EXPECT_EQ(in.scale[4], 0.0f);
  in = Quantize(GemvFormat::kQ8_0, x);
  EXPECT_EQ(in.q[21], q(21));
  EXPECT_EQ(in.bias[7], -128 * (q(28) + q(29) + q(30) + q(31)));
  EXPECT_EQ(in.bias[8], 0);
}

// Every byte, bias lane and scale against the layout in gemv.h, computed here element by element.
TEST(GemvQ8InputTest, QuantizerMatchesIndependentQuantization) {
  Lcg rng(5);
  for (GemvFormat f : {GemvFormat::kQ4_0, GemvFormat::kQ8_0}) {
    const bool q4 = f == GemvFormat::kQ4_0;
    for (int64_t blocks : {1, 2, 3, 4, 5, 7, 64, 176}) {
      const int64_t cols = 32 * blocks;
      std::vector<float> x(cols);
      for (float& v : x) v = rng.Uniform(-3, 3) * (rng.Next() % 8 == 0 ? 100.0f : 1.0f);
      if (blocks > 1) std::fill(x.begin() + 32, x.begin() + 64, 0.0f);
      const Input in = Quantize(f, x);
      std::vector<int> want_q(GemvQ8PaddedCols(f, cols), 0);
      std::vector<int> want_bias(GemvQ8Lanes(f, cols), 0);
      std::vector<float> want_scale(GemvQ8Lanes(f, cols), 0.0f);
      for (int64_t b = 0; b < blocks; ++b) {
        float amax = 0;
        for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[b * 32 + j]));
        for (int j = 0; j < 32; ++j) {
          const int q = amax > 0 ? static_cast<int>(std::nearbyint(x[b * 32 + j] * (127 / amax))) : 0;
          const int64_t pos = q4 ? (b / 4) * 128 + (j < 16 ? 0 : 64) + 16 * (b % 4) + j % 16 : b * 32 + j;
          const int64_t lane = q4 ? (b / 4) * 16 + 4 * (b % 4) + (j % 16) / 4 : b * 8 + j / 4;
          want_q[pos] = q;
          want_bias[lane] -= (q4 ? 8 : 128) * q;
          want_scale[lane] = amax / 127;
        }
      }
      for (size_t i = 0; i < want_q.size(); ++i) ASSERT_EQ(in.q[i], want_q[i]) << "cols " << cols << " byte " << i;
      for (size_t i = 0; i < want_bias.size(); ++i) {
        ASSERT_EQ(in.bias[i], want_bias[i]) << "cols " << cols << " lane " << i;
        ASSERT_EQ(in.scale[i], want_scale[i]) << "cols " << cols << " lane " << i;
      }
    }
  }
}

TEST(GemvQ8SelectionTest, FastKernelIsNeverTheReference) {
  for (GemvFormat f : {GemvFormat::kQ4_0, GemvFormat::kQ8_0}) {
    const GemvKernel* e = FastGemvQ8Kernel(f);
    if (e == nullptr) {
      std::printf("%s: no int8-input kernel on this CPU; the f32-input family runs\n", DtypesOf(f));
      continue;
    }
    EXPECT_NE(e->backend, "reference");
    EXPECT_EQ(e->dtypes, DtypesOf(f));
    EXPECT_TRUE(CpuSupports(e->isa));
  }
  EXPECT_EQ(FastGemvQ8Kernel(GemvFormat::kInt4Group), nullptr);
}

}  // namespace
}  // namespace tessel
