// The depthwise pixel kernel (internal/dw_rows_impl.h) compiled at the
// target's baseline ISA (SSE2 on x86-64, NEON on aarch64).
#include "kernels/conv/internal/dw_rows_impl.h"

namespace tessel {
namespace dw_internal {

DwPixelFn DwPixelAutovec() { return DwPixel; }

}  // namespace dw_internal
}  // namespace tessel
