// Row kernels of the quantized weight formats kernels/ describes: ggml's Q4_0, Q8_0 and Q4_1 blocks
// (kernels/gemv/ggml_blocks.h) and Tessel's group-wise INT4/INT3 rows (kernels/gemv/gemv.h,
// Int4GroupRecords). Q4_0, Q8_0 and INT4 groups are adapters onto kernels/gemv's selected f32-input GEMV
// (which has its own per-ISA kernels and reference twin); Q4_1 and the group types also have portable
// loops written so that GCC vectorizes them (independent lane accumulators, fixed trip counts).
// Kernels trust their arguments: cols is a multiple of the block or group size.
#ifndef TESSEL_KERNELS_ROWDOT_ROWDOT_QUANT_H_
#define TESSEL_KERNELS_ROWDOT_ROWDOT_QUANT_H_

#include <cstdint>

#include "kernels/rowdot/rowdot.h"

namespace tessel {

// Through kernels/gemv's selected kernel for the format (AVX-512, AVX2, NEON, SVE or the reference).
void q8_0_rowdot__gemv(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end, float* y);
void q4_0_rowdot__gemv(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end, float* y);
// ggml's Q4_1 rows: per 32 elements value = q * d + m.
void q4_1_rowdot__portable(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end, float* y);

// A group-wise row: cols * bits / 8 bytes of codes, then cols / group fp16 scales, then (asymmetric only)
// cols / group u8 zero points; value = scale * (code - zero), zero = 2^(bits-1) when symmetric.
// bits 4 or 3, group 32, 64 or 128; nullptr for any other format.
RowDotFn GroupRowDotPortable(int bits, int group, bool asymmetric);
// The fastest kernel for the format: kernels/gemv's selected Int4Group kernel for INT4 (one GEMV per
// stored row), the portable loop for INT3; nullptr for an unsupported format.
RowDotFn GroupRowDot(int bits, int group, bool asymmetric);

}  // namespace tessel

#endif  // TESSEL_KERNELS_ROWDOT_ROWDOT_QUANT_H_
