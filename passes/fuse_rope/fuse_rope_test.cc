// fuse-rope: rotary position embedding as torch.onnx exports it (constant tables, and tables gathered by
// position ids) through a pipeline string, compared with expected IR, with numeric equivalence (reference
// interpreter, before vs after, 1e-6 relative + 1e-6 absolute), and the reasons it declines.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "passes/testing/pass_test_util.h"

namespace tessel {
namespace {

using ::testing::Contains;
using testing::NormalizeIr;
using testing::RunPipelineOnIr;

TEST(FuseRopeTest, FusesTheExportedForm) {
  // q * cos + rotate_half(q) * sin with rotate_half(x) = cat(-x[..., 2:], x[..., :2]).
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %q : f32[1,2,3,4]
  const %cos : f32[3,4] = [1.0, 0.5, 1.0, 0.5, 0.25, -1.0, 0.25, -1.0, 0.0, 0.75, 0.0, 0.75]
  const %sin : f32[3,4] = [0.0, 0.5, 0.0, 0.5, 1.0, 0.0, 1.0, 0.0, -1.0, 0.25, -1.0, 0.25]
  const %axis : i64[1] = [3]
  const %half : i64[1] = [2]
  const %zero : i64[1] = [0]
  const %end : i64[1] = [9223372036854775807]
  const %one : i64[1] = [1]
  %m = Mul "/Mul" (%q, %cos) : f32[1,2,3,4]
  %hi = Slice "/Slice" (%q, %half, %end, %axis, %one) : f32[1,2,3,2]
  %neg = Neg "/Neg" (%hi) : f32[1,2,3,2]
  %lo = Slice "/Slice_1" (%q, %zero, %half, %axis, %one) : f32[1,2,3,2]
  %rot = Concat "/Concat" (%neg, %lo) {axis = -1} : f32[1,2,3,4]
  %m1 = Mul "/Mul_1" (%rot, %sin) : f32[1,2,3,4]
  %y = Add "/Add" (%m, %m1) : f32[1,2,3,4]
  output %y
}
)", "fuse-rope");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(NormalizeIr(r->after_text), NormalizeIr(R"(
graph @main {
  input %q : f32[1,2,3,4]
  const %cos : f32[3,4] = [1.0, 0.5, 1.0, 0.5, 0.25, -1.0, 0.25, -1.0, 0.0, 0.75, 0.0, 0.75]
  const %sin : f32[3,4] = [0.0, 0.5, 0.0, 0.5, 1.0, 0.0, 1.0, 0.0, -1.0, 0.25, -1.0, 0.25]
  %y = tessel.Rope "/Add" (%q, %cos, %sin) {style = "half"} : f32[1,2,3,4]
  output %y
}
)"));
  EXPECT_EQ(r->stats["ropes-fused"], 1);
  EXPECT_TRUE(testing::CheckNumericallyEquivalent(*r->before, *r->after, 1e-6, 1e-6).ok());
}

TEST(FuseRopeTest, FusesWithGatheredTablesAndSwappedOperands) {
  // cos/sin picked from tables by position ids; the sum and products written the other way round and the
  // slices with a negative axis and indices (as x[..., -4:] gives) and no steps.
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[2,3,8]
  input %pos : i64[3]
  const %cos_table : f32[5,8] = [
    1.0, 0.9, 0.8, 0.7, 1.0, 0.9, 0.8, 0.7,
    0.6, 0.5, 0.4, 0.3, 0.6, 0.5, 0.4, 0.3,
    0.2, 0.1, 0.0, -0.1, 0.2, 0.1, 0.0, -0.1,
    -0.2, -0.3, -0.4, -0.5, -0.2, -0.3, -0.4, -0.5,
    -0.6, -0.7, -0.8, -0.9, -0.6, -0.7, -0.8, -0.9
  ]
  const %sin_table : f32[5,8] = [
    0.0, 0.1, 0.2, 0.3, 0.0, 0.1, 0.2, 0.3,
    0.4, 0.5, 0.6, 0.7, 0.4, 0.5, 0.6, 0.7,
    0.8, 0.9, 1.0, 0.9, 0.8, 0.9, 1.0, 0.9,
    0.8, 0.7, 0.6, 0.5, 0.8, 0.7, 0.6, 0.5,
    0.4, 0.3, 0.2, 0.1, 0.4, 0.3, 0.2, 0.1
  ]
  const %neg4 : i64[1] = [-4]
  const %zero : i64[1] = [0]
  const %big : i64[1] = [100]
  const %last : i64[1] = [-1]
  %cos = Gather "cos" (%cos_table, %pos) : f32[3,8]
  %sin = Gather "sin" (%sin_table, %pos) : f32[3,8]
  %hi = Slice "hi" (%x, %neg4, %big, %last) : f32[2,3,4]
  %lo = Slice "lo" (%x, %zero, %neg4, %last) : f32[2,3,4]
  %neg = Neg "neg" (%hi) : f32[2,3,4]
  %rot = Concat "rot" (%neg, %lo) {axis = 2} : f32[2,3,8]
  %rs = Mul "rs" (%sin, %rot) : f32[2,3,8]
  %xc = Mul "xc" (%cos, %x) : f32[2,3,8]
  %y = Add "y" (%rs, %xc) : f32[2,3,8]
  output %y
}
)", "fuse-rope,dce");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->after->num_nodes(), 3) << r->after_text;
  EXPECT_THAT(NormalizeIr(r->after_text),
              ::testing::HasSubstr("%y = tessel.Rope \"y\" (%x, %cos, %sin) {style = \"half\"} : f32[2,3,8]"));
  absl::Status eq = testing::CheckNumericallyEquivalent(*r->before, *r->after, 1e-6, 1e-6);
  EXPECT_TRUE(eq.ok()) << eq;
}

