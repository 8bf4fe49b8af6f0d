// The normalization row kernels (internal/norm_rows_impl.h) compiled for AVX2 + FMA.
#include "kernels/norm/internal/norm_rows_impl.h"

namespace tessel {
namespace norm_internal {

NormRowKernels NormRowsAvx2() { return kRowKernels; }

}  // namespace norm_internal
}  // namespace tessel
