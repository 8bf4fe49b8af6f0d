// AWQ's scale grid search and clipping search (after llm-awq's auto_scale / auto_clip), with Eigen
// GEMMs for the output errors.
#include "quant/weight/awq.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "Eigen/Dense"
#include "quant/weight/rtn.h"

namespace tessel::quant {
namespace {

using RowMajorF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

}  // namespace

AwqScaleResult AwqSearchScales(const float* x, int64_t n, int64_t cols, const std::vector<AwqLinear>& linears,
                               const std::vector<float>& mean_abs, const std::vector<int>& tie,
                               const QuantScheme& scheme, const AwqOptions& options) {
  Eigen::Map<const RowMajorF> xm(x, n, cols);
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
  std::vector<RowMajorF> reference;
  for (const AwqLinear& l : linears) {
    reference.push_back(xm * Eigen::Map<const RowMajorF>(l.w, l.rows, cols).transpose());
  }
  AwqScaleResult best;
  best.loss = std::numeric_limits<double>::infinity();
  std::vector<float> s(cols), scaled;
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
      scaled.assign(linears[k].w, linears[k].w + rows * cols);
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < cols; ++c) scaled[r * cols + c] *= s[c];
      }
      std::vector<float> deq = RtnQuantize(scaled.data(), rows, cols, scheme).Dequantize();
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < cols; ++c) deq[r * cols + c] /= s[c];
      }
      const RowMajorF out = xm * Eigen::Map<const RowMajorF>(deq.data(), rows, cols).transpose();
      loss += static_cast<double>((out - reference[k]).squaredNorm());
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
  Eigen::Map<const RowMajorF> xm(x, n, cols);
  RowMajorF diff(rows, g);
  for (int64_t gi = 0; gi < ng; ++gi) {
    const RowMajorF xg = xm.middleCols(gi * g, g);
    for (int i = 0; i <= options.clip_grid / 2; ++i) {
      const float ratio = 1.0f - static_cast<float>(i) / options.clip_grid;
      for (int64_t r = 0; r < rows; ++r) {
        const float* wr = w + r * cols + gi * g;
        const auto [lo, hi] = std::minmax_element(wr, wr + g);
        const GroupParams p = ComputeGroupParams(scheme, *lo, *hi, ratio);
        for (int j = 0; j < g; ++j) diff(r, j) = wr[j] - DequantizeValue(QuantizeValue(wr[j], p, scheme.max_code()), p);
      }
      const Eigen::VectorXf err = (xg * diff.transpose()).colwise().squaredNorm().transpose();
      for (int64_t r = 0; r < rows; ++r) {
        if (err[r] < best_err[r * ng + gi]) {
          best_err[r * ng + gi] = err[r];
          best_clip[r * ng + gi] = ratio;
        }
      }
    }
  }
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
