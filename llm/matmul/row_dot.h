// The decode row kernel per ggml type: kernels/rowdot's kernels (F32 / F16 / BF16, Q4_0 / Q8_0 / INT4
// through kernels/gemv, Q4_1 and INT3 in portable loops) and, for the other quantized types, a portable
// dequantize-then-dot loop over llm/gguf's reference dequantization. Selected once per type and thread
// mode. Kernels trust their arguments: cols is a multiple of the block size.
#ifndef TESSEL_LLM_MATMUL_ROW_DOT_H_
#define TESSEL_LLM_MATMUL_ROW_DOT_H_

#include <cstdint>
#include <string>

#include "kernels/registry/registry.h"
#include "kernels/rowdot/rowdot.h"
#include "llm/matmul/weight_matrix.h"

namespace tessel::llm {

// The row kernels' type, over kernels/rowdot's view of a matrix (WeightMatrix::view()).
using RowDotFn = tessel::RowDotFn;

// Row r of w (kRows or kColumnBlocks) as f32 into dst[w.cols]: DequantizeRow, with AVX-512 conversions
// for F16 / BF16 where GetRowDot uses AVX-512.
void RowToF32(const WeightMatrix& w, int64_t r, float* dst);

// Whether GetRowDot's kernel for `type` reads the kColumnBlocks layout (F16 / BF16 on AVX-512): then
// RepackColumnBlocks pays for matrices wider than kColumnBlockCols. The portable kernels read kRows only.
bool ColumnBlocksAvailable(GgmlType type);

// Every row kernel built for this target: kernels/rowdot's F32 / F16 / BF16 kernels (RowDotKernels, whose
// keys and legality this follows) and, for the quantized types, Q4_0 / Q8_0 / INT4 through kernels/gemv,
// Q4_1 and INT3 in portable loops, the others dequantized 256 elements at a time (dequant_rowdot__portable);
// dtypes is the ggml type's name ("F16", "Q4_K", "TESSEL_I4G32").
const KernelRegistry<RowDotFn>& GgmlRowDotKernels();

// The kernel for a supported type (nullptr otherwise), selected from GgmlRowDotKernels once per type and
// thread mode and then looked up. TESSEL_FORCE_BACKEND=reference selects the portable kernels.
// `threads`: how many threads will run row ranges of one matrix at once (the F16 / BF16 kernels read
// fewer parallel streams each when several do: CpuFeatures::row_streams_threaded).
RowDotFn GetRowDot(GgmlType type, int threads = 1);

// GetRowDot's kernel by name, e.g. "f16_rowdot__avx2", with the kernels/gemv kernel it runs where it
// runs one ("q4_0_rowdot__gemv(tessel_q4_0_gemv__avx2)"); "" for an unsupported type.
std::string RowDotName(GgmlType type, int threads = 1);

// How many linear streams one decode GEMV call over `w` reads on `threads` threads with the AVX-512
// kernels: the F16 / BF16 row kernels' count (CpuFeatures::row_streams*), the Panel16 kernels' for a
// repacked Q4_0 / Q8_0 matrix (decode_streams); 0 where neither runs.
int DecodeStreams(const WeightMatrix& w, int threads);

// How those streams prefetch ahead in software, for `tessel generate`'s report: "software prefetch",
// "software prefetch into L2" (the 256-bit Panel16 kernels of the k-quants and group-wise types where
// CpuFeatures::stream_prefetch_l2 is set) or "no prefetch".
const char* DecodePrefetch(const WeightMatrix& w);

}  // namespace tessel::llm

#endif  // TESSEL_LLM_MATMUL_ROW_DOT_H_
