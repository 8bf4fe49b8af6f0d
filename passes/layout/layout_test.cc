// layout: NCHW chains through a pipeline string become channels-last with Transposes only at the
// boundaries, weights and broadcast constants permuted, Transpose pairs cancelled; numeric equivalence
// with the reference interpreter (the channels-last kernels transpose around the same float
// computation, so the tolerance is 0).
#include <string>

#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "passes/testing/pass_test_util.h"

namespace tessel {
namespace {

using testing::NormalizeIr;
using testing::RunPipelineOnIr;

void ExpectEquivalent(const testing::PipelineResult& r) {
  absl::Status eq = testing::CheckNumericallyEquivalent(*r.before, *r.after, 0, 0);
  EXPECT_TRUE(eq.ok()) << eq;
}

TEST(LayoutTest, ClassifierChainHasOneTranspose) {
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[N,3,8,8]
  const %w : f32[2,3,1,1] = [1.0, -2.0, 0.5, 3.0, 0.25, -1.0]
  const %fc : f32[2,4] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
  %c = Conv "conv" (%x, %w) {strides = [2, 2]} : f32[N,2,4,4]
  %r = Relu "relu" (%c) : f32[N,2,4,4]
  %p = MaxPool "pool" (%r) {kernel_shape = [2, 2], strides = [2, 2]} : f32[N,2,2,2]
  %g = GlobalAveragePool "gap" (%p) : f32[N,2,1,1]
  %f = Flatten "flatten" (%g) : f32[N,2]
  %y = Gemm "fc" (%f, %fc) : f32[N,4]
  output %y
}
)", "layout");
  ASSERT_TRUE(r.ok()) << r.status();
  // A 1x1 kernel reads the same in [M, C, 1, 1] and [M, 1, 1, C].
  EXPECT_EQ(NormalizeIr(r->after_text), NormalizeIr(R"(
graph @main {
  input %x : f32[N,3,8,8]
  const %fc : f32[2,4] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
  const %w_nhwc : f32[2,1,1,3] = [1.0, -2.0, 0.5, 3.0, 0.25, -1.0]
  %x/to_nhwc = Transpose "x/to_nhwc" (%x) {perm = [0, 2, 3, 1]} : f32[N,8,8,3]@nhwc
  %c = tessel.FusedConv "conv" (%x/to_nhwc, %w_nhwc) {layout = "nhwc", strides = [2, 2]} : f32[N,4,4,2]@nhwc
  %r = Relu "relu" (%c) : f32[N,4,4,2]@nhwc
  %p = tessel.MaxPool "pool" (%r) {kernel_shape = [2, 2], layout = "nhwc", strides = [2, 2]} : f32[N,2,2,2]@nhwc
  %g = tessel.GlobalAveragePool "gap" (%p) {layout = "nhwc"} : f32[N,1,1,2]@nhwc
  %f = Flatten "flatten" (%g) : f32[N,2]
  %y = Gemm "fc" (%f, %fc) : f32[N,4]
  output %y
}
)")) << r->after_text;
  EXPECT_EQ(r->stats["nodes-converted"], 4);
  EXPECT_EQ(r->stats["transposes-inserted"], 1);
  EXPECT_EQ(r->stats["transposes-avoided"], 1);
  ExpectEquivalent(*r);
}

TEST(LayoutTest, EightBitMaxPoolStaysNchw) {
  // The channels-last pooling kernels are floating point: a u8 MaxPool keeps its layout.
  const char* ir = R"(
graph @main {
  input %x : u8[1,2,4,4]
  %p = MaxPool "pool" (%x) {kernel_shape = [2, 2], strides = [2, 2]} : u8[1,2,2,2]
  output %p
}
)";
  auto r = RunPipelineOnIr(ir, "layout");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->stats["nodes-converted"], 0);
  EXPECT_EQ(NormalizeIr(r->after_text), NormalizeIr(ir)) << r->after_text;
}

