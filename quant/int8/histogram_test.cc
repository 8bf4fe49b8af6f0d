// Streaming histogram and range choosers against hand-computable distributions.
#include "quant/int8/histogram.h"

#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "graph/quant_params.h"

namespace tessel {
namespace {

TEST(HistogramTest, GrowsRangeWithoutLosingCounts) {
  StreamingHistogram h;
  std::vector<float> small(1000, 0.25f), big = {-300.0f, 7.0f};
  h.Add(small.data(), small.size());
  h.Add(big.data(), big.size());
  int64_t total = 0;
  for (int64_t c : h.bins()) total += c;
  EXPECT_EQ(total, 1002);
  EXPECT_EQ(h.min(), -300.0f);
  EXPECT_EQ(h.max(), 7.0f);
  EXPECT_GE(h.half_range(), 300.0);
  EXPECT_EQ(h.Range(CalibrationMethod::kMinMax, 0, 256), std::make_pair(-300.0f, 7.0f));
}

TEST(HistogramTest, PercentileIgnoresARareOutlier) {
  // 100k samples uniform in [0, 1) and one at 1000: min/max keeps 1000; percentile 99.99 lands at 1
  // (within one histogram bin of the final range).
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(0, 1);
  std::vector<float> x(100000);
  for (float& v : x) v = u(rng);
  x[500] = 1000.0f;
  StreamingHistogram h;
  h.Add(x.data(), x.size());
  EXPECT_FLOAT_EQ(h.Range(CalibrationMethod::kMinMax, 0, 256).second, 1000.0f);
  const double bin = 2 * h.half_range() / StreamingHistogram::kBins;
  EXPECT_NEAR(h.Range(CalibrationMethod::kPercentile, 99.99, 256).second, 1.0, bin + 1e-3);
}

TEST(HistogramTest, EntropyAndMseClipALaplacianTail) {
  // |Laplace(0, 1)|, 200k samples (max ~ ln 200k ~ 12): for 8 bits the MSE-optimal clip is near 10b
  // (Banner et al., ACIQ); KL clips harder. Both stay between 3 and the maximum.
  std::mt19937 rng(4);
  std::exponential_distribution<float> e(1.0f);
  std::vector<float> x(200000);
  for (float& v : x) v = e(rng);
  StreamingHistogram h;
  h.Add(x.data(), x.size());
  for (CalibrationMethod m : {CalibrationMethod::kEntropy, CalibrationMethod::kMse}) {
    const float t = h.Range(m, 0, 256).second;
    EXPECT_GT(t, 3.0f) << CalibrationMethodName(m);
    EXPECT_LT(t, h.max()) << CalibrationMethodName(m);
  }
  const float mse = h.Range(CalibrationMethod::kMse, 0, 256).second;
  EXPECT_NEAR(mse, 10.0f, 3.0f);
}

TEST(QuantParamsTest, HandComputedScalesAndZeroPoints) {
  // u8 over [-1, 3]: scale 4/255, zero point round(1 / (4/255)) = round(63.75) = 64.
  TensorQuantParams p = ChooseQuantParams(-1, 3, DType::kU8);
  EXPECT_FLOAT_EQ(p.scale, 4.0f / 255);
  EXPECT_EQ(p.zero_point, 64);
  EXPECT_EQ(p.Quantize(0), 64);
  EXPECT_EQ(p.Quantize(100), 255);
  // i8 symmetric over [-0.5, 2]: scale 2/127, zero point 0.
  TensorQuantParams s = ChooseQuantParams(-0.5f, 2, DType::kI8);
  EXPECT_FLOAT_EQ(s.scale, 2.0f / 127);
  EXPECT_EQ(s.zero_point, 0);
  EXPECT_EQ(s.Quantize(-1000), -128);
  // Round half to even, as QuantizeLinear: 2.5 -> 2, 3.5 -> 4 (scale 1).
  TensorQuantParams one;
  EXPECT_EQ(one.Quantize(2.5f), 2);
  EXPECT_EQ(one.Quantize(3.5f), 4);
}

TEST(QuantParamsTest, TableRoundTripsAndRejectsBadLines) {
  QuantTable t = {{"a/b", ChooseQuantParams(0, 6, DType::kU8)}, {"c", ChooseQuantParams(-2, 2, DType::kI8)}};
  auto parsed = ParseQuantTable(FormatQuantTable(t), "t.txt");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->at("a/b").scale, t["a/b"].scale);
  EXPECT_EQ(parsed->at("c").dtype, DType::kI8);
  EXPECT_FALSE(ParseQuantTable("x 0.1 300 u8\n", "t.txt").ok());
  EXPECT_FALSE(ParseQuantTable("x -1 0 u8\n", "t.txt").ok());
  EXPECT_FALSE(ParseQuantTable("x 0.1 0\n", "t.txt").ok());
}

}  // namespace
}  // namespace tessel
