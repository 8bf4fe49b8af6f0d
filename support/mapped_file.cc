// mmap-backed and in-memory file bytes.
#include "support/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "support/memory.h"

namespace tessel {
namespace {

absl::Status ErrnoStatus(int err, const std::string& what) {
  const std::string msg = absl::StrCat(what, ": ", std::strerror(err));
  if (err == ENOENT) return absl::NotFoundError(msg);
  if (err == EACCES || err == EPERM) return absl::PermissionDeniedError(msg);
  if (err == EISDIR) return absl::InvalidArgumentError(msg);
  return absl::InternalError(msg);
}

}  // namespace

absl::StatusOr<std::shared_ptr<const MappedFile>> MappedFile::Open(const std::string& path, FileLoad load) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, absl::StrCat("cannot open '", path, "'"));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return ErrnoStatus(err, absl::StrCat("cannot stat '", path, "'"));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' is not a regular file"));
  }
  std::shared_ptr<MappedFile> file(new MappedFile());
  file->path_ = path;
  file->size_ = static_cast<size_t>(st.st_size);
  if (file->size_ > 0 && load == FileLoad::kHugePageCopy) {
    absl::StatusOr<std::shared_ptr<uint8_t>> buffer =
        AllocateHugePageBuffer(file->size_, absl::StrCat("loading '", path, "'"));
    if (!buffer.ok()) {
      ::close(fd);
      return buffer.status();
    }
    file->copy_ = *std::move(buffer);  // freed by the destructor, also on the error paths below
    uint8_t* data = file->copy_.get();
    file->data_ = data;
    size_t done = 0;
    while (done < file->size_) {
      const ssize_t n = ::pread(fd, data + done, file->size_ - done, static_cast<off_t>(done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const int err = n < 0 ? errno : 0;
        ::close(fd);
        if (err != 0) return ErrnoStatus(err, absl::StrCat("cannot read '", path, "' at byte ", done));
        return absl::DataLossError(absl::StrCat("'", path, "' ended at byte ", done, " while being read (expected ",
                                                file->size_, " bytes)"));
      }
      done += static_cast<size_t>(n);
    }
  } else if (file->size_ > 0) {
    void* p = ::mmap(nullptr, file->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      return ErrnoStatus(err, absl::StrCat("cannot mmap '", path, "'"));
    }
    file->data_ = static_cast<const uint8_t*>(p);
    file->mapped_ = true;
  }
  ::close(fd);
  return std::shared_ptr<const MappedFile>(std::move(file));
}

std::shared_ptr<const MappedFile> MappedFile::FromBytes(absl::string_view bytes, std::string name) {
  std::shared_ptr<MappedFile> file(new MappedFile());
  file->path_ = std::move(name);
  file->size_ = bytes.size();
  // 64-byte alignment mirrors what mmap's page alignment gives tensor data in real files.
  const size_t padded = (bytes.size() + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, padded == 0 ? 64 : padded);
  if (!bytes.empty()) std::memcpy(p, bytes.data(), bytes.size());
  file->data_ = static_cast<const uint8_t*>(p);
  return std::shared_ptr<const MappedFile>(std::move(file));
}

void MappedFile::Prefault() const {
#ifdef MADV_POPULATE_READ
  if (mapped_) ::madvise(const_cast<uint8_t*>(data_), size_, MADV_POPULATE_READ);
#endif
}

void MappedFile::ReleasePages() const {
  if (mapped_) ::madvise(const_cast<uint8_t*>(data_), size_, MADV_DONTNEED);
}

MappedFile::~MappedFile() {
  if (mapped_) {
    ::munmap(const_cast<uint8_t*>(data_), size_);
  } else if (copy_ == nullptr) {  // FromBytes (copy_ frees itself)
    std::free(const_cast<uint8_t*>(data_));
  }
}

absl::StatusOr<std::shared_ptr<uint8_t>> AllocateHugePageBuffer(size_t bytes, const std::string& what) {
  auto* data = static_cast<uint8_t*>(MapHugePages(bytes));
  if (data == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot allocate ", bytes, " bytes for ", what, ": ", std::strerror(errno)));
  }
  return std::shared_ptr<uint8_t>(data, [bytes](uint8_t* p) { UnmapHugePages(p, bytes); });
}

absl::StatusOr<std::string> ReadFileToString(const std::string& path) {
  // read(2) rather than a stream: a stream reads a directory, or a file that fails midway, as a short
  // text without an error.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, absl::StrCat("cannot open '", path, "'"));
  std::string text;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n > 0) {
      text.append(buffer, static_cast<size_t>(n));
    } else if (n == 0) {
      break;
    } else if (errno != EINTR) {
      const int err = errno;
      ::close(fd);
      return ErrnoStatus(err, absl::StrCat("cannot read '", path, "'"));
    }
  }
  ::close(fd);
  return text;
}

}  // namespace tessel
