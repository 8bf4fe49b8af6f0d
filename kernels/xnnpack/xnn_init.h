// XNNPACK's one-time initialization for every Tessel kernel that calls it, with Tessel's allocator:
// XNNPACK's packed weights (the Winograd kernel's per-point matrices, its convolutions' and fully
// connected layers') come from AllocateBuffer (support/memory.h), so the large ones sit on 2 MiB pages
// like Tessel's own packed weights. XNNPACK keeps the allocator of the first xnn_initialize in the
// process, so every Tessel call site goes through here.
#ifndef TESSEL_KERNELS_XNNPACK_XNN_INIT_H_
#define TESSEL_KERNELS_XNNPACK_XNN_INIT_H_

#include "absl/status/status.h"

namespace tessel {

// OK once XNNPACK is initialized; Unavailable (naming TESSEL_FORCE_BACKEND=reference) on a CPU it
// does not support.
absl::Status InitXnnpack();

}  // namespace tessel

#endif  // TESSEL_KERNELS_XNNPACK_XNN_INIT_H_
