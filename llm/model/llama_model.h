// A loaded Llama-family model: configuration, weight views into the mapped file(s), tokenizer. Loads
// a GGUF file (llama.cpp's tensor names, adjacent-pair RoPE) or a Hugging Face directory
// (config.json, safetensors, tokenizer.json; rotate-half RoPE). Every tensor is checked for presence,
// type and shape at load, so the forward pass never meets a surprise.
#ifndef TESSEL_LLM_MODEL_LLAMA_MODEL_H_
#define TESSEL_LLM_MODEL_LLAMA_MODEL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "support/mapped_file.h"
#include "llm/matmul/weight_matrix.h"
#include "llm/model/llama_config.h"
#include "llm/tokenizer/tokenizer.h"

namespace tessel::llm {

class GgufFile;

struct LlamaLayerWeights {
  std::vector<float> attn_norm;  // [dim]
  WeightMatrix wq;               // [heads * head_dim, dim]
  WeightMatrix wk;               // [kv_heads * head_dim, dim]
  WeightMatrix wv;               // [kv_heads * head_dim, dim]
  WeightMatrix wo;               // [dim, heads * head_dim]
  std::vector<float> ffn_norm;   // [dim]
  WeightMatrix w_gate;           // [ffn, dim]
  WeightMatrix w_up;             // [ffn, dim]
  WeightMatrix w_down;           // [dim, ffn]
};

struct LlamaWeights {
  WeightMatrix token_embedding;  // [vocab, dim]
  std::vector<LlamaLayerWeights> layers;
  std::vector<float> output_norm;  // [dim]
  WeightMatrix output;             // [vocab, dim]; the embedding itself when tied
};

class SafetensorsDir;

class LlamaModel {
 public:
  const LlamaConfig& config() const { return config_; }
  const LlamaWeights& weights() const { return weights_; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  const std::string& source() const { return source_; }
  // "Q4_0" when every matrix has that type, else "mixed"; for status lines.
  std::string WeightTypeSummary() const;
  // Bytes of weights a decode step reads (every matrix once, the embedding row aside).
  size_t WeightBytesPerToken() const;
  // "ggml rows", "Panel16", "ggml rows, column blocks for N wide matrices" or, for models of several
  // types, e.g. "Panel16 for 154 matrices, ggml rows for 1": how the matmul weights are laid out; for
  // status lines.
  std::string WeightLayoutSummary() const;

 private:
  friend absl::StatusOr<std::unique_ptr<LlamaModel>> LoadGgufModel(const std::string& path, FileLoad load,
                                                                   int threads);
  friend absl::StatusOr<std::unique_ptr<LlamaModel>> ModelFromGguf(std::unique_ptr<GgufFile> gguf);
  friend absl::StatusOr<std::unique_ptr<LlamaModel>> LoadHuggingFaceModel(const std::string& dir, FileLoad load,
                                                                          int threads);
  friend absl::StatusOr<std::unique_ptr<LlamaModel>> ModelFromHuggingFace(
      const std::string& dir, FileLoad load, std::shared_ptr<const SafetensorsDir>* files_out);
  LlamaConfig config_;
  LlamaWeights weights_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::string source_;
  // Whether every matmul weight (ggml rows) has a decode layout on this CPU: Q4_0 / Q8_0 with a Panel16
  // kernel, F16 / BF16 with the AVX-512 row kernels (column blocks where wider than kColumnBlockCols).
  bool CanRepackForDecode() const;
  // Repacks them all into one huge-page buffer on `threads` threads (0: the machine's cores, up to 8);
  // CanRepackForDecode() must hold.
  absl::Status RepackForDecode(int threads);
  // Whatever the weight views point into: mapped files, or copies of misaligned tensors.
  std::vector<std::shared_ptr<const void>> storage_;
};

// A .gguf file or a Hugging Face model directory. The default (kHugePageCopy) puts the weights that
// decode streams into huge-page memory: Q4_0 / Q8_0 matmul weights repacked to kernels/gemv's Panel16
// layout on CPUs with its kernels (the file itself then stays mapped), else a copy of the whole file.
// FileLoad::kMap maps the file and uses it as is (zero copy, less resident memory, slower decode).
// `threads`: how many threads repack (0: the machine's cores, up to 8); `tessel --threads 1` passes 1 so
// a one-core run stays on one core from load to the last token.
absl::StatusOr<std::unique_ptr<LlamaModel>> LoadModel(const std::string& path,
                                                      FileLoad load = FileLoad::kHugePageCopy, int threads = 0);
absl::StatusOr<std::unique_ptr<LlamaModel>> LoadGgufModel(const std::string& path,
                                                          FileLoad load = FileLoad::kHugePageCopy, int threads = 0);
absl::StatusOr<std::unique_ptr<LlamaModel>> LoadHuggingFaceModel(const std::string& dir,
                                                                 FileLoad load = FileLoad::kHugePageCopy,
                                                                 int threads = 0);

}  // namespace tessel::llm

#endif  // TESSEL_LLM_MODEL_LLAMA_MODEL_H_
