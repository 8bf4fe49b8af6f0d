#include "llm/model/gguf_export.h"

#include <cstring>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace tessel::llm {

void SetLlamaGgufMetadata(const LlamaModel& model, absl::string_view name, GgufWriter* w) {
  const LlamaConfig& c = model.config();
  w->SetString("general.architecture", "llama");
  w->SetString("general.name", name);
  w->SetUint32("llama.context_length", static_cast<uint32_t>(c.context_length));
  w->SetUint32("llama.embedding_length", static_cast<uint32_t>(c.dim));
  w->SetUint32("llama.block_count", static_cast<uint32_t>(c.num_layers));
  w->SetUint32("llama.feed_forward_length", static_cast<uint32_t>(c.ffn_dim));
  w->SetUint32("llama.attention.head_count", static_cast<uint32_t>(c.num_heads));
  w->SetUint32("llama.attention.head_count_kv", static_cast<uint32_t>(c.num_kv_heads));
  w->SetUint32("llama.rope.dimension_count", static_cast<uint32_t>(c.head_dim));
  w->SetFloat32("llama.rope.freq_base", static_cast<float>(c.rope_theta));
  w->SetFloat32("llama.attention.layer_norm_rms_epsilon", c.norm_eps);
  w->SetUint32("llama.vocab_size", static_cast<uint32_t>(c.vocab_size));
  if (c.sliding_window > 0) w->SetUint32("llama.attention.sliding_window", static_cast<uint32_t>(c.sliding_window));

  const Tokenizer::Spec& t = model.tokenizer().spec();
  const bool spm = t.kind == Tokenizer::Kind::kSentencePiece;
  w->SetString("tokenizer.ggml.model", spm ? "llama" : "gpt2");
  if (!spm) w->SetString("tokenizer.ggml.pre", "default");
  w->SetStringArray("tokenizer.ggml.tokens", t.tokens);
  if (spm) {
    std::vector<float> scores(t.scores.begin(), t.scores.end());
    if (scores.empty()) {
      // Scores that make llama.cpp's best-score-first merging follow the merge ranks.
      absl::flat_hash_map<std::string, int32_t> ids;
      for (size_t i = 0; i < t.tokens.size(); ++i) ids.emplace(t.tokens[i], static_cast<int32_t>(i));
      scores.assign(t.tokens.size(), -1e9f);
      for (size_t i = 0; i < t.tokens.size(); ++i) {
        const std::string& s = t.tokens[i];
        const bool byte = !t.types.empty() && t.types[i] == TokenType::kByte;
        // One UTF-8 character: its lead byte's length covers the whole token.
        const unsigned char lead = s.empty() ? 0 : static_cast<unsigned char>(s[0]);
        const size_t char_len = lead < 0x80 ? 1 : lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
        if (byte || s.size() <= char_len) scores[i] = 0;
      }
      for (size_t r = 0; r < t.merges.size(); ++r) {
        auto it = ids.find(t.merges[r].first + t.merges[r].second);
        if (it != ids.end() && scores[it->second] == -1e9f) scores[it->second] = -static_cast<float>(r);
      }
    }
    w->SetFloat32Array("tokenizer.ggml.scores", scores);
  }
  std::vector<int32_t> types(t.tokens.size(), static_cast<int32_t>(TokenType::kNormal));
  for (size_t i = 0; i < t.types.size() && i < types.size(); ++i) types[i] = static_cast<int32_t>(t.types[i]);
  w->SetInt32Array("tokenizer.ggml.token_type", types);
  if (!t.merges.empty()) {
    std::vector<std::string> merges;
    merges.reserve(t.merges.size());
    for (const auto& [a, b] : t.merges) merges.push_back(absl::StrCat(a, " ", b));
    w->SetStringArray("tokenizer.ggml.merges", merges);
  }
  if (t.bos >= 0) w->SetUint32("tokenizer.ggml.bos_token_id", static_cast<uint32_t>(t.bos));
  if (t.eos >= 0) w->SetUint32("tokenizer.ggml.eos_token_id", static_cast<uint32_t>(t.eos));
  if (t.unk >= 0) w->SetUint32("tokenizer.ggml.unknown_token_id", static_cast<uint32_t>(t.unk));
  w->SetBool("tokenizer.ggml.add_bos_token", t.add_bos);
  w->SetBool("tokenizer.ggml.add_eos_token", t.add_eos);
  w->SetBool("tokenizer.ggml.add_space_prefix", t.add_space_prefix);
}

std::string PermuteRopeRowsToGguf(absl::string_view rows, int64_t heads, int64_t head_dim, size_t row_bytes) {
  std::string out(rows.size(), '\0');
  const int64_t half = head_dim / 2;
  for (int64_t h = 0; h < heads; ++h) {
    for (int64_t i = 0; i < half; ++i) {
      for (int64_t j = 0; j < 2; ++j) {
        const int64_t dst = h * head_dim + 2 * i + j, src = h * head_dim + j * half + i;
        std::memcpy(&out[dst * row_bytes], rows.data() + src * row_bytes, row_bytes);
      }
    }
  }
  return out;
}

}  // namespace tessel::llm
