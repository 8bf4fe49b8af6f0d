// The Arm lab's cost table: consistent as generated, and used by aarch64 selection as documented.
#include "kernels/registry/lab_costs.h"

#include <cstdlib>
#include <map>
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "kernels/gemm/gemm.h"
#include "kernels/op_kernels.h"
#include "kernels/registry/registry.h"

namespace tessel {
namespace {

constexpr LabCost kRows[] = {
#include "kernels/registry/lab_costs_aarch64.inc"
};

// Every group has its anchor at ratio 1 for every core, ratios are positive, and no row repeats.
TEST(LabCostsTest, TableIsConsistent) {
  std::set<std::string> seen;
  std::map<std::string, double> anchors;
  for (const LabCost& r : kRows) {
    const std::string key = std::string(r.core) + "|" + r.group + "|" + r.kernel;
    EXPECT_TRUE(seen.insert(key).second) << "repeated row " << key;
    EXPECT_GT(r.ratio, 0.0) << key;
    EXPECT_GE(r.cases, 1) << key;
    if (std::string(r.anchor) == r.kernel) anchors[std::string(r.core) + "|" + r.group] = r.ratio;
  }
  for (const LabCost& r : kRows) {
    auto it = anchors.find(std::string(r.core) + "|" + r.group);
    ASSERT_NE(it, anchors.end()) << r.core << " " << r.group << " lacks its anchor " << r.anchor;
    EXPECT_DOUBLE_EQ(it->second, 1.0) << r.core << " " << r.group;
  }
}

TEST(LabCostsTest, GroupsOfMicrokernels) {
  EXPECT_EQ(LabCostGroup("gemm", "f32"), "gemm");
  EXPECT_EQ(LabCostGroup("gemm_prepacked", "f32"), "gemm");
  EXPECT_EQ(LabCostGroup("gemv", "q4_0xf32"), "gemv/q4_0");
  EXPECT_EQ(LabCostGroup("gemv", "q4_0xq8"), "");
  EXPECT_EQ(LabCostGroup("softmax", "f32"), "vector/softmax");
  EXPECT_EQ(LabCostGroup("conv", "f32"), "");
}

// The column follows TESSEL_COST_CORE (lab_costs_core_test sets cortex-a55).
TEST(LabCostsTest, CoreFromEnvironment) {
  const char* env = std::getenv("TESSEL_COST_CORE");
  if (env == nullptr) GTEST_SKIP() << "TESSEL_COST_CORE not set";
  EXPECT_EQ(LabCostCore(), env);
  const LabCost* row = FindLabCost("conv/dense", "xnn_f32_conv2d_nhwc__xnnpack");
  ASSERT_NE(row, nullptr);
  EXPECT_EQ(std::string(row->core), env);
}

#if defined(__aarch64__)
// Every kernel the table names exists in this build, and Select ranks listed kernels by anchor x ratio.
TEST(LabCostsTest, Aarch64SelectionUsesTheTable) {
  for (const LabCost& r : kRows) {
    const std::string group = r.group;
    if (group.rfind("conv/", 0) == 0) {
      EXPECT_NE(OpKernels().FindByName(r.kernel), nullptr) << r.kernel;
    }
  }
  const ProblemShape shape{128, 128, 128, 0};
  for (const GemmKernel& e : GemmKernels().entries()) {
    if (e.op != "gemm") continue;
    const LabCost* row = FindLabCost("gemm", e.name);
    if (row == nullptr) continue;
    double anchor = 0;
    for (const GemmKernel& a : GemmKernels().entries()) {
      if (a.name == row->anchor && a.op == "gemm") anchor = a.cost(shape);
    }
    EXPECT_DOUBLE_EQ(GemmKernels().Cost(e, shape), anchor * row->ratio) << e.name;
  }
}
#endif

}  // namespace
}  // namespace tessel
