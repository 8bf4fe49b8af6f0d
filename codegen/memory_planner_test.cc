// Memory planner: hand-computed plans, random lifetimes verified by the independent sweep in
// VerifyMemoryPlan, a verifier that catches overlaps, and in-place reuse on a graph.
#include "codegen/memory_planner.h"

#include <random>

#include "graph/op_registry.h"
#include "graph/text.h"
#include "gtest/gtest.h"

namespace tessel {
namespace {

TensorLifetime T(const char* name, size_t bytes, int first, int last, int reuse = -1) {
  return TensorLifetime{name, bytes, first, last, reuse};
}

TEST(MemoryPlannerTest, ChainReusesMemory) {
  // a[0,1] b[1,2] c[2,3]: a and c never meet, so c takes a's slot. Computed by hand: arena 128.
  std::vector<TensorLifetime> t = {T("a", 64, 0, 1), T("b", 64, 1, 2), T("c", 64, 2, 3)};
  for (const std::string& algo : {"greedy-by-size", "first-fit"}) {
    auto plan = PlanMemory(t, algo);
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(plan->arena_bytes, 128u) << algo;
    EXPECT_EQ(plan->lower_bound, 128u);
    EXPECT_EQ(plan->offsets[0], plan->offsets[2]) << algo;
    EXPECT_TRUE(VerifyMemoryPlan(t, *plan).ok());
  }
  auto naive = PlanMemory(t, "naive");
  EXPECT_EQ(naive->arena_bytes, 192u);
}

TEST(MemoryPlannerTest, BestFitPicksTheSmallestGap) {
  // Live together at step 5: big(0..5) [0,256), gap1 [256,320) freed, mid [320, 448), gap2 ..., etc.
  // Large-first placement: x(1000)@0, y(100)@1024 (overlaps x), z(60) overlaps both -> end.
  std::vector<TensorLifetime> t = {T("x", 1000, 0, 2), T("y", 100, 1, 3), T("z", 60, 2, 2)};
  auto plan = PlanMemory(t, "greedy-by-size");
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->offsets[0], 0u);
  EXPECT_EQ(plan->offsets[1], 1024u);
  EXPECT_EQ(plan->offsets[2], 1152u);
  EXPECT_EQ(plan->arena_bytes, 1216u);
  EXPECT_EQ(plan->lower_bound, 1216u);
}

TEST(MemoryPlannerTest, RandomLifetimesVerifyAndRespectLowerBound) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<TensorLifetime> t;
    const int n = 1 + rng() % 120;
    size_t total = 0;
    for (int i = 0; i < n; ++i) {
      const int first = rng() % 60;
      const int len = rng() % 10;
      const size_t bytes = (rng() % 5000) + (rng() % 3 == 0 ? 0 : 1);
      t.push_back(T("t", bytes, first, first + len));
      total += (bytes + 63) / 64 * 64;
    }
    for (const std::string& algo : MemoryPlanAlgorithms()) {
      auto plan = PlanMemory(t, algo);
      ASSERT_TRUE(plan.ok());
      absl::Status s = VerifyMemoryPlan(t, *plan);
      ASSERT_TRUE(s.ok()) << algo << ": " << s;
      EXPECT_GE(plan->arena_bytes, plan->lower_bound) << algo;
      EXPECT_LE(plan->arena_bytes, total) << algo;
    }
  }
}

TEST(MemoryPlannerTest, VerifierRejectsOverlapAndMisalignment) {
  std::vector<TensorLifetime> t = {T("a", 64, 0, 2), T("b", 64, 1, 3)};
  MemoryPlan bad;
  bad.offsets = {0, 32};
  bad.arena_bytes = 128;
  EXPECT_NE(VerifyMemoryPlan(t, bad).message().find("not 64-byte aligned"), std::string::npos);
  bad.offsets = {0, 0};
  EXPECT_NE(VerifyMemoryPlan(t, bad).message().find("overlap in memory"), std::string::npos);
  bad.offsets = {0, 64};
  bad.arena_bytes = 100;
  EXPECT_NE(VerifyMemoryPlan(t, bad).message().find("past the arena"), std::string::npos);
  EXPECT_FALSE(PlanMemory(t, "nope").ok());
  EXPECT_FALSE(PlanMemory({T("e", 8, 3, 1)}, "first-fit").ok());
}

TEST(MemoryPlannerTest, ElementwiseChainRunsInPlace) {
  auto g = ParseGraph(R"(
graph @main {
  input %x : f32[1024]
  %a = Exp "a" (%x) : f32[1024]
  %b = Relu "b" (%a) : f32[1024]
  %c = Neg "c" (%b) : f32[1024]
  %d = Add "d" (%c, %a) : f32[1024]
  output %d
}
)");
  ASSERT_TRUE(g.ok()) << g.status();
  auto order = (*g)->TopologicalOrder();
  auto lifetimes = ComputeLifetimes(**g, *order, /*allow_in_place=*/true);
  ASSERT_TRUE(lifetimes.ok()) << lifetimes.status();
  // x (graph input) is never reused; a lives on (used by d), so b cannot take it; c takes b's
  // buffer (b dies at c); d takes c's.
  const auto& t = lifetimes->tensors;
  ASSERT_EQ(t.size(), 5u);
  EXPECT_EQ(t[2].reuse_of, -1);  // b
  EXPECT_EQ(t[3].reuse_of, 2);   // c <- b
  EXPECT_EQ(t[4].reuse_of, 3);   // d <- c
  auto plan = PlanMemory(t, "greedy-by-size");
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->in_place, 2);
  EXPECT_TRUE(VerifyMemoryPlan(t, *plan).ok());
  EXPECT_EQ(plan->offsets[2], plan->offsets[4]);
  // x dies at step 0, so the b/c/d block (steps 1..3) takes x's slot: a + one block.
  EXPECT_EQ(plan->arena_bytes, 2 * 4096u);
}

TEST(MemoryPlannerTest, SizesThatOverflowAreErrorsNotWrappedNumbers) {
  // 2^32 x 2^32 elements wrap a 64-bit count to 0; the shape comes from a file, so it is an error.
  auto g = ParseGraph(R"(
graph @main {
  input %x : f32[4294967296,4294967296]
  %y = Relu "y" (%x) : f32[4294967296,4294967296]
  output %y
}
)");
  ASSERT_TRUE(g.ok()) << g.status();
  auto order = (*g)->TopologicalOrder();
  auto lifetimes = ComputeLifetimes(**g, *order, /*allow_in_place=*/true);
  EXPECT_EQ(lifetimes.status().message(),
            "input 'x' f32[4294967296,4294967296] needs more bytes than 64 bits can count");
}

}  // namespace
}  // namespace tessel