TEST(LayoutTest, WeightsPermutedAndOutputTransposedBack) {
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[1,2,5,5]
  input %res : f32[1,2,5,5]
  const %w : f32[2,2,1,2] = [1.0, -2.0, 0.5, 3.0, 0.25, -1.0, 2.0, 1.5]
  const %b : f32[2] = [0.5, -0.5]
  const %scale : f32[2,1,1] = [2.0, -1.0]
  %c = tessel.FusedConv "conv" (%x, %w, %b, %res) {activation = "relu", pads = [0, 0, 0, 1]} : f32[1,2,5,5]
  %m = Mul "scale" (%c, %scale) : f32[1,2,5,5]
  output %m
}
)", "layout");
  ASSERT_TRUE(r.ok()) << r.status();
  // W[m, c, 0, k] -> W[m, 0, k, c]; scale [2, 1, 1] -> [1, 1, 1, 2].
  EXPECT_EQ(NormalizeIr(r->after_text), NormalizeIr(R"(
graph @main {
  input %x : f32[1,2,5,5]
  input %res : f32[1,2,5,5]
  const %b : f32[2] = [0.5, -0.5]
  const %w_nhwc : f32[2,1,2,2] = [1.0, 0.5, -2.0, 3.0, 0.25, 2.0, -1.0, 1.5]
  const %scale_nhwc : f32[1,1,1,2] = [2.0, -1.0]
  %x/to_nhwc = Transpose "x/to_nhwc" (%x) {perm = [0, 2, 3, 1]} : f32[1,5,5,2]@nhwc
  %res/to_nhwc = Transpose "res/to_nhwc" (%res) {perm = [0, 2, 3, 1]} : f32[1,5,5,2]@nhwc
  %c = tessel.FusedConv "conv" (%x/to_nhwc, %w_nhwc, %b, %res/to_nhwc) {activation = "relu", layout = "nhwc", pads = [0, 0, 0, 1]} : f32[1,5,5,2]@nhwc
  %m_nhwc = Mul "scale" (%c, %scale_nhwc) : f32[1,5,5,2]@nhwc
  %m = Transpose "m/to_nchw" (%m_nhwc) {perm = [0, 3, 1, 2]} : f32[1,2,5,5]
  output %m
}
)")) << r->after_text;
  ExpectEquivalent(*r);
}

TEST(LayoutTest, TransposePairsCancel) {
  // Data already channels-last around an NCHW Conv: both boundary Transposes cancel.
  std::string w = "[";
  for (int i = 0; i < 108; ++i) w += absl::StrFormat("%.3f%s", (i % 11 - 5) * 0.125, i < 107 ? ", " : "]");
  std::string ir = R"(
graph @main {
  input %x : f32[1,6,6,3]
  const %w : f32[4,3,3,3] = )" + w + R"(
  %a = Transpose "in" (%x) {perm = [0, 3, 1, 2]} : f32[1,3,6,6]
  %c = Conv "conv" (%a, %w) {pads = [1, 1, 1, 1]} : f32[1,4,6,6]
  %p = AveragePool "pool" (%c) {kernel_shape = [3, 3], strides = [2, 2]} : f32[1,4,2,2]
  %y = Transpose "out" (%p) {perm = [0, 2, 3, 1]} : f32[1,2,2,4]
  output %y
}
)";
  auto r = RunPipelineOnIr(ir, "layout,dce");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->after->num_nodes(), 2) << r->after_text;
  EXPECT_EQ(r->after->FindValue("y")->producer()->op_type(), "AveragePool");
  EXPECT_EQ(r->after->FindValue("y")->type().layout, Layout::kNHWC);
  EXPECT_EQ(r->stats["transposes-cancelled"], 2);
  ExpectEquivalent(*r);
}

