// fuse-attention: scaled dot-product attention as torch.onnx exports it (grouped-query repeat_kv, Div by
// sqrt(d), additive causal mask), SDPA-style scaling of Q and K, masked_fill masks (Where) and masks given
// as inputs, through a pipeline string, compared with expected IR, with numeric equivalence (reference
// interpreter, before vs after, 1e-5 relative + 1e-6 absolute: the fused kernel keeps scores in double),
// and the reasons it declines.
#include <limits>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "passes/testing/pass_test_util.h"

namespace tessel {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using testing::NormalizeIr;
using testing::RunPipelineOnIr;

constexpr double kAtol = 1e-6;
constexpr double kRtol = 1e-5;

const Node* FindOp(const Graph& g, const std::string& op) {
  for (const auto& n : g.nodes()) {
    if (n->op_type() == op) return n.get();
  }
  return nullptr;
}

TEST(FuseAttentionTest, FusesGroupedQueryAttentionWithCausalMask) {
  // Four query heads over two key/value heads, repeated by Unsqueeze -> Expand -> Reshape.
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %q : f32[1,4,3,4]
  input %k : f32[1,2,3,4]
  input %v : f32[1,2,3,4]
  const %mask : f32[3,3] = [0.0, -inf, -inf, 0.0, 0.0, -inf, 0.0, 0.0, 0.0]
  const %ax : i64[1] = [2]
  const %rep : i64[5] = [1, 2, 2, 3, 4]
  const %flat : i64[4] = [1, 4, 3, 4]
  const %sqrt_d : f32[] = [2.0]
  %k5 = Unsqueeze "/Unsqueeze" (%k, %ax) : f32[1,2,1,3,4]
  %ke = Expand "/Expand" (%k5, %rep) : f32[1,2,2,3,4]
  %kr = Reshape "/Reshape_3" (%ke, %flat) : f32[1,4,3,4]
  %v5 = Unsqueeze "/Unsqueeze_1" (%v, %ax) : f32[1,2,1,3,4]
  %ve = Expand "/Expand_1" (%v5, %rep) : f32[1,2,2,3,4]
  %vr = Reshape "/Reshape_4" (%ve, %flat) : f32[1,4,3,4]
  %kt = Transpose "/Transpose_3" (%kr) {perm = [0, 1, 3, 2]} : f32[1,4,4,3]
  %s = MatMul "/MatMul" (%q, %kt) : f32[1,4,3,3]
  %sc = Div "/Div" (%s, %sqrt_d) : f32[1,4,3,3]
  %m = Add "/Add_2" (%sc, %mask) : f32[1,4,3,3]
  %p = Softmax "/Softmax" (%m) {axis = -1} : f32[1,4,3,3]
  %y = MatMul "/MatMul_1" (%p, %vr) : f32[1,4,3,4]
  output %y
}
)", "fuse-attention");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(NormalizeIr(r->after_text), NormalizeIr(R"(
graph @main {
  input %q : f32[1,4,3,4]
  input %k : f32[1,2,3,4]
  input %v : f32[1,2,3,4]
  %y = tessel.Attention "/MatMul_1" (%q, %k, %v) {causal = 1, scale = 0.5} : f32[1,4,3,4]
  output %y
}
)"));
  EXPECT_EQ(r->stats["attentions-fused"], 1);
  EXPECT_EQ(r->stats["kv-repeats-absorbed"], 1);
  EXPECT_EQ(r->stats["causal-masks"], 1);
  absl::Status eq = testing::CheckNumericallyEquivalent(*r->before, *r->after, kAtol, kRtol);
  EXPECT_TRUE(eq.ok()) << eq;
}

