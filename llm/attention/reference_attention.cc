// Naive attention: full score row, max-subtracted softmax, weighted sum, all in double.
#include "llm/attention/reference_attention.h"

#include <cmath>
#include <vector>

namespace tessel::llm {

void ReferenceAttention(const AttentionParams& p, const float* q, int64_t n, int64_t pos0, const float* k,
                        const float* v, float* out) {
  const int hd = p.head_dim;
  const int group = p.num_heads / p.num_kv_heads;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t pos = pos0 + i;
    for (int h = 0; h < p.num_heads; ++h) {
      const int kvh = h / group;
      const float* qi = q + (i * p.num_heads + h) * hd;
      std::vector<double> scores(pos + 1, -INFINITY);
      double mx = -INFINITY;
      for (int64_t j = 0; j <= pos; ++j) {
        if (p.sliding_window > 0 && j <= pos - p.sliding_window) continue;
        double dot = 0;
        for (int e = 0; e < hd; ++e) dot += static_cast<double>(qi[e]) * k[(j * p.num_kv_heads + kvh) * hd + e];
        scores[j] = dot * p.scale;
        mx = std::max(mx, scores[j]);
      }
      double total = 0;
      for (double& s : scores) {
        s = std::exp(s - mx);
        total += s;
      }
      for (int e = 0; e < hd; ++e) {
        double o = 0;
        for (int64_t j = 0; j <= pos; ++j) o += scores[j] * v[(j * p.num_kv_heads + kvh) * hd + e];
        out[(i * p.num_heads + h) * hd + e] = static_cast<float>(o / total);
      }
    }
  }
}

}  // namespace tessel::llm