TEST(LayoutTest, DwPwConvAndResidualAdd) {
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[1,3,4,4]
  const %wd : f32[3,1,3,3] = [1.0, -2.0, 0.5, 3.0, 0.25, -1.0, 2.0, 1.5, -0.5, 0.75, -3.0, 1.0, 0.5, 0.5, -2.5, 1.25, 2.0, -1.0, 1.0, -2.0, 0.5, 3.0, 0.25, -1.0, 2.0, 1.5, -0.5]
  const %wp : f32[3,3,1,1] = [0.75, -3.0, 1.0, 0.5, 0.5, -2.5, 1.25, 2.0, -1.0]
  const %w1 : f32[3,3,1,1] = [1.0, 0.5, -1.0, 2.0, 0.25, -0.5, 1.0, 1.0, 1.0]
  %c = tessel.FusedConv "stem" (%x, %w1) {activation = "relu"} : f32[1,3,4,4]
  %d = tessel.DwPwConv "block" (%c, %wd, _, %wp) {dw_activation = "clip", dw_clip_max = 6.0, dw_clip_min = 0.0, group = 3, pads = [1, 1, 1, 1]} : f32[1,3,4,4]
  %s = Add "add" (%d, %c) : f32[1,3,4,4]
  %e = Sigmoid "act" (%s) : f32[1,3,4,4]
  output %e
}
)", "layout");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->stats["nodes-converted"], 4);
  EXPECT_EQ(r->stats["transposes-inserted"], 2);
  EXPECT_EQ(r->after->FindValue("d")->producer()->GetString("layout", ""), "nhwc");
  EXPECT_EQ(r->after->FindValue("s")->type().layout, Layout::kNHWC);
  ExpectEquivalent(*r);
}

// A dense block's channel Concat (DenseNet) of two NHWC convolutions runs channels-last on axis 3, with
// the batch norm's broadcast Mul / Add and the ReLU after it: one Transpose in, one out, none between.
TEST(LayoutTest, ChannelConcatOfConvolutionsStaysChannelsLast) {
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[1,2,3,3]
  const %w1 : f32[1,2,1,1] = [1.0, -2.0]
  const %w2 : f32[2,2,1,1] = [0.5, 3.0, 0.25, -1.0]
  const %s : f32[3,1,1] = [2.0, -1.0, 0.5]
  const %t : f32[3,1,1] = [0.25, 0.5, -0.75]
  %a = Conv "conv_a" (%x, %w1) : f32[1,1,3,3]
  %b = Conv "conv_b" (%x, %w2) : f32[1,2,3,3]
  %c = Concat "concat" (%x, %a, %b) {axis = 1} : f32[1,5,3,3]
  %d = Concat "concat2" (%a, %b) {axis = -3} : f32[1,3,3,3]
  %m = Mul "bn_mul" (%d, %s) : f32[1,3,3,3]
  %n = Add "bn_add" (%m, %t) : f32[1,3,3,3]
  %y = Relu "relu" (%n) : f32[1,3,3,3]
  output %c, %y
}
)", "layout");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->after_text, ::testing::HasSubstr("Concat \"concat2\" (%a, %b) {axis = 3}"));
  EXPECT_THAT(r->after_text, ::testing::HasSubstr("{axis = 3} : f32[1,3,3,5]@nhwc"));
  // x in; c and y back out (c's reader is the graph output).
  EXPECT_EQ(r->stats["transposes-inserted"], 3);
  EXPECT_EQ(r->stats["nodes-converted"], 7);
  ExpectEquivalent(*r);
}

// An InstanceNormalization between channels-last convolutions (RAFT's encoders) becomes
// tessel.InstanceNorm with layout nhwc: no Transposes between the convolutions.
TEST(LayoutTest, InstanceNormBetweenConvolutionsStaysChannelsLast) {
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[1,2,3,3]
  const %w1 : f32[3,2,1,1] = [1.0, -2.0, 0.5, 3.0, 0.25, -1.0]
  const %w2 : f32[2,3,1,1] = [0.5, 3.0, 0.25, -1.0, 2.0, 1.5]
  const %s : f32[3] = [2.0, -1.0, 0.5]
  const %b : f32[3] = [0.25, 0.5, -0.75]
  %a = Conv "conv_a" (%x, %w1) : f32[1,3,3,3]
  %n = InstanceNormalization "norm" (%a, %s, %b) {epsilon = 0.001} : f32[1,3,3,3]
  %r = Relu "relu" (%n) : f32[1,3,3,3]
  %y = Conv "conv_b" (%r, %w2) : f32[1,2,3,3]
  output %y
}
)", "layout");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->after_text, ::testing::HasSubstr("tessel.InstanceNorm \"norm\""));
  EXPECT_THAT(r->after_text, ::testing::HasSubstr("layout = \"nhwc\""));
  EXPECT_EQ(r->stats["nodes-converted"], 4);
  EXPECT_EQ(r->stats["transposes-inserted"], 2);  // x in, y out
  ExpectEquivalent(*r);
}

}  // namespace
}  // namespace tessel
