// Runs a LlamaModel: a memory plan fixed when the runtime is created (activation buffers for
// max_batch tokens, RoPE tables for max_context positions, matmul and attention scratch, a paged KV
// cache for max_sequences x max_context tokens, the thread pool), then Eval() appends tokens to a
// sequence and returns logits. Nothing is allocated per call.
#ifndef TESSEL_LLM_MODEL_LLAMA_RUNTIME_H_
#define TESSEL_LLM_MODEL_LLAMA_RUNTIME_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "kernels/vector/vector.h"
#include "llm/attention/flash_attention.h"
#include "support/thread_pool.h"
#include "llm/kv_cache/paged_kv_cache.h"
#include "llm/matmul/matmul.h"
#include "llm/model/llama_model.h"

namespace tessel::llm {

struct RuntimeOptions {
  int64_t max_context = 0;   // positions per sequence; 0: the model's context length
  int64_t max_batch = 64;    // tokens per forward pass; longer inputs run in chunks
  // max_sequences > 1 also plans logits for that many rows (capped by max_batch): EvalBatch returns the
  // last logits of every sequence of a step.
  bool all_logits = false;   // keep the logits of every token of a pass, not just the last
  KvDType kv_dtype = KvDType::kF16;
  int kv_block_size = 16;
  int max_sequences = 1;
  // > 0: the KV pool gets this many bytes (whole blocks; at least one max_context) instead of room for
  // max_sequences x max_context tokens; sequences then share it and callers admit work to fit.
  size_t kv_budget_bytes = 0;
  int threads = 1;
  int64_t sliding_window = -1;  // -1: the model's own; 0: none; > 0: this many positions
};

// One sequence's part of a batched step (EvalBatch): tokens appended to `seq`.
struct SequenceTokens {
  int seq = -1;
  absl::Span<const int32_t> tokens;
};

class LlamaRuntime {
 public:
  // Sizes the plan in 64 bits before allocating anything: ResourceExhausted when the KV cache and the
  // activations would not fit in the machine's memory (support/size_limits.h), InvalidArgument when
  // they overflow. max_context may exceed the model's trained context (callers decide whether to allow it).
  static absl::StatusOr<std::unique_ptr<LlamaRuntime>> Create(const LlamaModel& model, const RuntimeOptions& options);

  const LlamaModel& model() const { return model_; }
  const RuntimeOptions& options() const { return options_; }
  PagedKvCache& kv_cache() { return *cache_; }
  // The matrix products' driver (per-type timing for tessel generate --verbose).
  Matmul& matmul() { return *matmul_; }
  // Bytes of activations and scratch planned at creation (the KV cache aside).
  size_t activation_bytes() const { return activation_bytes_; }

  absl::StatusOr<int> NewSequence() { return cache_->AddSequence(); }
  absl::Status EndSequence(int seq) { return cache_->RemoveSequence(seq); }
  absl::Status ResetSequence(int seq) { return cache_->Clear(seq); }
  // Empty sequence `dst` starts as the first `tokens` positions of `src`, sharing its KV blocks (copied
  // on write): a common prompt prefix is computed once.
  absl::Status SharePrefix(int src, int dst, int64_t tokens) { return cache_->SharePrefix(src, dst, tokens); }
  int64_t SequenceLength(int seq) const { return cache_->length(seq); }

  // Appends `tokens` to sequence `seq` and runs them. Returns the logits of the last token [vocab],
  // or with all_logits those of every token [tokens, vocab] (then tokens.size() <= max_batch).
  // The span stays valid until the next Eval.
  absl::StatusOr<absl::Span<const float>> Eval(int seq, absl::Span<const int32_t> tokens);

  // Continuous batching: appends each item's tokens to its own sequence (distinct sequences, at most
  // min(max_batch, max_sequences) items, max_batch tokens in all) and runs them as ONE forward pass, so
  // every weight matrix is read once for all of them; each row keeps its own position and attends over
  // its own sequence's KV. Returns the logits of each item's last token, [items, vocab], in item order
  // (never all_logits). Checked before anything runs: on error no sequence has changed length.
  absl::StatusOr<absl::Span<const float>> EvalBatch(absl::Span<const SequenceTokens> items);
  // Rows of logits EvalBatch can return at once.
  int64_t max_batch_items() const { return logit_rows_; }

 private:
  // Rows [row0, row0 + n) of a forward pass belong to sequence `seq` from position pos0 on.
  struct Segment {
    int seq;
    int64_t row0;
    int64_t n;
    int64_t pos0;
  };
  LlamaRuntime(const LlamaModel& model, const RuntimeOptions& options);
  void Forward(int seq, const int32_t* tokens, int64_t n, int64_t pos0, bool all_logits);
  // tokens[0, n) split into segments; logits of each segment's last row (or with all_logits and one
  // segment, of every row).
  void ForwardSegments(const int32_t* tokens, int64_t n, absl::Span<const Segment> segments, bool all_logits);

  const LlamaModel& model_;
  RuntimeOptions options_;
  ThreadPool pool_;
  std::unique_ptr<Matmul> matmul_;
  std::unique_ptr<AttentionScratch> attention_scratch_;
  std::unique_ptr<PagedKvCache> cache_;
  AttentionParams attention_;
  RmsNormFn rms_norm_ = nullptr;  // the vector family's kernels, selected once at creation
  UnaryFn silu_ = nullptr;
  BinaryFn vmul_ = nullptr;
  size_t activation_bytes_ = 0;
  int64_t logit_rows_ = 1;
  std::vector<int32_t> batch_tokens_;  // EvalBatch's tokens and segments, reserved at creation
  std::vector<Segment> batch_segments_;
  // One arena for every activation buffer; the pointers below are carved from it.
  std::vector<float> arena_;
  float* x_ = nullptr;       // [batch, dim] residual stream
  float* xb_ = nullptr;      // [batch, dim] normalized input / projection output
  float* q_ = nullptr;       // [batch, heads * head_dim]
  float* k_ = nullptr;       // [batch, kv_heads * head_dim]
  float* v_ = nullptr;       // [batch, kv_heads * head_dim]
  float* att_ = nullptr;     // [batch, heads * head_dim]
  float* gate_ = nullptr;    // [batch, ffn]
  float* up_ = nullptr;      // [batch, ffn]
  float* logits_ = nullptr;  // [batch or 1, vocab]
  float* rope_cos_ = nullptr;  // [max_context, head_dim / 2]
  float* rope_sin_ = nullptr;
};

}  // namespace tessel::llm

#endif  // TESSEL_LLM_MODEL_LLAMA_RUNTIME_H_
