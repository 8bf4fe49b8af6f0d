// RTN round trips within half a step per element, and the MSE search finds the best grid point.
#include "quant/weight/rtn.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "quant/weight/scheme.h"

namespace tessel::quant {
namespace {

std::vector<float> RandomWeights(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.05f);
  std::vector<float> w(n);
  for (float& v : w) v = normal(rng);
  w[3] = 0.4f;  // an outlier, and an all-zero group
  for (int j = 64; j < 96; ++j) w[j] = 0.0f;
  return w;
}

TEST(RtnTest, RoundTripWithinHalfAStep) {
  const int64_t rows = 5, cols = 256;
  const std::vector<float> w = RandomWeights(rows * cols, 1);
  for (int bits : {8, 4, 3}) {
    for (int group : {32, 64, 128}) {
      for (bool asym : {false, true}) {
        const QuantScheme s{bits, group, asym};
        const QuantizedMatrix q = RtnQuantize(w.data(), rows, cols, s);
        const std::vector<float> deq = q.Dequantize();
        for (int64_t r = 0; r < rows; ++r) {
          for (int64_t g = 0; g < cols / group; ++g) {
            // The step from the group's own range, independent of the code under test.
            float lo = 0, hi = 0;
            for (int j = 0; j < group; ++j) {
              lo = std::fmin(lo, w[r * cols + g * group + j]);
              hi = std::fmax(hi, w[r * cols + g * group + j]);
            }
            const float step = asym ? (hi - lo) / ((1 << bits) - 1)
                                    : std::fmax(-lo, hi) / ((1 << (bits - 1)) - 0.5f);
            // Half a step, plus the scale's rounding to an IEEE half (relative 2^-11 of the range).
            const float tol = 0.5f * step * (1 + 1e-3f) + std::fmax(-lo, hi) * 1e-3f + 1e-9f;
            for (int j = 0; j < group; ++j) {
              const int64_t i = r * cols + g * group + j;
              ASSERT_NEAR(deq[i], w[i], tol) << s.ToString() << " element " << i;
            }
          }
        }
      }
    }
  }
}

TEST(RtnTest, ClipShrinksTheRange) {
  const std::vector<float> w = {-1.0f, -0.5f, 0.0f, 0.25f, 0.5f, 0.75f, 1.0f, 0.1f};
  std::vector<float> row(32, 0.0f);
  std::copy(w.begin(), w.end(), row.begin());
  const float half = 0.5f;
  const QuantizedMatrix q = RtnQuantize(row.data(), 1, 32, QuantScheme{4, 32, false}, &half);
  // Symmetric W4, range 0.5: scale = 0.5 / 7.5; -1 and 1 clamp to codes 0 and 15.
  EXPECT_FLOAT_EQ(q.params[0].scale, 0.06665039f);  // 0.5 / 7.5 rounded to a half
  EXPECT_EQ(q.codes[0], 0);
  EXPECT_EQ(q.codes[6], 15);
  EXPECT_EQ(q.codes[2], 8);
}

// The MSE search against a brute force over the same shrink grid, written out here: it must pick
// the grid point with the lowest sum |w - q|^norm, so its error is never above min/max's (p = 1).
TEST(RtnTest, MseSearchPicksTheBestShrink) {
  const int64_t rows = 6, cols = 128;
  const std::vector<float> w = RandomWeights(rows * cols, 7);
  for (int bits : {4, 3}) {
    for (bool asym : {false, true}) {
      const QuantScheme s{bits, 128, asym};
      ClipSearch cs;
      const QuantizedMatrix minmax = RtnQuantize(w.data(), rows, cols, s);
      const QuantizedMatrix mse = RtnQuantize(w.data(), rows, cols, s, nullptr, &cs);
      const std::vector<float> dm = minmax.Dequantize(), ds = mse.Dequantize();
      for (int64_t r = 0; r < rows; ++r) {
        const float* x = &w[r * cols];
        float lo = 0, hi = 0;
        for (int j = 0; j < cols; ++j) {
          lo = std::fmin(lo, x[j]);
          hi = std::fmax(hi, x[j]);
        }
        double best = INFINITY;
        for (int i = 0; i < 80; ++i) {
          const GroupParams p = ComputeGroupParams(s, lo, hi, 1.0f - i / 100.0f);
          double e = 0;
          for (int j = 0; j < cols; ++j) {
            int code = static_cast<int>(std::nearbyint(x[j] * (1.0f / p.scale))) + p.zero;
            code = std::min(std::max(code, 0), s.max_code());
            e += std::pow(std::fabs(x[j] - (code - p.zero) * p.scale), 2.4);
          }
          best = std::fmin(best, e);
        }
        double e_mse = 0, e_minmax = 0;
        for (int j = 0; j < cols; ++j) {
          e_mse += std::pow(std::fabs(x[j] - ds[r * cols + j]), 2.4);
          e_minmax += std::pow(std::fabs(x[j] - dm[r * cols + j]), 2.4);
        }
        EXPECT_NEAR(e_mse, best, 1e-6 * best) << s.ToString() << " row " << r;
        EXPECT_LE(e_mse, e_minmax * (1 + 1e-9)) << s.ToString() << " row " << r;
      }
      // Row 0 holds the 0.4 outlier (8 sigma): the search clips it rather than spend the grid on it.
      EXPECT_LT(mse.params[0].scale, minmax.params[0].scale) << s.ToString();
    }
  }
}

}  // namespace
}  // namespace tessel::quant
