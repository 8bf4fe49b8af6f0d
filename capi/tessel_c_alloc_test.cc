// The C API's promises that C tests cannot observe: no heap allocation per CNN run or per LLM decode
// step after warm-up (support/testing/allocation_counter), LLM
// logits equal to the C++ runtime's on the same tokens, and sequences of one model driven from two
// threads at once. The LLM cases use a random-weight GGUF (llm/model/testing) and run everywhere.
//
// usage: tessel_c_alloc_test [--gtest_filter=...] [MODEL.tsl INPUT.npy]  (the CNN case needs both)
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "llm/model/llama_model.h"
#include "llm/model/llama_runtime.h"
#include "llm/model/testing/test_models.h"
#include "support/testing/allocation_counter.h"
#include "tessel/tessel.h"

namespace {
const char* g_model_path = nullptr;
const char* g_input_path = nullptr;
}  // namespace

namespace {

#define ASSERT_TESSEL_OK(call) ASSERT_EQ((call), TESSEL_OK) << tessel_last_error()

TEST(CnnTest, RunAllocatesNothingAfterWarmUp) {
  if (g_model_path == nullptr) GTEST_SKIP() << "no MODEL.tsl INPUT.npy given";
  std::FILE* f = std::fopen(g_input_path, "rb");
  ASSERT_NE(f, nullptr);
  std::vector<char> npy(1 << 16);
  npy.resize(std::fread(npy.data(), 1, npy.size(), f));
  std::fclose(f);
  const size_t header = 10 + static_cast<unsigned char>(npy[8]) + 256u * static_cast<unsigned char>(npy[9]);
  tessel_model* model = nullptr;
  ASSERT_TESSEL_OK(tessel_model_load(g_model_path, &model));
  tessel_tensor_info in, out;
  ASSERT_TESSEL_OK(tessel_model_input_info(model, 0, &in));
  ASSERT_TESSEL_OK(tessel_model_output_info(model, 0, &out));
  ASSERT_EQ(npy.size() - header, in.bytes);
  std::vector<float> y(out.bytes / sizeof(float));
  tessel_session* session = nullptr;
  ASSERT_TESSEL_OK(tessel_session_create(model, nullptr, &session));
  ASSERT_TESSEL_OK(tessel_session_bind_input(session, 0, npy.data() + header, in.bytes, TESSEL_DTYPE_F32, in.shape,
                                             in.rank));
  ASSERT_TESSEL_OK(tessel_session_bind_output(session, 0, y.data(), out.bytes));
  ASSERT_TESSEL_OK(tessel_session_run(session));
  const long before = tessel::testing::AllocationCount();
  for (int i = 0; i < 5; ++i) ASSERT_TESSEL_OK(tessel_session_run(session));
  const long allocations = tessel::testing::AllocationCount() - before;
  std::printf("tessel_session_run: %ld heap allocations in 5 runs after warm-up\n", allocations);
  EXPECT_EQ(allocations, 0);
  // The counter works: a failing call allocates its message.
  const long before_error = tessel::testing::AllocationCount();
  EXPECT_NE(tessel_session_bind_output(session, 0, y.data(), 1), TESSEL_OK);
  EXPECT_GT(tessel::testing::AllocationCount() - before_error, 0);
  ASSERT_TESSEL_OK(tessel_session_free(session));
  ASSERT_TESSEL_OK(tessel_model_free(model));
}

class LlmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = tessel::llm::testing::WriteSyntheticLlama(tessel::llm::testing::SyntheticModelSpec(), "capi.gguf");
    tessel_llm_options options;
    tessel_llm_options_init(&options);
    options.max_sequences = 2;
    options.kv_f32 = 1;
    ASSERT_TESSEL_OK(tessel_llm_load(path_.c_str(), &options, &llm_));
  }
  void TearDown() override { EXPECT_EQ(tessel_llm_free(llm_), TESSEL_OK) << tessel_last_error(); }

  std::vector<int32_t> Prompt() {
    int32_t tokens[64];
    int32_t count = 0;
    EXPECT_EQ(tessel_llm_tokenize(llm_, "abc bad cab", 11, 1, tokens, 64, &count), TESSEL_OK) << tessel_last_error();
    return std::vector<int32_t>(tokens, tokens + count);
  }

  std::string path_;
  tessel_llm* llm_ = nullptr;
};

