// Quantizes the linear layers of a Llama-family model (a GGUF file or a Hugging Face directory) layer by
// layer (RTN, GPTQ or AWQ) and writes a GGUF file: quantized matrices in the scheme's type, the output head rounded to
// output_type (Q8_0 by default, as llama.cpp's quantize also narrows it) when it is stored wider,
// everything else (embeddings, norms unless AWQ folded scales into them, metadata, tokenizer) copied.
#ifndef TESSEL_LLM_QUANTIZE_LLAMA_QUANTIZER_H_
#define TESSEL_LLM_QUANTIZE_LLAMA_QUANTIZER_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "llm/gguf/ggml_types.h"
#include "quant/weight/awq.h"
#include "quant/weight/gptq.h"
#include "quant/weight/scheme.h"

namespace tessel::quant {

enum class WeightMethod { kRtn, kGptq, kAwq };
absl::StatusOr<WeightMethod> ParseWeightMethod(const std::string& name);
const char* WeightMethodName(WeightMethod m);

struct LlamaQuantOptions {
  WeightMethod method = WeightMethod::kGptq;
  QuantScheme scheme;
  // Store W4 g32 as ggml's Q4_0 / Q4_1 so that llama.cpp loads the file (else Tessel's group types).
  bool prefer_ggml_types = true;
  GptqOptions gptq;
  AwqOptions awq;
  bool awq_clip = true;
  // With ggml_type and calibration data: pass the inputs' importance matrix (each column's mean square,
  // llama.cpp's imatrix) to the quantizer.
  bool use_importance = true;
  // Tokens (whole samples, from the first) kept to search AWQ's scales and clipping and to measure
  // every layer's reconstruction error.
  int64_t search_tokens = 2048;
  // The output head (output.weight, or token_embd.weight when the embeddings are tied) is rounded to
  // this type when it is stored as F32, F16 or BF16 and the type is narrower; nullopt keeps it. Every
  // decode step reads the whole head: F16 TinyLlama's is 131 MB of 631 MB per token at W4 g128.
  std::optional<llm::GgmlType> output_type = llm::GgmlType::kQ8_0;
  // Instead of `scheme`: every decoder matrix rounded to this ggml type by its reference quantization
  // (llm::QuantizeRow; method must be RTN), as llama.cpp's quantize writes Q4_K, Q6_K, ... files.
  // Matrices whose width is not a multiple of the type's block fall back as llama.cpp's do: Q4_K to Q5_0,
  // Q5_K to Q5_1, Q6_K to Q8_0; Q2_K, Q3_K and IQ4_XS to IQ4_NL.
  std::optional<llm::GgmlType> ggml_type;
  // With ggml_type Q4_K or Q5_K: llama.cpp's _M mix, Q6_K for attn_v and ffn_down in the layers its
  // use_more_bits picks (the first and last eighth, and every third in between).
  bool k_mix = false;
};

// The type `options` gives matrix `part` ("attn_v", "ffn_down", ...) of layer `layer` of `layers`
// when options.ggml_type is set, before any fallback for its width.
llm::GgmlType GgmlTypeFor(const LlamaQuantOptions& options, const std::string& part, int64_t layer, int64_t layers);

struct LinearReport {
  std::string name;  // "blk.3.ffn_down.weight"
  int64_t rows = 0, cols = 0;
  // ||X (W - Q)^T||^2 / ||X W^T||^2 over the search tokens (the layer's own inputs); without calibration
  // data the weight error ||W - Q||^2 / ||W||^2.
  double rel_error = 0;
  std::string note;  // "alpha 0.35", "damp 0.01"
};

struct LlamaQuantReport {
  std::vector<LinearReport> linears;
  // The output head when it was rounded to LlamaQuantOptions::output_type: its weight error (note: the
  // types).
  std::optional<LinearReport> output_head;
  bool output_errors = false;  // rel_error is an output error (calibration was given)
  int64_t calibration_tokens = 0;
  double seconds = 0;
};

// `in_path`: a GGUF file (the output keeps its metadata and tensor order) or a Hugging Face directory
// (the output is written as llama.cpp's converter would: llama metadata and tokenizer, GGUF tensor
// names, Q/K rows in GGUF's RoPE order; llm/model/gguf_export.h). `calibration` holds token windows
// (CalibrationSamples); GPTQ and AWQ need them, RTN uses them only to report output errors. `log`
// receives one line per layer as it finishes.
absl::StatusOr<LlamaQuantReport> QuantizeLlamaModel(const std::string& in_path,
                                                   const std::vector<std::vector<int32_t>>& calibration,
                                                   const LlamaQuantOptions& options, const std::string& out_path,
                                                   const std::function<void(const std::string&)>& log);

}  // namespace tessel::quant

#endif  // TESSEL_LLM_QUANTIZE_LLAMA_QUANTIZER_H_
