// The fp16 scale table the x86 GEMV kernels read block scales through; the block layouts themselves
// are kernels/gemv/ggml_blocks.h, the conversions support/fp16.h.
#ifndef TESSEL_KERNELS_GEMV_INTERNAL_QUANT_BLOCKS_H_
#define TESSEL_KERNELS_GEMV_INTERNAL_QUANT_BLOCKS_H_

#include "kernels/gemv/ggml_blocks.h"
#include "support/fp16.h"

namespace tessel {

// All 65536 halves as floats (256 KiB, built on first use). x86 kernels read block scales through it:
// one broadcast load instead of a scalar convert and a shuffle per block, as llama.cpp does.
const float* Fp16ToF32Table();

}  // namespace tessel

#endif  // TESSEL_KERNELS_GEMV_INTERNAL_QUANT_BLOCKS_H_
