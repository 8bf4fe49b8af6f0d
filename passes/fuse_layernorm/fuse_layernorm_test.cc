// fuse-layernorm: the decomposed LayerNorm (as torch.onnx exports it below opset 17) and variants through
// a pipeline string, compared with expected IR, with numeric equivalence (reference interpreter, before
// vs after, 1e-5 relative + 1e-5 absolute), and the reasons it declines.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "passes/testing/pass_test_util.h"

namespace tessel {
namespace {

using ::testing::Contains;
using testing::NormalizeIr;
using testing::RunPipelineOnIr;

constexpr double kAtol = 1e-5;
constexpr double kRtol = 1e-5;

TEST(FuseLayerNormTest, FusesTheExportedForm) {
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[2,3,4]
  const %gamma : f32[4] = [1.0, 2.0, -1.0, 0.5]
  const %beta : f32[4] = [0.0, 0.25, -0.5, 1.0]
  const %axes : i64[1] = [-1]
  const %two : f32[] = [2.0]
  const %eps : f32[] = [1e-05]
  %mu = ReduceMean "/ln/ReduceMean" (%x, %axes) {keepdims = 1} : f32[2,3,1]
  %d = Sub "/ln/Sub" (%x, %mu) : f32[2,3,4]
  %p = Pow "/ln/Pow" (%d, %two) : f32[2,3,4]
  %var = ReduceMean "/ln/ReduceMean_1" (%p, %axes) {keepdims = 1} : f32[2,3,1]
  %a = Add "/ln/Add" (%var, %eps) : f32[2,3,1]
  %s = Sqrt "/ln/Sqrt" (%a) : f32[2,3,1]
  %n = Div "/ln/Div" (%d, %s) : f32[2,3,4]
  %m = Mul "/ln/Mul" (%n, %gamma) : f32[2,3,4]
  %y = Add "/ln/Add_1" (%m, %beta) : f32[2,3,4]
  output %y
}
)", "fuse-layernorm");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(NormalizeIr(r->after_text), NormalizeIr(R"(
graph @main {
  input %x : f32[2,3,4]
  const %gamma : f32[4] = [1.0, 2.0, -1.0, 0.5]
  const %beta : f32[4] = [0.0, 0.25, -0.5, 1.0]
  %y = LayerNormalization "/ln/Add_1" (%x, %gamma, %beta) {axis = -1, epsilon = 1e-05} : f32[2,3,4]
  output %y
}
)"));
  EXPECT_EQ(r->stats["layernorms-fused"], 1);
  EXPECT_TRUE(testing::CheckNumericallyEquivalent(*r->before, *r->after, kAtol, kRtol).ok());
}

TEST(FuseLayerNormTest, WithoutAffineMakesAUnitScale) {
  // Square by Mul(d, d), Reciprocal, two trailing axes, epsilon before the variance in the Add.
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[2,2,3]
  const %axes : i64[2] = [-2, -1]
  const %eps : f32[] = [0.001]
  %mu = ReduceMean "mu" (%x, %axes) {keepdims = 1} : f32[2,1,1]
  %d = Sub "d" (%x, %mu) : f32[2,2,3]
  %p = Mul "p" (%d, %d) : f32[2,2,3]
  %var = ReduceMean "var" (%p, %axes) {keepdims = 1} : f32[2,1,1]
  %a = Add "a" (%eps, %var) : f32[2,1,1]
  %s = Sqrt "s" (%a) : f32[2,1,1]
  %r = Reciprocal "r" (%s) : f32[2,1,1]
  %y = Mul "y" (%r, %d) : f32[2,2,3]
  output %y
}
)", "fuse-layernorm");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(NormalizeIr(r->after_text), NormalizeIr(R"(
graph @main {
  input %x : f32[2,2,3]
  const %d.scale : f32[2,3] = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
  %y = LayerNormalization "y" (%x, %d.scale) {axis = -2, epsilon = 0.001} : f32[2,2,3]
  output %y
}
)"));
  EXPECT_TRUE(testing::CheckNumericallyEquivalent(*r->before, *r->after, kAtol, kRtol).ok());
}

