// The Resize row kernels (internal/resize_rows_impl.h) compiled for AVX-512.
#include "kernels/resize/internal/resize_rows_impl.h"

namespace tessel {
namespace resize_internal {

ResizeRowFns ResizeRowsAvx512() { return Rows(); }

}  // namespace resize_internal
}  // namespace tessel
