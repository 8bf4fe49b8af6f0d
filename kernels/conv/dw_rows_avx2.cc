// The depthwise pixel kernel (internal/dw_rows_impl.h) compiled for AVX2 + FMA.
#include "kernels/conv/internal/dw_rows_impl.h"

namespace tessel {
namespace dw_internal {

DwPixelFn DwPixelAvx2() { return DwPixel; }

}  // namespace dw_internal
}  // namespace tessel
