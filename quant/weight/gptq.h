// GPTQ (Frantar et al., 2022): quantizes a linear layer's weights column by column, feeding each
// column's rounding error forward into the not yet quantized columns through the inverse Hessian of
// the layer's reconstruction loss, H = 2 X^T X over calibration inputs X.
#ifndef TESSEL_QUANT_WEIGHT_GPTQ_H_
#define TESSEL_QUANT_WEIGHT_GPTQ_H_

#include <cstdint>

#include "Eigen/Dense"
#include "absl/status/statusor.h"
#include "quant/weight/scheme.h"

namespace tessel::quant {

// Streams calibration inputs into H = (2 / N) sum_t x_t x_t^T with memory bounded by cols^2,
// whatever the number N of tokens.
class HessianAccumulator {
 public:
  explicit HessianAccumulator(int64_t cols) : sum_(Eigen::MatrixXd::Zero(cols, cols)) {}
  // x is [n, cols] row-major.
  void Add(const float* x, int64_t n);
  int64_t count() const { return count_; }
  Eigen::MatrixXd Hessian() const;

 private:
  Eigen::MatrixXd sum_;  // sum_t x_t x_t^T
  int64_t count_ = 0;
};

struct GptqOptions {
  double damp = 0.01;    // added to H's diagonal, as a fraction of its mean
  int block = 128;       // columns per lazy batch update
  bool act_order = true;  // visit columns by descending diag(H)
};

struct GptqStats {
  double damp_used = 0;  // the damping that made H positive definite (raised from options.damp if needed)
  int64_t dead_columns = 0;  // inputs that were always zero
};

// w is [rows, cols] row-major, h the [cols, cols] Hessian. With act_order, groups stay the contiguous
// column ranges of the stored format: every group's parameters are fixed from the weights before any
// error feedback ("static groups"), so the permuted visiting order needs no per-column group index.
// Without act_order a group's parameters come from its columns as updated when the group starts.
absl::StatusOr<QuantizedMatrix> GptqQuantize(const float* w, int64_t rows, int64_t cols, const Eigen::MatrixXd& h,
                                             const QuantScheme& scheme, const GptqOptions& options,
                                             GptqStats* stats = nullptr);

}  // namespace tessel::quant

#endif  // TESSEL_QUANT_WEIGHT_GPTQ_H_
