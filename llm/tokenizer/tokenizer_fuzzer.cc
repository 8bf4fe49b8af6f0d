// Fuzz target for the tokenizers: any byte string (valid UTF-8 or not) encodes to ids inside the
// vocabulary and decodes back to the same bytes, with a SentencePiece vocabulary (byte fallback,
// score-ordered merges) and a GPT-2 byte-level BPE one (rank-ordered merges). The first input byte
// picks the tokenizer.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "llm/tokenizer/tokenizer.h"

namespace {

using tessel::llm::TokenType;
using tessel::llm::Tokenizer;

constexpr const char* kWords[] = {"the", "and", "to", "of", "in", "th", "he", "an", "er", "on", "ing", "é", "日本"};

// <unk>, <s>, </s>, the 256 byte tokens, "▁", letters, then merged pieces with higher scores.
const Tokenizer& SentencePiece() {
  static const Tokenizer* t = [] {
    Tokenizer::Spec s;
    s.kind = Tokenizer::Kind::kSentencePiece;
    auto add = [&s](std::string text, float score, TokenType type) {
      s.tokens.push_back(std::move(text));
      s.scores.push_back(score);
      s.types.push_back(type);
    };
    add("<unk>", 0, TokenType::kUnknown);
    add("<s>", 0, TokenType::kControl);
    add("</s>", 0, TokenType::kControl);
    for (int b = 0; b < 256; ++b) add(absl::StrFormat("<0x%02X>", b), 0, TokenType::kByte);
    add("\xe2\x96\x81", -1, TokenType::kNormal);
    for (char c = 'a'; c <= 'z'; ++c) add(std::string(1, c), -2, TokenType::kNormal);
    float score = -3;
    for (const char* w : kWords) {
      add(w, score, TokenType::kNormal);
      add(std::string("\xe2\x96\x81") + w, score + 0.5f, TokenType::kNormal);
      score -= 0.1f;
    }
    s.unk = 0;
    s.bos = 1;
    s.eos = 2;
    return Tokenizer::Create(std::move(s)).value().release();
  }();
  return *t;
}

// GPT-2's map of bytes to printable code points, as UTF-8.
std::vector<std::string> ByteChars() {
  std::vector<std::string> chars(256);
  int next = 256;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    const int cp = printable ? b : next++;
    chars[b] = cp < 0x80 ? std::string(1, static_cast<char>(cp))
                         : std::string({static_cast<char>(0xC0 | (cp >> 6)), static_cast<char>(0x80 | (cp & 0x3F))});
  }
  return chars;
}

const Tokenizer& ByteLevel() {
  static const Tokenizer* t = [] {
    Tokenizer::Spec s;
    s.kind = Tokenizer::Kind::kByteLevelBpe;
    const std::vector<std::string> chars = ByteChars();
    s.tokens = chars;
    const std::string space = chars[' '];
    for (const char* w : kWords) {
      // Merge each word left to right, with and without a leading space.
      for (const std::string& prefix : {std::string(), space}) {
        std::string left = prefix.empty() ? chars[static_cast<uint8_t>(w[0])] : prefix;
        for (size_t i = prefix.empty() ? 1 : 0; w[i] != '\0'; ++i) {
          const std::string right = chars[static_cast<uint8_t>(w[i])];
          if (std::find(s.tokens.begin(), s.tokens.end(), left + right) == s.tokens.end()) {
            s.merges.emplace_back(left, right);
            s.tokens.push_back(left + right);
          }
          left += right;
        }
      }
    }
    s.tokens.push_back("<|endoftext|>");
    s.types.assign(s.tokens.size(), TokenType::kNormal);
    s.types.back() = TokenType::kControl;
    s.bos = s.eos = static_cast<int32_t>(s.tokens.size()) - 1;
    s.add_bos = false;
    return Tokenizer::Create(std::move(s)).value().release();
  }();
  return *t;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const Tokenizer& t = data[0] & 1 ? ByteLevel() : SentencePiece();
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::vector<int32_t> ids = t.Encode(text, /*add_special=*/false);
  for (int32_t id : ids) {
    if (id < 0 || id >= t.vocab_size()) __builtin_trap();
  }
  // SentencePiece writes spaces as "▁", so text that holds "▁" itself decodes with spaces there.
  if (!absl::StrContains(text, "\xe2\x96\x81") && t.Decode(ids) != text) __builtin_trap();
  return 0;
}
