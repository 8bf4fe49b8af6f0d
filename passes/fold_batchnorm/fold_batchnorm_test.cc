// fold-batchnorm: folded weights checked against hand-computed values, declines with their reasons,
// and numeric equivalence with the reference interpreter (|error| <= 1e-5 + 1e-5 * |before|).
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "passes/testing/pass_test_util.h"

namespace tessel {
namespace {

using ::testing::ElementsAre;
using testing::NormalizeIr;
using testing::RunPipelineOnIr;

void ExpectEquivalent(const testing::PipelineResult& r) {
  absl::Status eq = testing::CheckNumericallyEquivalent(*r.before, *r.after, 1e-5, 1e-5);
  EXPECT_TRUE(eq.ok()) << eq;
}

TEST(FoldBatchNormTest, FoldsIntoConvAndCreatesBias) {
  // epsilon 1: scale = gamma / sqrt(var + 1) = [2/2, 0.5/1] = [1, 0.5];
  // shift = beta - mean * scale = [1 - 0.5, -1 - 0] = [0.5, -1].
  // W' = W * scale per output channel = [1, 2, 1.5, 2]; bias' = 0 * scale + shift.
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[1,2,3,3]
  const %w : f32[2,2,1,1] = [1.0, 2.0, 3.0, 4.0]
  const %gamma : f32[2] = [2.0, 0.5]
  const %beta : f32[2] = [1.0, -1.0]
  const %mean : f32[2] = [0.5, 0.0]
  const %var : f32[2] = [3.0, 0.0]
  %y = Conv "c" (%x, %w) : f32[1,2,3,3]
  %z = BatchNormalization "bn" (%y, %gamma, %beta, %mean, %var) {epsilon = 1.0} : f32[1,2,3,3]
  output %z
}
)", "fold-batchnorm");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(NormalizeIr(r->after_text), NormalizeIr(R"(
graph @main {
  input %x : f32[1,2,3,3]
  const %w_bnfold : f32[2,2,1,1] = [1.0, 2.0, 1.5, 2.0]
  const %c.bias_bnfold : f32[2] = [0.5, -1.0]
  %z = Conv "c" (%x, %w_bnfold, %c.bias_bnfold) : f32[1,2,3,3]
  output %z
}
)")) << r->after_text;
  EXPECT_EQ(r->stats["batchnorms-folded"], 1);
  ExpectEquivalent(*r);
}

TEST(FoldBatchNormTest, FoldsExistingConvBias) {
  // Same statistics; bias' = b * scale + shift = [4 * 1 + 0.5, 2 * 0.5 - 1] = [4.5, 0].
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[1,2,4,4]
  const %w : f32[2,1,3,3] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, -1.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0, -8.0, -9.0]
  const %b : f32[2] = [4.0, 2.0]
  const %gamma : f32[2] = [2.0, 0.5]
  const %beta : f32[2] = [1.0, -1.0]
  const %mean : f32[2] = [0.5, 0.0]
  const %var : f32[2] = [3.0, 0.0]
  %y = Conv "c" (%x, %w, %b) {group = 2, pads = [1, 1, 1, 1]} : f32[1,2,4,4]
  %z = BatchNormalization "bn" (%y, %gamma, %beta, %mean, %var) {epsilon = 1.0} : f32[1,2,4,4]
  %o = Relu "r" (%z) : f32[1,2,4,4]
  output %o
}
)", "fold-batchnorm");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->after->FindValue("b_bnfold")->constant()->ToFloatVector(), ElementsAre(4.5f, 0.0f));
  EXPECT_EQ(r->after->num_nodes(), 2);
  ExpectEquivalent(*r);
}

TEST(FoldBatchNormTest, SharedConvOutputBecomesScaleShift) {
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[2,3,4,4]
  const %w : f32[3,3,1,1] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]
  const %gamma : f32[3] = [2.0, 0.5, 1.0]
  const %beta : f32[3] = [1.0, -1.0, 0.0]
  const %mean : f32[3] = [0.5, 0.0, 1.0]
  const %var : f32[3] = [3.0, 0.0, 0.0]
  %y = Conv "conv_12" (%x, %w) : f32[2,3,4,4]
  %z = BatchNormalization "bn" (%y, %gamma, %beta, %mean, %var) {epsilon = 1.0} : f32[2,3,4,4]
  %s = Add "s" (%z, %y) : f32[2,3,4,4]
  output %s
}
)", "fold-batchnorm", /*explain=*/true);
  ASSERT_TRUE(r.ok()) << r.status();
  // scale = [1, 0.5, 1], shift = [0.5, -1, -1], both [C, 1, 1].
  EXPECT_EQ(NormalizeIr(r->after_text), NormalizeIr(R"(
graph @main {
  input %x : f32[2,3,4,4]
  const %w : f32[3,3,1,1] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]
  const %bn/scale : f32[3,1,1] = [1.0, 0.5, 1.0]
  const %bn/shift : f32[3,1,1] = [0.5, -1.0, -1.0]
  %y = Conv "conv_12" (%x, %w) : f32[2,3,4,4]
  %bn/mul = Mul "bn/mul" (%y, %bn/scale) : f32[2,3,4,4]
  %z = Add "bn/add" (%bn/mul, %bn/shift) : f32[2,3,4,4]
  %s = Add "s" (%z, %y) : f32[2,3,4,4]
  output %s
}
)")) << r->after_text;
  EXPECT_EQ(r->stats["batchnorms-to-scale-shift"], 1);
  EXPECT_THAT(r->explanations,
              ElementsAre("BatchNormalization 'bn' not folded into Conv 'conv_12': output has 2 users; becomes a "
                          "scale and shift"));
  ExpectEquivalent(*r);
}

