// support/size_limits: overflow is reported at the int64 edge (not wrapped), negative sizes are
// refused, and the memory ceiling is the machine's physical memory unless TESSEL_MEMORY_LIMIT lowers it.
#include "support/size_limits.h"

#include <unistd.h>

#include <cstdlib>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessel {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

TEST(SizeLimitsTest, CheckedArithmeticReportsOverflow) {
  EXPECT_EQ(CheckedMul(int64_t{1} << 31, int64_t{1} << 31), int64_t{1} << 62);
  EXPECT_EQ(CheckedMul(int64_t{1} << 32, int64_t{1} << 31), std::nullopt);
  EXPECT_EQ(CheckedMul(kMax, 1), kMax);
  EXPECT_EQ(CheckedMul(-1, 4), std::nullopt);
  EXPECT_EQ(CheckedAdd(kMax - 1, 1), kMax);
  EXPECT_EQ(CheckedAdd(kMax, 1), std::nullopt);
  EXPECT_EQ(CheckedProduct({}), 1);
  EXPECT_EQ(CheckedProduct({1000000000, 4, 4}), 16000000000);
  // 4294967295 x 4294967295 x 4 wraps a 64-bit product to a small number; it must not pass.
  EXPECT_EQ(CheckedProduct({4294967295, 4294967295, 4}), std::nullopt);
  EXPECT_EQ(CheckedProduct({kMax, kMax, 0}), 0);  // an empty tensor, whatever its other dimensions
  EXPECT_EQ(CheckedProduct({0, -1}), std::nullopt);
}

TEST(SizeLimitsTest, FormatsDecimalUnits) {
  EXPECT_EQ(FormatBytes(812), "812 bytes");
  EXPECT_EQ(FormatBytes(1500000), "1.5 MB");
  EXPECT_EQ(FormatBytes(34359738368), "34.36 GB");
}

TEST(SizeLimitsTest, CeilingIsPhysicalMemoryUnlessLowered) {
  ::unsetenv("TESSEL_MEMORY_LIMIT");
  const uint64_t physical = static_cast<uint64_t>(::sysconf(_SC_PHYS_PAGES)) * ::sysconf(_SC_PAGESIZE);
  absl::StatusOr<MemoryCeiling> c = GetMemoryCeiling();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->bytes, physical);
  EXPECT_THAT(c->description, HasSubstr("this machine has"));
  EXPECT_TRUE(CheckFitsInMemory(physical, "all of it").ok());
  absl::Status s = CheckFitsInMemory(physical + 1, "the KV cache for --ctx 7");
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(s.message()), HasSubstr("the KV cache for --ctx 7 needs "));

  ::setenv("TESSEL_MEMORY_LIMIT", "1000000", 1);
  s = CheckFitsInMemory(2000000, "the arena");
  EXPECT_EQ(s.message(), "the arena needs 2.0 MB; TESSEL_MEMORY_LIMIT is 1.0 MB");
  EXPECT_TRUE(CheckFitsInMemory(1000000, "the arena").ok());
  // A limit above the machine's memory does not raise the ceiling.
  ::setenv("TESSEL_MEMORY_LIMIT", "18446744073709551615", 1);
  EXPECT_EQ(GetMemoryCeiling()->bytes, physical);
  ::setenv("TESSEL_MEMORY_LIMIT", "lots", 1);
  EXPECT_THAT(std::string(GetMemoryCeiling().status().message()), HasSubstr("TESSEL_MEMORY_LIMIT='lots'"));
  ::unsetenv("TESSEL_MEMORY_LIMIT");
}

}  // namespace
}  // namespace tessel
