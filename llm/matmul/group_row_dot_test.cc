// Tessel's group-wise INT4/INT3 types through every decode kernel (portable and the selected one) and
// the prefill GEMM path, against the reference twin (dequantize + double accumulation), over one
// row, rows across the panel and GEMV steps, and one to several groups per row.
#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "support/thread_pool.h"
#include "kernels/rowdot/rowdot_quant.h"
#include "llm/matmul/matmul.h"
#include "llm/matmul/row_dot.h"

namespace tessel::llm {
namespace {

constexpr GgmlType kTypes[] = {
    GgmlType::kTesselI4G32, GgmlType::kTesselI4G32A, GgmlType::kTesselI4G64,  GgmlType::kTesselI4G64A,
    GgmlType::kTesselI4G128, GgmlType::kTesselI4G128A, GgmlType::kTesselI3G32, GgmlType::kTesselI3G32A,
    GgmlType::kTesselI3G64, GgmlType::kTesselI3G64A, GgmlType::kTesselI3G128, GgmlType::kTesselI3G128A,
};

class GroupRowDotTest : public ::testing::TestWithParam<GgmlType> {};

TEST_P(GroupRowDotTest, KernelsMatchReference) {
  const GgmlType type = GetParam();
  TesselGroupFormat f;
  ASSERT_TRUE(GetTesselGroupFormat(type, &f));
  std::mt19937 rng(11);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  ThreadPool pool(2);
  for (int64_t rows : {1, 7, 33}) {
    for (int64_t groups : {1, 3}) {
      const int64_t cols = groups * f.group;
      const size_t row_bytes = GgmlRowBytes(type, cols);
      std::vector<uint8_t> data(rows * row_bytes);
      std::vector<float> row(cols);
      for (int64_t r = 0; r < rows; ++r) {
        for (float& v : row) v = dist(rng) + (r % 3 == 0 ? 0.5f : 0.0f);  // offsets exercise the zero points
        QuantizeRow(type, row.data(), data.data() + r * row_bytes, cols);
      }
      const WeightMatrix w{type, rows, cols, data.data()};
      const int64_t n = 5;
      std::vector<float> x(n * cols);
      for (float& v : x) v = dist(rng);
      std::vector<float> want(n * rows), bound(rows, 0.0f);
      MatmulReference(w, x.data(), n, want.data());
      // Tolerance from sum |w||x| (float accumulation in another order).
      for (int64_t r = 0; r < rows; ++r) {
        DequantizeRow(type, w.row(r), row.data(), cols);
        for (int64_t k = 0; k < cols; ++k) bound[r] += std::fabs(row[k] * x[k]);
      }
      for (RowDotFn fn : {GroupRowDotPortable(f.bits, f.group, f.asymmetric), GetRowDot(type)}) {
        ASSERT_NE(fn, nullptr);
        std::vector<float> y(rows);
        fn(w.view(), x.data(), 0, rows, y.data());
        for (int64_t r = 0; r < rows; ++r) {
          EXPECT_NEAR(y[r], want[r], 2e-5f * bound[r] + 1e-6f) << GgmlTypeName(type) << " rows " << rows << " cols " << cols;
        }
      }
      Matmul mm(cols, &pool);
      std::vector<float> y(n * rows);
      mm.Run(w, x.data(), n, y.data());
      for (int64_t i = 0; i < n * rows; ++i) {
        EXPECT_NEAR(y[i], want[i], 1e-4f * (1.0f + std::fabs(want[i]))) << GgmlTypeName(type) << " prefill " << i;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllTypes, GroupRowDotTest, ::testing::ValuesIn(kTypes),
                         [](const ::testing::TestParamInfo<GgmlType>& info) {
                           return std::string(GgmlTypeName(info.param));
                         });

}  // namespace
}  // namespace tessel::llm
