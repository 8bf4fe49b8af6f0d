// Every GGUF packing of an RTN-quantized matrix decodes (through llm/gguf's DequantizeRow) to exactly
// the values the quantized matrix stands for.
#include "llm/quantize/ggml_tensor.h"

#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "quant/weight/rtn.h"

namespace tessel::quant {
namespace {

std::vector<float> RandomWeights(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.05f);
  std::vector<float> w(n);
  for (float& v : w) v = normal(rng);
  w[3] = 0.4f;  // an outlier, and an all-zero group
  for (int j = 64; j < 96; ++j) w[j] = 0.0f;
  return w;
}

TEST(GgmlTensorTest, PackingsDecodeToTheSameValues) {
  const int64_t rows = 3, cols = 256;
  const std::vector<float> w = RandomWeights(rows * cols, 2);
  for (int bits : {8, 4, 3}) {
    for (int group : {32, 64, 128}) {
      for (bool asym : {false, true}) {
        for (bool prefer_ggml : {false, true}) {
          const QuantScheme s{bits, group, asym};
          const QuantizedMatrix q = RtnQuantize(w.data(), rows, cols, s);
          absl::StatusOr<GgmlTensorData> t = ToGgmlTensor(q, prefer_ggml);
          if (bits == 8 && (group != 32 || asym)) {
            EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
            continue;
          }
          ASSERT_TRUE(t.ok()) << t.status();
          const size_t row_bytes = llm::GgmlRowBytes(t->type, cols);
          ASSERT_EQ(t->bytes.size(), rows * row_bytes);
          const std::vector<float> want = q.Dequantize();
          std::vector<float> got(cols);
          for (int64_t r = 0; r < rows; ++r) {
            llm::DequantizeRow(t->type, t->bytes.data() + r * row_bytes, got.data(), cols);
            for (int64_t c = 0; c < cols; ++c) {
              // Q4_1 stores the offset -zero * scale as a half: relative 2^-11 of it.
              const float tol = t->type == llm::GgmlType::kQ4_1 ? 16 * q.param(r, c).scale * 1e-3f : 0.0f;
              ASSERT_NEAR(got[c], want[r * cols + c], tol)
                  << s.ToString() << " as " << llm::GgmlTypeName(t->type) << " row " << r << " col " << c;
            }
          }
          if (bits == 4 && group == 32 && prefer_ggml) {
            EXPECT_EQ(t->type, asym ? llm::GgmlType::kQ4_1 : llm::GgmlType::kQ4_0);
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace tessel::quant
