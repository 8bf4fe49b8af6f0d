// fuse-conv-add: the ResNet residual through a pipeline string (alone and followed by
// fuse-conv-activation), declines with their reasons, and numeric equivalence with the reference
// interpreter (same float operations in the same order: tolerance 0).
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "passes/testing/pass_test_util.h"

namespace tessel {
namespace {

using ::testing::ElementsAre;
using testing::NormalizeIr;
using testing::RunPipelineOnIr;

void ExpectEquivalent(const testing::PipelineResult& r) {
  absl::Status eq = testing::CheckNumericallyEquivalent(*r.before, *r.after, 0, 0);
  EXPECT_TRUE(eq.ok()) << eq;
}

constexpr char kBasicBlock[] = R"(
graph @main {
  input %x : f32[N,2,4,4]
  const %w1 : f32[2,2,3,3] = [1.0, -2.0, 0.5, 3.0, 0.25, -1.0, 2.0, 1.5, -0.5, 0.75, -3.0, 1.0, 0.5, 0.5, -2.5, 1.25, 2.0, -1.0, 1.0, -2.0, 0.5, 3.0, 0.25, -1.0, 2.0, 1.5, -0.5, 0.75, -3.0, 1.0, 0.5, 0.5, -2.5, 1.25, 2.0, -1.0]
  const %b1 : f32[2] = [0.5, -0.25]
  const %w2 : f32[2,2,1,1] = [1.0, -0.5, 0.25, 2.0]
  %h = Conv "conv1" (%x, %w1, %b1) {pads = [1, 1, 1, 1]} : f32[N,2,4,4]
  %a = Relu "relu1" (%h) : f32[N,2,4,4]
  %y = Conv "conv2" (%a, %w2) : f32[N,2,4,4]
  %s = Add "add" (%y, %x) : f32[N,2,4,4]
  %z = Relu "relu2" (%s) : f32[N,2,4,4]
  output %z
}
)";

TEST(FuseConvAddTest, ResidualThenActivationGiveOneNodePerConv) {
  auto r = RunPipelineOnIr(kBasicBlock, "fuse-conv-add,fuse-conv-activation");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(NormalizeIr(r->after_text), NormalizeIr(R"(
graph @main {
  input %x : f32[N,2,4,4]
  const %w1 : f32[2,2,3,3] = [1.0, -2.0, 0.5, 3.0, 0.25, -1.0, 2.0, 1.5, -0.5, 0.75, -3.0, 1.0, 0.5, 0.5, -2.5, 1.25, 2.0, -1.0, 1.0, -2.0, 0.5, 3.0, 0.25, -1.0, 2.0, 1.5, -0.5, 0.75, -3.0, 1.0, 0.5, 0.5, -2.5, 1.25, 2.0, -1.0]
  const %b1 : f32[2] = [0.5, -0.25]
  const %w2 : f32[2,2,1,1] = [1.0, -0.5, 0.25, 2.0]
  %a = tessel.FusedConv "conv1" (%x, %w1, %b1) {activation = "relu", pads = [1, 1, 1, 1]} : f32[N,2,4,4]
  %z = tessel.FusedConv "conv2" (%a, %w2, _, %x) {activation = "relu"} : f32[N,2,4,4]
  output %z
}
)")) << r->after_text;
  EXPECT_EQ(r->stats["residuals-fused"], 1);
  EXPECT_EQ(r->stats["convs-fused"], 2);
  ExpectEquivalent(*r);
}

TEST(FuseConvAddTest, DownsampleBlockFusesOneOfTwoConvs) {
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[1,2,4,4]
  const %w1 : f32[3,2,1,1] = [1.0, -2.0, 0.5, 3.0, 0.25, -1.0]
  const %w2 : f32[3,2,1,1] = [2.0, 1.5, -0.5, 0.75, -3.0, 1.0]
  const %b2 : f32[3] = [0.5, 0.5, -2.5]
  %y1 = Conv "main" (%x, %w1) {strides = [2, 2]} : f32[1,3,2,2]
  %y2 = Conv "down" (%x, %w2, %b2) {strides = [2, 2]} : f32[1,3,2,2]
  %s = Add "add" (%y1, %y2) : f32[1,3,2,2]
  output %s
}
)", "fuse-conv-add");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->after->num_nodes(), 2);
  const Node* f = r->after->FindValue("s")->producer();
  EXPECT_EQ(f->name(), "main");
  EXPECT_EQ(f->input(3)->name(), "y2");
  ExpectEquivalent(*r);
}

TEST(FuseConvAddTest, DeclinesWithReasons) {
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[1,2,3,3]
  input %bias : f32[1,2,1,1]
  const %w : f32[2,2,1,1] = [1.0, -2.0, 0.5, 3.0]
  %y = Conv "conv_1" (%x, %w) : f32[1,2,3,3]
  %s = Add "broadcast" (%y, %bias) : f32[1,2,3,3]
  %y2 = Conv "conv_12" (%s, %w) : f32[1,2,3,3]
  %s2 = Add "a2" (%y2, %s) : f32[1,2,3,3]
  %m = Mul "m" (%y2, %s2) : f32[1,2,3,3]
  %f = tessel.FusedConv "conv_3" (%m, %w) {activation = "relu"} : f32[1,2,3,3]
  %s3 = Add "a3" (%f, %m) : f32[1,2,3,3]
  output %s3
}
)", "fuse-conv-add", /*explain=*/true);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->after->num_nodes(), 7);
  EXPECT_THAT(r->explanations,
              ElementsAre("conv_1 not fused with Add 'broadcast': the other operand has type f32[1,2,1,1], not "
                          "f32[1,2,3,3]",
                          "conv_12 not fused with Add 'a2': output has 2 users",
                          "conv_3 not fused with Add 'a3': it applies relu before the Add"));
}

}  // namespace
}  // namespace tessel
