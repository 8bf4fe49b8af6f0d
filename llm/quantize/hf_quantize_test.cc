// tessel quantize from a Hugging Face directory writes the GGUF file that the same weights in GGUF
// give: the trained tiny Llama (llm/testdata/train_tiny_llama.py: safetensors f32 + tokenizer.json)
// against its own GGUF export (model-f32.gguf, written with llama.cpp's Q/K row permutation and a
// score-ordered vocabulary), both quantized the same way. Every tensor must have the same type, shape
// and bytes (Q/K rows included, so the RoPE permutation is exact for ggml blocks and Tessel group
// records alike), the configurations must agree, and both files' tokenizers must encode the held-out
// text to the same ids (the converted one merges by tokenizer.json's ranks).
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "llm/gguf/gguf.h"
#include "llm/model/llama_config.h"
#include "llm/model/testing/test_models.h"
#include "llm/quantize/llama_quantizer.h"
#include "llm/tokenizer/tokenizer.h"

namespace tessel::quant {
namespace {

const std::string kDir = "llm/testdata/tiny_llama/";

std::string ReadText(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(HuggingFaceQuantizeTest, WritesTheTensorsOfTheGgufExport) {
  struct Scheme {
    const char* label;
    int bits, group;
    bool asym;
  };
  // Q8_0 blocks, and Tessel's W4 g32 asymmetric and W3 g32 group records (the tiny model's FFN width,
  // 352, takes groups of 32 only).
  const Scheme schemes[] = {{"w8g32", 8, 32, false}, {"w4g32a", 4, 32, true}, {"w3g32", 3, 32, false}};
  for (const Scheme& sc : schemes) {
    LlamaQuantOptions o;
    o.prefer_ggml_types = false;
    o.method = WeightMethod::kRtn;
    o.scheme.bits = sc.bits;
    o.scheme.group = sc.group;
    o.scheme.asymmetric = sc.asym;
    const std::string from_hf = llm::testing::TempPath(std::string(sc.label) + "-hf.gguf");
    const std::string from_gguf = llm::testing::TempPath(std::string(sc.label) + "-gguf.gguf");
    auto quiet = [](const std::string&) {};
    auto a = QuantizeLlamaModel(kDir + "safetensors", {}, o, from_hf, quiet);
    ASSERT_TRUE(a.ok()) << a.status();
    auto b = QuantizeLlamaModel(kDir + "model-f32.gguf", {}, o, from_gguf, quiet);
    ASSERT_TRUE(b.ok()) << b.status();
    auto fa = llm::GgufFile::Open(from_hf);
    auto fb = llm::GgufFile::Open(from_gguf);
    ASSERT_TRUE(fa.ok() && fb.ok());
    ASSERT_EQ((*fa)->tensors().size(), (*fb)->tensors().size()) << sc.label;
    for (const llm::GgufTensorInfo& t : (*fb)->tensors()) {
      const llm::GgufTensorInfo* u = (*fa)->FindTensor(t.name);
      ASSERT_NE(u, nullptr) << sc.label << ": " << t.name << " missing";
      ASSERT_EQ(u->type, t.type) << sc.label << ": " << t.name;
      ASSERT_EQ(u->dims, t.dims) << sc.label << ": " << t.name;
      ASSERT_EQ(u->size_bytes, t.size_bytes) << sc.label << ": " << t.name;
      EXPECT_EQ(0, std::memcmp(u->data, t.data, t.size_bytes)) << sc.label << ": " << t.name << " differs";
    }
    auto ca = llm::LlamaConfigFromGguf(**fa);
    auto cb = llm::LlamaConfigFromGguf(**fb);
    ASSERT_TRUE(ca.ok() && cb.ok());
    EXPECT_EQ(ca->ToString(), cb->ToString());
    auto ta = llm::Tokenizer::FromGguf(**fa);
    auto tb = llm::Tokenizer::FromGguf(**fb);
    ASSERT_TRUE(ta.ok() && tb.ok()) << ta.status() << tb.status();
    const std::string text = ReadText(kDir + "heldout.txt").substr(0, 4000);
    const std::vector<int32_t> ids = (*tb)->Encode(text);
    ASSERT_GT(ids.size(), 500u);
    EXPECT_EQ((*ta)->Encode(text), ids);
    EXPECT_EQ((*ta)->Decode(ids), (*tb)->Decode(ids));
  }
}

}  // namespace
}  // namespace tessel::quant
