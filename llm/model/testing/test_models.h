// Model files for tests: small Llama GGUF files with random weights (for tests that need a model but
// no trained one; they run everywhere, qemu included) and weight-type conversions of GGUF files.
#ifndef TESSEL_LLM_MODEL_TESTING_TEST_MODELS_H_
#define TESSEL_LLM_MODEL_TESTING_TEST_MODELS_H_

#include <cstdint>
#include <string>

#include "llm/gguf/ggml_types.h"
#include "absl/status/status.h"
#include "llm/gguf/gguf_writer.h"

namespace tessel::llm::testing {

struct SyntheticModelSpec {
  int dim = 64;
  int layers = 2;
  int heads = 4;
  int kv_heads = 2;
  int ffn = 96;
  int vocab = 300;  // 259 special and byte tokens, then "▁" and letters
  int context = 128;
  GgmlType type = GgmlType::kF32;
  bool tied = false;
  int sliding_window = 0;
  uint32_t seed = 1;
};

// A GgufWriter holding the whole model (metadata, SentencePiece vocabulary, tensors), so that tests
// can corrupt it before serializing.
GgufWriter MakeSyntheticLlama(const SyntheticModelSpec& spec);

// Writes the model to $TEST_TMPDIR/<name> and returns the path.
std::string WriteSyntheticLlama(const SyntheticModelSpec& spec, const std::string& name);
std::string TempPath(const std::string& name);

// Copies a GGUF file with every matrix converted to `type`: F32 gives the exact dequantized
// weights of a quantized file; other types quantize (rows must fit the type's blocks). Vectors
// (norms) and metadata are copied unchanged.
absl::Status ConvertGguf(const std::string& in, const std::string& out, GgmlType type);

// The same random model as a Hugging Face directory $TEST_TMPDIR/<name>: config.json, model.safetensors
// (spec.type F32, F16 or BF16; Hugging Face tensor names; the Q/K rows as drawn, which random weights do
// not care about) and a tokenizer.json (byte-fallback BPE over the same vocabulary, one merge "a b").
// Returns the directory.
std::string WriteSyntheticHuggingFace(const SyntheticModelSpec& spec, const std::string& name);

}  // namespace tessel::llm::testing

#endif  // TESSEL_LLM_MODEL_TESTING_TEST_MODELS_H_
