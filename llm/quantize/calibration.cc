// Calibration windows and the per-layer f32 forward (LinearF32 for the projections; attention per head
// with Eigen, the heads on the quantizer's threads).
#include "llm/quantize/calibration.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "Eigen/Dense"
#include "absl/strings/str_cat.h"
#include "quant/weight/linear.h"
#include "quant/weight/parallel.h"

namespace tessel::quant {
namespace {

using RowMajorF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MapF = Eigen::Map<RowMajorF>;

void RmsNorm(const float* x, int64_t t, int64_t dim, const std::vector<float>& g, float eps, float* y) {
  for (int64_t i = 0; i < t; ++i) {
    double ss = 0;
    for (int64_t j = 0; j < dim; ++j) ss += static_cast<double>(x[i * dim + j]) * x[i * dim + j];
    const float inv = 1.0f / std::sqrt(static_cast<float>(ss / dim) + eps);
    for (int64_t j = 0; j < dim; ++j) y[i * dim + j] = x[i * dim + j] * inv * g[j];
  }
}

// x += y w^T for w [x's width, cols] through LinearF32.
void AddLinear(const float* y, int64_t t, const std::vector<float>& w, int64_t rows, int64_t cols, float* x) {
  std::vector<float> out(t * rows);
  LinearF32(y, t, w.data(), rows, cols, out.data());
  for (int64_t i = 0; i < t * rows; ++i) x[i] += out[i];
}

}  // namespace

absl::StatusOr<std::vector<std::vector<int32_t>>> CalibrationSamples(const llm::Tokenizer& tokenizer,
                                                                    absl::string_view text, int64_t samples,
                                                                    int64_t seq, uint64_t seed) {
  const std::vector<int32_t> ids = tokenizer.Encode(text, /*add_special=*/false);
  const bool bos = tokenizer.add_bos() && tokenizer.bos() >= 0;
  const int64_t body = bos ? seq - 1 : seq;
  if (samples < 1 || seq < 2) {
    return absl::InvalidArgumentError(absl::StrCat("calibration needs at least 1 sample of 2 tokens (got ", samples,
                                                   " samples of ", seq, ")"));
  }
  if (static_cast<int64_t>(ids.size()) < body + 1) {
    return absl::InvalidArgumentError(absl::StrCat("the calibration text has ", ids.size(),
                                                   " tokens, fewer than one window of ", seq,
                                                   "; give a longer text or a smaller --seq"));
  }
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> start(0, static_cast<int64_t>(ids.size()) - body);
  std::vector<std::vector<int32_t>> out;
  for (int64_t s = 0; s < samples; ++s) {
    const int64_t b = start(rng);
    std::vector<int32_t> w;
    if (bos) w.push_back(tokenizer.bos());
    w.insert(w.end(), ids.begin() + b, ids.begin() + b + body);
    out.push_back(std::move(w));
  }
  return out;
}

LayerForward::LayerForward(const llm::LlamaConfig& config) : c_(config) {
  const int64_t half = c_.head_dim / 2;
  const int64_t ctx = std::max<int64_t>(c_.context_length, 4096);
  cos_.resize(ctx * half);
  sin_.resize(ctx * half);
  for (int64_t p = 0; p < ctx; ++p) {
    for (int64_t i = 0; i < half; ++i) {
      const double angle = p * std::pow(c_.rope_theta, -2.0 * i / c_.head_dim);
      cos_[p * half + i] = static_cast<float>(std::cos(angle));
      sin_[p * half + i] = static_cast<float>(std::sin(angle));
    }
  }
}

void LayerForward::AttnInput(const LayerF32& w, const float* x, int64_t t, float* h1) const {
  RmsNorm(x, t, c_.dim, w.attn_norm, c_.norm_eps, h1);
}

void LayerForward::Attention(const LayerF32& w, const float* h1, int64_t t, float* att) const {
  const int64_t hd = c_.head_dim, qd = c_.num_heads * hd, kvd = c_.num_kv_heads * hd;
  RowMajorF q(t, qd), k(t, kvd), v(t, kvd);
  LinearF32(h1, t, w.wq.data(), qd, c_.dim, q.data());
  LinearF32(h1, t, w.wk.data(), kvd, c_.dim, k.data());
  LinearF32(h1, t, w.wv.data(), kvd, c_.dim, v.data());
  const int64_t half = hd / 2;
  for (RowMajorF* m : {&q, &k}) {
    const int64_t heads = m->cols() / hd;
    for (int64_t p = 0; p < t; ++p) {
      for (int64_t h = 0; h < heads; ++h) {
        float* x = m->data() + p * m->cols() + h * hd;
        for (int64_t i = 0; i < half; ++i) {
          const bool pairs = c_.rope_style == llm::RopeStyle::kAdjacentPairs;
          const int64_t a = pairs ? 2 * i : i, b = pairs ? 2 * i + 1 : i + half;
          const float x0 = x[a], x1 = x[b], cs = cos_[p * half + i], sn = sin_[p * half + i];
          x[a] = x0 * cs - x1 * sn;
          x[b] = x0 * sn + x1 * cs;
        }
      }
    }
  }
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  const int64_t group = c_.num_heads / c_.num_kv_heads;
  MapF out(att, t, qd);
  ParallelFor(c_.num_heads, [&](int64_t h) {
    const int64_t kvh = h / group;
    RowMajorF s = q.middleCols(h * hd, hd) * k.middleCols(kvh * hd, hd).transpose() * scale;
    for (int64_t i = 0; i < t; ++i) {
      const int64_t first = c_.sliding_window > 0 ? std::max<int64_t>(0, i - c_.sliding_window + 1) : 0;
      float mx = -INFINITY;
      for (int64_t j = first; j <= i; ++j) mx = std::max(mx, s(i, j));
      float sum = 0;
      for (int64_t j = 0; j < t; ++j) {
        s(i, j) = (j >= first && j <= i) ? std::exp(s(i, j) - mx) : 0.0f;
        sum += s(i, j);
      }
      s.row(i) /= sum;
    }
    out.middleCols(h * hd, hd).noalias() = s * v.middleCols(kvh * hd, hd);
  });
}

void LayerForward::AddAttnOutput(const LayerF32& w, const float* att, int64_t t, float* x) const {
  AddLinear(att, t, w.wo, c_.dim, c_.num_heads * c_.head_dim, x);
}

void LayerForward::FfnInput(const LayerF32& w, const float* x, int64_t t, float* h2) const {
  RmsNorm(x, t, c_.dim, w.ffn_norm, c_.norm_eps, h2);
}

void LayerForward::FfnHidden(const LayerF32& w, const float* h2, int64_t t, float* a) const {
  RowMajorF up(t, c_.ffn_dim);
  LinearF32(h2, t, w.w_gate.data(), c_.ffn_dim, c_.dim, a);
  LinearF32(h2, t, w.w_up.data(), c_.ffn_dim, c_.dim, up.data());
  for (int64_t i = 0; i < t * c_.ffn_dim; ++i) a[i] = a[i] / (1.0f + std::exp(-a[i])) * up.data()[i];
}

void LayerForward::AddFfnOutput(const LayerF32& w, const float* a, int64_t t, float* x) const {
  AddLinear(a, t, w.w_down, c_.dim, c_.ffn_dim, x);
}

}  // namespace tessel::quant
