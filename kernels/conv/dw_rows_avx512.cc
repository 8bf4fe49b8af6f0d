// The depthwise pixel kernel (internal/dw_rows_impl.h) compiled for AVX-512 (F/BW/VL/DQ) + FMA.
#include "kernels/conv/internal/dw_rows_impl.h"

namespace tessel {
namespace dw_internal {

DwPixelFn DwPixelAvx512() { return DwPixel; }

}  // namespace dw_internal
}  // namespace tessel
