// fuse-rmsnorm: the exported form and its variants through a pipeline string, compared with expected IR,
// with numeric equivalence (reference interpreter, before vs after, 1e-5 relative + 1e-6 absolute: the
// fused kernel keeps the root mean square in double), and the reasons it declines.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "passes/testing/pass_test_util.h"

namespace tessel {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using testing::NormalizeIr;
using testing::RunPipelineOnIr;

int CountOps(const Graph& g, const std::string& op) {
  int n = 0;
  for (const auto& node : g.nodes()) n += node->op_type() == op;
  return n;
}

TEST(FuseRMSNormTest, FusesTheExportedForm) {
  // x * (1 / sqrt(mean(x^2) + eps)) * weight, exactly as torch.onnx exports torch.rsqrt at opset 17.
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[2,3,8]
  const %w : f32[8] = [0.5, 1.0, 1.5, 2.0, -0.5, -1.0, 0.25, 3.0]
  const %two : f32[] = [2.0]
  const %axes : i64[1] = [-1]
  const %eps : f32[] = [1e-05]
  const %one : f32[] = [1.0]
  %p = Pow "/norm/Pow" (%x, %two) : f32[2,3,8]
  %m = ReduceMean "/norm/ReduceMean" (%p, %axes) {keepdims = 1} : f32[2,3,1]
  %a = Add "/norm/Add" (%m, %eps) : f32[2,3,1]
  %s = Sqrt "/norm/Sqrt" (%a) : f32[2,3,1]
  %r = Div "/norm/Div" (%one, %s) : f32[2,3,1]
  %n = Mul "/norm/Mul" (%x, %r) : f32[2,3,8]
  %y = Mul "/norm/Mul_1" (%n, %w) : f32[2,3,8]
  %z = Relu "relu" (%y) : f32[2,3,8]
  output %z
}
)", "fuse-rmsnorm");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(NormalizeIr(r->after_text), NormalizeIr(R"(
graph @main {
  input %x : f32[2,3,8]
  const %w : f32[8] = [0.5, 1.0, 1.5, 2.0, -0.5, -1.0, 0.25, 3.0]
  %y = tessel.RMSNorm "/norm/Mul_1" (%x, %w) {axis = -1, epsilon = 1e-05} : f32[2,3,8]
  %z = Relu "relu" (%y) : f32[2,3,8]
  output %z
}
)"));
  EXPECT_EQ(r->stats["rmsnorms-fused"], 1);
  EXPECT_EQ(r->stats["gains-absorbed"], 1);
  EXPECT_TRUE(testing::CheckNumericallyEquivalent(*r->before, *r->after, 1e-6, 1e-5).ok());
}

// Variants that must each fuse to one tessel.RMSNorm and compute the same thing.
struct Variant {
  const char* name;
  const char* ir;
  bool has_gain;
};

class FuseRMSNormVariantTest : public ::testing::TestWithParam<Variant> {};

TEST_P(FuseRMSNormVariantTest, FusesAndStaysEquivalent) {
  auto r = RunPipelineOnIr(GetParam().ir, "fuse-rmsnorm,dce");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(CountOps(*r->after, "RMSNorm"), 1) << r->after_text;
  EXPECT_EQ(r->after->num_nodes(), 1) << r->after_text;
  const Node& fused = *r->after->nodes().front();
  EXPECT_EQ(fused.domain(), "tessel");
  EXPECT_EQ(fused.num_inputs(), GetParam().has_gain ? 2 : 1);
  EXPECT_FLOAT_EQ(fused.GetFloat("epsilon", -1), 1e-6f);
  absl::Status eq = testing::CheckNumericallyEquivalent(*r->before, *r->after, 1e-6, 1e-5);
  EXPECT_TRUE(eq.ok()) << eq;
}

