// The C++ tokenizers against the Python ones that built the test vocabularies
// (llm/testdata/train_tiny_llama.py): identical ids on sample strings (ASCII, repeated spaces, byte
// fallback, CJK, emoji, digits of other scripts) and on 2000 characters of held-out text, and
// encode -> decode round trips of the whole held-out text.
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/mapped_file.h"
#include "llm/gguf/gguf.h"
#include "support/json.h"
#include "llm/tokenizer/tokenizer.h"

namespace tessel::llm {
namespace {

constexpr char kDir[] = "llm/testdata/tiny_llama/";

std::unique_ptr<Tokenizer> FromGguf(const std::string& name) {
  auto g = GgufFile::Open(kDir + name);
  EXPECT_TRUE(g.ok()) << g.status();
  if (!g.ok()) return nullptr;
  auto t = Tokenizer::FromGguf(**g);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *std::move(t) : nullptr;
}

std::unique_ptr<Tokenizer> FromTokenizerJson() {
  auto text = ReadFileToString(std::string(kDir) + "safetensors/tokenizer.json");
  EXPECT_TRUE(text.ok()) << text.status();
  auto root = json::Parse(*text, "tokenizer.json");
  EXPECT_TRUE(root.ok()) << root.status();
  auto t = Tokenizer::FromHuggingFaceJson(*root, 1, 2, "tokenizer.json");
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *std::move(t) : nullptr;
}

std::vector<int32_t> Ids(const json::Value& v) {
  std::vector<int32_t> out;
  for (const json::Value& i : v.items()) out.push_back(static_cast<int32_t>(i.integer()));
  return out;
}

class TokenizerReferenceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto text = ReadFileToString(std::string(kDir) + "tokenizer_cases.json");
    ASSERT_TRUE(text.ok()) << text.status();
    auto cases = json::Parse(*text, "tokenizer_cases.json");
    ASSERT_TRUE(cases.ok()) << cases.status();
    cases_ = *std::move(cases);
    ASSERT_GT(cases_.items().size(), 10u);
  }
  json::Value cases_;
};

TEST_F(TokenizerReferenceTest, SentencePieceScoresMatchPython) {
  std::unique_ptr<Tokenizer> t = FromGguf("model-f32.gguf");
  ASSERT_NE(t, nullptr);
  for (const json::Value& c : cases_.items()) {
    const std::string& text = c.Find("text")->str();
    EXPECT_EQ(t->Encode(text, false), Ids(*c.Find("spm_ids"))) << text;
    EXPECT_EQ(t->Decode(t->Encode(text)), text);
  }
}

TEST_F(TokenizerReferenceTest, SentencePieceRanksFromTokenizerJsonMatchPython) {
  std::unique_ptr<Tokenizer> t = FromTokenizerJson();
  ASSERT_NE(t, nullptr);
  for (const json::Value& c : cases_.items()) {
    const std::string& text = c.Find("text")->str();
    EXPECT_EQ(t->Encode(text, false), Ids(*c.Find("spm_rank_ids"))) << text;
    EXPECT_EQ(t->Decode(t->Encode(text)), text);
  }
}

TEST_F(TokenizerReferenceTest, ByteLevelBpeMatchesPython) {
  std::unique_ptr<Tokenizer> t = FromGguf("tokenizer-bpe.gguf");
  ASSERT_NE(t, nullptr);
  for (const json::Value& c : cases_.items()) {
    const std::string& text = c.Find("text")->str();
    EXPECT_EQ(t->Encode(text, false), Ids(*c.Find("bpe_ids"))) << text;
    EXPECT_EQ(t->Decode(t->Encode(text)), text);
  }
}

TEST(TokenizerRoundTripTest, HeldOutText) {
  auto heldout = ReadFileToString(std::string(kDir) + "heldout.txt");
  ASSERT_TRUE(heldout.ok());
  ASSERT_GT(heldout->size(), 100000u);
  std::vector<std::unique_ptr<Tokenizer>> tokenizers;
  tokenizers.push_back(FromGguf("model-f32.gguf"));
  tokenizers.push_back(FromTokenizerJson());
  tokenizers.push_back(FromGguf("tokenizer-bpe.gguf"));
  for (const auto& t : tokenizers) {
    ASSERT_NE(t, nullptr);
    const std::vector<int32_t> ids = t->Encode(*heldout);
    EXPECT_LT(ids.size(), heldout->size() * 3 / 5);  // the merges compress
    EXPECT_TRUE(t->Decode(ids) == *heldout);
  }
}

}  // namespace
}  // namespace tessel::llm
