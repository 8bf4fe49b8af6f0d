// The engine on a random-weight model: greedy completions of concurrent requests (batched decode,
// requests joining mid-way) equal llm::Generate's, the loop behind `tessel generate --temp 0`, run
// one request at a time; stop strings, cancellation, the queue bound and the context checks.
#include "llm/server/engine.h"

#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llm/evaluate/evaluate.h"
#include "llm/model/testing/test_models.h"

namespace tessel::llm {
namespace {

using ::testing::HasSubstr;

class EngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::SyntheticModelSpec spec;
    spec.context = 128;
    auto m = LoadModel(testing::WriteSyntheticLlama(spec, "engine.gguf"));
    ASSERT_TRUE(m.ok()) << m.status();
    model_ = *std::move(m);
  }

  // The reference: Generate on its own runtime, greedy, max_tokens tokens.
  std::string Reference(const std::string& prompt, int64_t max_tokens) {
    RuntimeOptions o;
    o.max_context = 128;
    auto runtime = LlamaRuntime::Create(*model_, o);
    EXPECT_TRUE(runtime.ok());
    SamplingParams sp;
    sp.temperature = 0;
    auto sampler = SamplerChain::Create(sp, static_cast<int>(model_->config().vocab_size));
    std::string text;
    auto stats = Generate(**runtime, **sampler, prompt, max_tokens, [&](absl::string_view p) { text.append(p.data(), p.size()); });
    EXPECT_TRUE(stats.ok()) << stats.status();
    return text;
  }

  GenerationParams Greedy(const std::string& prompt, int64_t max_tokens) {
    GenerationParams p;
    p.prompt = model_->tokenizer().Encode(prompt, /*add_special=*/true);
    p.sampling.temperature = 0;
    p.max_tokens = max_tokens;
    return p;
  }

  static std::string Drain(Request& r, GenerationUpdate* last = nullptr) {
    std::string text;
    while (true) {
      GenerationUpdate u = r.Next();
      text += u.text;
      if (u.done) {
        if (last) *last = u;
        return text;
      }
    }
  }

  std::unique_ptr<LlamaModel> model_;
};

TEST_F(EngineTest, ConcurrentGreedyRequestsEqualSequentialGenerate) {
  const std::vector<std::string> prompts = {"a", "hello world", "the cat sat on the mat and then", "zz y"};
  std::vector<std::string> want;
  for (const std::string& p : prompts) {
    want.push_back(Reference(p, 40));
    ASSERT_GE(want.back().size(), 20u) << "the reference ended early: the test would compare little";
  }
  EngineOptions o;
  o.parallel = 4;
  o.context = 128;
  o.max_batch = 8;  // the longer prompts prefill in chunks beside the others' decode rows
  auto engine = Engine::Create(*model_, o);
  ASSERT_TRUE(engine.ok()) << engine.status();
  std::vector<std::shared_ptr<Request>> requests;
  for (const std::string& p : prompts) {
    auto r = (*engine)->Submit(Greedy(p, 40));
    ASSERT_TRUE(r.ok()) << r.status();
    requests.push_back(*r);
  }
  std::vector<std::string> got(prompts.size());
  std::vector<std::thread> readers;
  for (size_t i = 0; i < prompts.size(); ++i) readers.emplace_back([&, i] { got[i] = Drain(*requests[i]); });
  for (auto& t : readers) t.join();
  for (size_t i = 0; i < prompts.size(); ++i) EXPECT_EQ(got[i], want[i]) << "prompt '" << prompts[i] << "'";
  const EngineStats s = (*engine)->stats();
  EXPECT_EQ(s.completed, 4);
  EXPECT_GT(s.rows, s.steps) << "no step ran more than one sequence";
  // Every sequence gave its blocks back, but for the kept prefix of the last one to finish.
  EXPECT_GT(s.cached_kv_blocks, 0);
  EXPECT_EQ(s.free_kv_blocks + s.cached_kv_blocks, s.total_kv_blocks);
}

// The synthetic model decodes a request in a few milliseconds, so a thread preempted that long loses
// the race with the engine (two requests done before the seventh is submitted; a request done before
// its Cancel lands). The checks that need the race won retry on a fresh engine, up to kAttempts times:
// a queue bound or a Cancel that does not work fails every attempt.
constexpr int kAttempts = 5;

