// quantize-int8 on residual adds: a ReLU that alone reads the sum folds into QAdd's output clamp, a
// symbolic batch does not keep the add f32, and the int8 graph stays within a few quantization steps of
// the f32 one on the reference interpreter.
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "passes/testing/pass_test_util.h"

namespace tessel {
namespace {

using testing::CheckNumericallyEquivalent;
using testing::RunPipelineOnIr;

// Inputs in [-1, 1] (the equivalence check's random range), their sum in [-2, 2], the ReLU in [0, 2].
std::string WriteTable() {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/table.txt";
  std::ofstream(path) << "x 0.00784313772 128 u8\n"
                         "y 0.00784313772 128 u8\n"
                         "s 0.0156862754 128 u8\n"
                         "z 0.00784313772 0 u8\n";
  return path;
}

int CountOps(const Graph& g, const std::string& op) {
  int n = 0;
  for (const auto& node : g.nodes()) n += node->op_type() == op;
  return n;
}

// One output step (2/255) plus both inputs' rounding and saturation at +1.
constexpr double kTolerance = 0.03;

TEST(QuantizeInt8Test, ReluAfterAddFoldsIntoQAddClamp) {
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[N,8]
  input %y : f32[N,8]
  %s = Add "add" (%x, %y) : f32[N,8]
  %z = Relu "relu" (%s) : f32[N,8]
  output %z
}
)", "quantize-int8{table=" + WriteTable() + "}");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(CountOps(*r->after, "Relu"), 0) << r->after_text;
  const Node* q = r->after->FindNode("add");
  ASSERT_NE(q, nullptr) << r->after_text;
  EXPECT_EQ(q->op_type(), "QAdd");
  EXPECT_EQ(q->GetInt("y_zero_point", -1), 0);
  EXPECT_EQ(q->GetInt("act_min", -1), 0);  // the ReLU: the output zero point
  EXPECT_EQ(q->GetInt("act_max", -1), 255);
  EXPECT_EQ(r->stats["relus-folded"], 1);
  // Only the graph output leaves integer: two inputs quantized, one output dequantized.
  EXPECT_EQ(CountOps(*r->after, "QuantizeLinear"), 2);
  EXPECT_EQ(CountOps(*r->after, "DequantizeLinear"), 1);
  absl::Status eq = CheckNumericallyEquivalent(*r->before, *r->after, kTolerance, 0);
  EXPECT_TRUE(eq.ok()) << eq;
}

TEST(QuantizeInt8Test, ReluStaysWhenTheSumHasAnotherReader) {
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[N,8]
  input %y : f32[N,8]
  %s = Add "add" (%x, %y) : f32[N,8]
  %z = Relu "relu" (%s) : f32[N,8]
  output %z, %s
}
)", "quantize-int8{table=" + WriteTable() + "}");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(CountOps(*r->after, "Relu"), 1) << r->after_text;
  const Node* q = r->after->FindNode("add");
  ASSERT_NE(q, nullptr) << r->after_text;
  EXPECT_EQ(q->op_type(), "QAdd");
  EXPECT_EQ(q->GetInt("y_zero_point", -1), 128);
  EXPECT_EQ(q->GetInt("act_min", -1), 0);  // the u8 range: no clamp
  EXPECT_EQ(r->stats["relus-folded"], 0);
  absl::Status eq = CheckNumericallyEquivalent(*r->before, *r->after, kTolerance, 0);
  EXPECT_TRUE(eq.ok()) << eq;
}

TEST(QuantizeInt8Test, AddOfDifferentShapesStaysF32) {
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[N,8]
  input %y : f32[1,8]
  %s = Add "add" (%x, %y) : f32[N,8]
  output %s
}
)", "quantize-int8{table=" + WriteTable() + "}", /*explain=*/true);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(CountOps(*r->after, "QAdd"), 0) << r->after_text;
  ASSERT_EQ(r->explanations.size(), 1u);
  EXPECT_EQ(r->explanations[0], "add kept f32: QAdd needs two computed inputs of the same shape");
}

// weight-bits=7: each channel's weights scaled to [-64, 64] (its largest magnitude at 64), the product
// still within a few steps of f32; the default scales to [-127, 127]; other values are refused.
TEST(QuantizeInt8Test, SevenBitWeightsSpanMinus64To64) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/gemm_table.txt";
  std::ofstream(path) << "x 0.00784313772 128 u8\n"
                         "y 0.0235294122 128 u8\n";
  const std::string ir = R"(
graph @main {
  input %x : f32[2,4]
  const %w : f32[3,4] = [0.5, -0.25, 0.125, 1.0, -0.75, 0.3, 0.2, -0.1, 0.05, 0.6, -0.9, 0.45]
  const %b : f32[3] = [0.1, -0.2, 0.05]
  %y = Gemm "fc" (%x, %w, %b) {transB=1} : f32[2,3]
  output %y
}
)";
  for (int bits : {7, 8}) {
    auto r = RunPipelineOnIr(ir, "quantize-int8{table=" + path + ",weight-bits=" + std::to_string(bits) + "}");
    ASSERT_TRUE(r.ok()) << r.status();
    const Node* q = r->after->FindNode("fc");
    ASSERT_NE(q, nullptr) << r->after_text;
    ASSERT_EQ(q->op_type(), "QGemm") << r->after_text;
    const Tensor& w = *q->input(1)->constant();
    ASSERT_EQ(w.dtype(), DType::kI8);
    const int want_max = bits == 7 ? 64 : 127;
    for (int64_t c = 0; c < 3; ++c) {
      int most = 0;
      for (int64_t k = 0; k < 4; ++k) most = std::max(most, std::abs(int{w.data<int8_t>()[c * 4 + k]}));
      EXPECT_EQ(most, want_max) << "channel " << c << ", weight-bits=" << bits;
    }
    absl::Status eq = CheckNumericallyEquivalent(*r->before, *r->after, 0.08, 0);
    EXPECT_TRUE(eq.ok()) << "weight-bits=" << bits << ": " << eq;
  }
  auto bad = RunPipelineOnIr(ir, "quantize-int8{table=" + path + ",weight-bits=6}");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message()).find("weight-bits=6"), std::string::npos) << bad.status();
}

}  // namespace
}  // namespace tessel
