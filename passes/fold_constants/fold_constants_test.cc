// fold-constants: cascading evaluation, checked against hand-computed values.
#include "gtest/gtest.h"
#include "passes/testing/pass_test_util.h"

namespace tessel {
namespace {

using testing::NormalizeIr;
using testing::RunPipelineOnIr;

TEST(FoldConstantsTest, CascadesThroughConstantSubgraph) {
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[3]
  const %a : f32[3] = [1.0, -2.0, 3.0]
  const %b : f32[] = [2.0]
  %t = Mul "t" (%a, %b) : f32[3]
  %u = Relu "u" (%t) : f32[3]
  %y = Add "y" (%x, %u) : f32[3]
  output %y
}
)", "fold-constants");
  ASSERT_TRUE(r.ok()) << r.status();
  // relu([2, -4, 6]) = [2, 0, 6], computed by hand.
  EXPECT_EQ(NormalizeIr(r->after_text), NormalizeIr(R"(
graph @main {
  input %x : f32[3]
  const %u : f32[3] = [2.0, 0.0, 6.0]
  %y = Add "y" (%x, %u) : f32[3]
  output %y
}
)"));
  EXPECT_EQ(r->stats["nodes-folded"], 2);
  EXPECT_TRUE(testing::CheckNumericallyEquivalent(*r->before, *r->after, 0, 0).ok());
}

TEST(FoldConstantsTest, RespectsMaxElements) {
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[4]
  const %a : f32[4] = [1.0, 2.0, 3.0, 4.0]
  %t = Neg "t" (%a) : f32[4]
  %y = Add "y" (%x, %t) : f32[4]
  output %y
}
)", "fold-constants{max-elements=2}");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->after->num_nodes(), 2);
  EXPECT_FALSE(RunPipelineOnIr("graph @main {\n}\n", "fold-constants{max-elements=x}").ok());
}

}  // namespace
}  // namespace tessel
