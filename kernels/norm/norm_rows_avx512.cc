// The normalization row kernels (internal/norm_rows_impl.h) compiled for AVX-512 (F/BW/VL/DQ) + FMA.
#include "kernels/norm/internal/norm_rows_impl.h"

namespace tessel {
namespace norm_internal {

NormRowKernels NormRowsAvx512() { return kRowKernels; }

}  // namespace norm_internal
}  // namespace tessel
