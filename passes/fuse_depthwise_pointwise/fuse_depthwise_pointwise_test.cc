// fuse-depthwise-pointwise: the MobileNetV2 block through the CNN fusion pipeline, declines with their
// reasons, and numeric equivalence with the reference interpreter (tolerance 0: the fused kernel runs
// the same float operations in the same order).
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
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

// Depthwise 3x3 over 4 channels (weights 0.1 * k), ReLU6, then `tail` (reading %d).
std::string DepthwiseThen(const std::string& tail) {
  std::string w;
  for (int k = 0; k < 36; ++k) absl::StrAppend(&w, k ? ", " : "", absl::StrFormat("%.2f", (k % 7 - 3) * 0.25));
  return absl::StrCat(R"(
graph @main {
  input %x : f32[1,4,5,5]
  const %wd : f32[4,1,3,3] = [)",
                      w, R"(]
  const %bd : f32[4] = [0.5, -0.25, 1.0, 0.0]
  const %wp : f32[4,4,1,1] = [1.0, -2.0, 0.5, 3.0, 0.25, -1.0, 2.0, 1.5, -0.5, 0.75, -3.0, 1.0, 0.5, 0.5, -2.5, 1.25]
  const %lo : f32[] = [0.0]
  const %hi : f32[] = [6.0]
  %c = Conv "dw" (%x, %wd, %bd) {group = 4, kernel_shape = [3, 3], pads = [1, 1, 1, 1]} : f32[1,4,5,5]
  %d = Clip "dw_relu6" (%c, %lo, %hi) : f32[1,4,5,5]
)",
                      tail, "\n}\n");
}

TEST(FuseDepthwisePointwiseTest, MobileNetBlockBecomesOneNode) {
  const std::string ir = DepthwiseThen(R"(
  %p = Conv "pw" (%d, %wp) : f32[1,4,5,5]
  %z = Add "add" (%x, %p) : f32[1,4,5,5]
  output %z)");
  auto r = RunPipelineOnIr(ir, "fuse-conv-add,fuse-conv-activation,fuse-depthwise-pointwise");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->after->num_nodes(), 1) << r->after_text;
  const std::string text = NormalizeIr(r->after_text);
  EXPECT_NE(text.find(NormalizeIr(R"(
  %z = tessel.DwPwConv "pw" (%x, %wd, %bd, %wp, _, %x) {dw_activation = "clip", dw_clip_max = 6.0, dw_clip_min = 0.0,
      group = 4, kernel_shape = [3, 3], pads = [1, 1, 1, 1]} : f32[1,4,5,5]
  output %z)")),
            std::string::npos)
      << r->after_text;
  EXPECT_EQ(r->stats["blocks-fused"], 1);
  ExpectEquivalent(*r);
}

TEST(FuseDepthwisePointwiseTest, KeepsPointwiseActivationAndBias) {
  auto r = RunPipelineOnIr(DepthwiseThen(R"(
  const %bp : f32[4] = [0.5, 0.5, -2.5, 1.25]
  %p = Conv "pw" (%d, %wp, %bp) : f32[1,4,5,5]
  %z = HardSwish "hs" (%p) : f32[1,4,5,5]
  output %z)"),
                           "fuse-conv-activation,fuse-depthwise-pointwise");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->after->num_nodes(), 1) << r->after_text;
  const Node* n = r->after->FindValue("z")->producer();
  EXPECT_EQ(n->op_type(), "DwPwConv");
  EXPECT_EQ(n->GetString("pw_activation", ""), "hardswish");
  EXPECT_EQ(n->num_inputs(), 5);
  ExpectEquivalent(*r);
}