TEST_F(LlmTest, LogitsEqualTheRuntimes) {
  const std::vector<int32_t> prompt = Prompt();
  ASSERT_GE(prompt.size(), 4u);
  auto model = tessel::llm::LoadModel(path_, tessel::FileLoad::kMap, 1);
  ASSERT_TRUE(model.ok()) << model.status();
  tessel::llm::RuntimeOptions ro;
  ro.kv_dtype = tessel::llm::KvDType::kF32;
  auto runtime = tessel::llm::LlamaRuntime::Create(**model, ro);
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  auto seq = (*runtime)->NewSequence();
  ASSERT_TRUE(seq.ok());
  auto expected = (*runtime)->Eval(*seq, prompt);
  ASSERT_TRUE(expected.ok()) << expected.status();
  tessel_sequence* s = nullptr;
  ASSERT_TESSEL_OK(tessel_sequence_create(llm_, &s));
  ASSERT_TESSEL_OK(tessel_sequence_prefill(s, prompt.data(), static_cast<int32_t>(prompt.size())));
  const float* logits = nullptr;
  int32_t vocab = 0;
  ASSERT_TESSEL_OK(tessel_sequence_logits(s, &logits, &vocab));
  ASSERT_EQ(static_cast<size_t>(vocab), expected->size());
  for (int32_t i = 0; i < vocab; ++i) ASSERT_EQ(logits[i], (*expected)[i]) << "logit " << i;
  ASSERT_TESSEL_OK(tessel_sequence_free(s));
}

TEST_F(LlmTest, DecodeAllocatesNothingAfterWarmUp) {
  const std::vector<int32_t> prompt = Prompt();
  tessel_sequence* s = nullptr;
  ASSERT_TESSEL_OK(tessel_sequence_create(llm_, &s));
  ASSERT_TESSEL_OK(tessel_sequence_prefill(s, prompt.data(), static_cast<int32_t>(prompt.size())));
  tessel_sampler_config config;
  tessel_sampler_config_init(&config);
  config.seed = 11;
  int32_t token = -1;
  ASSERT_TESSEL_OK(tessel_sequence_decode(s, &config, &token));  // creates the sampler
  const long before = tessel::testing::AllocationCount();
  for (int i = 0; i < 10; ++i) ASSERT_TESSEL_OK(tessel_sequence_decode(s, &config, &token));
  const long allocations = tessel::testing::AllocationCount() - before;
  std::printf("tessel_sequence_decode: %ld heap allocations in 10 steps after warm-up\n", allocations);
  EXPECT_EQ(allocations, 0);
  ASSERT_TESSEL_OK(tessel_sequence_free(s));
}

TEST_F(LlmTest, SequencesOnTwoThreads) {
  const std::vector<int32_t> prompt = Prompt();
  tessel_sampler_config greedy;
  tessel_sampler_config_init(&greedy);
  greedy.temperature = 0;
  auto run = [&](std::vector<int32_t>* out) {
    tessel_sequence* s = nullptr;
    if (tessel_sequence_create(llm_, &s) != TESSEL_OK) return;
    if (tessel_sequence_prefill(s, prompt.data(), static_cast<int32_t>(prompt.size())) == TESSEL_OK) {
      for (int i = 0; i < 12; ++i) {
        int32_t token = -1;
        if (tessel_sequence_decode(s, &greedy, &token) != TESSEL_OK) break;
        out->push_back(token);
      }
    }
    tessel_sequence_free(s);
  };
  std::vector<int32_t> alone;
  run(&alone);
  ASSERT_EQ(alone.size(), 12u);
  std::vector<int32_t> a, b;
  std::thread ta(run, &a), tb(run, &b);
  ta.join();
  tb.join();
  EXPECT_EQ(a, alone);
  EXPECT_EQ(b, alone);
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (argc == 3) {
    g_model_path = argv[1];
    g_input_path = argv[2];
  }
  return RUN_ALL_TESTS();
}
