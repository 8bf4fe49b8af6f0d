// The generation and perplexity loops on the trained tiny Llama against PyTorch: held-out
// perplexity (ctx 256, all 228 chunks) and the greedy continuation's text; seeded sampling repeats.
#include "llm/evaluate/evaluate.h"

#include <cmath>
#include <cstdio>
#include <string>

#include "gtest/gtest.h"
#include "llm/model/llama_model.h"
#include "support/json.h"
#include "support/mapped_file.h"

namespace tessel::llm {
namespace {

const std::string kDir = "llm/testdata/tiny_llama/";

std::string Read(const std::string& name) {
  auto s = ReadFileToString(kDir + name);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : "";
}

TEST(PerplexityTest, MatchesPyTorchOnHeldOutText) {
  auto ref = json::Parse(Read("ref_perplexity.json"));
  ASSERT_TRUE(ref.ok());
  auto model = LoadModel(kDir + "model-f32.gguf");
  ASSERT_TRUE(model.ok()) << model.status();
  RuntimeOptions o;
  o.max_context = 256;
  o.max_batch = 256;
  o.all_logits = true;
  o.kv_dtype = KvDType::kF32;
  o.threads = 2;
  auto runtime = LlamaRuntime::Create(**model, o);
  ASSERT_TRUE(runtime.ok());
  // heldout.txt is the corpus from byte 0.9 * size on, exactly what the script scored.
  auto result = Perplexity(**runtime, Read("heldout.txt"), 256, 0.0, 0, nullptr);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->chunks, ref->Find("chunks")->integer());
  EXPECT_EQ(result->tokens_scored, ref->Find("tokens_scored")->integer());
  const double want = ref->Find("perplexity")->number();
  std::printf("held-out perplexity: %.6f (PyTorch %.6f)\n", result->perplexity(), want);
  EXPECT_NEAR(result->perplexity(), want, 1e-4 * want);
}

// The text is tokenized and measured against the chunk before any runtime is planned: a context of 2^24
// tokens on the 63-token prompt is an error here, not 34 GB of logits planned first.
TEST(PerplexityTest, TextShorterThanAChunkIsAnErrorBeforeAnyRuntime) {
  auto model = LoadModel(kDir + "model-f32.gguf");
  ASSERT_TRUE(model.ok()) << model.status();
  const std::string prompt = Read("prompt.txt");
  auto tokens = PerplexityTokens((*model)->tokenizer(), prompt, 1 << 24, 0.0);
  EXPECT_EQ(tokens.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(tokens.status().message(), "the text has 63 tokens after byte 0, fewer than one chunk of 16777215 (lower --ctx)");
  tokens = PerplexityTokens((*model)->tokenizer(), prompt, 64, 0.0);  // BOS + 63: exactly one chunk
  ASSERT_TRUE(tokens.ok()) << tokens.status();
  EXPECT_EQ(tokens->size(), 63u);
}

TEST(GenerateTest, GreedyTextMatchesPyTorchAndSeedsRepeat) {
  auto model = LoadModel(kDir + "model-f32.gguf");
  ASSERT_TRUE(model.ok());
  RuntimeOptions o;
  o.kv_dtype = KvDType::kF32;
  auto runtime = LlamaRuntime::Create(**model, o);
  ASSERT_TRUE(runtime.ok());
  SamplingParams greedy;
  greedy.temperature = 0;
  auto sampler = SamplerChain::Create(greedy, 512);
  std::string text;
  auto stats = Generate(**runtime, **sampler, Read("prompt.txt"), 64, [&](absl::string_view p) { text.append(p.data(), p.size()); });
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(text, Read("greedy_text.txt"));
  EXPECT_EQ(stats->prompt_tokens, 64);
  EXPECT_EQ(stats->generated_tokens, 64);
  EXPECT_EQ(stats->decode_steps, 63);
  EXPECT_GT(stats->DecodeTokensPerSecond(), 0);
  std::printf("%s\n", stats->Summary().c_str());
  EXPECT_EQ((*runtime)->kv_cache().free_blocks(), (*runtime)->kv_cache().num_blocks());

  SamplingParams sampled;
  sampled.seed = 42;
  std::string runs[3];
  for (int i = 0; i < 3; ++i) {
    sampled.seed = i < 2 ? 42 : 43;
    auto s = SamplerChain::Create(sampled, 512);
    ASSERT_TRUE(Generate(**runtime, **s, "KING", 48, [&](absl::string_view p) { runs[i].append(p.data(), p.size()); }).ok());
  }
  EXPECT_EQ(runs[0], runs[1]);
  EXPECT_NE(runs[0], runs[2]);
}

}  // namespace
}  // namespace tessel::llm
