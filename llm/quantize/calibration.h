// Calibration for weight quantization: token windows drawn from a text, and a plain f32 forward of
// one Llama decoder layer split at the inputs of its linear layers, so that a quantizer can capture
// each linear's input (or feed the already quantized parts of the layer, GPTQ's true-sequential order).
#ifndef TESSEL_LLM_QUANTIZE_CALIBRATION_H_
#define TESSEL_LLM_QUANTIZE_CALIBRATION_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "llm/model/llama_config.h"
#include "llm/tokenizer/tokenizer.h"

namespace tessel::quant {

// `samples` windows of `seq` tokens: BOS (when the vocabulary has one) followed by seq - 1 consecutive
// tokens of `text` from seeded random starts. InvalidArgument when the text is too short.
absl::StatusOr<std::vector<std::vector<int32_t>>> CalibrationSamples(const llm::Tokenizer& tokenizer,
                                                                    absl::string_view text, int64_t samples,
                                                                    int64_t seq, uint64_t seed);

// One decoder layer's weights in f32, [rows, cols] row-major as in the model file (Q/K rows in the
// file's RoPE layout).
struct LayerF32 {
  std::vector<float> attn_norm, ffn_norm;
  std::vector<float> wq, wk, wv, wo, w_gate, w_up, w_down;
};

// The layer split at its linear inputs, over one sequence of t tokens at positions 0..t-1:
//   x [t, dim] ─AttnInput→ h1 ─(wq, wk, wv; RoPE; causal attention)→ att ─(wo; residual)→ x'
//   x' ─FfnInput→ h2 ─(w_gate, w_up; SiLU·)→ a ─(w_down; residual)→ x''
class LayerForward {
 public:
  explicit LayerForward(const llm::LlamaConfig& config);

  // h1 = RMSNorm(x) * attn_norm.
  void AttnInput(const LayerF32& w, const float* x, int64_t t, float* h1) const;
  // att [t, heads * head_dim] = attention over q, k, v of h1.
  void Attention(const LayerF32& w, const float* h1, int64_t t, float* att) const;
  // x += att wo^T.
  void AddAttnOutput(const LayerF32& w, const float* att, int64_t t, float* x) const;
  // h2 = RMSNorm(x) * ffn_norm.
  void FfnInput(const LayerF32& w, const float* x, int64_t t, float* h2) const;
  // a [t, ffn] = SiLU(h2 w_gate^T) * (h2 w_up^T).
  void FfnHidden(const LayerF32& w, const float* h2, int64_t t, float* a) const;
  // x += a w_down^T.
  void AddFfnOutput(const LayerF32& w, const float* a, int64_t t, float* x) const;

  const llm::LlamaConfig& config() const { return c_; }

 private:
  llm::LlamaConfig c_;
  std::vector<float> cos_, sin_;  // [context, head_dim / 2]
};


}  // namespace tessel::quant

#endif  // TESSEL_LLM_QUANTIZE_CALIBRATION_H_
