// QuantizeLlamaModel reads every weight as the file stores it: the written Q8_0 matrices against the
// input F16 matrices, row by row, both loaded mapped. An F16 FFN down projection wider than a column
// block (2112 columns) is what the decode loader would repack (llm/matmul/weight_matrix.h); a quantizer
// reading the repacked copy as rows would write permuted weights (relative error ~1.4, not ~0.004).
#include "llm/quantize/llama_quantizer.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "llm/gguf/ggml_types.h"
#include "llm/model/llama_model.h"
#include "llm/model/testing/test_models.h"

namespace tessel::quant {
namespace {

double RelativeError(const llm::WeightMatrix& q, const llm::WeightMatrix& w) {
  std::vector<float> a(w.cols), b(w.cols);
  double err = 0, norm = 0;
  for (int64_t r = 0; r < w.rows; ++r) {
    llm::DequantizeRow(q.type, q.row(r), a.data(), q.cols);
    llm::DequantizeRow(w.type, w.row(r), b.data(), w.cols);
    for (int64_t k = 0; k < w.cols; ++k) {
      err += (a[k] - b[k]) * (a[k] - b[k]);
      norm += b[k] * b[k];
    }
  }
  return std::sqrt(err / norm);
}

TEST(LlamaQuantizerTest, ReadsWideHalfWeightsInFileOrder) {
  llm::testing::SyntheticModelSpec spec;
  spec.type = llm::GgmlType::kF16;
  spec.ffn = 2112;  // wider than llm::kColumnBlockCols (2048)
  const std::string in = llm::testing::WriteSyntheticLlama(spec, "f16-wide.gguf");
  const std::string out = llm::testing::TempPath("f16-wide-w8.gguf");
  LlamaQuantOptions o;
  o.method = WeightMethod::kRtn;
  o.scheme.bits = 8;
  o.scheme.group = 32;
  auto report = QuantizeLlamaModel(in, {}, o, out, [](const std::string&) {});
  ASSERT_TRUE(report.ok()) << report.status();
  auto w = llm::LoadGgufModel(in, FileLoad::kMap);
  auto q = llm::LoadGgufModel(out, FileLoad::kMap);
  ASSERT_TRUE(w.ok() && q.ok());
  for (size_t l = 0; l < (*w)->weights().layers.size(); ++l) {
    const llm::LlamaLayerWeights& lw = (*w)->weights().layers[l];
    const llm::LlamaLayerWeights& lq = (*q)->weights().layers[l];
    EXPECT_EQ(lq.w_down.type, llm::GgmlType::kQ8_0);
    EXPECT_LT(RelativeError(lq.w_down, lw.w_down), 0.02) << "layer " << l << " ffn_down";
    EXPECT_LT(RelativeError(lq.w_gate, lw.w_gate), 0.02) << "layer " << l << " ffn_gate";
    EXPECT_LT(RelativeError(lq.wq, lw.wq), 0.02) << "layer " << l << " attn_q";
  }
}

// --type quantizes by the ggml type's own block (32 columns for Q8_0 and Q4_0), whatever the group
// option says: widths of 96 and 352, not multiples of the default group of 128, quantize, and every
// matrix comes back within the type's usual error of the f32 weights.
TEST(LlamaQuantizerTest, GgmlTypesIgnoreTheGroupOption) {
  llm::testing::SyntheticModelSpec spec;
  spec.dim = 96;
  spec.ffn = 352;
  const std::string in = llm::testing::WriteSyntheticLlama(spec, "w96.gguf");
  for (llm::GgmlType type : {llm::GgmlType::kQ8_0, llm::GgmlType::kQ4_0}) {
    LlamaQuantOptions o;
    o.method = WeightMethod::kRtn;
    o.ggml_type = type;
    ASSERT_EQ(o.scheme.group, 128);
    const std::string out = llm::testing::TempPath("w96-out.gguf");
    auto report = QuantizeLlamaModel(in, {}, o, out, [](const std::string&) {});
    ASSERT_TRUE(report.ok()) << report.status();
    auto w = llm::LoadGgufModel(in, FileLoad::kMap);
    auto q = llm::LoadGgufModel(out, FileLoad::kMap);
    ASSERT_TRUE(w.ok() && q.ok());
    const double bound = type == llm::GgmlType::kQ8_0 ? 0.02 : 0.2;
    for (size_t l = 0; l < (*w)->weights().layers.size(); ++l) {
      const llm::LlamaLayerWeights& lw = (*w)->weights().layers[l];
      const llm::LlamaLayerWeights& lq = (*q)->weights().layers[l];
      EXPECT_EQ(lq.w_down.type, type);
      EXPECT_LT(RelativeError(lq.w_down, lw.w_down), bound) << "layer " << l << " ffn_down";
      EXPECT_LT(RelativeError(lq.wq, lw.wq), bound) << "layer " << l << " attn_q";
    }
  }
}

// --type with calibration data: the inputs' importance matrix (llama.cpp's imatrix) guides the scale
// searches, and lowers the reconstruction error ||X (W - Q)^T||^2 / ||X W^T||^2 on those inputs, which the
// report measures independently of the quantizer. Q2_K and Q4_0 gained most on the small trained model
// (-20% and -13%).
TEST(LlamaQuantizerTest, ImportanceMatrixLowersTheOutputError) {
  llm::testing::SyntheticModelSpec spec;
  spec.dim = 256;
  spec.ffn = 512;
  spec.heads = 4;
  spec.kv_heads = 2;
  const std::string in = llm::testing::WriteSyntheticLlama(spec, "imatrix.gguf");
  std::vector<std::vector<int32_t>> calibration;
  for (int w = 0; w < 8; ++w) {
    std::vector<int32_t> window = {1};
    for (int t = 0; t < 31; ++t) window.push_back(259 + (7 * w + 13 * t * t) % 41);
    calibration.push_back(window);
  }
  for (llm::GgmlType type : {llm::GgmlType::kQ2_K, llm::GgmlType::kQ4_0}) {
    double mean[2] = {0, 0};
    for (bool use : {false, true}) {
      LlamaQuantOptions o;
      o.method = WeightMethod::kRtn;
      o.ggml_type = type;
      o.use_importance = use;
      auto report = QuantizeLlamaModel(in, calibration, o, llm::testing::TempPath("imatrix-out.gguf"),
                                       [](const std::string&) {});
      ASSERT_TRUE(report.ok()) << report.status();
      ASSERT_TRUE(report->output_errors);
      for (const LinearReport& r : report->linears) mean[use] += r.rel_error / report->linears.size();
    }
    std::printf("%s: mean output error %.4g without, %.4g with the importance matrix\n",
                llm::GgmlTypeName(type).data(), mean[0], mean[1]);
    EXPECT_LT(mean[1], mean[0]) << llm::GgmlTypeName(type);
  }
}

}  // namespace
}  // namespace tessel::quant
