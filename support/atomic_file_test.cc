// WriteFileAtomically: contents replaced whole, a mapping of the old file unchanged, no temporary left
// behind, and clear errors for a missing folder, a folder as the target and a full device.
#include "support/atomic_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace tessel {
namespace {

std::string TempDir() {
  const char* base = std::getenv("TEST_TMPDIR");
  std::string tmpl = std::string(base ? base : "/tmp") + "/atomic_file_XXXXXX";
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  EXPECT_NE(::mkdtemp(name.data()), nullptr);
  return name.data();
}

std::string Read(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n != "." && n != "..") out.push_back(n);
  }
  ::closedir(d);
  return out;
}

TEST(AtomicFileTest, WritesAndReplacesWholeLeavingNoTemporary) {
  const std::string dir = TempDir(), path = dir + "/out.bin";
  ASSERT_TRUE(WriteFileAtomically(path, "first contents").ok());
  EXPECT_EQ(Read(path), "first contents");
  ASSERT_TRUE(WriteFileAtomically(path, "second").ok());
  EXPECT_EQ(Read(path), "second");
  EXPECT_EQ(Entries(dir), std::vector<std::string>{"out.bin"});
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  const mode_t mask = ::umask(0);
  ::umask(mask);
  EXPECT_EQ(st.st_mode & 0777, 0666 & ~mask) << "created with the umask's permissions, not mkstemp's 0600";
}

// A reader that mapped the old file (a running tessel with its model mapped) keeps the old bytes.
TEST(AtomicFileTest, MappedReaderKeepsTheOldContents) {
  const std::string dir = TempDir(), path = dir + "/model.tsl";
  const std::string old_bytes(8192, 'a');
  ASSERT_TRUE(WriteFileAtomically(path, old_bytes).ok());
  const int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  void* map = ::mmap(nullptr, old_bytes.size(), PROT_READ, MAP_SHARED, fd, 0);
  ASSERT_NE(map, MAP_FAILED);
  ::close(fd);
  ASSERT_TRUE(WriteFileAtomically(path, std::string(100, 'b')).ok());
  EXPECT_EQ(std::string(static_cast<const char*>(map), old_bytes.size()), old_bytes);
  ::munmap(map, old_bytes.size());
  EXPECT_EQ(Read(path), std::string(100, 'b'));
}

TEST(AtomicFileTest, MissingFolderIsNotFoundAndCreatesNothing) {
  const std::string dir = TempDir();
  const absl::Status s = WriteFileAtomically(dir + "/no/such/folder/out.npy", "x");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  EXPECT_NE(s.message().find("out.npy"), absl::string_view::npos) << s;
  EXPECT_TRUE(Entries(dir).empty());
}

TEST(AtomicFileTest, FolderAsTargetIsAnError) {
  const std::string dir = TempDir();
  const absl::Status s = WriteFileAtomically(dir, "x");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
}

TEST(AtomicFileTest, FullDeviceIsAnError) {
  if (::access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no writable /dev/full here";
  const absl::Status s = WriteFileAtomically("/dev/full", std::string(1 << 16, 'x'));
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_TRUE(WriteFileAtomically("/dev/null", "discarded").ok());
}

TEST(AtomicFileTest, EmptyNameIsAnError) { EXPECT_FALSE(WriteFileAtomically("", "x").ok()); }

}  // namespace
}  // namespace tessel
