// The normalization row kernels (internal/norm_rows_impl.h) compiled for the baseline ISA of the target (SSE2 on x86-64, NEON on aarch64).
#include "kernels/norm/internal/norm_rows_impl.h"

namespace tessel {
namespace norm_internal {

NormRowKernels NormRowsAutovec() { return kRowKernels; }

}  // namespace norm_internal
}  // namespace tessel
