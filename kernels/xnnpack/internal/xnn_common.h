// What the XNNPACK f32 and int8 operator kernels share: the worker flags and error messages naming the
// node (one-time initialization: kernels/xnnpack/xnn_init.h).
#ifndef TESSEL_KERNELS_XNNPACK_INTERNAL_XNN_COMMON_H_
#define TESSEL_KERNELS_XNNPACK_INTERNAL_XNN_COMMON_H_

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "kernels/registry/op_kernel.h"
#include "kernels/xnnpack/xnn_init.h"
#include "xnnpack.h"

namespace tessel {
namespace xnn_internal {

// By default workers sleep on a futex after each operator instead of spinning. On a machine with more
// runnable threads than cores (2 cores shared with compilers), spinning workers lose their time slices
// and every operator then waits a scheduler tick for a preempted worker: 2-thread ResNet-18 went from
// 20 ms to 340 ms under load. On idle cores spinning is faster (OpKernelArgs::spin_workers).
inline uint32_t XnnFlags(const OpKernelArgs& args) { return args.spin_workers ? 0 : XNN_FLAG_YIELD_WORKERS; }

inline absl::Status XnnError(const OpKernelArgs& args, const char* what, xnn_status status) {
  return absl::InternalError(
      absl::StrCat("node '", args.node.name(), "': XNNPACK ", what, " failed (status ", static_cast<int>(status), ")"));
}

}  // namespace xnn_internal
}  // namespace tessel

#endif  // TESSEL_KERNELS_XNNPACK_INTERNAL_XNN_COMMON_H_
