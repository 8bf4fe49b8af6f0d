// dce: before/after text IR through a pipeline string, plus numeric equivalence.
#include "gtest/gtest.h"
#include "passes/testing/pass_test_util.h"

namespace tessel {
namespace {

using testing::NormalizeIr;
using testing::RunPipelineOnIr;

TEST(DceTest, RemovesUnusedChainsAndConstants) {
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[2,3]
  const %c : f32[] = [2.0]
  const %unused : f32[3] = [1.0, 2.0, 3.0]
  %a = Relu "a" (%x) : f32[2,3]
  %dead1 = Mul "dead1" (%x, %c) : f32[2,3]
  %dead2 = Exp "dead2" (%dead1) : f32[2,3]
  output %a
}
)", "dce");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(NormalizeIr(r->after_text), NormalizeIr(R"(
graph @main {
  input %x : f32[2,3]
  %a = Relu "a" (%x) : f32[2,3]
  output %a
}
)"));
  EXPECT_EQ(r->stats["nodes-removed"], 2);
  EXPECT_EQ(r->stats["constants-removed"], 2);
  EXPECT_TRUE(testing::CheckNumericallyEquivalent(*r->before, *r->after, 0, 0).ok());
}

TEST(DceTest, KeepsEverythingThatReachesAnOutput) {
  const char* ir = R"(
graph @main {
  input %x : f32[4]
  %a = Relu "a" (%x) : f32[4]
  %b, %c = Split "s" (%a) {axis = 0} : f32[2], f32[2]
  output %b
}
)";
  auto r = RunPipelineOnIr(ir, "dce");
  ASSERT_TRUE(r.ok()) << r.status();
  // Split stays: one of its outputs is used.
  EXPECT_EQ(r->after->num_nodes(), 2);
  EXPECT_EQ(r->stats["nodes-removed"], 0);
}

}  // namespace
}  // namespace tessel
