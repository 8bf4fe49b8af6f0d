// Sizes that come from users and files (a --ctx, a GGUF's context length, an ONNX input's shape) are
// checked before anything is allocated: products and sums in 64 bits that report overflow, and the
// machine's memory as the ceiling of what one plan may ask for, so that an impossible size is a
// one-line error instead of std::bad_alloc, a segfault or minutes of work.
#ifndef TESSEL_SUPPORT_SIZE_LIMITS_H_
#define TESSEL_SUPPORT_SIZE_LIMITS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace tessel {

// a * b and a + b of non-negative sizes; nullopt when an operand is negative or the result does not
// fit in an int64_t.
std::optional<int64_t> CheckedMul(int64_t a, int64_t b);
std::optional<int64_t> CheckedAdd(int64_t a, int64_t b);
// The product of every factor (1 for none; 0 when one is 0, an empty tensor), under the same rules.
std::optional<int64_t> CheckedProduct(absl::Span<const int64_t> factors);

// The most memory one plan may ask for: the machine's physical memory (sysconf(_SC_PHYS_PAGES) x the
// page size), or less where the environment variable TESSEL_MEMORY_LIMIT=BYTES says so (a machine
// shared with other work; tests that must see the limit without allocating gigabytes).
struct MemoryCeiling {
  uint64_t bytes = 0;
  std::string description;  // "this machine has 25.23 GB", "TESSEL_MEMORY_LIMIT is 1.0 MB"
};
// InvalidArgument when TESSEL_MEMORY_LIMIT is set but not a positive whole number of bytes.
absl::StatusOr<MemoryCeiling> GetMemoryCeiling();

// Decimal units, as the rest of Tessel prints sizes: "812 bytes", "1.5 MB", "34.36 GB".
std::string FormatBytes(uint64_t bytes);
// Binary mebibytes with one decimal, "10.5 MiB": for sizes a user gives in MiB (tessel serve --kv-mb).
std::string FormatMiB(uint64_t bytes);

// OK when `bytes` fit under the ceiling; otherwise ResourceExhausted "<what> needs 34.36 GB; this
// machine has 25.23 GB".
absl::Status CheckFitsInMemory(uint64_t bytes, absl::string_view what);

}  // namespace tessel

#endif  // TESSEL_SUPPORT_SIZE_LIMITS_H_