TEST(FoldBatchNormTest, StandaloneOnGraphInput) {
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[N,2,5]
  const %gamma : f32[2] = [2.0, 0.5]
  const %beta : f32[2] = [1.0, -1.0]
  const %mean : f32[2] = [0.5, 0.0]
  const %var : f32[2] = [3.0, 0.0]
  %z = BatchNormalization "bn" (%x, %gamma, %beta, %mean, %var) {epsilon = 1.0} : f32[N,2,5]
  output %z
}
)", "fold-batchnorm,dce");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->after->FindValue("bn/scale")->type().ToString(), "f32[2,1]");
  EXPECT_EQ(r->after->FindValue("z")->producer()->op_type(), "Add");
  ExpectEquivalent(*r);
}

TEST(FoldBatchNormTest, FoldsIntoGemmAndMatMul) {
  // Gemm with transB, alpha, beta and a [1, N] bias; a 2-D MatMul becomes a Gemm.
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %a : f32[4,3]
  const %w : f32[2,3] = [1.0, -2.0, 0.5, 3.0, 0.25, -1.0]
  const %c : f32[1,2] = [0.5, -0.25]
  const %m : f32[2,2] = [1.0, 2.0, -3.0, 0.5]
  const %gamma : f32[2] = [2.0, 0.5]
  const %beta : f32[2] = [1.0, -1.0]
  const %mean : f32[2] = [0.5, 0.0]
  const %var : f32[2] = [3.0, 0.0]
  %g = Gemm "g" (%a, %w, %c) {alpha = 0.5, beta = 2.0, transB = 1} : f32[4,2]
  %gb = BatchNormalization "bn1" (%g, %gamma, %beta, %mean, %var) {epsilon = 1.0} : f32[4,2]
  %mm = MatMul "mm" (%gb, %m) : f32[4,2]
  %mb = BatchNormalization "bn2" (%mm, %gamma, %beta, %mean, %var) {epsilon = 1.0} : f32[4,2]
  output %mb
}
)", "fold-batchnorm");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->stats["batchnorms-folded"], 2);
  ASSERT_EQ(r->after->num_nodes(), 2);
  EXPECT_EQ(r->after->FindValue("mb")->producer()->op_type(), "Gemm");
  // C' = beta * C * scale + shift = [2 * 0.5 * 1 + 0.5, 2 * -0.25 * 0.5 - 1] = [1.5, -1.25].
  EXPECT_THAT(r->after->FindValue("c_bnfold")->constant()->ToFloatVector(), ElementsAre(1.5f, -1.25f));
  ExpectEquivalent(*r);
}

TEST(FoldBatchNormTest, MatMulOverBatchedInputIsNotFolded) {
  // [B, S, K] x [K, N]: BatchNormalization normalizes dimension 1 (S), not the MatMul columns.
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %a : f32[2,2,3]
  const %m : f32[3,3] = [1.0, 2.0, -3.0, 0.5, 1.0, 1.0, 1.0, 1.0, 1.0]
  const %gamma : f32[2] = [2.0, 0.5]
  const %beta : f32[2] = [1.0, -1.0]
  const %mean : f32[2] = [0.5, 0.0]
  const %var : f32[2] = [3.0, 0.0]
  %mm = MatMul "mm" (%a, %m) : f32[2,2,3]
  %mb = BatchNormalization "bn" (%mm, %gamma, %beta, %mean, %var) {epsilon = 1.0} : f32[2,2,3]
  output %mb
}
)", "fold-batchnorm", /*explain=*/true);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->stats["batchnorms-to-scale-shift"], 1);
  EXPECT_THAT(r->explanations, ElementsAre(::testing::HasSubstr("operands are not both 2-D")));
  ExpectEquivalent(*r);
}

}  // namespace
}  // namespace tessel
