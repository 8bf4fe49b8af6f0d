// A weight-quantized matrix (quant/weight/scheme.h) packed into the GGUF tensor type that stores it.
#ifndef TESSEL_LLM_QUANTIZE_GGML_TENSOR_H_
#define TESSEL_LLM_QUANTIZE_GGML_TENSOR_H_

#include <string>

#include "absl/status/statusor.h"
#include "llm/gguf/ggml_types.h"
#include "quant/weight/scheme.h"

namespace tessel::quant {

struct GgmlTensorData {
  llm::GgmlType type;
  std::string bytes;  // rows * GgmlRowBytes(type, cols)
};

// Packs into the GGUF type that stores the scheme exactly: ggml's Q4_0 (W4 g32 symmetric), Q4_1 (W4
// g32 asymmetric; its min is the half-rounded -zero * scale) or Q8_0 (W8 g32 symmetric) when
// `prefer_ggml` and the scheme fits, so that llama.cpp loads the file; else Tessel's group-wise types.
// InvalidArgument for a scheme no type stores (8 bits other than g32 symmetric).
absl::StatusOr<GgmlTensorData> ToGgmlTensor(const QuantizedMatrix& q, bool prefer_ggml);

}  // namespace tessel::quant

#endif  // TESSEL_LLM_QUANTIZE_GGML_TENSOR_H_
