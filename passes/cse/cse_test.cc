// cse: before/after text IR through a pipeline string, plus numeric equivalence.
#include "gtest/gtest.h"
#include "passes/testing/pass_test_util.h"

namespace tessel {
namespace {

using testing::NormalizeIr;
using testing::RunPipelineOnIr;

TEST(CseTest, MergesIdenticalNodesAndConstants) {
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[2,3]
  const %c1 : f32[] = [2.0]
  const %c2 : f32[] = [2.0]
  %a = Mul "a" (%x, %c1) : f32[2,3]
  %b = Mul "b" (%x, %c2) : f32[2,3]
  %ra = Relu "ra" (%a) : f32[2,3]
  %rb = Relu "rb" (%b) : f32[2,3]
  %s = Add "s" (%ra, %rb) : f32[2,3]
  output %s
}
)", "cse,dce");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(NormalizeIr(r->after_text), NormalizeIr(R"(
graph @main {
  input %x : f32[2,3]
  const %c1 : f32[] = [2.0]
  %a = Mul "a" (%x, %c1) : f32[2,3]
  %ra = Relu "ra" (%a) : f32[2,3]
  %s = Add "s" (%ra, %ra) : f32[2,3]
  output %s
}
)"));
  EXPECT_EQ(r->stats["constants-merged"], 1);
  EXPECT_EQ(r->stats["nodes-merged"], 2);
  EXPECT_TRUE(testing::CheckNumericallyEquivalent(*r->before, *r->after, 0, 0).ok());
}

TEST(CseTest, DifferentAttributesOrInputsStayApart) {
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[2,3]
  %a = Softmax "a" (%x) {axis = 0} : f32[2,3]
  %b = Softmax "b" (%x) {axis = 1} : f32[2,3]
  %s = Add "s" (%a, %b) : f32[2,3]
  output %s
}
)", "cse");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->after->num_nodes(), 3);
}

}  // namespace
}  // namespace tessel