INSTANTIATE_TEST_SUITE_P(
    Variants, FuseRMSNormVariantTest,
    ::testing::Values(
        Variant{"ReciprocalAndSquareByMul", R"(
graph @main {
  input %x : f32[4,6]
  input %g : f32[6]
  const %axes : i64[1] = [1]
  const %eps : f32[] = [1e-06]
  %p = Mul "p" (%x, %x) : f32[4,6]
  %m = ReduceMean "m" (%p, %axes) {keepdims = 1} : f32[4,1]
  %a = Add "a" (%eps, %m) : f32[4,1]
  %s = Sqrt "s" (%a) : f32[4,1]
  %r = Reciprocal "r" (%s) : f32[4,1]
  %n = Mul "n" (%r, %x) : f32[4,6]
  %y = Mul "y" (%g, %n) : f32[4,6]
  output %y
})",
                true},
        Variant{"DivWithoutGain", R"(
graph @main {
  input %x : f32[2,5,6]
  const %two : f32[] = [2.0]
  const %axes : i64[1] = [-1]
  const %eps : f32[] = [1e-06]
  %p = Pow "p" (%x, %two) : f32[2,5,6]
  %m = ReduceMean "m" (%p, %axes) {keepdims = 1} : f32[2,5,1]
  %a = Add "a" (%m, %eps) : f32[2,5,1]
  %s = Sqrt "s" (%a) : f32[2,5,1]
  %y = Div "y" (%x, %s) : f32[2,5,6]
  output %y
})",
                false},
        Variant{"GainBeforeTheNormalization", R"(
graph @main {
  input %x : f32[3,4]
  const %g : f32[4] = [1.0, 2.0, 3.0, 4.0]
  const %two : f32[] = [2.0]
  const %axes : i64[1] = [-1]
  const %eps : f32[] = [1e-06]
  const %one : f32[] = [1.0]
  %p = Pow "p" (%x, %two) : f32[3,4]
  %m = ReduceMean "m" (%p, %axes) {keepdims = 1} : f32[3,1]
  %a = Add "a" (%m, %eps) : f32[3,1]
  %s = Sqrt "s" (%a) : f32[3,1]
  %r = Div "r" (%one, %s) : f32[3,1]
  %xg = Mul "xg" (%g, %x) : f32[3,4]
  %y = Mul "y" (%xg, %r) : f32[3,4]
  output %y
})",
                true},
        Variant{"ThreeDimensionalGainConstant", R"(
graph @main {
  input %x : f32[2,3,4]
  const %g : f32[1,1,4] = [1.0, -2.0, 3.0, 0.5]
  const %two : f32[] = [2.0]
  const %axes : i64[1] = [2]
  const %eps : f32[] = [1e-06]
  %p = Pow "p" (%x, %two) : f32[2,3,4]
  %m = ReduceMean "m" (%p, %axes) {keepdims = 1} : f32[2,3,1]
  %a = Add "a" (%m, %eps) : f32[2,3,1]
  %s = Sqrt "s" (%a) : f32[2,3,1]
  %n = Div "n" (%x, %s) : f32[2,3,4]
  %y = Mul "y" (%n, %g) : f32[2,3,4]
  output %y
})",
                true}),
    [](const ::testing::TestParamInfo<Variant>& info) { return std::string(info.param.name); });

TEST(FuseRMSNormTest, NormalizesOverTrailingAxes) {
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[2,3,4]
  const %two : f32[] = [2.0]
  const %axes : i64[2] = [2, 1]
  const %eps : f32[] = [0.001]
  %p = Pow "p" (%x, %two) : f32[2,3,4]
  %m = ReduceMean "m" (%p, %axes) {keepdims = 1} : f32[2,1,1]
  %a = Add "a" (%m, %eps) : f32[2,1,1]
  %s = Sqrt "s" (%a) : f32[2,1,1]
  %y = Div "y" (%x, %s) : f32[2,3,4]
  output %y
}
)", "fuse-rmsnorm");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(NormalizeIr(r->after_text), HasSubstr("tessel.RMSNorm \"y\" (%x) {axis = -2, epsilon = 0.001}"));
  EXPECT_TRUE(testing::CheckNumericallyEquivalent(*r->before, *r->after, 1e-6, 1e-5).ok());
}

