// The activation row kernels (internal/act_rows_impl.h) compiled for AVX-512 (F/BW/VL/DQ) + FMA.
#include "kernels/activation/internal/act_rows_impl.h"

namespace tessel {

ActRowKernels ActRowsAvx512() { return act_internal::kActRows; }

}  // namespace tessel
