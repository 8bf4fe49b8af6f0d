// Typed kernel registry selection: cost order, legality, CPU support and forcing, on a hand-made table.
#include "kernels/registry/registry.h"

#include "gtest/gtest.h"

namespace tessel {
namespace {

bool OnlySmall(const ProblemShape& s) { return s.m <= 8; }
double Cheap(const ProblemShape&) { return 1.0; }
double Dear(const ProblemShape&) { return 10.0; }

using TestFn = int (*)();
int Zero() { return 0; }

// An entry of the test table from its metadata.
KernelEntry<TestFn> Make(const char* name, const char* dtypes, Isa isa, const char* backend,
                         bool (*legal)(const ProblemShape&), double (*cost)(const ProblemShape&)) {
  return MakeKernelEntry<TestFn>(name, "gemm", dtypes, "row_major", isa, backend, legal, cost, Zero);
}

KernelRegistry<TestFn> MakeRegistry() {
  KernelRegistry<TestFn> r;
  r.Register(Make("slow__reference", "f32", Isa::kPortable, "reference", nullptr, Dear));
  r.Register(Make("fast_small__portable", "f32", Isa::kPortable, "portable", OnlySmall, Cheap));
  r.Register(Make("other_dtype", "f16", Isa::kPortable, "portable", nullptr, Cheap));
  return r;
}

TEST(KernelRegistryTest, PicksCheapestLegal) {
  KernelRegistry<TestFn> r = MakeRegistry();
  EXPECT_EQ(r.Find("gemm", "f32", "row_major").size(), 2u);
  auto small = r.Select("gemm", "f32", "row_major", {4, 4, 4, 0}, "");
  ASSERT_TRUE(small.ok());
  EXPECT_EQ((*small)->name, "fast_small__portable");
  auto big = r.Select("gemm", "f32", "row_major", {64, 4, 4, 0}, "");
  ASSERT_TRUE(big.ok());
  EXPECT_EQ((*big)->name, "slow__reference");
}

TEST(KernelRegistryTest, ForceByBackendOrName) {
  KernelRegistry<TestFn> r = MakeRegistry();
  auto forced = r.Select("gemm", "f32", "row_major", {4, 4, 4, 0}, "reference");
  ASSERT_TRUE(forced.ok());
  EXPECT_EQ((*forced)->name, "slow__reference");
  auto by_name = r.Select("gemm", "f32", "row_major", {4, 4, 4, 0}, "slow__reference");
  ASSERT_TRUE(by_name.ok());
  auto none = r.Select("gemm", "f32", "row_major", {64, 4, 4, 0}, "portable");
  EXPECT_EQ(none.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(none.status().message().find("shape not supported"), std::string::npos) << none.status();
  auto listed = r.Select("gemm", "f32", "row_major", {4, 4, 4, 0}, "x86,slow__reference");
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ((*listed)->name, "slow__reference");
  EXPECT_EQ((*listed)->fn(), 0);
}

TEST(KernelRegistryTest, RefusesIsaTheCpuLacks) {
  KernelRegistry<TestFn> r;
#if defined(__x86_64__)
  const Isa foreign = Isa::kNeon;
#else
  const Isa foreign = Isa::kAvx2;
#endif
  r.Register(Make("foreign", "f32", foreign, "x", nullptr, Cheap));
  auto s = r.Select("gemm", "f32", "row_major", {1, 1, 1, 0}, "");
  EXPECT_EQ(s.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(s.status().message().find("CPU lacks"), std::string::npos) << s.status();
  EXPECT_TRUE(CpuSupports(Isa::kPortable));
  EXPECT_FALSE(CpuSupports(foreign));
}

}  // namespace
}  // namespace tessel
