// A weight matrix as the model files store it: [rows, cols] in a ggml type, rows contiguous, never
// copied out of the mapped file.
#ifndef TESSEL_LLM_MATMUL_WEIGHT_MATRIX_H_
#define TESSEL_LLM_MATMUL_WEIGHT_MATRIX_H_

#include <cstddef>
#include <cstdint>

#include "llm/gguf/ggml_types.h"

namespace tessel::llm {

struct WeightMatrix {
  GgmlType type = GgmlType::kF32;
  int64_t rows = 0;
  int64_t cols = 0;  // a multiple of the type's block size
  const uint8_t* data = nullptr;

  size_t row_bytes() const { return GgmlRowBytes(type, cols); }
  const uint8_t* row(int64_t r) const { return data + r * row_bytes(); }
};

}  // namespace tessel::llm

#endif  // TESSEL_LLM_MATMUL_WEIGHT_MATRIX_H_
