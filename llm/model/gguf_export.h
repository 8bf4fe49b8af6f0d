// A loaded Llama model's configuration and tokenizer as llama GGUF metadata, and Hugging Face's Q/K row
// order in GGUF's: what a converter from a Hugging Face directory to a GGUF file needs besides the
// tensors (tessel quantize writes its output this way from either source).
#ifndef TESSEL_LLM_MODEL_GGUF_EXPORT_H_
#define TESSEL_LLM_MODEL_GGUF_EXPORT_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "llm/gguf/gguf_writer.h"
#include "llm/model/llama_model.h"

namespace tessel::llm {

// general.architecture "llama", general.name, llama.* (context, dims, layers, heads, FFN, RoPE base,
// RMSNorm epsilon, vocabulary size, sliding window when set) and tokenizer.ggml.* under the names
// llama.cpp's converter uses. A SentencePiece-style vocabulary with rank-ordered merges (tokenizer.json)
// is written as model "llama" with its merges, which Tessel reads by rank, and scores of -rank for the
// merged tokens (0 for single characters and byte tokens, -1e9 for other pieces no merge makes), which
// is how llama.cpp's score-ordered merges reproduce the same order.
void SetLlamaGgufMetadata(const LlamaModel& model, absl::string_view name, GgufWriter* w);

// The rows of a Q or K projection ([heads * head_dim] rows of row_bytes each) from Hugging Face's order
// (RoPE rotating the halves of each head) to GGUF's (RoPE on adjacent pairs): GGUF row
// h * head_dim + 2i + j is Hugging Face row h * head_dim + j * head_dim / 2 + i. Rows are moved whole,
// so any row-wise type (ggml blocks, Tessel group records) is permuted exactly.
std::string PermuteRopeRowsToGguf(absl::string_view rows, int64_t heads, int64_t head_dim, size_t row_bytes);

}  // namespace tessel::llm

#endif  // TESSEL_LLM_MODEL_GGUF_EXPORT_H_
