// safetensors parsing against files built by hand, sharded directories, and malformed headers.
#include "llm/safetensors/safetensors.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/stat.h>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessel::llm {
namespace {

using ::testing::HasSubstr;

std::string Build(const std::string& header, const std::string& data) {
  std::string out(8, '\0');
  const uint64_t n = header.size();
  std::memcpy(&out[0], &n, 8);
  return out + header + data;
}

absl::StatusOr<std::unique_ptr<SafetensorsFile>> ParseBytes(const std::string& bytes) {
  return SafetensorsFile::Parse(MappedFile::FromBytes(bytes, "m.safetensors"));
}

std::string TwoTensors() {
  const float a[2] = {1.5f, -2.0f};
  const uint16_t h[3] = {0x3C00, 0x4000, 0xC000};  // f16 1, 2, -2
  std::string data(reinterpret_cast<const char*>(a), 8);
  data.append(reinterpret_cast<const char*>(h), 6);
  return Build(R"({"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
               R"("h":{"dtype":"F16","shape":[1,3],"data_offsets":[8,14]}})",
               data);
}

TEST(SafetensorsTest, ParsesTensors) {
  auto f = ParseBytes(TwoTensors());
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_EQ((*f)->tensors().size(), 2u);
  const SafetensorsTensor* a = (*f)->Find("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->dtype, "F32");
  EXPECT_EQ(a->shape, std::vector<int64_t>({2}));
  float v[2];
  std::memcpy(v, a->data, 8);
  EXPECT_EQ(v[0], 1.5f);
  EXPECT_EQ(v[1], -2.0f);
  const SafetensorsTensor* h = (*f)->Find("h");
  EXPECT_EQ(h->shape, std::vector<int64_t>({1, 3}));
  EXPECT_EQ(h->num_elements(), 3);
  EXPECT_EQ(h->element_bytes, 2);
  EXPECT_EQ(h->data - a->data, 8);
}

TEST(SafetensorsTest, Errors) {
  EXPECT_EQ(ParseBytes("abc").status().code(), absl::StatusCode::kDataLoss);
  const std::string good = TwoTensors();
  EXPECT_EQ(ParseBytes(good.substr(0, good.size() - 1)).status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(ParseBytes(good.substr(0, 40)).status().code(), absl::StatusCode::kDataLoss);
  auto status_of = [](const std::string& header) { return ParseBytes(Build(header, std::string(16, '\0'))).status(); };
  EXPECT_THAT(std::string(status_of("[1]").message()), HasSubstr("not a JSON object"));
  EXPECT_THAT(std::string(status_of("{\"a\":").message()), HasSubstr("m.safetensors"));
  EXPECT_THAT(std::string(status_of(R"({"a":{"dtype":"Q4","shape":[2],"data_offsets":[0,8]}})").message()),
              HasSubstr("unknown dtype 'Q4'"));
  EXPECT_THAT(std::string(status_of(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})").message()),
              HasSubstr("needs 12"));
  EXPECT_THAT(std::string(status_of(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})").message()),
              HasSubstr("invalid data_offsets"));
  EXPECT_EQ(status_of(R"({"a":{"dtype":"F32","shape":[8],"data_offsets":[0,32]}})").code(),
            absl::StatusCode::kOutOfRange);
  EXPECT_THAT(std::string(status_of(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,8]}})").message()),
              HasSubstr("invalid shape"));
  EXPECT_THAT(std::string(status_of(R"({"a":{"dtype":"F32"}})").message()), HasSubstr("data_offsets"));
}

void WriteFile(const std::string& path, const std::string& bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
}

TEST(SafetensorsDirTest, SingleAndSharded) {
  const std::string root = std::string(std::getenv("TEST_TMPDIR"));
  const std::string single = root + "/single";
  mkdir(single.c_str(), 0755);
  WriteFile(single + "/model.safetensors", TwoTensors());
  auto d = SafetensorsDir::Open(single);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ((*d)->num_tensors(), 2u);
  EXPECT_NE((*d)->Find("h"), nullptr);
  EXPECT_EQ((*d)->Get("x").status().code(), absl::StatusCode::kNotFound);

  const std::string sharded = root + "/sharded";
  mkdir(sharded.c_str(), 0755);
  const float one = 1.0f;
  WriteFile(sharded + "/part1.safetensors",
            Build(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", std::string(reinterpret_cast<const char*>(&one), 4)));
  WriteFile(sharded + "/part2.safetensors",
            Build(R"({"y":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]}})", std::string(4, '\0')));
  WriteFile(sharded + "/model.safetensors.index.json",
            R"({"metadata":{},"weight_map":{"x":"part1.safetensors","y":"part2.safetensors"}})");
  d = SafetensorsDir::Open(sharded);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ((*d)->num_tensors(), 2u);
  EXPECT_EQ((*(*d)->Get("y"))->dtype, "BF16");

  auto missing = SafetensorsDir::Open(root + "/nothing");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("model.safetensors"));
}

}  // namespace
}  // namespace tessel::llm