TEST(FuseRMSNormTest, KeepsAGainThatDoesNotBroadcastOutside) {
  // The second Mul multiplies by a per-row value: not a gain over the normalized axis.
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[3,4]
  input %rows : f32[3,1]
  const %two : f32[] = [2.0]
  const %axes : i64[1] = [-1]
  const %eps : f32[] = [1e-05]
  %p = Pow "p" (%x, %two) : f32[3,4]
  %m = ReduceMean "m" (%p, %axes) {keepdims = 1} : f32[3,1]
  %a = Add "a" (%m, %eps) : f32[3,1]
  %s = Sqrt "s" (%a) : f32[3,1]
  %n = Div "n" (%x, %s) : f32[3,4]
  %y = Mul "y" (%n, %rows) : f32[3,4]
  output %y
}
)", "fuse-rmsnorm");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(NormalizeIr(r->after_text), NormalizeIr(R"(
graph @main {
  input %x : f32[3,4]
  input %rows : f32[3,1]
  %n = tessel.RMSNorm "n" (%x) {axis = -1, epsilon = 1e-05} : f32[3,4]
  %y = Mul "y" (%n, %rows) : f32[3,4]
  output %y
}
)"));
  EXPECT_TRUE(testing::CheckNumericallyEquivalent(*r->before, *r->after, 1e-6, 1e-5).ok());
}

TEST(FuseRMSNormTest, DeclinesWithReasons) {
  // The root mean square is used twice, so the pattern cannot be replaced.
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[3,4]
  const %two : f32[] = [2.0]
  const %axes : i64[1] = [-1]
  const %eps : f32[] = [1e-05]
  %p = Pow "p" (%x, %two) : f32[3,4]
  %m = ReduceMean "rms_3" (%p, %axes) {keepdims = 1} : f32[3,1]
  %a = Add "a" (%m, %eps) : f32[3,1]
  %s = Sqrt "s" (%a) : f32[3,1]
  %y = Div "y" (%x, %s) : f32[3,4]
  output %y, %s
}
)", "fuse-rmsnorm", /*explain=*/true);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(CountOps(*r->after, "RMSNorm"), 0);
  EXPECT_THAT(r->explanations,
              Contains("rms_3 not fused: sqrt(mean(x^2) + epsilon) does not divide x (as its only user)"));

  // Mean over the first axis.
  r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[3,4]
  const %axes : i64[1] = [0]
  const %eps : f32[] = [1e-05]
  %p = Mul "p" (%x, %x) : f32[3,4]
  %m = ReduceMean "rms_4" (%p, %axes) {keepdims = 1} : f32[1,4]
  %a = Add "a" (%m, %eps) : f32[1,4]
  %s = Sqrt "s" (%a) : f32[1,4]
  %y = Div "y" (%x, %s) : f32[3,4]
  output %y
}
)", "fuse-rmsnorm", /*explain=*/true);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(CountOps(*r->after, "RMSNorm"), 0);
  EXPECT_THAT(r->explanations, Contains("rms_4 not fused: the mean is not over the trailing axes with keepdims=1"));
}

TEST(FuseRMSNormTest, LeavesLayerNormAlone) {
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[3,4]
  const %two : f32[] = [2.0]
  const %axes : i64[1] = [-1]
  const %eps : f32[] = [1e-05]
  %mu = ReduceMean "mu" (%x, %axes) {keepdims = 1} : f32[3,1]
  %d = Sub "d" (%x, %mu) : f32[3,4]
  %p = Pow "p" (%d, %two) : f32[3,4]
  %v = ReduceMean "var" (%p, %axes) {keepdims = 1} : f32[3,1]
  %a = Add "a" (%v, %eps) : f32[3,1]
  %s = Sqrt "s" (%a) : f32[3,1]
  %y = Div "y" (%d, %s) : f32[3,4]
  output %y
}
)", "fuse-rmsnorm", /*explain=*/true);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->after->num_nodes(), 7);
  EXPECT_THAT(r->explanations, Contains(HasSubstr("var not fused: the squared value is centred")));
}

}  // namespace
}  // namespace tessel
