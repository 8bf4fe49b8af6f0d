// Hyperparameters of a Llama-family model (Llama 2/3, TinyLlama, Mistral), read from GGUF metadata
// ("llama.*" keys) or a Hugging Face config.json, and checked for consistency.
#ifndef TESSEL_LLM_MODEL_LLAMA_CONFIG_H_
#define TESSEL_LLM_MODEL_LLAMA_CONFIG_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "llm/gguf/gguf.h"
#include "support/json.h"

namespace tessel::llm {

// Which element pairs RoPE rotates. GGUF files from llama.cpp's converters store Q and K rows
// permuted so that adjacent pairs (x[2i], x[2i+1]) rotate (LLAMA_ROPE_TYPE_NORM); Hugging Face
// checkpoints rotate the halves (x[i], x[i + d/2]). Both give the same attention for the same model.
enum class RopeStyle { kAdjacentPairs, kHalves };

// The longest context a model file may declare: 16M tokens, beyond every released model (Llama 3.1:
// 128K; the longest, 10M). A larger value is a corrupt or hostile file, refused at load before a
// runtime sizes its buffers by it.
inline constexpr int64_t kMaxContextLength = int64_t{1} << 24;

struct LlamaConfig {
  int64_t dim = 0;         // embedding width
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;
  int64_t ffn_dim = 0;
  int64_t vocab_size = 0;
  int64_t context_length = 0;  // trained context
  float norm_eps = 1e-5f;
  double rope_theta = 10000.0;
  RopeStyle rope_style = RopeStyle::kAdjacentPairs;
  int64_t sliding_window = 0;  // 0: full causal attention
  bool tied_embeddings = false;

  // Every dimension positive and consistent (heads divide dim, KV heads divide heads, even head size).
  absl::Status Validate(absl::string_view source) const;
  std::string ToString() const;
};

// From "general.architecture" ("llama" or "mistral") and "<arch>.*" keys. vocab_size falls back to
// the token list's length.
absl::StatusOr<LlamaConfig> LlamaConfigFromGguf(const GgufFile& gguf);
// From config.json (model_type "llama" or "mistral").
absl::StatusOr<LlamaConfig> LlamaConfigFromHuggingFace(const json::Value& config, absl::string_view source);

}  // namespace tessel::llm

#endif  // TESSEL_LLM_MODEL_LLAMA_CONFIG_H_
