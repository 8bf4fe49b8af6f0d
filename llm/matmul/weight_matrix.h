// A weight matrix [rows, cols] in a ggml type: as the model file stores it (rows contiguous, ggml
// blocks), or repacked once at load for decode: Q4_0 / Q4_1 / Q8_0, the k-quants and Tessel's group
// types on CPUs with a Panel16 kernel into kernels/gemv's Panel16 layouts (gemv.h: 16 rows per vector,
// one linear stream); wide F16 / BF16 matrices on CPUs with the AVX-512 row kernels into column blocks
// (kColumnBlocks).
#ifndef TESSEL_LLM_MATMUL_WEIGHT_MATRIX_H_
#define TESSEL_LLM_MATMUL_WEIGHT_MATRIX_H_

#include <cstddef>
#include <cstdint>
#include <optional>

#include "kernels/gemv/gemv.h"
#include "kernels/rowdot/rowdot.h"
#include "llm/gguf/ggml_types.h"

namespace tessel::llm {

enum class WeightLayout {
  kRows,     // ggml: row r at data + r * row_bytes()
  // kernels/gemv Panel16 (Q4_0 / Q8_0, or its group variant for Q4_1 and TESSEL_I{4,3}G*); row() does not apply,
  // see RowBlocks.
  kPanel16,
  // Columns in blocks of kColumnBlockCols (the last one narrower), block after block, each block's
  // [rows, width] sub-matrix row-major (ColumnBlock); types of block size 1 (F32, F16, BF16) only.
  // row() does not apply, see RowBlocks.
  kColumnBlocks,
};

// Columns per block of kColumnBlocks: 8 KiB of f32 x. A decode GEMV over a block re-reads its slice
// of x for every row while streaming the weights past it; a row-major matrix wider than this makes
// x itself drop out of L1 between rows (TinyLlama's FFN down projection, 5632 columns: x is 22 KiB
// against a 48 KiB L1), and then x's reloads from L2 cost DRAM streaming rate (F16, 4 streams, Zen 4:
// 21-24 GB/s row-major, 25-29 GB/s in blocks of 2048 columns).
constexpr int64_t kColumnBlockCols = kRowDotColumnBlockCols;

struct WeightMatrix {
  GgmlType type = GgmlType::kF32;
  int64_t rows = 0;
  int64_t cols = 0;  // a multiple of the type's block size
  const uint8_t* data = nullptr;
  WeightLayout layout = WeightLayout::kRows;

  size_t row_bytes() const { return GgmlRowBytes(type, cols); }
  // kRows only.
  const uint8_t* row(int64_t r) const { return data + r * row_bytes(); }
  // Bytes the matrix occupies (Panel16 pads rows to 16 and blocks to pairs).
  size_t bytes() const;
  // Row r in ggml blocks, any layout: a pointer into data (kRows), or `scratch` (row_bytes()) filled.
  const uint8_t* RowBlocks(int64_t r, uint8_t* scratch) const;
  // What the row kernels read (kRows or kColumnBlocks).
  RowMatrixView view() const { return {data, rows, cols, row_bytes(), layout == WeightLayout::kColumnBlocks}; }
  // kColumnBlocks: how many blocks, and block b as a kRows matrix of columns
  // [b * kColumnBlockCols, min(cols, (b + 1) * kColumnBlockCols)).
  int64_t column_blocks() const { return (cols + kColumnBlockCols - 1) / kColumnBlockCols; }
  WeightMatrix ColumnBlock(int64_t b) const {
    const int64_t c0 = b * kColumnBlockCols;
    WeightMatrix m = *this;
    m.cols = cols - c0 < kColumnBlockCols ? cols - c0 : kColumnBlockCols;
    m.data = data + static_cast<size_t>(rows) * GgmlRowBytes(type, c0);
    m.layout = WeightLayout::kRows;
    return m;
  }
};

// True for Q4_0 / Q4_1 / Q8_0 / Q4_K / Q5_K / Q6_K / the Tessel group types when this CPU has a Panel16
// kernel (kernels/gemv FastGemmQ8Panel16Kernel): then RepackPanel16 pays off (Q4_0 / Q8_0 decode streams
// it ~1.5x faster, prefill skips its per-call repack; Q4_1, the k-quants and INT4 / INT3 groups get int8
// kernels instead of f32 / portable ones).
bool Panel16Available(GgmlType type);
// The Panel16 kernel for a type on this CPU (the group kernel, "group_panel16xq8", for the group layouts; Q4_0's
// for Q4_0 and IQ4_NL; Q8_0's), or nullptr.
const GemmQ8Kernel* Panel16Kernel(GgmlType type);
// Bytes RepackPanel16 writes for w.
size_t Panel16Bytes(const WeightMatrix& w);
// For the types on kernels/gemv's group Panel16 layouts (Tessel's group types, Q4_1, Q5_0, Q5_1, the
// k-quants, IQ4_XS): sets the group kernel's GemmQ8Args fields (group_size, asymmetric, group_bits,
// group_mins; kquant); false for other types. Sets GemmQ8Args::nonlinear for every type (IQ4_NL on the
// Q4_0 layout).
bool Panel16GroupShape(const WeightMatrix& w, GemmQ8Args* args);
// Writes w (kRows; a type Panel16Available accepts) to dst (Panel16Bytes(w), 64-byte aligned)
// in its Panel16 layout and returns the view of it.
WeightMatrix RepackPanel16(const WeightMatrix& w, uint8_t* dst);
// How a model load lays out a matmul weight m (kRows) for decode: Panel16 (a type with a Panel16 kernel on
// this CPU), column blocks (F16 / BF16 wider than kColumnBlockCols, read by the AVX-512 row kernels), the
// same rows (narrower F16 / BF16 there), or nullopt when the decode kernels for its type read only the
// file's layout (then the model is used as the file holds it).
std::optional<WeightLayout> DecodeLayout(const WeightMatrix& m);
// Writes w (kRows; F32, F16 or BF16) to dst (w.bytes(): the same bytes, reordered) in the kColumnBlocks
// layout and returns the view of it.
WeightMatrix RepackColumnBlocks(const WeightMatrix& w, uint8_t* dst);

}  // namespace tessel::llm

#endif  // TESSEL_LLM_MATMUL_WEIGHT_MATRIX_H_
