// The loops behind the LLM commands: streaming generation with timing, and perplexity over a text.
#ifndef TESSEL_LLM_EVALUATE_EVALUATE_H_
#define TESSEL_LLM_EVALUATE_EVALUATE_H_

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "llm/model/llama_runtime.h"
#include "llm/sampling/sampler.h"

namespace tessel::llm {

struct GenerateStats {
  int64_t prompt_tokens = 0;
  int64_t generated_tokens = 0;
  int64_t decode_steps = 0;  // forward passes after the prompt
  double prefill_seconds = 0;
  double decode_seconds = 0;
  bool stopped_at_eos = false;
  bool stopped_at_context = false;

  double PrefillTokensPerSecond() const { return prefill_seconds > 0 ? prompt_tokens / prefill_seconds : 0; }
  double DecodeTokensPerSecond() const { return decode_seconds > 0 ? decode_steps / decode_seconds : 0; }
  // "prefill: 12 tokens, 0.004 s, 2926.8 tokens/s | decode: 63 tokens, 0.052 s, 1211.5 tokens/s".
  std::string Summary() const;
};

// Encodes `prompt` (with BOS when the vocabulary wants it), runs it as one prefill, then samples up to
// `max_tokens` tokens, calling on_piece with each one's text. Stops early at end-of-generation or
// when the context is full. Uses a new sequence of `runtime` and ends it.
absl::StatusOr<GenerateStats> Generate(LlamaRuntime& runtime, SamplerChain& sampler, absl::string_view prompt,
                                       int64_t max_tokens, const std::function<void(absl::string_view)>& on_piece);

struct PerplexityResult {
  int64_t chunks = 0;
  int64_t tokens_scored = 0;
  double nll = 0;  // summed negative log-likelihood (nats)
  double perplexity() const { return tokens_scored > 0 ? std::exp(nll / tokens_scored) : 0; }
};

// The tokens perplexity scores: the text from byte floor(start_fraction * size) (moved forward to a
// UTF-8 character boundary), tokenized without special tokens. InvalidArgument when they do not fill
// one chunk of `ctx` (see Perplexity): callers check this before planning a runtime whose logits alone
// are ctx x vocab floats.
absl::StatusOr<std::vector<int32_t>> PerplexityTokens(const Tokenizer& tokenizer, absl::string_view text, int64_t ctx,
                                                      double start_fraction);

// `tokens` (from PerplexityTokens) are cut into chunks of ctx - 1; each chunk runs as [BOS] + chunk (or
// just ctx tokens when the vocabulary has no BOS) in a fresh sequence, and every prediction after the
// first token is scored. Partial trailing chunks are dropped. `runtime` needs all_logits and
// max_batch >= ctx. on_chunk(done, total, running perplexity).
absl::StatusOr<PerplexityResult> Perplexity(LlamaRuntime& runtime, absl::Span<const int32_t> tokens, int64_t ctx,
                                            int64_t max_chunks,
                                            const std::function<void(int64_t, int64_t, double)>& on_chunk);
// PerplexityTokens, then Perplexity.
absl::StatusOr<PerplexityResult> Perplexity(LlamaRuntime& runtime, absl::string_view text, int64_t ctx,
                                            double start_fraction, int64_t max_chunks,
                                            const std::function<void(int64_t, int64_t, double)>& on_chunk);

}  // namespace tessel::llm

#endif  // TESSEL_LLM_EVALUATE_EVALUATE_H_