TEST_F(EngineTest, MoreRequestsThanSlotsQueueAndAllComplete) {
  const std::string want = Reference("hello", 100);
  int refused = 0;
  for (int attempt = 0; attempt < kAttempts && refused == 0; ++attempt) {
    EngineOptions o;
    o.parallel = 2;
    o.context = 128;
    o.max_queue = 3;
    auto engine = Engine::Create(*model_, o);
    ASSERT_TRUE(engine.ok());
    std::vector<std::shared_ptr<Request>> rs;
    for (int i = 0; i < 7; ++i) {
      auto r = (*engine)->Submit(Greedy("hello", 100));
      if (r.ok()) {
        rs.push_back(*r);
      } else {
        EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
        EXPECT_THAT(std::string(r.status().message()), HasSubstr("busy"));
        ++refused;
      }
    }
    for (auto& r : rs) EXPECT_EQ(Drain(*r), want);
  }
  EXPECT_GE(refused, 1);  // at most 2 running and 3 waiting
}

TEST_F(EngineTest, StopStringsCutTheText) {
  const std::string full = Reference("the cat", 30);
  ASSERT_GE(full.size(), 12u);
  const std::string stop = full.substr(8, 3);
  const size_t at = full.find(stop);
  EngineOptions o;
  o.context = 128;
  auto engine = Engine::Create(*model_, o);
  GenerationParams p = Greedy("the cat", 30);
  p.stop = {stop, "never appears \x01\x02"};
  auto r = (*engine)->Submit(p);
  ASSERT_TRUE(r.ok());
  GenerationUpdate last;
  EXPECT_EQ(Drain(**r, &last), full.substr(0, at));
  EXPECT_EQ(last.finish_reason, "stop");
}

TEST_F(EngineTest, LengthAndCancel) {
  EngineOptions o;
  o.context = 128;
  auto engine = Engine::Create(*model_, o);
  auto r = (*engine)->Submit(Greedy("a", 5));
  GenerationUpdate last;
  Drain(**r, &last);
  // The synthetic model may end early at its end-of-generation token; then finish_reason is "stop".
  if (last.finish_reason == "length") {
    EXPECT_EQ(last.completion_tokens, 5);
  }
  bool cancelled = false;
  for (int attempt = 0; attempt < kAttempts && !cancelled; ++attempt) {
    auto c = (*engine)->Submit(Greedy("a", 100));
    ASSERT_TRUE(c.ok());
    (*c)->Cancel();
    Drain(**c, &last);
    cancelled = last.finish_reason == "cancelled";
    if (cancelled) {
      EXPECT_LT(last.completion_tokens, 100);
    } else {
      EXPECT_TRUE(last.finish_reason == "length" || last.finish_reason == "stop") << last.finish_reason;
    }
  }
  EXPECT_TRUE(cancelled) << "no request of " << kAttempts << " ended cancelled";
  // The cancelled sequence's blocks are back (a cancelled request leaves no kept prefix).
  const EngineStats s = (*engine)->stats();
  EXPECT_EQ(s.free_kv_blocks + s.cached_kv_blocks, s.total_kv_blocks);
}

TEST_F(EngineTest, SubmitErrors) {
  EngineOptions o;
  o.context = 64;
  auto engine = Engine::Create(*model_, o);
  GenerationParams p = Greedy(std::string(200, 'a'), 1);
  EXPECT_THAT(std::string((*engine)->Submit(p).status().message()), HasSubstr("the context holds 64"));
  p = Greedy("a", 1000);
  EXPECT_EQ((*engine)->Submit(p).status().code(), absl::StatusCode::kOutOfRange);
  p = Greedy("a", 0);
  EXPECT_EQ((*engine)->Submit(p).status().code(), absl::StatusCode::kInvalidArgument);
  p = Greedy("a", 4);
  p.prompt.push_back(100000);
  EXPECT_THAT(std::string((*engine)->Submit(p).status().message()), HasSubstr("outside the vocabulary"));
  p = Greedy("a", 4);
  p.stop = {""};
  EXPECT_EQ((*engine)->Submit(p).status().code(), absl::StatusCode::kInvalidArgument);
  p = Greedy("a", 4);
  p.sampling.top_p = 0;
  EXPECT_EQ((*engine)->Submit(p).status().code(), absl::StatusCode::kInvalidArgument);
}

// A system prompt common to requests is computed once: a request that arrives while another with the
// same prefix runs, and one that arrives after it finished, start from its KV blocks (shared copy-on-write)
// and still complete exactly as Generate does from scratch.
TEST_F(EngineTest, SharedPromptPrefixIsComputedOnce) {
  const std::string system = "the system prompt says that the cat sat on the mat and the dog sat on the log. ";
  const std::string a = system + "hello", b = system + "abc de", c = system + "zz";
  const std::string want_a = Reference(a, 30), want_b = Reference(b, 20), want_c = Reference(c, 20);
  EngineOptions o;
  o.parallel = 2;
  o.context = 128;
  auto engine = Engine::Create(*model_, o);
  ASSERT_TRUE(engine.ok());
  const int64_t common = static_cast<int64_t>(model_->tokenizer().Encode(system, true).size());
  ASSERT_GE(common, 32);
  auto ra = (*engine)->Submit(Greedy(a, 30));
  ASSERT_TRUE(ra.ok());
  std::string got_a = (*ra)->Next().text;  // a's prompt has run
  auto rb = (*engine)->Submit(Greedy(b, 20));
  ASSERT_TRUE(rb.ok());
  got_a += Drain(**ra);
  EXPECT_EQ(got_a, want_a);
  EXPECT_EQ(Drain(**rb), want_b);
  const int64_t after_b = (*engine)->stats().reused_prompt_tokens;
  EXPECT_GE(after_b, common - 2);  // the shared tokens (a token or two at the seam may differ)
  auto rc = (*engine)->Submit(Greedy(c, 20));  // after both finished: from the kept prefix
  ASSERT_TRUE(rc.ok());
  EXPECT_EQ(Drain(**rc), want_c);
  EXPECT_GE((*engine)->stats().reused_prompt_tokens - after_b, common - 2);
}

