// Read-only file bytes: a private mmap of a model file (zero copy; pages load on first touch), a copy
// of the file in transparent-huge-page memory (FileLoad::kHugePageCopy), or an aligned in-memory copy
// for bytes that did not come from disk (tests, fuzzing).
#ifndef TESSEL_SUPPORT_MAPPED_FILE_H_
#define TESSEL_SUPPORT_MAPPED_FILE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tessel {

// How Open brings a file into memory.
enum class FileLoad {
  // mmap: zero copy and shared with the page cache, but 4 KiB pages. Streaming weights across them
  // costs TLB misses, and the hardware prefetchers stop at every page boundary.
  kMap,
  // Read into anonymous memory advised MADV_HUGEPAGE (2 MiB pages where the kernel allows): a copy,
  // but LLM decode, which streams every weight once per token, runs ~25% faster from it.
  kHugePageCopy,
};

class MappedFile {
 public:
  static absl::StatusOr<std::shared_ptr<const MappedFile>> Open(const std::string& path,
                                                                FileLoad load = FileLoad::kMap);
  // `name` stands in for the path in error messages.
  static std::shared_ptr<const MappedFile> FromBytes(absl::string_view bytes, std::string name);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  absl::string_view bytes() const { return absl::string_view(reinterpret_cast<const char*>(data_), size_); }
  const std::string& path() const { return path_; }
  // For a kMap file about to be read whole (repacking at load): maps every page now, in one system
  // call instead of a page fault per 4 KiB. Best effort; a no-op for copies.
  void Prefault() const;
  // For a kMap file whose bytes have been copied to where they are used (repacked at load): drops
  // its pages from this process (MADV_DONTNEED), so that they stop counting in its resident memory;
  // later reads fault them back in from the page cache. Best effort; a no-op for copies.
  void ReleasePages() const;

 private:
  MappedFile() = default;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;
  // The huge-page buffer behind a kHugePageCopy (data_ points into it).
  std::shared_ptr<uint8_t> copy_;
  std::string path_;
};

// `bytes` of zeroed anonymous memory, 2 MiB aligned and advised MADV_HUGEPAGE (best effort), or
// ResourceExhausted naming `what`.
absl::StatusOr<std::shared_ptr<uint8_t>> AllocateHugePageBuffer(size_t bytes, const std::string& what);

// Whole-file read for small text files (config.json, prompts). A directory, or a read that fails
// midway, is an error, never a short text.
absl::StatusOr<std::string> ReadFileToString(const std::string& path);

}  // namespace tessel

#endif  // TESSEL_SUPPORT_MAPPED_FILE_H_
