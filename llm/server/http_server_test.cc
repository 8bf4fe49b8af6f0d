// Chat prompt tokenization: the texts of control tokens in a rendered template become those tokens, the
// text around them is encoded as text (each piece as the tokenizer encodes it alone), and BOS is added
// once. Reference: the tokenizer's own Encode of the pieces, assembled by hand.
#include "llm/server/http_server.h"

#include <cstdio>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "llm/model/llama_model.h"
#include "llm/model/testing/test_models.h"

namespace tessel::llm {
namespace {

std::vector<int32_t> Concat(std::initializer_list<std::vector<int32_t>> parts) {
  std::vector<int32_t> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

TEST(EncodeChatPromptTest, ControlTokensAndBos) {
  auto model = LoadModel(testing::WriteSyntheticLlama(testing::SyntheticModelSpec(), "chat.gguf"));
  ASSERT_TRUE(model.ok()) << model.status();
  const Tokenizer& tok = (*model)->tokenizer();
  ASSERT_EQ(tok.token_text(tok.bos()), "<s>");
  ASSERT_EQ(tok.token_text(tok.eos()), "</s>");
  const int32_t bos = tok.bos(), eos = tok.eos();
  // The template put BOS there itself: not added again.
  EXPECT_EQ(EncodeChatPrompt(tok, "<s>[INST] hi [/INST] ok</s><s>[INST] again"),
            Concat({{bos}, tok.Encode("[INST] hi [/INST] ok", false), {eos, bos}, tok.Encode("[INST] again", false)}));
  // No BOS in the text: added in front, as Encode(text, add_special) does.
  EXPECT_EQ(EncodeChatPrompt(tok, "hello there"), tok.Encode("hello there", true));
  // A '<' that starts no control token stays text.
  EXPECT_EQ(EncodeChatPrompt(tok, "a <b> c</s>"), Concat({{bos}, tok.Encode("a <b> c", false), {eos}}));
}

TEST(ModelChatTemplateTest, GgufAndHuggingFaceDirectory) {
  GgufWriter w = testing::MakeSyntheticLlama(testing::SyntheticModelSpec());
  w.SetString("tokenizer.chat_template", "{{ bos_token }}X");
  const std::string path = testing::TempPath("with_template.gguf");
  ASSERT_TRUE(w.WriteFile(path).ok());
  EXPECT_EQ(*ModelChatTemplate(path), "{{ bos_token }}X");
  EXPECT_EQ(ModelChatTemplate(testing::WriteSyntheticLlama(testing::SyntheticModelSpec(), "no_template.gguf"))
                .status()
                .code(),
            absl::StatusCode::kNotFound);
  const std::string dir = testing::WriteSyntheticHuggingFace(testing::SyntheticModelSpec(), "hf");
  EXPECT_EQ(ModelChatTemplate(dir).status().code(), absl::StatusCode::kNotFound);  // no tokenizer_config.json
  {
    std::FILE* f = std::fopen((dir + "/tokenizer_config.json").c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("{\"bos_token\": \"<s>\", \"chat_template\": \"{% for m in messages %}{{ m.content }}{% endfor %}\"}", f);
    std::fclose(f);
  }
  EXPECT_EQ(*ModelChatTemplate(dir), "{% for m in messages %}{{ m.content }}{% endfor %}");
}

}  // namespace
}  // namespace tessel::llm