// A --kv-mb budget of two contexts with four slots: each request reserves the blocks of its prompt +
// max_tokens, so at most two of these run at once, the others wait in the queue, and all four still
// produce the sequential greedy text. A budget below one context is refused when the engine starts.
TEST_F(EngineTest, KvBudgetAdmitsWhatFitsAndQueuesTheRest) {
  EngineOptions full;
  full.parallel = 4;
  full.context = 128;
  auto unbudgeted = Engine::Create(*model_, full);
  ASSERT_TRUE(unbudgeted.ok()) << unbudgeted.status();
  const int64_t total = (*unbudgeted)->stats().total_kv_blocks;
  ASSERT_EQ(total, 5 * 128 / (*unbudgeted)->kv_block_size());  // parallel + 1 contexts
  const size_t block_bytes = (*unbudgeted)->kv_pool_bytes() / static_cast<size_t>(total);
  unbudgeted->reset();

  EngineOptions o = full;
  o.kv_budget_bytes = 2 * (128 / 16) * block_bytes + block_bytes / 2;  // 16 whole blocks
  auto engine = Engine::Create(*model_, o);
  ASSERT_TRUE(engine.ok()) << engine.status();
  EXPECT_EQ((*engine)->stats().total_kv_blocks, 16);
  EXPECT_LT((*engine)->kv_pool_bytes(), o.kv_budget_bytes);

  const std::vector<std::string> prompts = {"a", "hello world", "zz y", "the cat"};
  std::vector<std::string> want;
  for (const std::string& p : prompts) want.push_back(Reference(p, 80));  // 6 blocks each with the prompt
  std::vector<std::shared_ptr<Request>> rs;
  for (const std::string& p : prompts) {
    auto r = (*engine)->Submit(Greedy(p, 80));
    ASSERT_TRUE(r.ok()) << r.status();
    rs.push_back(*r);
  }
  int64_t most_active = 0;
  std::vector<std::string> got(rs.size());
  std::vector<bool> done(rs.size(), false);
  for (size_t finished = 0; finished < rs.size();) {
    for (size_t i = 0; i < rs.size(); ++i) {
      if (done[i]) continue;
      GenerationUpdate u = rs[i]->Next();
      got[i] += u.text;
      const EngineStats st = (*engine)->stats();
      most_active = std::max(most_active, st.active);
      EXPECT_LE(st.reserved_kv_blocks, st.total_kv_blocks);
      if (u.done) {
        EXPECT_TRUE(u.error.ok()) << u.error;
        done[i] = true;
        ++finished;
      }
    }
  }
  for (size_t i = 0; i < rs.size(); ++i) EXPECT_EQ(got[i], want[i]) << prompts[i];
  EXPECT_LE(most_active, 2);
  EXPECT_EQ((*engine)->stats().completed, 4);

  EngineOptions tiny = full;
  tiny.kv_budget_bytes = 7 * block_bytes;  // 112 tokens, less than one context of 128
  auto refused = Engine::Create(*model_, tiny);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("less than one context of 128 tokens"));
  // In the unit of --kv-mb.
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr(absl::StrFormat("KV budget of %.1f MiB", 7.0 * block_bytes / 1048576.0)));
}

TEST(Utf8Test, CompletePrefix) {
  EXPECT_EQ(CompleteUtf8Prefix("abc"), 3u);
  EXPECT_EQ(CompleteUtf8Prefix("a\xE2\x82"), 1u);      // € cut after 2 of 3 bytes
  EXPECT_EQ(CompleteUtf8Prefix("a\xE2\x82\xAC"), 4u);  // whole
  EXPECT_EQ(CompleteUtf8Prefix("\xF0\x9F"), 0u);
  EXPECT_EQ(CompleteUtf8Prefix("\x80\x80"), 2u);  // stray continuation bytes pass (the JSON writer replaces them)
}

}  // namespace
}  // namespace tessel::llm
