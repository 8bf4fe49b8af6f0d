// Streaming histograms and the calibration range choosers.
#include "quant/int8/histogram.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace tessel {

absl::StatusOr<CalibrationMethod> ParseCalibrationMethod(absl::string_view name) {
  if (name == "minmax") return CalibrationMethod::kMinMax;
  if (name == "percentile") return CalibrationMethod::kPercentile;
  if (name == "entropy") return CalibrationMethod::kEntropy;
  if (name == "mse") return CalibrationMethod::kMse;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown calibration method '", name, "'; expected entropy, percentile, minmax or mse"));
}

absl::string_view CalibrationMethodName(CalibrationMethod m) {
  switch (m) {
    case CalibrationMethod::kMinMax:
      return "minmax";
    case CalibrationMethod::kPercentile:
      return "percentile";
    case CalibrationMethod::kEntropy:
      return "entropy";
    case CalibrationMethod::kMse:
      return "mse";
  }
  return "?";
}

void StreamingHistogram::Add(const float* data, int64_t n) {
  if (n <= 0) return;
  float lo = data[0], hi = data[0], amax = 0;
  for (int64_t i = 0; i < n; ++i) {
    lo = std::min(lo, data[i]);
    hi = std::max(hi, data[i]);
    amax = std::max(amax, std::fabs(data[i]));
  }
  if (count_ == 0) min_ = lo, max_ = hi;
  min_ = std::min(min_, lo);
  max_ = std::max(max_, hi);
  count_ += n;
  if (half_range_ == 0) {
    if (amax == 0) {
      pending_zeros_ += n;
      return;
    }
    half_range_ = std::exp2(std::ceil(std::log2(amax)));
    bins_.assign(kBins, 0);
    bins_[kBins / 2] += pending_zeros_;
  }
  while (amax >= half_range_) {
    // New bin N/4 + i/2 covers old bin i: the range doubles around 0 and bin pairs merge.
    std::vector<int64_t> merged(kBins, 0);
    for (int i = 0; i < kBins; ++i) merged[kBins / 4 + i / 2] += bins_[i];
    bins_.swap(merged);
    half_range_ *= 2;
  }
  const double per_unit = kBins / (2 * half_range_);
  for (int64_t i = 0; i < n; ++i) {
    const int b = static_cast<int>((data[i] + half_range_) * per_unit);
    ++bins_[std::min(kBins - 1, std::max(0, b))];
  }
}

std::vector<double> StreamingHistogram::Folded() const {
  std::vector<double> f(kBins / 2, 0.0);
  if (bins_.empty()) return f;
  for (int k = 0; k < kBins / 2; ++k) f[k] = static_cast<double>(bins_[kBins / 2 + k] + bins_[kBins / 2 - 1 - k]);
  return f;
}

int EntropyThresholdBins(const std::vector<double>& folded, int levels) {
  const int nbins = static_cast<int>(folded.size());
  int last = nbins;
  while (last > 0 && folded[last - 1] == 0) --last;
  if (last <= levels) return std::max(last, 1);
  double best_kl = std::numeric_limits<double>::infinity();
  int best = last;
  std::vector<double> p, q;
  for (int i = levels; i <= last; ++i) {
    // P: the first i bins with the clipped tail added to the last one.
    p.assign(folded.begin(), folded.begin() + i);
    double outliers = 0;
    for (int k = i; k < last; ++k) outliers += folded[k];
    p[i - 1] += outliers;
    // Q: the first i bins merged into `levels` buckets, each spread evenly over its non-empty bins.
    q.assign(i, 0.0);
    for (int j = 0; j < levels; ++j) {
      const int start = static_cast<int>(static_cast<int64_t>(j) * i / levels);
      const int stop = static_cast<int>(static_cast<int64_t>(j + 1) * i / levels);
      double sum = 0;
      int nonzero = 0;
      for (int k = start; k < stop; ++k) {
        sum += folded[k];
        nonzero += folded[k] != 0;
      }
      for (int k = start; k < stop; ++k) q[k] = folded[k] != 0 ? sum / nonzero : 0;
    }
    double p_sum = 0, q_sum = 0;
    for (int k = 0; k < i; ++k) p_sum += p[k], q_sum += q[k];
    double kl = 0;
    for (int k = 0; k < i; ++k) {
      if (p[k] == 0) continue;
      const double pk = p[k] / p_sum;
      // A bin that P has and Q lacks (the clipped tail landing in an empty bin) costs as TensorRT's
      // smoothing makes it: a small epsilon instead of infinity.
      const double qk = q[k] > 0 ? q[k] / q_sum : 1e-10;
      kl += pk * std::log(pk / qk);
    }
    if (kl < best_kl) best_kl = kl, best = i;
  }
  return best;
}

int MseThresholdBins(const std::vector<double>& folded, int levels) {
  const int nbins = static_cast<int>(folded.size());
  int last = nbins;
  while (last > 0 && folded[last - 1] == 0) --last;
  if (last == 0) return 1;
  double best_err = std::numeric_limits<double>::infinity();
  int best = last;
  // Bin k's values sit at its centre k + 0.5 (in bin widths); a threshold of i bins has step i / levels.
  for (int i = 1; i <= last; ++i) {
    const double step = static_cast<double>(i) / levels;
    double err = 0;
    for (int k = 0; k < last; ++k) {
      const double c = k + 0.5;
      err += folded[k] * (c < i ? step * step / 12.0 : (c - i) * (c - i));
    }
    if (err < best_err) best_err = err, best = i;
  }
  return best;
}

std::pair<float, float> StreamingHistogram::Range(CalibrationMethod method, double percentile,
                                                  int levels_per_side) const {
  if (method == CalibrationMethod::kMinMax || bins_.empty()) return {min_, max_};
  const double width = 2 * half_range_ / kBins;
  if (method == CalibrationMethod::kPercentile) {
    const double total = static_cast<double>(count_);
    const double upper = total * percentile / 100.0, lower = total * (1.0 - percentile / 100.0);
    double cum = 0;
    float lo = min_, hi = max_;
    bool have_lo = false;
    for (int b = 0; b < kBins; ++b) {
      cum += static_cast<double>(bins_[b]);
      if (!have_lo && cum > lower) lo = static_cast<float>(-half_range_ + b * width), have_lo = true;
      if (cum >= upper) {
        hi = static_cast<float>(-half_range_ + (b + 1) * width);
        break;
      }
    }
    return {std::max(lo, min_), std::min(hi, max_)};
  }
  const std::vector<double> folded = Folded();
  const int i = method == CalibrationMethod::kEntropy ? EntropyThresholdBins(folded, levels_per_side)
                                                       : MseThresholdBins(folded, levels_per_side);
  const float t = static_cast<float>(i * width);
  return {std::max(min_, -t), std::min(max_, t)};
}

}  // namespace tessel
