// Tokenizers of Llama-family models: SentencePiece-style (visible-space "▁" normalization, merges by
// token score as llama.cpp does for GGUF, or by merge rank as Hugging Face's tokenizer.json does, and
// <0xNN> byte fallback) and GPT-2 byte-level BPE (GPT-2 pre-tokenizer, bytes mapped to printable
// characters, merges by rank). Special tokens in input text are treated as plain text.
#ifndef TESSEL_LLM_TOKENIZER_TOKENIZER_H_
#define TESSEL_LLM_TOKENIZER_TOKENIZER_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "llm/gguf/gguf.h"
#include "support/json.h"

namespace tessel::llm {

// llama.cpp's token types (tokenizer.ggml.token_type).
enum class TokenType : int32_t {
  kUndefined = 0,
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6,
};

class Tokenizer {
 public:
  enum class Kind { kSentencePiece, kByteLevelBpe };

  struct Spec {
    Kind kind = Kind::kSentencePiece;
    std::vector<std::string> tokens;
    std::vector<float> scores;     // SentencePiece with score-ordered merges
    std::vector<TokenType> types;  // empty: every token normal
    // Rank-ordered merges: required for byte-level BPE; for SentencePiece they replace scores.
    std::vector<std::pair<std::string, std::string>> merges;
    int32_t bos = -1;
    int32_t eos = -1;
    int32_t unk = -1;
    bool add_bos = true;
    bool add_eos = false;
    bool add_space_prefix = true;  // SentencePiece: prepend "▁" to the text
  };

  static absl::StatusOr<std::unique_ptr<Tokenizer>> Create(Spec spec);
  // tokenizer.ggml.* metadata ("llama" and "gpt2" models). A "llama" vocabulary with
  // tokenizer.ggml.merges (as Tessel writes one converted from tokenizer.json) merges by their rank.
  static absl::StatusOr<std::unique_ptr<Tokenizer>> FromGguf(const GgufFile& gguf);
  // A Hugging Face tokenizer.json (model type BPE, with byte fallback or byte-level); bos/eos come
  // from config.json when the caller has them (-1 otherwise).
  static absl::StatusOr<std::unique_ptr<Tokenizer>> FromHuggingFaceJson(const json::Value& tokenizer, int32_t bos,
                                                                        int32_t eos, absl::string_view what);

  // Token ids of `text`, with BOS (and EOS) when the vocabulary asks for them and add_special is set.
  std::vector<int32_t> Encode(absl::string_view text, bool add_special = true) const;
  // The text of `ids`: control tokens vanish, byte tokens become bytes, and SentencePiece's prefix
  // space is removed from the start.
  std::string Decode(absl::Span<const int32_t> ids) const;
  // The bytes one token contributes when streaming (keeps the leading space; may be a partial
  // UTF-8 sequence for byte tokens).
  std::string TokenPiece(int32_t id) const;

  Kind kind() const { return spec_.kind; }
  int32_t vocab_size() const { return static_cast<int32_t>(spec_.tokens.size()); }
  int32_t bos() const { return spec_.bos; }
  int32_t eos() const { return spec_.eos; }
  bool add_bos() const { return spec_.add_bos; }
  bool IsEndOfGeneration(int32_t id) const { return id == spec_.eos && id >= 0; }
  const std::string& token_text(int32_t id) const { return spec_.tokens[id]; }
  // Everything it was built from (to write it into another file).
  const Spec& spec() const { return spec_; }
  TokenType token_type(int32_t id) const { return spec_.types[id]; }

 private:
  explicit Tokenizer(Spec spec) : spec_(std::move(spec)) {}
  absl::Status Init();
  void EncodeSentencePiece(absl::string_view text, std::vector<int32_t>* out) const;
  void EncodeByteLevel(absl::string_view text, std::vector<int32_t>* out) const;
  // Merges adjacent symbols of `text` (initially one per UTF-8 character) by the best priority
  // first, leftmost on ties; returns the final symbols as byte ranges.
  std::vector<std::pair<uint32_t, uint32_t>> MergeSymbols(absl::string_view text) const;
  bool Mergeable(int32_t id) const;
  void EmitSentencePieceSymbol(absl::string_view piece, std::vector<int32_t>* out) const;

  Spec spec_;
  bool use_ranks_ = false;
  absl::flat_hash_map<std::string, int32_t> token_ids_;
  // Key: 4-byte length of the left text, then left text, then right text.
  absl::flat_hash_map<std::string, int32_t> merge_ranks_;
  std::array<int32_t, 256> byte_tokens_{};            // <0xNN> ids (SentencePiece), -1 if absent
  std::array<std::string, 256> byte_to_unicode_;      // GPT-2 byte -> printable character
  absl::flat_hash_map<uint32_t, uint8_t> unicode_to_byte_;
};

}  // namespace tessel::llm

#endif  // TESSEL_LLM_TOKENIZER_TOKENIZER_H_
