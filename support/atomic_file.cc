#include "support/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"

namespace tessel {
namespace {

absl::Status ErrnoError(const std::string& path, const char* what, int err) {
  const std::string msg = absl::StrCat(path, ": ", what, ": ", std::strerror(err));
  if (err == ENOSPC || err == EDQUOT || err == EFBIG) return absl::ResourceExhaustedError(msg);
  if (err == ENOENT || err == ENOTDIR) return absl::NotFoundError(absl::StrCat(msg, " (does the folder exist?)"));
  if (err == EACCES || err == EPERM || err == EROFS) return absl::PermissionDeniedError(msg);
  return absl::UnavailableError(msg);
}

// Writes all of `data` to `fd`, retrying short writes and interrupted calls; returns 0 or an errno.
int WriteAll(int fd, absl::string_view data) {
  const char* p = data.data();
  size_t left = data.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return EIO;
    p += n;
    left -= static_cast<size_t>(n);
  }
  return 0;
}

// Writes each piece in turn; returns 0 or an errno.
int WriteAll(int fd, absl::Span<const absl::string_view> pieces) {
  for (absl::string_view piece : pieces) {
    if (const int err = WriteAll(fd, piece); err != 0) return err;
  }
  return 0;
}

}  // namespace

absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents) {
  const absl::string_view pieces[] = {contents};
  return WriteFileAtomically(path, absl::MakeConstSpan(pieces));
}

absl::Status WriteFileAtomically(const std::string& path, absl::Span<const absl::string_view> pieces) {
  if (path.empty()) return absl::InvalidArgumentError("empty output file name");
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode)) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return ErrnoError(path, "cannot open", errno);
    const int err = WriteAll(fd, pieces);
    if (::close(fd) != 0 && err == 0) return ErrnoError(path, "cannot write", errno);
    if (err != 0) return ErrnoError(path, "cannot write", err);
    return absl::OkStatus();
  }
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": is a folder, not a file name"));
  }
  std::string tmpl = absl::StrCat(path, ".tmp-XXXXXX");
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  if (fd < 0) return ErrnoError(path, "cannot create a file in its folder", errno);
  const std::string tmp(name.data());
  // mkstemp makes the file 0600; give it what a plain create would (0666 less the umask).
  const mode_t mask = ::umask(0);
  ::umask(mask);
  int err = ::fchmod(fd, 0666 & ~mask) != 0 ? errno : 0;
  if (err == 0) err = WriteAll(fd, pieces);
  if (err == 0 && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && ::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) {
    ::unlink(tmp.c_str());
    return ErrnoError(path, "cannot write", err);
  }
  return absl::OkStatus();
}

}  // namespace tessel
