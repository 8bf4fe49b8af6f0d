// The serving engine: continuous batching over one LlamaRuntime. A scheduler thread admits queued
// requests into free sequence slots between steps and runs every active sequence's next tokens (one
// decode token each, plus a prefill chunk of a newly admitted prompt) as ONE forward pass
// (LlamaRuntime::EvalBatch), samples each row with its request's own sampler, and hands text deltas to
// the request. A finished or cancelled request ends its sequence at once, so its KV blocks return to
// the pool. Prefix sharing: a new request starts from the longest prompt prefix it has in common with a
// running request or with the last finished one (kept in one extra sequence), sharing those KV blocks
// copy-on-write instead of computing them again (a common system prompt is computed once). The KV pool
// is sized at creation for `parallel` + 1 sequences of `context` tokens: every admitted request fits,
// nothing grows per request, and requests beyond the slots wait in a bounded queue.
#ifndef TESSEL_LLM_SERVER_ENGINE_H_
#define TESSEL_LLM_SERVER_ENGINE_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "llm/model/llama_model.h"
#include "llm/model/llama_runtime.h"
#include "llm/sampling/sampler.h"

namespace tessel::llm {

struct EngineOptions {
  int parallel = 1;        // sequences decoded together (slots)
  int64_t context = 0;     // tokens per sequence (prompt + completion); 0: the model's context length
  int threads = 1;
  int max_queue = 16;      // requests waiting for a slot; more are refused (ResourceExhausted)
  int64_t max_batch = 256; // tokens per forward pass (decode rows + a prefill chunk)
  KvDType kv_dtype = KvDType::kF16;
  // > 0: the KV pool's bytes (at least one context) instead of room for parallel + 1 full contexts. A
  // request is admitted when the blocks for its prompt + max_tokens fit beside those reserved by the
  // running ones; until then it waits in the queue.
  size_t kv_budget_bytes = 0;
};

struct GenerationParams {
  std::vector<int32_t> prompt;  // token ids, BOS included where wanted
  SamplingParams sampling;
  int64_t max_tokens = 0;       // >= 1, and prompt + max_tokens <= context (Submit checks)
  std::vector<std::string> stop;
};

// What a request produced since the last Next(), and whether it is over.
struct GenerationUpdate {
  std::string text;               // new completion text: whole UTF-8 characters, never part of a stop string
  std::vector<int32_t> tokens;    // the tokens sampled since the last update
  bool done = false;
  std::string finish_reason;      // "stop" (end of generation or a stop string), "length", "cancelled"
  absl::Status error;             // set when the engine failed the request
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
};

class Engine;

// One submitted request, shared by the caller (who reads updates) and the scheduler.
class Request {
 public:
  // Blocks until there is new text or the request is over; returns everything produced since the last
  // call. After an update with done set, further calls return done at once.
  GenerationUpdate Next();
  // Next() waiting at most `timeout`: nullopt when nothing new came in that time.
  std::optional<GenerationUpdate> NextFor(std::chrono::milliseconds timeout);
  // The caller's side went away (client disconnect): the scheduler ends the sequence before its next step.
  void Cancel();
  bool cancelled() const { return cancelled_.load(std::memory_order_relaxed); }

 private:
  friend class Engine;
  explicit Request(GenerationParams params) : params_(std::move(params)) {}

  // Shared with the scheduler (under mu_).
  std::mutex mu_;
  std::condition_variable cv_;
  GenerationUpdate pending_;
  std::atomic<bool> cancelled_{false};

