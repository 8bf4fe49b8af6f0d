// Tokenizers on small hand-built vocabularies with hand-computed encodings: score vs rank merges,
// byte fallback, GPT-2 byte-level BPE and its pre-tokenizer.
#include "llm/tokenizer/tokenizer.h"

#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llm/gguf/gguf_writer.h"
#include "llm/tokenizer/internal/gpt2_pretokenizer.h"

namespace tessel::llm {
namespace {

using ::testing::ElementsAre;

// <unk> <s> </s> <0x00>..<0xFF>, then normal tokens.
Tokenizer::Spec SpmSpec(const std::vector<std::pair<std::string, float>>& normal) {
  Tokenizer::Spec spec;
  spec.tokens = {"<unk>", "<s>", "</s>"};
  spec.types = {TokenType::kUnknown, TokenType::kControl, TokenType::kControl};
  for (int b = 0; b < 256; ++b) {
    spec.tokens.push_back(absl::StrFormat("<0x%02X>", b));
    spec.types.push_back(TokenType::kByte);
  }
  spec.scores.assign(spec.tokens.size(), 0.0f);
  for (const auto& [text, score] : normal) {
    spec.tokens.push_back(text);
    spec.types.push_back(TokenType::kNormal);
    spec.scores.push_back(score);
  }
  spec.bos = 1;
  spec.eos = 2;
  spec.unk = 0;
  return spec;
}

constexpr int kFirst = 259;  // id of the first normal token in SpmSpec

std::vector<std::pair<std::string, float>> SmallVocab() {
  return {{"\xe2\x96\x81", 0}, {"a", 0},       {"b", 0},    {"c", 0},
          {"ab", -1},          {"bc", -0.5f}, {"\xe2\x96\x81" "a", -2}, {"abc", -3}};
}
// Ids: ▁ 259, a 260, b 261, c 262, ab 263, bc 264, ▁a 265, abc 266.

TEST(SentencePieceTest, MergesHighestScoreFirst) {
  auto t = Tokenizer::Create(SpmSpec(SmallVocab()));
  ASSERT_TRUE(t.ok()) << t.status();
  // "▁abc": bc (-0.5) beats ab (-1) and ▁a (-2); then ▁a; "abc" can no longer form.
  EXPECT_THAT((*t)->Encode("abc"), ElementsAre(1, kFirst + 6, kFirst + 5));
  EXPECT_THAT((*t)->Encode("abc", /*add_special=*/false), ElementsAre(kFirst + 6, kFirst + 5));
  // Spaces become ▁ symbols: in "▁ab▁c", ab (-1) outranks ▁a (-2), and no token spans a ▁ boundary.
  EXPECT_THAT((*t)->Encode("ab c", false), ElementsAre(kFirst, kFirst + 4, kFirst, kFirst + 3));
  EXPECT_EQ((*t)->Decode((*t)->Encode("ab c")), "ab c");
}

TEST(SentencePieceTest, ByteFallbackAndUnknown) {
  auto t = Tokenizer::Create(SpmSpec(SmallVocab()));
  ASSERT_TRUE(t.ok());
  // é is not in the vocabulary: its UTF-8 bytes C3 A9 become byte tokens 3 + 0xC3, 3 + 0xA9.
  EXPECT_THAT((*t)->Encode("a\xc3\xa9", false), ElementsAre(kFirst + 6, 3 + 0xC3, 3 + 0xA9));
  EXPECT_EQ((*t)->Decode((*t)->Encode("a\xc3\xa9 z!")), "a\xc3\xa9 z!");
  EXPECT_EQ((*t)->TokenPiece(3 + 0xC3), "\xc3");
  EXPECT_EQ((*t)->TokenPiece(kFirst + 6), " a");
  EXPECT_EQ((*t)->TokenPiece(1), "");  // control tokens print nothing
  // Invalid UTF-8 still round-trips through byte tokens.
  EXPECT_EQ((*t)->Decode((*t)->Encode("\xff\xc3")), "\xff\xc3");

  Tokenizer::Spec no_bytes;
  no_bytes.tokens = {"<unk>", "<s>", "</s>", "\xe2\x96\x81", "a"};
  no_bytes.types = {TokenType::kUnknown, TokenType::kControl, TokenType::kControl, TokenType::kNormal,
                    TokenType::kNormal};
  no_bytes.scores = {0, 0, 0, 0, 0};
  no_bytes.unk = 0;
  no_bytes.bos = 1;
  auto u = Tokenizer::Create(no_bytes);
  ASSERT_TRUE(u.ok());
  EXPECT_THAT((*u)->Encode("a?", false), ElementsAre(3, 4, 0));
}

TEST(SentencePieceTest, RankMergesFollowMergeOrderNotScores) {
  Tokenizer::Spec spec = SpmSpec(SmallVocab());
  spec.scores.clear();
  spec.merges = {{"a", "b"}, {"b", "c"}, {"\xe2\x96\x81", "a"}};
  auto t = Tokenizer::Create(spec);
  ASSERT_TRUE(t.ok()) << t.status();
  // "▁abc": ab (rank 0) first, then no merge rule joins ▁+ab or ab+c.
  EXPECT_THAT((*t)->Encode("abc", false), ElementsAre(kFirst, kFirst + 4, kFirst + 3));
  EXPECT_THAT((*t)->Encode("c", false), ElementsAre(kFirst, kFirst + 3));
}

TEST(SentencePieceTest, ControlTokensNeverComeOutOfMerging) {
  Tokenizer::Spec spec = SpmSpec({{"\xe2\x96\x81", 0}, {"x", 0}, {"y", 0}, {"xy", 5}});
  spec.types.back() = TokenType::kControl;
  auto t = Tokenizer::Create(spec);
  ASSERT_TRUE(t.ok());
  EXPECT_THAT((*t)->Encode("xy", false), ElementsAre(kFirst, kFirst + 1, kFirst + 2));
}

TEST(SentencePieceTest, SpecValidation) {
  Tokenizer::Spec spec = SpmSpec(SmallVocab());
  spec.bos = 100000;
  EXPECT_EQ(Tokenizer::Create(spec).status().code(), absl::StatusCode::kInvalidArgument);
  spec = SpmSpec(SmallVocab());
  spec.scores.pop_back();
  EXPECT_EQ(Tokenizer::Create(spec).status().code(), absl::StatusCode::kInvalidArgument);
  spec = SpmSpec(SmallVocab());
  spec.scores.clear();
  EXPECT_EQ(Tokenizer::Create(spec).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Tokenizer::Create(Tokenizer::Spec()).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(Gpt2PreTokenizerTest, MatchesTheRegex) {
  EXPECT_THAT(Gpt2PreTokenize("Hello world's 123  x\n\n"),
              ElementsAre("Hello", " world", "'s", " 123", " ", " x", "\n\n"));
  EXPECT_THAT(Gpt2PreTokenize("a\tb"), ElementsAre("a", "\t", "b"));
  EXPECT_THAT(Gpt2PreTokenize(" !!?x  "), ElementsAre(" !!?", "x", "  "));
  EXPECT_THAT(Gpt2PreTokenize("'ll've'x"), ElementsAre("'ll", "'ve", "'", "x"));
  EXPECT_THAT(Gpt2PreTokenize("\xc3\xbcn\xc3\xaf 42\xd9\xa3"),  // "ünï 42٣": Arabic-Indic digit is a number
              ElementsAre("\xc3\xbcn\xc3\xaf", " 42\xd9\xa3"));
  EXPECT_THAT(Gpt2PreTokenize("\xe4\xbd\xa0\xe5\xa5\xbd\xef\xbc\x8c"),  // 你好，: letters, then punctuation
              ElementsAre("\xe4\xbd\xa0\xe5\xa5\xbd", "\xef\xbc\x8c"));
  EXPECT_THAT(Gpt2PreTokenize(""), ElementsAre());
  EXPECT_THAT(Gpt2PreTokenize("x \xff"), ElementsAre("x", " \xff"));  // invalid bytes are "other"
}

absl::StatusOr<std::unique_ptr<Tokenizer>> SmallBpe() {
  // Byte-level vocabulary: the 256 mapped bytes, then three merges.
  GgufWriter w;
  std::vector<std::string> tokens;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
    tokens.push_back(printable ? std::string(1, static_cast<char>(b)) : "");
  }
  // Printable Latin-1 bytes map to their own code points, which are two UTF-8 bytes.
  for (int b = 0xA1; b < 256; ++b) {
    if (b == 0xAD) continue;
    tokens[b] = std::string{static_cast<char>(0xC0 | (b >> 6)), static_cast<char>(0x80 | (b & 0x3F))};
  }
  int extra = 0;
  for (int b = 0; b < 256; ++b) {
    if (!tokens[b].empty()) continue;
    const int cp = 256 + extra++;
    tokens[b] = std::string{static_cast<char>(0xC0 | (cp >> 6)), static_cast<char>(0x80 | (cp & 0x3F))};
  }
  const std::string G = tokens[' '];  // "Ġ" (U+0120)
  tokens.push_back(G + "t");
  tokens.push_back("he");
  tokens.push_back(G + "the");
  tokens.push_back("<|endoftext|>");
  std::vector<int32_t> types(tokens.size(), 1);
  types.back() = 3;
  w.SetString("tokenizer.ggml.model", "gpt2");
  w.SetStringArray("tokenizer.ggml.tokens", tokens);
  w.SetInt32Array("tokenizer.ggml.token_type", types);
  w.SetStringArray("tokenizer.ggml.merges", {G + " t", "h e", G + "t he"});
  w.SetUint32("tokenizer.ggml.eos_token_id", 259);
  auto g = GgufFile::Parse(MappedFile::FromBytes(w.Serialize(), "bpe.gguf"));
  if (!g.ok()) return g.status();
  return Tokenizer::FromGguf(**g);
}

TEST(ByteLevelBpeTest, EncodesAndDecodes) {
  auto t = SmallBpe();
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)->kind(), Tokenizer::Kind::kByteLevelBpe);
  EXPECT_FALSE((*t)->add_bos());
  // "the the": words "the" -> t, he; " the" -> Ġt + he -> Ġthe.
  EXPECT_THAT((*t)->Encode("the the"), ElementsAre('t', 257, 258));
  EXPECT_THAT((*t)->Encode("\n"), ElementsAre(10));  // byte 0x0A is token 10
  const std::string text = "the\ttheme \xc3\xa9t\xc3\xa9 the!";
  EXPECT_EQ((*t)->Decode((*t)->Encode(text)), text);
  EXPECT_TRUE((*t)->IsEndOfGeneration(259));
  EXPECT_EQ((*t)->TokenPiece(259), "");
  EXPECT_EQ((*t)->TokenPiece(258), " the");
}

TEST(TokenizerGgufTest, Errors) {
  GgufWriter w;
  w.SetString("tokenizer.ggml.model", "bert");
  w.SetStringArray("tokenizer.ggml.tokens", {"a"});
  auto g = GgufFile::Parse(MappedFile::FromBytes(w.Serialize(), "x.gguf"));
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(Tokenizer::FromGguf(**g).status().code(), absl::StatusCode::kUnimplemented);
  w.SetString("tokenizer.ggml.model", "gpt2");
  w.SetString("tokenizer.ggml.pre", "llama-bpe");
  g = GgufFile::Parse(MappedFile::FromBytes(w.Serialize(), "x.gguf"));
  EXPECT_THAT(std::string(Tokenizer::FromGguf(**g).status().message()), ::testing::HasSubstr("llama-bpe"));
  w.SetString("tokenizer.ggml.model", "llama");
  g = GgufFile::Parse(MappedFile::FromBytes(w.Serialize(), "x.gguf"));
  EXPECT_THAT(std::string(Tokenizer::FromGguf(**g).status().message()), ::testing::HasSubstr("x.gguf"));
  GgufWriter none;
  g = GgufFile::Parse(MappedFile::FromBytes(none.Serialize(), "x.gguf"));
  EXPECT_EQ(Tokenizer::FromGguf(**g).status().code(), absl::StatusCode::kNotFound);
}

TEST(TokenizerJsonTest, SentencePieceStyle) {
  auto root = json::Parse(R"({
    "added_tokens": [{"id": 0, "content": "<unk>", "special": true}, {"id": 1, "content": "<s>", "special": true}],
    "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "\u2581"},
                   {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]},
    "pre_tokenizer": null,
    "model": {"type": "BPE", "byte_fallback": true, "unk_token": "<unk>",
              "vocab": {"<unk>": 0, "<s>": 1, "<0x21>": 2, "\u2581": 3, "a": 4, "b": 5, "\u2581a": 6, "ab": 7},
              "merges": ["a b", ["\u2581", "a"]]}})");
  ASSERT_TRUE(root.ok()) << root.status();
  auto t = Tokenizer::FromHuggingFaceJson(*root, 1, -1, "tokenizer.json");
  ASSERT_TRUE(t.ok()) << t.status();
  // "▁ab!": ab (rank 0) first, so ▁+a never merges; "!" falls back to <0x21>.
  EXPECT_THAT((*t)->Encode("ab!"), ElementsAre(1, 3, 7, 2));
  EXPECT_EQ((*t)->Decode((*t)->Encode("ab!")), "ab!");
  EXPECT_EQ((*t)->token_type(0), TokenType::kControl);
  EXPECT_EQ((*t)->token_type(2), TokenType::kByte);

  auto wordpiece = json::Parse(R"({"model": {"type": "WordPiece", "vocab": {}}})");
  EXPECT_EQ(Tokenizer::FromHuggingFaceJson(*wordpiece, -1, -1, "t.json").status().code(),
            absl::StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace tessel::llm
