// Weight-only GEMV microkernels: dot products of quantized weight rows with an f32 vector, blocks
// dequantized in registers. Portable C++ written so that the compiler vectorizes it (independent
// per-lane accumulators, fixed trip counts); Q4_0, Q8_0 and group-wise INT4 use kernels/gemv's
// per-ISA kernels.
// Kernels trust their arguments: cols is a multiple of the block size.
#ifndef TESSEL_LLM_MATMUL_ROW_DOT_H_
#define TESSEL_LLM_MATMUL_ROW_DOT_H_

#include <cstdint>
#include <string>

#include "kernels/registry/registry.h"
#include "llm/matmul/weight_matrix.h"

namespace tessel::llm {

// y[r - row_begin] = dot(W[r], x) for r in [row_begin, row_end).
using RowDotFn = void (*)(const WeightMatrix& w, const float* x, int64_t row_begin, int64_t row_end, float* y);

void f32_rowdot__portable(const WeightMatrix& w, const float* x, int64_t row_begin, int64_t row_end, float* y);
void f16_rowdot__portable(const WeightMatrix& w, const float* x, int64_t row_begin, int64_t row_end, float* y);
void bf16_rowdot__portable(const WeightMatrix& w, const float* x, int64_t row_begin, int64_t row_end, float* y);
// Through kernels/gemv's selected f32-input kernel (AVX-512, AVX2, NEON, SVE or the reference).
void q8_0_rowdot__gemv(const WeightMatrix& w, const float* x, int64_t row_begin, int64_t row_end, float* y);
void q4_0_rowdot__gemv(const WeightMatrix& w, const float* x, int64_t row_begin, int64_t row_end, float* y);
void q4_1_rowdot__portable(const WeightMatrix& w, const float* x, int64_t row_begin, int64_t row_end, float* y);
// Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K: 256 elements at a time dequantized (ggml's reference), then dotted.
void dequant_rowdot__portable(const WeightMatrix& w, const float* x, int64_t row_begin, int64_t row_end, float* y);

#if defined(__x86_64__)
// AVX-512 (row_dot_avx512.cc); GetRowDot picks them where the CPU has AVX-512. A row range is read as
// four parallel streams, or two (`_2streams`), as CpuFeatures::row_streams (one thread) and
// row_streams_threaded (each of several threads) say.
void f32_rowdot__avx512(const WeightMatrix& w, const float* x, int64_t row_begin, int64_t row_end, float* y);
void f16_rowdot__avx512(const WeightMatrix& w, const float* x, int64_t row_begin, int64_t row_end, float* y);
void bf16_rowdot__avx512(const WeightMatrix& w, const float* x, int64_t row_begin, int64_t row_end, float* y);
void f32_rowdot_2streams__avx512(const WeightMatrix& w, const float* x, int64_t row_begin, int64_t row_end,
                                 float* y);
void f16_rowdot_2streams__avx512(const WeightMatrix& w, const float* x, int64_t row_begin, int64_t row_end,
                                 float* y);
void bf16_rowdot_2streams__avx512(const WeightMatrix& w, const float* x, int64_t row_begin, int64_t row_end,
                                  float* y);
void f16_to_f32__avx512(const uint8_t* src, float* dst, int64_t n);
void bf16_to_f32__avx512(const uint8_t* src, float* dst, int64_t n);
// The same for AVX2 + FMA + F16C CPUs without AVX-512 (row_dot_avx2.cc; plain rows only).
void f32_rowdot__avx2(const WeightMatrix& w, const float* x, int64_t row_begin, int64_t row_end, float* y);
void f16_rowdot__avx2(const WeightMatrix& w, const float* x, int64_t row_begin, int64_t row_end, float* y);
void bf16_rowdot__avx2(const WeightMatrix& w, const float* x, int64_t row_begin, int64_t row_end, float* y);
void f32_rowdot_2streams__avx2(const WeightMatrix& w, const float* x, int64_t row_begin, int64_t row_end, float* y);
void f16_rowdot_2streams__avx2(const WeightMatrix& w, const float* x, int64_t row_begin, int64_t row_end, float* y);
void bf16_rowdot_2streams__avx2(const WeightMatrix& w, const float* x, int64_t row_begin, int64_t row_end,
                                float* y);
void f16_to_f32__avx2(const uint8_t* src, float* dst, int64_t n);
void bf16_to_f32__avx2(const uint8_t* src, float* dst, int64_t n);
#endif

// Row r of w (kRows or kColumnBlocks) as f32 into dst[w.cols]: DequantizeRow, with AVX-512 conversions
// for F16 / BF16 where GetRowDot uses AVX-512.
void RowToF32(const WeightMatrix& w, int64_t r, float* dst);

// Whether GetRowDot's kernel for `type` reads the kColumnBlocks layout (F16 / BF16 on AVX-512): then
// RepackColumnBlocks pays for matrices wider than kColumnBlockCols. The portable kernels read kRows only.
bool ColumnBlocksAvailable(GgmlType type);

// Every row kernel built for this target: op "row_dot", dtypes the ggml type's name ("F16", "Q4_K",
// "TESSEL_I4G32"), layout "rows" (the F16 / BF16 AVX-512 kernels also read kColumnBlocks), selected on
// ProblemShape{n = parallel streams per call}: the 4-stream kernels are legal for 4, the 2-stream ones
// for any other count; the widest ISA the CPU has first.
using RowDotKernel = KernelEntry<RowDotFn>;
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

}  // namespace tessel::llm

#endif  // TESSEL_LLM_MATMUL_ROW_DOT_H_
