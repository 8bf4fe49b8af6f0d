// A weight matrix [rows, cols] in a ggml type: as the model file stores it (rows contiguous, ggml
// blocks), or, for Q4_0 / Q8_0 on CPUs with a Panel16 kernel, repacked once at load into kernels/gemv's
// Panel16 layout (gemv.h: 16 rows per vector, one linear stream).
#ifndef TESSEL_LLM_MATMUL_WEIGHT_MATRIX_H_
#define TESSEL_LLM_MATMUL_WEIGHT_MATRIX_H_

#include <cstddef>
#include <cstdint>

#include "llm/gguf/ggml_types.h"

namespace tessel::llm {

enum class WeightLayout {
  kRows,     // ggml: row r at data + r * row_bytes()
  kPanel16,  // kernels/gemv Panel16 (Q4_0 / Q8_0 only); row() does not apply, see RowBlocks
};

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
  // Row r in ggml blocks, either layout: a pointer into data (kRows), or `scratch` (row_bytes()) filled.
  const uint8_t* RowBlocks(int64_t r, uint8_t* scratch) const;
};

// True for Q4_0 / Q8_0 when this CPU has a Panel16 kernel (kernels/gemv FastGemmQ8Panel16Kernel):
// then RepackPanel16 pays off (decode streams it ~1.5x faster, prefill skips its per-call repack).
bool Panel16Available(GgmlType type);
// Bytes RepackPanel16 writes for w.
size_t Panel16Bytes(const WeightMatrix& w);
// Writes w (kRows, Q4_0 / Q8_0) to dst (Panel16Bytes(w), 64-byte aligned) in the Panel16 layout and
// returns the view of it.
WeightMatrix RepackPanel16(const WeightMatrix& w, uint8_t* dst);

}  // namespace tessel::llm

#endif  // TESSEL_LLM_MATMUL_WEIGHT_MATRIX_H_
