// Mapped and in-memory bytes, and the errors for missing files and directories.
#include "support/mapped_file.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "gtest/gtest.h"

namespace tessel {
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

TEST(MappedFileTest, HugePageCopyHoldsTheSameBytes) {
  // 3 MiB + 5 bytes: more than one huge page and not a multiple of one.
  const std::string path = TempPath("copied.bin");
  std::string bytes((size_t{3} << 20) + 5, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 131 + i / 4099);
  FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
  std::fclose(f);
  auto copy = MappedFile::Open(path, FileLoad::kHugePageCopy);
  ASSERT_TRUE(copy.ok()) << copy.status();
  EXPECT_EQ((*copy)->size(), bytes.size());
  EXPECT_TRUE((*copy)->bytes() == bytes);
  EXPECT_EQ(reinterpret_cast<uintptr_t>((*copy)->data()) % (size_t{2} << 20), 0u);
  auto mapped = MappedFile::Open(path, FileLoad::kMap);
  ASSERT_TRUE(mapped.ok()) << mapped.status();
  EXPECT_TRUE((*mapped)->bytes() == (*copy)->bytes());
  // Prefaulted, then released as a repacking load does: the bytes read back from the page cache,
  // and a copy's release leaves it alone.
  (*mapped)->Prefault();
  (*mapped)->ReleasePages();
  EXPECT_TRUE((*mapped)->bytes() == bytes);
  (*copy)->ReleasePages();
  EXPECT_TRUE((*copy)->bytes() == bytes);

  const std::string empty = TempPath("empty_copy.bin");
  std::fclose(std::fopen(empty.c_str(), "wb"));
  auto empty_copy = MappedFile::Open(empty, FileLoad::kHugePageCopy);
  ASSERT_TRUE(empty_copy.ok()) << empty_copy.status();
  EXPECT_EQ((*empty_copy)->size(), 0u);
  auto missing = MappedFile::Open("/nonexistent/model.gguf", FileLoad::kHugePageCopy);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
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
  auto dir_text = ReadFileToString("/tmp");
  EXPECT_EQ(dir_text.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(dir_text.status().message().find("directory"), absl::string_view::npos);
  EXPECT_EQ(ReadFileToString("/nonexistent/prompt.txt").status().code(), absl::StatusCode::kNotFound);
  // Opens, then fails to read (address 0 is not mapped): an error, not an empty text.
  EXPECT_FALSE(ReadFileToString("/proc/self/mem").ok());
}

}  // namespace
}  // namespace tessel
