// fuse-conv-activation: every supported activation through a pipeline string, the option that limits
// them, declines with their reasons, and numeric equivalence with the reference interpreter (the fused
// kernel performs the same float operations, so the tolerance is 0).
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "passes/testing/pass_test_util.h"

namespace tessel {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::NormalizeIr;
using testing::RunPipelineOnIr;

// A 3x3 convolution with bias on [1, 2, 5, 5]; `tail` holds the activation statements reading %y and
// ends with `output`.
std::string ConvThen(const std::string& tail) {
  return absl::StrCat(R"(
graph @main {
  input %x : f32[1,2,5,5]
  const %w : f32[3,2,1,3] = [1.0, -2.0, 0.5, 3.0, 0.25, -1.0, 2.0, 1.5, -0.5, 0.75, -3.0, 1.0, 0.5, 0.5, -2.5, 1.25, 2.0, -1.0]
  const %b : f32[3] = [0.5, -0.25, 1.0]
  const %lo : f32[] = [0.0]
  const %hi : f32[] = [6.0]
  const %m1 : f32[] = [-1.0]
  const %p1 : f32[] = [1.0]
  %y = Conv "c" (%x, %w, %b) {pads = [0, 1, 0, 1]} : f32[1,3,5,5]
)",
                      tail, "\n}\n");
}

void ExpectEquivalent(const testing::PipelineResult& r) {
  absl::Status eq = testing::CheckNumericallyEquivalent(*r.before, *r.after, 0, 0);
  EXPECT_TRUE(eq.ok()) << eq;
}

TEST(FuseConvActivationTest, Relu6BecomesClampAttributes) {
  auto r = RunPipelineOnIr(ConvThen(R"(
  %z = Clip "r6" (%y, %lo, %hi) : f32[1,3,5,5]
  output %z)"),
                           "fuse-conv-activation");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(NormalizeIr(r->after_text), NormalizeIr(R"(
graph @main {
  input %x : f32[1,2,5,5]
  const %w : f32[3,2,1,3] = [1.0, -2.0, 0.5, 3.0, 0.25, -1.0, 2.0, 1.5, -0.5, 0.75, -3.0, 1.0, 0.5, 0.5, -2.5, 1.25, 2.0, -1.0]
  const %b : f32[3] = [0.5, -0.25, 1.0]
  %z = tessel.FusedConv "c" (%x, %w, %b) {activation = "clip", clip_max = 6.0, clip_min = 0.0, pads = [0, 1, 0, 1]} : f32[1,3,5,5]
  output %z
}
)")) << r->after_text;
  EXPECT_EQ(r->stats["convs-fused"], 1);
  ExpectEquivalent(*r);
}

struct ActivationCase {
  std::string name;
  std::string statements;  // reading %y, defining %z
  std::string attribute;
};

class EachActivation : public ::testing::TestWithParam<ActivationCase> {};

TEST_P(EachActivation, FusesIntoOneNode) {
  const ActivationCase& c = GetParam();
  auto r = RunPipelineOnIr(ConvThen(c.statements + "\n  output %z"), "fuse-conv-activation");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->after->num_nodes(), 1) << r->after_text;
  const Node* n = r->after->FindValue("z")->producer();
  EXPECT_EQ(n->op_type(), "FusedConv");
  EXPECT_EQ(n->GetString("activation", ""), c.attribute);
  ExpectEquivalent(*r);
}

INSTANTIATE_TEST_SUITE_P(
    Activations, EachActivation,
    ::testing::Values(ActivationCase{"relu", R"(%z = Relu "a" (%y) : f32[1,3,5,5])", "relu"},
                      ActivationCase{"clip", R"(%z = Clip "a" (%y, %m1, %p1) : f32[1,3,5,5])", "clip"},
                      ActivationCase{"clip_max_only", R"(%z = Clip "a" (%y, _, %p1) : f32[1,3,5,5])", "clip"},
                      ActivationCase{"hardswish", R"(%z = HardSwish "a" (%y) : f32[1,3,5,5])", "hardswish"},
                      ActivationCase{"sigmoid", R"(%z = Sigmoid "a" (%y) : f32[1,3,5,5])", "sigmoid"},
                      ActivationCase{"silu", R"(%s = Sigmoid "s" (%y) : f32[1,3,5,5]
  %z = Mul "a" (%s, %y) : f32[1,3,5,5])",
                                     "silu"}),
    [](const ::testing::TestParamInfo<ActivationCase>& info) { return info.param.name; });

