// Streaming activation statistics with bounded memory: exact min/max plus a fixed-size histogram over
// [-R, R) whose R doubles (merging bin pairs) when a larger value arrives, so one pass over any number
// of calibration batches suffices. Range choosers: min/max, percentile, entropy (KL, as TensorRT) and
// MSE-optimal.
#ifndef TESSEL_QUANT_INT8_HISTOGRAM_H_
#define TESSEL_QUANT_INT8_HISTOGRAM_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tessel {

enum class CalibrationMethod { kMinMax, kPercentile, kEntropy, kMse };
absl::StatusOr<CalibrationMethod> ParseCalibrationMethod(absl::string_view name);
absl::string_view CalibrationMethodName(CalibrationMethod m);

class StreamingHistogram {
 public:
  static constexpr int kBins = 4096;  // 32 KiB per tensor

  void Add(const float* data, int64_t n);

  int64_t count() const { return count_; }
  float min() const { return min_; }
  float max() const { return max_; }
  double half_range() const { return half_range_; }
  const std::vector<int64_t>& bins() const { return bins_; }

  // The clipping range [lo, hi] a method picks. `levels_per_side` is the number of quantization steps
  // between 0 and the threshold (256 for non-negative u8 data, 128 otherwise) for entropy and MSE;
  // `percentile` (e.g. 99.99) for kPercentile.
  std::pair<float, float> Range(CalibrationMethod method, double percentile, int levels_per_side) const;

 private:
  // |x| histogram: kBins / 2 bins of width half_range_ / (kBins / 2).
  std::vector<double> Folded() const;
  int64_t count_ = 0;
  int64_t pending_zeros_ = 0;  // zeros seen before the first non-zero value fixed the range
  float min_ = 0, max_ = 0;
  double half_range_ = 0;
  std::vector<int64_t> bins_;
};

// TensorRT's entropy calibration on a folded |x| histogram: the number of bins (>= levels) to keep
// that minimizes KL(P || Q) between the clipped distribution and its `levels`-level quantization.
int EntropyThresholdBins(const std::vector<double>& folded, int levels);
// The number of bins whose upper edge minimizes the expected squared quantization error.
int MseThresholdBins(const std::vector<double>& folded, int levels);

}  // namespace tessel

#endif  // TESSEL_QUANT_INT8_HISTOGRAM_H_
