// Output files written whole or not at all: the bytes go to a temporary file beside the target, are
// flushed to disk and closed with every error checked, and only then renamed over the target. A
// process that has the old file mapped keeps reading the old contents (rename replaces the name, not
// the bytes), a full disk or an unwritable folder is an error naming the file, and a failure leaves
// the target as it was and no temporary behind.
#ifndef TESSEL_SUPPORT_ATOMIC_FILE_H_
#define TESSEL_SUPPORT_ATOMIC_FILE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace tessel {

// Replaces `path` with `contents` (see above). Character devices such as /dev/null and /dev/stdout are
// written in place, since they cannot be renamed over; their write errors (/dev/full) still fail.
absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents);

// The same for a file made of `pieces` written one after another, without joining them in memory first.
absl::Status WriteFileAtomically(const std::string& path, absl::Span<const absl::string_view> pieces);

}  // namespace tessel

#endif  // TESSEL_SUPPORT_ATOMIC_FILE_H_