TEST(FuseDepthwisePointwiseTest, DeclinesWithReasons) {
  auto r = RunPipelineOnIr(DepthwiseThen(R"(
  %p = Conv "pw" (%d, %wp) : f32[1,4,5,5]
  %q = Conv "pw2" (%d, %wp) : f32[1,4,5,5]
  %s = Add "s" (%p, %q) : f32[1,4,5,5]
  %t = Conv "full" (%s, %wd) {group = 4, pads = [1, 1, 1, 1]} : f32[1,4,5,5]
  %u = Conv "k3" (%t, %wd) {group = 4, pads = [1, 1, 1, 1]} : f32[1,4,5,5]
  output %u)"),
                           "fuse-conv-activation,fuse-depthwise-pointwise", /*explain=*/true);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->stats["blocks-fused"], 0);
  EXPECT_THAT(r->explanations, ElementsAre("dw not fused with Conv 'pw': output has 2 users",
                                           "dw not fused with Conv 'pw2': output has 2 users",
                                           "full not fused with Conv 'k3': k3 is not pointwise: kernel is not 1x1"));
}

// A 1x1 expansion from 2 channels with ReLU6, then the block of DepthwiseThen over its output.
std::string ExpansionThen(const std::string& tail) {
  std::string w;
  for (int k = 0; k < 36; ++k) absl::StrAppend(&w, k ? ", " : "", absl::StrFormat("%.2f", (k % 7 - 3) * 0.25));
  return absl::StrCat(R"(
graph @main {
  input %x : f32[1,2,5,5]
  const %we : f32[4,2,1,1] = [1.0, -0.5, 0.25, 2.0, -1.5, 0.75, 0.5, 1.0]
  const %be : f32[4] = [0.1, -0.2, 0.3, 0.0]
  const %wd : f32[4,1,3,3] = [)",
                      w, R"(]
  const %bd : f32[4] = [0.5, -0.25, 1.0, 0.0]
  const %wp : f32[2,4,1,1] = [1.0, -2.0, 0.5, 3.0, 0.25, -1.0, 2.0, 1.5]
  const %lo : f32[] = [0.0]
  const %hi : f32[] = [6.0]
  %e = Conv "exp" (%x, %we, %be) : f32[1,4,5,5]
  %f = Clip "exp_relu6" (%e, %lo, %hi) : f32[1,4,5,5]
  %c = Conv "dw" (%f, %wd, %bd) {group = 4, kernel_shape = [3, 3], pads = [1, 1, 1, 1]} : f32[1,4,5,5]
  %d = Clip "dw_relu6" (%c, %lo, %hi) : f32[1,4,5,5]
  %p = Conv "pw" (%d, %wp) : f32[1,2,5,5]
)",
                      tail, "\n}\n");
}

TEST(FuseExpansionTest, InvertedResidualBecomesOneChannelsLastNode) {
  auto r = RunPipelineOnIr(ExpansionThen(R"(
  %z = Add "add" (%x, %p) : f32[1,2,5,5]
  output %z)"),
                           "fuse-conv-add,fuse-conv-activation,fuse-depthwise-pointwise,layout,fuse-expansion{min-bytes=0},dce");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->stats["expansions-fused"], 1);
  int convs = 0;
  const Node* fused = nullptr;
  for (const auto& n : r->after->nodes()) {
    if (n->op_type() == "FusedConv" || n->op_type() == "Conv") ++convs;
    if (n->op_type() == "DwPwConv") fused = n.get();
  }
  EXPECT_EQ(convs, 0) << r->after_text;
  ASSERT_NE(fused, nullptr) << r->after_text;
  EXPECT_EQ(fused->num_inputs(), 8) << r->after_text;  // X, W_dw, B_dw, W_pw, _, R, W_exp, B_exp
  EXPECT_EQ(fused->GetString("exp_activation", ""), "clip");
  EXPECT_EQ(fused->GetString("layout", ""), "nhwc");
  ExpectEquivalent(*r);
}

TEST(FuseExpansionTest, DeclinesASharedExpansion) {
  auto r = RunPipelineOnIr(ExpansionThen(R"(
  %g = GlobalAveragePool "gap" (%f) : f32[1,4,1,1]
  output %p, %g)"),
                           "fuse-conv-activation,fuse-depthwise-pointwise,layout,fuse-expansion{min-bytes=0}", /*explain=*/true);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->stats["expansions-fused"], 0);
  EXPECT_THAT(r->explanations, ::testing::Contains("exp not fused into DwPwConv 'pw': output has 2 users"))
      << r->after_text;
}

}  // namespace
}  // namespace tessel
