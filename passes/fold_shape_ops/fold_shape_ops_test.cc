// fold-shape-ops: Shape -> Gather -> Unsqueeze -> Concat -> Reshape chains on static shapes.
#include "gtest/gtest.h"
#include "passes/testing/pass_test_util.h"

namespace tessel {
namespace {

using testing::NormalizeIr;
using testing::RunPipelineOnIr;

TEST(FoldShapeOpsTest, FoldsShapeChainFeedingReshape) {
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[2,3,4]
  const %idx : i64[] = [0]
  const %minus1 : i64[1] = [-1]
  const %axes : i64[1] = [0]
  %s = Shape "s" (%x) : i64[3]
  %n = Gather "g" (%s, %idx) {axis = 0} : i64[]
  %n1 = Unsqueeze "u" (%n, %axes) : i64[1]
  %shape = Concat "c" (%n1, %minus1) {axis = 0} : i64[2]
  %y = Reshape "r" (%x, %shape) : f32[?0,?1]
  output %y
}
)", "fold-shape-ops,dce");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(NormalizeIr(r->after_text), NormalizeIr(R"(
graph @main {
  input %x : f32[2,3,4]
  const %shape : i64[2] = [2, -1]
  %y = Reshape "r" (%x, %shape) : f32[2,12]
  output %y
}
)"));
  EXPECT_EQ(r->stats["shapes-folded"], 1);
  EXPECT_TRUE(testing::CheckNumericallyEquivalent(*r->before, *r->after, 0, 0).ok());
}

TEST(FoldShapeOpsTest, LeavesSymbolicShapesAlone) {
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[N,4]
  %s = Shape "s" (%x) : i64[2]
  output %s
}
)", "fold-shape-ops");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->after->num_nodes(), 1);
}

// A static extent of a partly symbolic tensor is a constant (torchvision's detection heads test the
// channel count of a tensor whose row count depends on the data); a symbolic one stays computed.
TEST(FoldShapeOpsTest, FoldsGatheredStaticExtentsOfSymbolicShapes) {
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[N,4,5]
  const %static_idx : i64[2] = [-1, 1]
  const %symbolic_idx : i64[] = [0]
  %s = Shape "s" (%x) : i64[3]
  %known = Gather "g1" (%s, %static_idx) {axis = 0} : i64[2]
  %rows = Gather "g0" (%s, %symbolic_idx) {axis = 0} : i64[]
  output %known, %rows
}
)", "fold-shape-ops,dce");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(NormalizeIr(r->after_text), NormalizeIr(R"(
graph @main {
  input %x : f32[N,4,5]
  const %symbolic_idx : i64[] = [0]
  const %known : i64[2] = [5, 4]
  %s = Shape "s" (%x) : i64[3]
  %rows = Gather "g0" (%s, %symbolic_idx) {axis = 0} : i64[]
  output %known, %rows
}
)"));
  EXPECT_EQ(r->stats["nodes-folded"], 1);
}

// Shape arithmetic through float scalars (a preprocessing's resize factor) folds, and folding repeats
// until types stop changing: the Reshape's extents become static only after the first round, and then
// the Shape of its result and the Range it bounds fold too (a detection model's anchor grid).
TEST(FoldShapeOpsTest, FoldsFloatShapeArithmeticUntilNothingChanges) {
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[2,8]
  const %one : i64[] = [1]
  const %half : f32[] = [0.5]
  const %axes : i64[1] = [0]
  const %minus1 : i64[1] = [-1]
  const %zero : i64[] = [0]
  const %step : i64[] = [1]
  %s = Shape "s" (%x) : i64[2]
  %w = Gather "g" (%s, %one) {axis = 0} : i64[]
  %wf = Cast "c1" (%w) {to = 1} : f32[]
  %hf = Mul "m" (%wf, %half) : f32[]
  %h = Cast "c2" (%hf) {to = 7} : i64[]
  %h1 = Unsqueeze "u" (%h, %axes) : i64[1]
  %shape = Concat "cat" (%minus1, %h1) {axis = 0} : i64[2]
  %y = Reshape "r" (%x, %shape) : f32[?0,?1]
  %s2 = Shape "s2" (%y) : i64[2]
  %n = Gather "g2" (%s2, %zero) {axis = 0} : i64[]
  %grid = Range "range" (%zero, %n, %step) : i64[?2]
  %gridf = Cast "c3" (%grid) {to = 1} : f32[?2]
  output %y, %gridf
}
)", "fold-shape-ops,dce");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(NormalizeIr(r->after_text), NormalizeIr(R"(
graph @main {
  input %x : f32[2,8]
  const %shape : i64[2] = [-1, 4]
  const %gridf : f32[4] = [0.0, 1.0, 2.0, 3.0]
  %y = Reshape "r" (%x, %shape) : f32[4,4]
  output %y, %gridf
}
)"));
  EXPECT_TRUE(testing::CheckNumericallyEquivalent(*r->before, *r->after, 0, 0).ok());
}

}  // namespace
}  // namespace tessel