TEST(FuseConvActivationTest, FusesAfterResidualFusedConv) {
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[1,2,4,4]
  input %res : f32[1,2,4,4]
  const %w : f32[2,2,1,1] = [1.0, -2.0, 0.5, 3.0]
  %y = tessel.FusedConv "c" (%x, %w, _, %res) : f32[1,2,4,4]
  %z = Relu "r" (%y) : f32[1,2,4,4]
  output %z
}
)", "fuse-conv-activation");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(NormalizeIr(r->after_text), NormalizeIr(R"(
graph @main {
  input %x : f32[1,2,4,4]
  input %res : f32[1,2,4,4]
  const %w : f32[2,2,1,1] = [1.0, -2.0, 0.5, 3.0]
  %z = tessel.FusedConv "c" (%x, %w, _, %res) {activation = "relu"} : f32[1,2,4,4]
  output %z
}
)")) << r->after_text;
  ExpectEquivalent(*r);
}

TEST(FuseConvActivationTest, DeclinesWithReasons) {
  auto r = RunPipelineOnIr(ConvThen(R"(
  %a = Relu "r" (%y) : f32[1,3,5,5]
  %z = Add "s" (%a, %y) : f32[1,3,5,5]
  output %z)"),
                           "fuse-conv-activation", /*explain=*/true);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->after->num_nodes(), 3);
  EXPECT_THAT(r->explanations, ElementsAre("c not fused with Relu 'r': output has 2 users"));

  r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[1,1,3,3]
  input %hi : f32[]
  const %w : f32[1,1,1,1] = [2.0]
  %y = Conv "c" (%x, %w) : f32[1,1,3,3]
  %z = Clip "k" (%y, _, %hi) : f32[1,1,3,3]
  %f = tessel.FusedConv "f" (%z, %w) {activation = "sigmoid"} : f32[1,1,3,3]
  %g = Relu "g" (%f) : f32[1,1,3,3]
  output %g
}
)", "fuse-conv-activation", /*explain=*/true);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->after->num_nodes(), 4);
  EXPECT_THAT(r->explanations, ElementsAre("c not fused with Clip 'k': clip bounds are not constants",
                                           "f not fused with Relu 'g': it already applies sigmoid"));
}

TEST(FuseConvActivationTest, OptionLimitsActivations) {
  const std::string ir = ConvThen(R"(
  const %w3 : f32[3,3,1,1] = [1.0, 0.5, -1.0, 2.0, 0.25, -0.5, 1.0, 1.0, 1.0]
  %a = Clip "r6" (%y, %lo, %hi) : f32[1,3,5,5]
  %c = Conv "c2" (%a, %w3, %b) : f32[1,3,5,5]
  %z = HardSwish "hs" (%c) : f32[1,3,5,5]
  output %z)");
  auto r = RunPipelineOnIr(ir, "fuse-conv-activation{activations=relu,relu6}", /*explain=*/true);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->stats["convs-fused"], 1);
  EXPECT_THAT(r->explanations, ElementsAre("c2 not fused with HardSwish 'hs': hardswish is not in the activations option"));
  // `clip` covers Clip(0, 6) as well.
  r = RunPipelineOnIr(ir, "fuse-conv-activation{activations=clip,hardswish}");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->stats["convs-fused"], 2);
  ExpectEquivalent(*r);

  auto bad = RunPipelineOnIr(ir, "fuse-conv-activation{activations=relu,gelu}");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("unknown activation 'gelu'"));
}

}  // namespace
}  // namespace tessel