TEST(FuseRopeTest, DeclinesWithReasons) {
  // rotate_half's Concat is also a graph output.
  const char* shared = R"(
graph @main {
  input %x : f32[2,4]
  input %cos : f32[4]
  input %sin : f32[4]
  const %axis : i64[1] = [1]
  const %half : i64[1] = [2]
  const %zero : i64[1] = [0]
  const %end : i64[1] = [4]
  %hi = Slice "hi" (%x, %half, %end, %axis) : f32[2,2]
  %lo = Slice "lo" (%x, %zero, %half, %axis) : f32[2,2]
  %neg = Neg "neg" (%hi) : f32[2,2]
  %rot = Concat "rot" (%neg, %lo) {axis = -1} : f32[2,4]
  %rs = Mul "rs" (%rot, %sin) : f32[2,4]
  %xc = Mul "xc" (%x, %cos) : f32[2,4]
  %y = Add "rope_1" (%xc, %rs) : f32[2,4]
  output %y, %rot
}
)";
  auto r = RunPipelineOnIr(shared, "fuse-rope", /*explain=*/true);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->after->num_nodes(), 7);
  EXPECT_THAT(r->explanations, Contains("rope_1 not fused: rotate_half's Concat 'rot' has other users"));

  // The other term multiplies a different tensor.
  r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[2,4]
  input %other : f32[2,4]
  input %sin : f32[4]
  const %axis : i64[1] = [1]
  const %half : i64[1] = [2]
  const %zero : i64[1] = [0]
  const %end : i64[1] = [4]
  %hi = Slice "hi" (%x, %half, %end, %axis) : f32[2,2]
  %lo = Slice "lo" (%x, %zero, %half, %axis) : f32[2,2]
  %neg = Neg "neg" (%hi) : f32[2,2]
  %rot = Concat "rot" (%neg, %lo) {axis = -1} : f32[2,4]
  %rs = Mul "rs" (%rot, %sin) : f32[2,4]
  %xc = Mul "xc" (%other, %sin) : f32[2,4]
  %y = Add "rope_2" (%xc, %rs) : f32[2,4]
  output %y
}
)", "fuse-rope", /*explain=*/true);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->after->num_nodes(), 7);
  EXPECT_THAT(r->explanations, Contains("rope_2 not fused: the other term of the sum is not x ('x') times cos"));
}

TEST(FuseRopeTest, IgnoresAWrongSplitPoint) {
  // Slices at 1 and 3 of 4 are not rotate_half: nothing to fuse, nothing to explain.
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[2,4]
  input %cos : f32[4]
  input %sin : f32[4]
  const %axis : i64[1] = [1]
  const %one : i64[1] = [1]
  const %zero : i64[1] = [0]
  const %end : i64[1] = [4]
  %hi = Slice "hi" (%x, %one, %end, %axis) : f32[2,3]
  %lo = Slice "lo" (%x, %zero, %one, %axis) : f32[2,1]
  %neg = Neg "neg" (%hi) : f32[2,3]
  %rot = Concat "rot" (%neg, %lo) {axis = -1} : f32[2,4]
  %rs = Mul "rs" (%rot, %sin) : f32[2,4]
  %xc = Mul "xc" (%x, %cos) : f32[2,4]
  %y = Add "y" (%xc, %rs) : f32[2,4]
  output %y
}
)", "fuse-rope", /*explain=*/true);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->after->num_nodes(), 7);
  EXPECT_TRUE(r->explanations.empty());
}

}  // namespace
}  // namespace tessel
