// The Resize row kernels (internal/resize_rows_impl.h) compiled at the
// target's baseline ISA (SSE2 on x86-64, NEON on aarch64).
#include "kernels/resize/internal/resize_rows_impl.h"

namespace tessel {
namespace resize_internal {

ResizeRowFns ResizeRowsAutovec() { return Rows(); }

}  // namespace resize_internal
}  // namespace tessel
