// AWQ's scale grid search and clipping search (after llm-awq's auto_scale / auto_clip), with
// LinearF32's GEMMs for the output errors.
#include "quant/weight/awq.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "quant/weight/linear.h"
#include "quant/weight/parallel.h"
#include "quant/weight/rtn.h"

namespace tessel::quant {

AwqScaleResult AwqSearchScales(const float* x, int64_t n, int64_t cols, const std::vector<AwqLinear>& linears,
                               const std::vector<float>& mean_abs, const std::vector<int>& tie,
                               const QuantScheme& scheme, const AwqOptions& options) {
  // Tied channels share the mean of their statistics.
  std::vector<float> stat = mean_abs;
  if (!tie.empty()) {
    const int slots = *std::max_element(tie.begin(), tie.end()) + 1;
    std::vector<double> sum(slots, 0.0);
    std::vector<int> count(slots, 0);
    for (int64_t c = 0; c < cols; ++c) {
      sum[tie[c]] += mean_abs[c];
      ++count[tie[c]];
    }
    for (int64_t c = 0; c < cols; ++c) stat[c] = static_cast<float>(sum[tie[c]] / count[tie[c]]);
  }
  std::vector<std::vector<float>> reference;
  for (const AwqLinear& l : linears) {
    reference.emplace_back(n * l.rows);
    LinearF32(x, n, l.w, l.rows, cols, reference.back().data());
  }
  AwqScaleResult best;
  best.loss = std::numeric_limits<double>::infinity();
  std::vector<float> s(cols), deq, out;
  for (int i = 0; i < options.grid; ++i) {
    const float alpha = static_cast<float>(i) / options.grid;
    float lo = std::numeric_limits<float>::infinity(), hi = 0;
    for (int64_t c = 0; c < cols; ++c) {
      s[c] = std::pow(std::max(stat[c], 1e-4f), alpha);
      lo = std::min(lo, s[c]);
      hi = std::max(hi, s[c]);
    }
    const float norm = 1.0f / std::sqrt(lo * hi);  // centre the scales around 1
    for (float& v : s) v *= norm;
    double loss = 0;
    for (size_t k = 0; k < linears.size(); ++k) {
      const int64_t rows = linears[k].rows;
      // Scaled, rounded and unscaled in fixed blocks of rows on the quantizer's threads (RTN is per row).
      constexpr int64_t kRows = 64;
      deq.resize(rows * cols);
      ParallelFor((rows + kRows - 1) / kRows, [&](int64_t b) {
        const int64_t r0 = b * kRows, h = std::min(kRows, rows - r0);
        std::vector<float> scaled(linears[k].w + r0 * cols, linears[k].w + (r0 + h) * cols);
        for (int64_t r = 0; r < h; ++r) {
          for (int64_t c = 0; c < cols; ++c) scaled[r * cols + c] *= s[c];
        }
        const std::vector<float> d = RtnQuantize(scaled.data(), h, cols, scheme).Dequantize();
        for (int64_t r = 0; r < h; ++r) {
          for (int64_t c = 0; c < cols; ++c) deq[(r0 + r) * cols + c] = d[r * cols + c] / s[c];
        }
      });
      out.resize(n * rows);
      LinearF32(x, n, deq.data(), rows, cols, out.data());
      // The squared error in fixed chunks (each with eight partial sums), added in order.
      constexpr int64_t kChunk = 1 << 16;
      const int64_t total = n * rows, chunks = (total + kChunk - 1) / kChunk;
      std::vector<double> part(chunks);
      ParallelFor(chunks, [&](int64_t b) {
        const int64_t e0 = b * kChunk, e1 = std::min(total, e0 + kChunk);
        double lane[8] = {};
        int64_t e = e0;
        for (; e + 8 <= e1; e += 8) {
          for (int l = 0; l < 8; ++l) {
            const double d = static_cast<double>(out[e + l]) - reference[k][e + l];
            lane[l] += d * d;
          }
        }
        for (; e < e1; ++e) {
          const double d = static_cast<double>(out[e]) - reference[k][e];
          lane[0] += d * d;
        }
        part[b] = ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
      });
      for (double v : part) loss += v;
    }
    if (i == 0) best.rtn_loss = loss;
    if (loss < best.loss) {
      best.loss = loss;
      best.alpha = alpha;
      best.scales = s;
    }
  }
  return best;
}

std::vector<float> AwqSearchClip(const float* x, int64_t n, const float* w, int64_t rows, int64_t cols,
                                 const QuantScheme& scheme, const AwqOptions& options) {
  const int64_t ng = cols / scheme.group;
  const int g = scheme.group;
  std::vector<float> best_clip(rows * ng, 1.0f);
  std::vector<double> best_err(rows * ng, std::numeric_limits<double>::infinity());
  // Groups on the quantizer's threads, each with its own slice of x and error rows.
  ParallelFor(ng, [&](int64_t gi) {
    std::vector<float> xg(n * g), diff(rows * g), out(n * rows), err(rows);
    for (int64_t i = 0; i < n; ++i) std::copy(x + i * cols + gi * g, x + i * cols + (gi + 1) * g, &xg[i * g]);
    for (int i = 0; i <= options.clip_grid / 2; ++i) {
      const float ratio = 1.0f - static_cast<float>(i) / options.clip_grid;
      for (int64_t r = 0; r < rows; ++r) {
        const float* wr = w + r * cols + gi * g;
        const auto [lo, hi] = std::minmax_element(wr, wr + g);
        const GroupParams p = ComputeGroupParams(scheme, *lo, *hi, ratio);
        for (int j = 0; j < g; ++j) {
          diff[r * g + j] = wr[j] - DequantizeValue(QuantizeValue(wr[j], p, scheme.max_code()), p);
        }
      }
      LinearF32OneThread(xg.data(), n, diff.data(), rows, g, out.data());
      std::fill(err.begin(), err.end(), 0.0f);
      for (int64_t t = 0; t < n; ++t) {
        for (int64_t r = 0; r < rows; ++r) err[r] += out[t * rows + r] * out[t * rows + r];
      }
      for (int64_t r = 0; r < rows; ++r) {
        if (err[r] < best_err[r * ng + gi]) {
          best_err[r * ng + gi] = err[r];
          best_clip[r * ng + gi] = ratio;
        }
      }
    }
  });
  return best_clip;
}

void FoldScalesIntoNorm(std::vector<float>* gain, const std::vector<std::vector<float>*>& next, int64_t cols,
                        const std::vector<float>& s) {
  for (int64_t j = 0; j < cols; ++j) (*gain)[j] /= s[j];
  for (std::vector<float>* w : next) {
    for (size_t i = 0; i < w->size(); ++i) (*w)[i] *= s[i % cols];
  }
}

void FoldScalesIntoLinear(std::vector<float>* prev, int64_t prev_cols, std::vector<float>* next, int64_t next_cols,
                          const std::vector<float>& s, const std::vector<int>& tie) {
  for (size_t i = 0; i < next->size(); ++i) (*next)[i] *= s[i % next_cols];
  std::vector<bool> done(prev->size() / prev_cols, false);
  for (int64_t c = 0; c < next_cols; ++c) {
    const int64_t row = tie.empty() ? c : tie[c];
    if (done[row]) continue;
    done[row] = true;
    for (int64_t j = 0; j < prev_cols; ++j) (*prev)[row * prev_cols + j] /= s[c];
  }
}

}  // namespace tessel::quant