  // The scheduler's alone.
  GenerationParams params_;
  std::unique_ptr<SamplerChain> sampler_;
  int seq_ = -1;
  size_t prefilled_ = 0;
  size_t chunk_ = 0;               // prompt tokens in the current step
  std::vector<int32_t> history_;   // prompt + sampled tokens (the repetition penalty's window)
  int32_t next_token_ = -1;        // the last sampled token, the next step's input
  std::string text_;               // the completion so far
  size_t sent_ = 0;                // bytes of text_ handed out
  int64_t generated_ = 0;
  int64_t kv_blocks_ = 0;          // KV blocks reserved for prompt + max_tokens while it runs
};

struct EngineStats {
  int64_t steps = 0;           // forward passes
  int64_t rows = 0;            // sequences summed over the steps (rows / steps: the mean batch)
  int64_t prefill_tokens = 0;
  int64_t decode_tokens = 0;
  int64_t completed = 0;
  int64_t cancelled = 0;       // ended, queued or running, because their client went away
  int64_t queued = 0;          // waiting now
  int64_t active = 0;          // in a slot now
  int64_t reused_prompt_tokens = 0;  // prompt tokens taken from a shared prefix instead of computed
  int64_t free_kv_blocks = 0;
  int64_t cached_kv_blocks = 0;      // held by the kept prefix of the last finished request
  int64_t reserved_kv_blocks = 0;    // promised to the running requests (their prompt + max_tokens)
  int64_t total_kv_blocks = 0;
};

class Engine {
 public:
  static absl::StatusOr<std::unique_ptr<Engine>> Create(const LlamaModel& model, const EngineOptions& options);
  ~Engine();

  // Queues a request. InvalidArgument / OutOfRange for parameters that can never run (empty prompt, a
  // prompt or prompt + max_tokens longer than the context, bad sampling values); ResourceExhausted when
  // the queue is full.
  absl::StatusOr<std::shared_ptr<Request>> Submit(GenerationParams params);

  const LlamaModel& model() const { return model_; }
  const EngineOptions& options() const { return options_; }
  int64_t context() const { return runtime_->options().max_context; }
  int64_t kv_block_size() const { return runtime_->options().kv_block_size; }
  size_t kv_pool_bytes() const { return runtime_->kv_cache().pool_bytes(); }
  EngineStats stats();

 private:
  Engine(const LlamaModel& model, const EngineOptions& options) : model_(model), options_(options) {}
  void Loop();
  // Samples the row's token and updates the request; true when it has finished.
  bool Advance(Request& r, absl::Span<const float> logits);
  void Publish(Request& r, std::vector<int32_t> tokens, bool done, const std::string& reason, absl::Status error);
  // Ends the request's sequence (its KV blocks go back to the pool) before its last update goes out.
  void Retire(Request& r);
  // Starts a newly admitted request from the longest prefix it shares with a live sequence.
  void SharePrefix(Request& r);
  void Finish(Request& r, const std::string& reason, absl::Status error = absl::OkStatus());
  // KV blocks that `tokens` positions fill.
  int64_t BlocksFor(int64_t tokens) const;
  // Whether the queue's first request fits in the KV pool beside the running ones; drops the kept
  // prefix when that makes it fit. Under mu_.
  bool FitsInPool(const Request& r);

  const LlamaModel& model_;
  EngineOptions options_;
  std::unique_ptr<LlamaRuntime> runtime_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::deque<std::shared_ptr<Request>> queue_;
  std::vector<std::shared_ptr<Request>> active_;  // the scheduler's; its size is published in stats_
  // The scheduler's: the last finished request's sequence, kept for its prefix (-1: none), and its tokens.
  int kept_seq_ = -1;
  std::vector<int32_t> kept_tokens_;
  int64_t reserved_blocks_ = 0;  // the scheduler's: the sum of the running requests' kv_blocks_
  EngineStats stats_;
};

// The longest prefix of `s` that does not end inside a UTF-8 character (a character cut by the end of
// a token's bytes waits for the next token).
// (Invalid bytes pass through; the HTTP layer's JSON writer replaces them with U+FFFD.)
size_t CompleteUtf8Prefix(absl::string_view s);

}  // namespace tessel::llm

#endif  // TESSEL_LLM_SERVER_ENGINE_H_
