// The activation row kernels (internal/act_rows_impl.h) compiled at the
// target's baseline ISA (SSE2 on x86-64, NEON on aarch64).
#include "kernels/activation/internal/act_rows_impl.h"

namespace tessel {

ActRowKernels ActRowsAutovec() { return act_internal::kActRows; }

}  // namespace tessel
