#include "quant/weight/linear.h"

#include <algorithm>
#include <vector>

#include "Eigen/Dense"
#include "absl/status/statusor.h"
#include "kernels/gemm/gemm.h"
#include "quant/weight/parallel.h"

namespace tessel::quant {
namespace {

using RowMajorF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMapF = Eigen::Map<const RowMajorF>;
using StridedF = Eigen::Map<RowMajorF, 0, Eigen::OuterStride<>>;

constexpr int64_t kRows = 256;  // output columns per block

// Block b: y[:, 256 b, ...) against those rows of w, transposed for the GEMM.
void LinearBlock(const float* x, int64_t t, const float* w, int64_t rows, int64_t cols, float* y, int64_t b) {
  const int64_t r0 = b * kRows, n = std::min(kRows, rows - r0);
  std::vector<float> wt(cols * n);  // [cols, n]
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t c = 0; c < cols; ++c) wt[c * n + r] = w[(r0 + r) * cols + c];
  }
  absl::StatusOr<GemmF32> gemm = GemmF32::Create(t, n, cols);
  if (gemm.ok()) {
    gemm->Run(x, cols, wt.data(), n, y + r0, rows);
  } else {  // only for sizes GemmF32 rejects, which a model's shapes are not
    StridedF(y + r0, t, n, Eigen::OuterStride<>(rows)).noalias() =
        ConstMapF(x, t, cols) * ConstMapF(w + r0 * cols, n, cols).transpose();
  }
}

}  // namespace

void LinearF32(const float* x, int64_t t, const float* w, int64_t rows, int64_t cols, float* y) {
  ParallelFor((rows + kRows - 1) / kRows, [&](int64_t b) { LinearBlock(x, t, w, rows, cols, y, b); });
}

void LinearF32OneThread(const float* x, int64_t t, const float* w, int64_t rows, int64_t cols, float* y) {
  for (int64_t b = 0; b < (rows + kRows - 1) / kRows; ++b) LinearBlock(x, t, w, rows, cols, y, b);
}

}  // namespace tessel::quant
