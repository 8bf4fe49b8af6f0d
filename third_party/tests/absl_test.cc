// Abseil: status, strings, containers and flags as the project uses them.
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

ABSL_FLAG(int, tessel_test_threads, 1, "test flag");

namespace {

absl::StatusOr<int> ParsePositive(int v) {
  if (v <= 0) return absl::InvalidArgumentError(absl::StrFormat("expected > 0, got %d", v));
  return v * 2;
}

TEST(AbslTest, StatusOrCarriesValueOrError) {
  auto ok = ParsePositive(21);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 42);
  auto bad = ParsePositive(-3);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "expected > 0, got -3");
}

TEST(AbslTest, StringsAndContainers) {
  std::vector<std::string> parts = absl::StrSplit("dce,cse,,fold", ',', absl::SkipEmpty());
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(absl::StrJoin(parts, "|"), "dce|cse|fold");
  absl::flat_hash_map<std::string, int> counts;
  for (const auto& p : parts) counts[p] += static_cast<int>(p.size());
  EXPECT_EQ(counts["fold"], 4);
  EXPECT_EQ(counts.size(), 3u);
}

TEST(AbslTest, FlagsParse) {
  const char* argv[] = {"prog", "--tessel_test_threads=7", "rest"};
  std::vector<char*> positional = absl::ParseCommandLine(3, const_cast<char**>(argv));
  EXPECT_EQ(absl::GetFlag(FLAGS_tessel_test_threads), 7);
  ASSERT_EQ(positional.size(), 2u);
  EXPECT_STREQ(positional[1], "rest");
}

}  // namespace
