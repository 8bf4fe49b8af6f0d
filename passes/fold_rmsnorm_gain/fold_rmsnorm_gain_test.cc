// fold-rmsnorm-gain: the gain moves into the weights of every MatMul reading the RMSNorm (hand-computed
// scaled weights), after pack-qkv too; numeric equivalence (reference interpreter, before vs after,
// 1e-5 relative + 1e-6 absolute: the products round differently); and the reasons it declines.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "passes/testing/pass_test_util.h"

namespace tessel {
namespace {

using ::testing::Contains;
using testing::NormalizeIr;
using testing::RunPipelineOnIr;

constexpr double kAtol = 1e-6;
constexpr double kRtol = 1e-5;

TEST(FoldRMSNormGainTest, ScalesTheRowsOfEveryWeight) {
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[2,3]
  const %g : f32[3] = [2.0, 0.5, -1.0]
  const %w1 : f32[3,2] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
  const %w2 : f32[3,1] = [1.0, 1.0, 1.0]
  %n = tessel.RMSNorm "n" (%x, %g) {axis = -1, epsilon = 1e-05} : f32[2,3]
  %a = MatMul "a" (%n, %w1) : f32[2,2]
  %b = MatMul "b" (%n, %w2) : f32[2,1]
  %c = MatMul "c" (%n, %w2) : f32[2,1]
  output %a, %b, %c
}
)", "fold-rmsnorm-gain");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(NormalizeIr(r->after_text), NormalizeIr(R"(
graph @main {
  input %x : f32[2,3]
  const %w1.gain : f32[3,2] = [2.0, 4.0, 1.5, 2.0, -5.0, -6.0]
  const %w2.gain : f32[3,1] = [2.0, 0.5, -1.0]
  %n = tessel.RMSNorm "n" (%x) {axis = -1, epsilon = 1e-05} : f32[2,3]
  %a = MatMul "a" (%n, %w1.gain) : f32[2,2]
  %b = MatMul "b" (%n, %w2.gain) : f32[2,1]
  %c = MatMul "c" (%n, %w2.gain) : f32[2,1]
  output %a, %b, %c
}
)"));
  EXPECT_EQ(r->stats["gains-folded"], 1);
  EXPECT_EQ(r->stats["weights-scaled"], 2);
  absl::Status eq = testing::CheckNumericallyEquivalent(*r->before, *r->after, kAtol, kRtol);
  EXPECT_TRUE(eq.ok()) << eq;
}

TEST(FoldRMSNormGainTest, FoldsIntoThePackedProjection) {
  // The exported RMSNorm feeding Q/K/V: fused, packed, then the gain goes into the packed weight.
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[1,2,4]
  const %g : f32[4] = [1.5, 0.5, 2.0, 0.75]
  const %two : f32[] = [2.0]
  const %axes : i64[1] = [-1]
  const %eps : f32[] = [1e-05]
  const %one : f32[] = [1.0]
  const %wq : f32[4,4] = [1.0, 0.0, 0.5, -1.0, 0.25, 2.0, -0.5, 1.0, 3.0, -2.0, 1.0, 0.0, 0.5, 0.5, 0.5, 0.5]
  const %wk : f32[4,2] = [1.0, -1.0, 2.0, 0.0, 0.0, 1.0, -3.0, 0.5]
  const %wv : f32[4,2] = [0.5, 1.5, -0.5, 2.5, 1.0, 1.0, 0.0, -1.0]
  %p = Pow "p" (%x, %two) : f32[1,2,4]
  %m = ReduceMean "m" (%p, %axes) {keepdims = 1} : f32[1,2,1]
  %a = Add "a" (%m, %eps) : f32[1,2,1]
  %s = Sqrt "s" (%a) : f32[1,2,1]
  %r = Div "r" (%one, %s) : f32[1,2,1]
  %xn = Mul "xn" (%x, %r) : f32[1,2,4]
  %h = Mul "h" (%xn, %g) : f32[1,2,4]
  %q = MatMul "q" (%h, %wq) : f32[1,2,4]
  %k = MatMul "k" (%h, %wk) : f32[1,2,2]
  %v = MatMul "v" (%h, %wv) : f32[1,2,2]
  output %q, %k, %v
}
)", "fuse-rmsnorm,pack-qkv,fold-rmsnorm-gain,dce");
  ASSERT_TRUE(r.ok()) << r.status();
  int matmuls = 0;
  const Node* norm = nullptr;
  for (const auto& n : r->after->nodes()) {
    matmuls += n->op_type() == "MatMul";
    if (n->op_type() == "RMSNorm") norm = n.get();
  }
  EXPECT_EQ(matmuls, 1) << r->after_text;
  ASSERT_NE(norm, nullptr) << r->after_text;
  EXPECT_EQ(norm->num_inputs(), 1);
  EXPECT_EQ(r->stats["gains-folded"], 1);
  absl::Status eq = testing::CheckNumericallyEquivalent(*r->before, *r->after, kAtol, kRtol);
  EXPECT_TRUE(eq.ok()) << eq;
}

TEST(FoldRMSNormGainTest, DeclinesWhenAnyUserIsNotSuchAMatMul) {
  const char* ir = R"(
graph @main {
  input %x : f32[2,3]
  input %gdyn : f32[3]
  const %g : f32[3] = [2.0, 0.5, -1.0]
  const %w : f32[3,2] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
  %n = tessel.RMSNorm "norm_1" (%x, %g) : f32[2,3]
  %a = MatMul "a" (%n, %w) : f32[2,2]
  %e = Exp "e" (%n) : f32[2,3]
  %n2 = tessel.RMSNorm "norm_2" (%x, %gdyn) : f32[2,3]
  %b = MatMul "b" (%n2, %w) : f32[2,2]
  output %a, %e, %b
}
)";
  auto r = RunPipelineOnIr(ir, "fold-rmsnorm-gain", /*explain=*/true);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(NormalizeIr(r->after_text), NormalizeIr(ir));
  EXPECT_THAT(r->explanations,
              Contains("norm_1 gain not folded: its output feeds Exp 'e', not (only) as the input of a MatMul with a "
                       "constant f32 weight"));
  EXPECT_THAT(r->explanations, Contains("norm_2 gain not folded: the gain is not an f32 constant"));
}

}  // namespace
}  // namespace tessel
