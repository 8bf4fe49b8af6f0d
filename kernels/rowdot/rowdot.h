// Dot products of F32 / F16 / BF16 weight rows with an f32 vector: the decode GEMV of unquantized LLM
// weights. A portable twin per type, AVX2 and AVX-512 kernels that read a row range as 4 or 2
// parallel streams (rowdot_avx512.cc), and NEON kernels (4 streams) on aarch64. Kernels trust their arguments and never allocate.
#ifndef TESSEL_KERNELS_ROWDOT_ROWDOT_H_
#define TESSEL_KERNELS_ROWDOT_ROWDOT_H_

#include <cstddef>
#include <cstdint>

#include "kernels/registry/registry.h"

namespace tessel {

// Columns per block of the column-block layout: 8 KiB of f32 x, which stays in L1 while a block's rows
// stream past it.
constexpr int64_t kRowDotColumnBlockCols = 2048;

// A weight matrix [rows, cols] as the row kernels read it.
struct RowMatrixView {
  const uint8_t* data = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
  size_t row_stride = 0;  // bytes from row r to row r + 1 (rows layout)
  // Columns in blocks of kRowDotColumnBlockCols (the last one narrower), block after block, each block's
  // [rows, width] sub-matrix row-major. Only the AVX-512 kernels read it; the others read rows.
  bool column_blocks = false;
};

// y[r - row_begin] = dot(W[r], x) for r in [row_begin, row_end).
using RowDotFn = void (*)(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end, float* y);

// For portable row kernels: sums n (a power of two >= 4) lanes by folding halves element-wise, which vectorizes, instead of
// a serial chain of scalar adds: with short rows the reduction is a large share of the work.
inline float ReduceRowLanes(float* acc, int n) {
  for (int half = n / 2; half >= 4; half /= 2) {
    for (int j = 0; j < half; ++j) acc[j] += acc[j + half];
  }
  return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

// The reference twins: plain loops with independent lane accumulators, which vectorize.
void f32_rowdot__portable(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end, float* y);
void f16_rowdot__portable(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end, float* y);
void bf16_rowdot__portable(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end, float* y);

#if defined(__x86_64__)
// AVX-512 (rowdot_avx512.cc): four parallel streams per row range, or two (`_2streams`); rows or
// column blocks.
void f32_rowdot__avx512(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end, float* y);
void f16_rowdot__avx512(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end, float* y);
void bf16_rowdot__avx512(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end, float* y);
void f32_rowdot_2streams__avx512(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end,
                                 float* y);
void f16_rowdot_2streams__avx512(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end,
                                 float* y);
void bf16_rowdot_2streams__avx512(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end,
                                  float* y);
void f16_to_f32__avx512(const uint8_t* src, float* dst, int64_t n);
void bf16_to_f32__avx512(const uint8_t* src, float* dst, int64_t n);
// The same for AVX2 + FMA + F16C CPUs without AVX-512 (rowdot_avx2.cc; rows only).
void f32_rowdot__avx2(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end, float* y);
void f16_rowdot__avx2(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end, float* y);
void bf16_rowdot__avx2(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end, float* y);
void f32_rowdot_2streams__avx2(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end, float* y);
void f16_rowdot_2streams__avx2(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end, float* y);
void bf16_rowdot_2streams__avx2(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end,
                                float* y);
void f16_to_f32__avx2(const uint8_t* src, float* dst, int64_t n);
void bf16_to_f32__avx2(const uint8_t* src, float* dst, int64_t n);
#endif
#if defined(__aarch64__)
// NEON (rowdot_neon.cc; rows only, 4 streams for any requested count).
void f32_rowdot__neon(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end, float* y);
void f16_rowdot__neon(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end, float* y);
void bf16_rowdot__neon(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end, float* y);
void f16_to_f32__neon(const uint8_t* src, float* dst, int64_t n);
void bf16_to_f32__neon(const uint8_t* src, float* dst, int64_t n);
#endif

// Every float row kernel built for this target: op "row_dot", dtypes "F32", "F16" or "BF16" (ggml's
// spelling), layout "rows" (the AVX-512 kernels also read column blocks), selected on
// ProblemShape{n = parallel streams per call}: the 4-stream kernels are legal for 4, the 2-stream ones
// for any other count; the widest ISA the CPU has first, the portable twins (backend "portable") last.
using RowDotKernel = KernelEntry<RowDotFn>;
const KernelRegistry<RowDotFn>& RowDotKernels();

}  // namespace tessel

#endif  // TESSEL_KERNELS_ROWDOT_ROWDOT_H_
