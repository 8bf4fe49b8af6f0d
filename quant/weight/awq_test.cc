// AWQ: folding scales leaves the f32 layer's outputs unchanged; the scale and clip searches never do
// worse than plain RTN and help when a few input channels are large.
#include "quant/weight/awq.h"

#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "quant/weight/calibration.h"
#include "quant/weight/rtn.h"

namespace tessel::quant {
namespace {

std::vector<float> Random(int64_t n, std::mt19937& rng, float sd, float mean = 0.0f) {
  std::normal_distribution<float> normal(mean, sd);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

std::vector<float> RunLayer(const LayerForward& f, const LayerF32& w, std::vector<float> x, int64_t t) {
  const llm::LlamaConfig& c = f.config();
  std::vector<float> h(t * c.dim), att(t * c.num_heads * c.head_dim), a(t * c.ffn_dim);
  f.AttnInput(w, x.data(), t, h.data());
  f.Attention(w, h.data(), t, att.data());
  f.AddAttnOutput(w, att.data(), t, x.data());
  f.FfnInput(w, x.data(), t, h.data());
  f.FfnHidden(w, h.data(), t, a.data());
  f.AddFfnOutput(w, a.data(), t, x.data());
  return x;
}

TEST(AwqTest, FoldingLeavesF32OutputsUnchanged) {
  llm::LlamaConfig c;
  c.dim = 64;
  c.num_layers = 1;
  c.num_heads = 4;
  c.num_kv_heads = 2;  // GQA: the v -> o fold ties two output-projection channels to one V row
  c.head_dim = 16;
  c.ffn_dim = 96;
  c.context_length = 32;
  const int64_t qd = 64, kvd = 32, t = 12;
  std::mt19937 rng(7);
  LayerF32 w;
  w.attn_norm = Random(c.dim, rng, 0.2f, 1.0f);
  w.ffn_norm = Random(c.dim, rng, 0.2f, 1.0f);
  w.wq = Random(qd * c.dim, rng, 0.2f);
  w.wk = Random(kvd * c.dim, rng, 0.2f);
  w.wv = Random(kvd * c.dim, rng, 0.2f);
  w.wo = Random(c.dim * qd, rng, 0.2f);
  w.w_gate = Random(c.ffn_dim * c.dim, rng, 0.2f);
  w.w_up = Random(c.ffn_dim * c.dim, rng, 0.2f);
  w.w_down = Random(c.dim * c.ffn_dim, rng, 0.2f);
  const std::vector<float> x = Random(t * c.dim, rng, 1.0f);
  const LayerForward f(c);
  const std::vector<float> want = RunLayer(f, w, x, t);

  std::uniform_real_distribution<float> scale(0.25f, 4.0f);
  auto scales = [&](int64_t n) {
    std::vector<float> s(n);
    for (float& v : s) v = scale(rng);
    return s;
  };
  LayerF32 folded = w;
  FoldScalesIntoNorm(&folded.attn_norm, {&folded.wq, &folded.wk, &folded.wv}, c.dim, scales(c.dim));
  std::vector<int> tie(qd);
  const std::vector<float> kv_scale = scales(kvd);
  std::vector<float> o_scale(qd);
  for (int64_t ch = 0; ch < qd; ++ch) {
    tie[ch] = static_cast<int>((ch / c.head_dim) / 2 * c.head_dim + ch % c.head_dim);
    o_scale[ch] = kv_scale[tie[ch]];
  }
  FoldScalesIntoLinear(&folded.wv, c.dim, &folded.wo, qd, o_scale, tie);
  FoldScalesIntoNorm(&folded.ffn_norm, {&folded.w_gate, &folded.w_up}, c.dim, scales(c.dim));
  FoldScalesIntoLinear(&folded.w_up, c.dim, &folded.w_down, c.ffn_dim, scales(c.ffn_dim), {});
  ASSERT_NE(folded.wv, w.wv);
  ASSERT_NE(folded.w_down, w.w_down);

  const std::vector<float> got = RunLayer(f, folded, x, t);
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], 1e-4f * (1.0f + std::fabs(want[i]))) << "element " << i;
  }
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