TEST(FuseAttentionTest, FoldsScalesOnQAndKAndConvertsAWhereMask) {
  // SDPA's export scales Q and K^T by sqrt(1/sqrt(d)) each; masked_fill(pad, -inf) is a Where.
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %q : f32[2,2,3,4]
  input %k : f32[2,2,3,4]
  input %v : f32[2,2,3,4]
  const %c : f32[] = [0.70710678]
  const %keep : bool[1,1,3,3] = [true, true, false, true, true, false, true, true, false]
  const %ninf : f32[] = [-inf]
  %qs = Mul "qs" (%q, %c) : f32[2,2,3,4]
  %kt = Transpose "kt" (%k) {perm = [0, 1, 3, 2]} : f32[2,2,4,3]
  %kts = Mul "kts" (%c, %kt) : f32[2,2,4,3]
  %s = MatMul "s" (%qs, %kts) : f32[2,2,3,3]
  %m = Where "m" (%keep, %s, %ninf) : f32[2,2,3,3]
  %p = Softmax "p" (%m) {axis = 3} : f32[2,2,3,3]
  %y = MatMul "y" (%p, %v) : f32[2,2,3,4]
  output %y
}
)", "fuse-attention");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->after->num_nodes(), 1) << r->after_text;
  const Node* a = FindOp(*r->after, "Attention");
  ASSERT_NE(a, nullptr);
  EXPECT_NEAR(a->GetFloat("scale", 0), 0.5, 1e-7);
  EXPECT_EQ(a->GetInt("causal", -1), 0);
  ASSERT_EQ(a->num_inputs(), 4);
  ASSERT_TRUE(a->input(3)->is_constant());
  const float ninf = -std::numeric_limits<float>::infinity();
  EXPECT_THAT(a->input(3)->constant()->ToFloatVector(), ElementsAre(0, 0, ninf, 0, 0, ninf, 0, 0, ninf));
  absl::Status eq = testing::CheckNumericallyEquivalent(*r->before, *r->after, kAtol, kRtol);
  EXPECT_TRUE(eq.ok()) << eq;
}

TEST(FuseAttentionTest, RecognizesACausalMaskedFillWithTheLowestFloat) {
  // masked_fill(triu(ones, 1), finfo.min): Where(cond, fill, scores) with a finite fill.
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %q : f32[1,1,3,2]
  input %k : f32[1,1,3,2]
  input %v : f32[1,1,3,2]
  const %future : bool[3,3] = [false, true, true, false, false, true, false, false, false]
  const %lowest : f32[] = [-3.4028235e+38]
  %kt = Transpose "kt" (%k) {perm = [0, 1, 3, 2]} : f32[1,1,2,3]
  %s = MatMul "s" (%q, %kt) : f32[1,1,3,3]
  %m = Where "m" (%future, %lowest, %s) : f32[1,1,3,3]
  %p = Softmax "p" (%m) {axis = -1} : f32[1,1,3,3]
  %y = MatMul "y" (%p, %v) : f32[1,1,3,2]
  output %y
}
)", "fuse-attention");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(NormalizeIr(r->after_text), NormalizeIr(R"(
graph @main {
  input %q : f32[1,1,3,2]
  input %k : f32[1,1,3,2]
  input %v : f32[1,1,3,2]
  %y = tessel.Attention "y" (%q, %k, %v) {causal = 1, scale = 1.0} : f32[1,1,3,2]
  output %y
}
)"));
  absl::Status eq = testing::CheckNumericallyEquivalent(*r->before, *r->after, kAtol, kRtol);
  EXPECT_TRUE(eq.ok()) << eq;
}

