// AWQ's folds (quant/weight/awq.h) on a Llama layer: folding scales into the norms and the
// linear pairs leaves the f32 layer's outputs unchanged (the calibration forward as the reference).
#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "llm/quantize/calibration.h"
#include "quant/weight/awq.h"

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

}  // namespace
}  // namespace tessel::quant