TEST(FuseLayerNormTest, BiasWithoutScaleAndReshapedParameters) {
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[3,4]
  const %beta : f32[1,4] = [1.0, 2.0, 3.0, 4.0]
  const %axes : i64[1] = [1]
  const %two : f32[] = [2.0]
  const %eps : f32[] = [1e-05]
  %mu = ReduceMean "mu" (%x, %axes) {keepdims = 1} : f32[3,1]
  %d = Sub "d" (%x, %mu) : f32[3,4]
  %p = Pow "p" (%d, %two) : f32[3,4]
  %var = ReduceMean "var" (%p, %axes) {keepdims = 1} : f32[3,1]
  %a = Add "a" (%var, %eps) : f32[3,1]
  %s = Sqrt "s" (%a) : f32[3,1]
  %n = Div "n" (%d, %s) : f32[3,4]
  %y = Add "y" (%beta, %n) : f32[3,4]
  output %y
}
)", "fuse-layernorm,dce");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->after->num_nodes(), 1) << r->after_text;
  const Node& ln = *r->after->nodes().front();
  EXPECT_EQ(ln.op_type(), "LayerNormalization");
  ASSERT_EQ(ln.num_inputs(), 3);
  EXPECT_EQ(ln.input(2)->type().ToString(), "f32[4]");
  EXPECT_TRUE(testing::CheckNumericallyEquivalent(*r->before, *r->after, kAtol, kRtol).ok());
}

TEST(FuseLayerNormTest, DeclinesWhenTheCentredValueEscapes) {
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[3,4]
  const %axes : i64[1] = [-1]
  const %two : f32[] = [2.0]
  const %eps : f32[] = [1e-05]
  %mu = ReduceMean "mu" (%x, %axes) {keepdims = 1} : f32[3,1]
  %d = Sub "ln_2" (%x, %mu) : f32[3,4]
  %p = Pow "p" (%d, %two) : f32[3,4]
  %var = ReduceMean "var" (%p, %axes) {keepdims = 1} : f32[3,1]
  %a = Add "a" (%var, %eps) : f32[3,1]
  %s = Sqrt "s" (%a) : f32[3,1]
  %n = Div "n" (%d, %s) : f32[3,4]
  %e = Exp "e" (%d) : f32[3,4]
  %y = Add "y" (%n, %e) : f32[3,4]
  output %y
}
)", "fuse-layernorm", /*explain=*/true);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->after->num_nodes(), 9);
  EXPECT_THAT(r->explanations, Contains("ln_2 not fused: x - mean(x) ('d') is also used by Exp 'e'"));
}

TEST(FuseLayerNormTest, DeclinesDifferentAxes) {
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[2,3,4]
  const %axes : i64[1] = [-1]
  const %axes2 : i64[2] = [-2, -1]
  const %two : f32[] = [2.0]
  const %eps : f32[] = [1e-05]
  %mu = ReduceMean "mu" (%x, %axes) {keepdims = 1} : f32[2,3,1]
  %d = Sub "ln_5" (%x, %mu) : f32[2,3,4]
  %p = Pow "p" (%d, %two) : f32[2,3,4]
  %var = ReduceMean "var" (%p, %axes2) {keepdims = 1} : f32[2,1,1]
  %a = Add "a" (%var, %eps) : f32[2,1,1]
  %s = Sqrt "s" (%a) : f32[2,1,1]
  %y = Div "y" (%d, %s) : f32[2,3,4]
  output %y
}
)", "fuse-layernorm", /*explain=*/true);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->after->num_nodes(), 7);
  EXPECT_THAT(r->explanations,
              Contains("ln_5 not fused: x - mean(x) is not squared and averaged (alone) over the same axes"));
}

}  // namespace
}  // namespace tessel
