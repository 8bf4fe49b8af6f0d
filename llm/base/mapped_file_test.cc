// Mapped and in-memory bytes, and the errors for missing files and directories.
#include "llm/base/mapped_file.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "gtest/gtest.h"

namespace tessel::llm {
namespace {

std::string TempPath(const char* name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

TEST(MappedFileTest, MapsFileBytes) {
  const std::string path = TempPath("mapped.bin");
  FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fputs("hello gguf", f);
  std::fclose(f);
  auto file = MappedFile::Open(path);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ((*file)->bytes(), "hello gguf");
  EXPECT_EQ((*file)->path(), path);
  auto text = ReadFileToString(path);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "hello gguf");
}

TEST(MappedFileTest, EmptyFileAndInMemoryBytes) {
  const std::string path = TempPath("empty.bin");
  std::fclose(std::fopen(path.c_str(), "wb"));
  auto file = MappedFile::Open(path);
  ASSERT_TRUE(file.ok());
  EXPECT_EQ((*file)->size(), 0u);
  auto mem = MappedFile::FromBytes("abc", "<memory>");
  EXPECT_EQ(mem->bytes(), "abc");
  EXPECT_EQ(reinterpret_cast<uintptr_t>(mem->data()) % 64, 0u);
}

TEST(MappedFileTest, Errors) {
  auto missing = MappedFile::Open("/nonexistent/model.gguf");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("/nonexistent/model.gguf"), absl::string_view::npos);
  auto dir = MappedFile::Open("/tmp");
  EXPECT_EQ(dir.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tessel::llm
