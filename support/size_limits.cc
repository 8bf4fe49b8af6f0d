// Checked size arithmetic and the memory ceiling.
#include "support/size_limits.h"

#include <unistd.h>

#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tessel {

std::optional<int64_t> CheckedMul(int64_t a, int64_t b) {
  int64_t out;
  if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

std::optional<int64_t> CheckedAdd(int64_t a, int64_t b) {
  int64_t out;
  if (a < 0 || b < 0 || __builtin_add_overflow(a, b, &out)) return std::nullopt;
  return out;
}

std::optional<int64_t> CheckedProduct(absl::Span<const int64_t> factors) {
  bool empty = false;  // a zero factor makes the product 0 whatever the others (an empty tensor)
  for (int64_t f : factors) {
    if (f < 0) return std::nullopt;
    empty |= f == 0;
  }
  if (empty) return 0;
  int64_t out = 1;
  for (int64_t f : factors) {
    std::optional<int64_t> next = CheckedMul(out, f);
    if (!next) return std::nullopt;
    out = *next;
  }
  return out;
}

std::string FormatBytes(uint64_t bytes) {
  if (bytes >= 1000000000) return absl::StrFormat("%.2f GB", bytes / 1e9);
  if (bytes >= 1000000) return absl::StrFormat("%.1f MB", bytes / 1e6);
  return absl::StrCat(bytes, " bytes");
}

std::string FormatMiB(uint64_t bytes) { return absl::StrFormat("%.1f MiB", bytes / 1048576.0); }

absl::StatusOr<MemoryCeiling> GetMemoryCeiling() {
  MemoryCeiling c;
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_bytes = ::sysconf(_SC_PAGESIZE);
  // Where the system cannot say, nothing is refused for its size (allocation failures still are).
  c.bytes = pages > 0 && page_bytes > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_bytes) : UINT64_MAX;
  c.description = c.bytes == UINT64_MAX ? "this machine's memory is unknown"
                                        : absl::StrCat("this machine has ", FormatBytes(c.bytes));
  if (const char* limit = std::getenv("TESSEL_MEMORY_LIMIT"); limit != nullptr && *limit != '\0') {
    uint64_t bytes;
    if (!absl::SimpleAtoi(limit, &bytes) || bytes == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("TESSEL_MEMORY_LIMIT='", limit, "' is not a positive number of bytes"));
    }
    if (bytes < c.bytes) {
      c.bytes = bytes;
      c.description = absl::StrCat("TESSEL_MEMORY_LIMIT is ", FormatBytes(bytes));
    }
  }
  return c;
}

absl::Status CheckFitsInMemory(uint64_t bytes, absl::string_view what) {
  absl::StatusOr<MemoryCeiling> ceiling = GetMemoryCeiling();
  if (!ceiling.ok()) return ceiling.status();
  if (bytes <= ceiling->bytes) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(what, " needs ", FormatBytes(bytes), "; ", ceiling->description));
}

}  // namespace tessel
