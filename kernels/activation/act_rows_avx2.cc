// The activation row kernels (internal/act_rows_impl.h) compiled for AVX2 + FMA.
#include "kernels/activation/internal/act_rows_impl.h"

namespace tessel {

ActRowKernels ActRowsAvx2() { return act_internal::kActRows; }

}  // namespace tessel
