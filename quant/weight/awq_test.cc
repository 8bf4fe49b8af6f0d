// AWQ: the scale and clip searches never do worse than plain RTN and help when a few input channels
// are large. (Folding the scales into a Llama layer: llm/quantize/awq_fold_test.cc.)
#include "quant/weight/awq.h"

#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "quant/weight/rtn.h"

namespace tessel::quant {
namespace {

std::vector<float> Random(int64_t n, std::mt19937& rng, float sd, float mean = 0.0f) {
  std::normal_distribution<float> normal(mean, sd);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

TEST(AwqTest, ScaleSearchBeatsRtnWithOutlierChannels) {
  const int64_t n = 512, cols = 128, rows = 64;
  std::mt19937 rng(8);
  std::vector<float> x = Random(n * cols, rng, 1.0f);
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t c = 0; c < cols; c += 19) x[t * cols + c] *= 20.0f;  // salient channels
  }
  const std::vector<float> w = Random(rows * cols, rng, 0.05f);
  std::vector<float> mean_abs(cols, 0.0f);
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t c = 0; c < cols; ++c) mean_abs[c] += std::fabs(x[t * cols + c]) / n;
  }
  const QuantScheme s{3, 128, false};
  const AwqScaleResult r = AwqSearchScales(x.data(), n, cols, {{w.data(), rows}}, mean_abs, {}, s, AwqOptions{});
  EXPECT_GT(r.alpha, 0.0f);
  EXPECT_LT(r.loss, 0.8 * r.rtn_loss) << "alpha " << r.alpha;
  // The reported RTN loss is the hand-computed one.
  const std::vector<float> q = RtnQuantize(w.data(), rows, cols, s).Dequantize();
  double rtn = 0;
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t o = 0; o < rows; ++o) {
      double d = 0;
      for (int64_t c = 0; c < cols; ++c) d += static_cast<double>(x[t * cols + c]) * (w[o * cols + c] - q[o * cols + c]);
      rtn += d * d;
    }
  }
  EXPECT_NEAR(r.rtn_loss, rtn, 1e-3 * rtn);
}

TEST(AwqTest, ClipSearchNeverIncreasesGroupError) {
  const int64_t n = 256, cols = 64, rows = 16;
  std::mt19937 rng(9);
  const std::vector<float> x = Random(n * cols, rng, 1.0f);
  std::vector<float> w = Random(rows * cols, rng, 0.05f);
  for (int64_t r = 0; r < rows; ++r) w[r * cols + r] = 0.6f;  // one outlier weight per row
  const QuantScheme s{3, 32, true};
  const std::vector<float> clip = AwqSearchClip(x.data(), n, w.data(), rows, cols, s, AwqOptions{});
  const std::vector<float> ones(clip.size(), 1.0f);
  auto error = [&](const std::vector<float>& c) {
    const std::vector<float> q = RtnQuantize(w.data(), rows, cols, s, c.data()).Dequantize();
    double e = 0;
    for (int64_t t = 0; t < n; ++t) {
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t g = 0; g < cols / 32; ++g) {
          double d = 0;
          for (int j = 0; j < 32; ++j) {
            const int64_t k = g * 32 + j;
            d += static_cast<double>(x[t * cols + k]) * (w[r * cols + k] - q[r * cols + k]);
          }
          e += d * d;
        }
      }
    }
    return e;
  };
  int clipped = 0;
  for (float v : clip) clipped += v < 1.0f;
  EXPECT_GT(clipped, 0);
  EXPECT_LT(error(clip), error(ones));
}

}  // namespace
}  // namespace tessel::quant
