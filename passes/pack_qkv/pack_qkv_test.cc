// pack-qkv: Q/K/V projections (grouped-query widths) through a pipeline string, compared with expected IR,
// with exact numeric equivalence (tolerance 0: each output column is the same dot product), and the cases
// it leaves alone.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "passes/testing/pass_test_util.h"

namespace tessel {
namespace {

using ::testing::Contains;
using testing::NormalizeIr;
using testing::RunPipelineOnIr;

TEST(PackQkvTest, PacksThreeProjectionsOfDifferentWidths) {
  // Q is 4 wide, K and V 2 wide (grouped-query attention).
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %h : f32[1,3,2]
  const %wq : f32[2,4] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
  const %wk : f32[2,2] = [-1.0, -2.0, -3.0, -4.0]
  const %wv : f32[2,2] = [0.5, 0.25, 0.125, 2.0]
  %q = MatMul "/wq/MatMul" (%h, %wq) : f32[1,3,4]
  %k = MatMul "/wk/MatMul" (%h, %wk) : f32[1,3,2]
  %v = MatMul "/wv/MatMul" (%h, %wv) : f32[1,3,2]
  %kv = Add "kv" (%k, %v) : f32[1,3,2]
  output %q, %kv
}
)", "pack-qkv");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(NormalizeIr(r->after_text), NormalizeIr(R"(
graph @main {
  input %h : f32[1,3,2]
  const %wq.packed : f32[2,8] = [1.0, 2.0, 3.0, 4.0, -1.0, -2.0, 0.5, 0.25, 5.0, 6.0, 7.0, 8.0, -3.0, -4.0, 0.125, 2.0]
  const %q.packed.sizes : i64[3] = [4, 2, 2]
  %q.packed = MatMul "/wq/MatMul+/wk/MatMul+/wv/MatMul" (%h, %wq.packed) : f32[1,3,8]
  %q, %k, %v = Split "/wq/MatMul+/wk/MatMul+/wv/MatMul.split" (%q.packed, %q.packed.sizes) {axis = -1}
      : f32[1,3,4], f32[1,3,2], f32[1,3,2]
  %kv = Add "kv" (%k, %v) : f32[1,3,2]
  output %q, %kv
}
)"));
  EXPECT_EQ(r->stats["matmuls-packed"], 3);
  EXPECT_EQ(r->stats["groups-packed"], 1);
  absl::Status eq = testing::CheckNumericallyEquivalent(*r->before, *r->after, 0, 0);
  EXPECT_TRUE(eq.ok()) << eq;
}

TEST(PackQkvTest, PacksTwoAndSkipsNonConstantWeights) {
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[N,3]
  input %wdyn : f32[3,5]
  const %w1 : f32[3,2] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
  const %w3 : f32[3,1] = [7.0, 8.0, 9.0]
  %a = MatMul "gate" (%x, %w1) : f32[N,2]
  %b = MatMul "dyn" (%x, %wdyn) : f32[N,5]
  %c = MatMul "up" (%x, %w3) : f32[N,1]
  %d = Mul "d" (%a, %c) : f32[N,2]
  output %d, %b
}
)", "pack-qkv", /*explain=*/true);
  ASSERT_TRUE(r.ok()) << r.status();
  int matmuls = 0, splits = 0;
  for (const auto& n : r->after->nodes()) {
    matmuls += n->op_type() == "MatMul";
    splits += n->op_type() == "Split";
  }
  EXPECT_EQ(matmuls, 2) << r->after_text;
  EXPECT_EQ(splits, 1) << r->after_text;
  EXPECT_EQ(r->stats["matmuls-packed"], 2);
  EXPECT_THAT(r->explanations,
              Contains("dyn not packed with other MatMuls of 'x': its weight is not a constant 2-D tensor of the "
                       "input's dtype"));
  absl::Status eq = testing::CheckNumericallyEquivalent(*r->before, *r->after, 0, 0, /*seed=*/3, /*symbolic_dim=*/4);
  EXPECT_TRUE(eq.ok()) << eq;
}

TEST(PackQkvTest, LeavesSingleAndTransposedUsesAlone) {
  // One projection per input, and a MatMul reading the shared value as its second operand.
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[2,2]
  const %w : f32[2,2] = [1.0, 2.0, 3.0, 4.0]
  %a = MatMul "a" (%x, %w) : f32[2,2]
  %b = MatMul "b" (%w, %x) : f32[2,2]
  %y = Add "y" (%a, %b) : f32[2,2]
  output %y
}
)", "pack-qkv");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->after->num_nodes(), 3);
  EXPECT_EQ(r->stats["matmuls-packed"], 0);
}

}  // namespace
}  // namespace tessel