TEST(FuseAttentionTest, KeepsAMaskGivenAsInput) {
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %q : f32[1,2,3,4]
  input %k : f32[1,2,5,4]
  input %v : f32[1,2,5,6]
  input %mask : f32[1,1,3,5]
  const %scale : f32[] = [0.125]
  %kt = Transpose "kt" (%k) {perm = [0, 1, 3, 2]} : f32[1,2,4,5]
  %s = MatMul "s" (%q, %kt) : f32[1,2,3,5]
  %sc = Mul "sc" (%s, %scale) : f32[1,2,3,5]
  %m = Add "m" (%mask, %sc) : f32[1,2,3,5]
  %p = Softmax "p" (%m) {axis = -1} : f32[1,2,3,5]
  %y = MatMul "y" (%p, %v) : f32[1,2,3,6]
  output %y
}
)", "fuse-attention");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(NormalizeIr(r->after_text), NormalizeIr(R"(
graph @main {
  input %q : f32[1,2,3,4]
  input %k : f32[1,2,5,4]
  input %v : f32[1,2,5,6]
  input %mask : f32[1,1,3,5]
  %y = tessel.Attention "y" (%q, %k, %v, %mask) {causal = 0, scale = 0.125} : f32[1,2,3,6]
  output %y
}
)"));
  absl::Status eq = testing::CheckNumericallyEquivalent(*r->before, *r->after, kAtol, kRtol);
  EXPECT_TRUE(eq.ok()) << eq;
}

TEST(FuseAttentionTest, DeclinesWithReasons) {
  // A Where whose condition is computed at run time.
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %q : f32[1,1,3,2]
  input %k : f32[1,1,3,2]
  input %v : f32[1,1,3,2]
  input %keep : bool[3,3]
  const %ninf : f32[] = [-inf]
  %kt = Transpose "kt" (%k) {perm = [0, 1, 3, 2]} : f32[1,1,2,3]
  %s = MatMul "s" (%q, %kt) : f32[1,1,3,3]
  %m = Where "m" (%keep, %s, %ninf) : f32[1,1,3,3]
  %p = Softmax "softmax_3" (%m) {axis = -1} : f32[1,1,3,3]
  %y = MatMul "y" (%p, %v) : f32[1,1,3,2]
  output %y
}
)", "fuse-attention", /*explain=*/true);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(FindOp(*r->after, "Attention"), nullptr);
  EXPECT_THAT(r->explanations,
              Contains("softmax_3 not fused: mask is not constant (Where with a computed condition)"));

  // K^T given directly, not as a Transpose of K.
  r = RunPipelineOnIr(R"(
graph @main {
  input %q : f32[1,1,3,2]
  input %kt : f32[1,1,2,3]
  input %v : f32[1,1,3,2]
  %s = MatMul "s" (%q, %kt) : f32[1,1,3,3]
  %p = Softmax "softmax_4" (%s) {axis = -1} : f32[1,1,3,3]
  %y = MatMul "y" (%p, %v) : f32[1,1,3,2]
  output %y
}
)", "fuse-attention", /*explain=*/true);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(FindOp(*r->after, "Attention"), nullptr);
  EXPECT_THAT(r->explanations, Contains("softmax_4 not fused: K^T is not a Transpose of the last two axes of K"));

  // K of batch 1 under Q of batch 2: MatMul broadcasts it, tessel.Attention does not.
  r = RunPipelineOnIr(R"(
graph @main {
  input %q : f32[2,1,3,2]
  input %k : f32[1,1,3,2]
  input %v : f32[2,1,3,2]
  %kt = Transpose "kt" (%k) {perm = [0, 1, 3, 2]} : f32[1,1,2,3]
  %s = MatMul "s" (%q, %kt) : f32[2,1,3,3]
  %p = Softmax "softmax_5" (%s) {axis = -1} : f32[2,1,3,3]
  %y = MatMul "y" (%p, %v) : f32[2,1,3,2]
  output %y
}
)", "fuse-attention", /*explain=*/true);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(FindOp(*r->after, "Attention"), nullptr);
  EXPECT_THAT(r->explanations,
              Contains(::testing::HasSubstr("softmax_5 not fused: node Attention 'y': batch sizes differ")));
}

TEST(FuseAttentionTest, LeavesAnUnrelatedSoftmaxAlone) {
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[2,5]
  input %w : f32[5,3]
  %s = MatMul "s" (%x, %w) : f32[2,3]
  %p = Softmax "p" (%s) {axis = -1} : f32[2,3]
  output %p
}
)", "fuse-attention", /*explain=*/true);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->after->num_nodes(), 2);
  EXPECT_TRUE(r->explanations.empty());
}

}  // namespace
}  // namespace tessel
