// Generation and perplexity loops.
#include "llm/evaluate/evaluate.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tessel::llm {
namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

std::string GenerateStats::Summary() const {
  return absl::StrFormat("prefill: %d tokens, %.3f s, %.1f tokens/s | decode: %d tokens, %.3f s, %.1f tokens/s",
                         prompt_tokens, prefill_seconds, PrefillTokensPerSecond(), decode_steps, decode_seconds,
                         DecodeTokensPerSecond());
}

absl::StatusOr<GenerateStats> Generate(LlamaRuntime& runtime, SamplerChain& sampler, absl::string_view prompt,
                                       int64_t max_tokens, const std::function<void(absl::string_view)>& on_piece) {
  const Tokenizer& tok = runtime.model().tokenizer();
  std::vector<int32_t> history = tok.Encode(prompt, /*add_special=*/true);
  if (history.empty()) return absl::InvalidArgumentError("the prompt is empty and the vocabulary has no BOS token");
  const int64_t max_context = runtime.options().max_context;
  if (static_cast<int64_t>(history.size()) > max_context) {
    return absl::OutOfRangeError(absl::StrCat("the prompt has ", history.size(), " tokens; the context holds ",
                                              max_context, " (raise --ctx)"));
  }
  absl::StatusOr<int> seq = runtime.NewSequence();
  if (!seq.ok()) return seq.status();
  GenerateStats stats;
  stats.prompt_tokens = static_cast<int64_t>(history.size());
  double t0 = Now();
  absl::StatusOr<absl::Span<const float>> logits = runtime.Eval(*seq, history);
  stats.prefill_seconds = Now() - t0;
  for (int64_t i = 0; i < max_tokens && logits.ok(); ++i) {
    const int32_t next = sampler.Sample(*logits, history);
    if (tok.IsEndOfGeneration(next)) {
      stats.stopped_at_eos = true;
      break;
    }
    history.push_back(next);
    ++stats.generated_tokens;
    on_piece(tok.TokenPiece(next));
    if (i + 1 == max_tokens) break;
    if (static_cast<int64_t>(history.size()) >= max_context) {
      stats.stopped_at_context = true;
      break;
    }
    t0 = Now();
    logits = runtime.Eval(*seq, absl::MakeConstSpan(&next, 1));
    stats.decode_seconds += Now() - t0;
    ++stats.decode_steps;
  }
  if (!logits.ok()) return logits.status();
  if (absl::Status s = runtime.EndSequence(*seq); !s.ok()) return s;
  return stats;
}

absl::StatusOr<std::vector<int32_t>> PerplexityTokens(const Tokenizer& tokenizer, absl::string_view text, int64_t ctx,
                                                      double start_fraction) {
  if (!(start_fraction >= 0 && start_fraction < 1)) {
    return absl::InvalidArgumentError(absl::StrCat("start fraction must be in [0, 1), got ", start_fraction));
  }
  if (ctx < 2) return absl::InvalidArgumentError("the context must hold at least 2 tokens");
  size_t start = static_cast<size_t>(start_fraction * static_cast<double>(text.size()));
  while (start < text.size() && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) ++start;
  std::vector<int32_t> tokens = tokenizer.Encode(text.substr(start), /*add_special=*/false);
  const int64_t per_chunk = tokenizer.bos() >= 0 ? ctx - 1 : ctx;
  if (static_cast<int64_t>(tokens.size()) < per_chunk) {
    return absl::InvalidArgumentError(absl::StrCat("the text has ", tokens.size(), " tokens after byte ", start,
                                                   ", fewer than one chunk of ", per_chunk, " (lower --ctx)"));
  }
  return tokens;
}

absl::StatusOr<PerplexityResult> Perplexity(LlamaRuntime& runtime, absl::string_view text, int64_t ctx,
                                            double start_fraction, int64_t max_chunks,
                                            const std::function<void(int64_t, int64_t, double)>& on_chunk) {
  absl::StatusOr<std::vector<int32_t>> tokens =
      PerplexityTokens(runtime.model().tokenizer(), text, ctx, start_fraction);
  if (!tokens.ok()) return tokens.status();
  return Perplexity(runtime, *tokens, ctx, max_chunks, on_chunk);
}

absl::StatusOr<PerplexityResult> Perplexity(LlamaRuntime& runtime, absl::Span<const int32_t> tokens, int64_t ctx,
                                            int64_t max_chunks,
                                            const std::function<void(int64_t, int64_t, double)>& on_chunk) {
  if (ctx < 2) return absl::InvalidArgumentError("the context must hold at least 2 tokens");
  if (!runtime.options().all_logits || runtime.options().max_batch < ctx || runtime.options().max_context < ctx) {
    return absl::FailedPreconditionError("perplexity needs a runtime planned with all_logits and a batch of ctx tokens");
  }
  const Tokenizer& tok = runtime.model().tokenizer();
  const bool bos = tok.bos() >= 0;
  const int64_t per_chunk = bos ? ctx - 1 : ctx;
  int64_t chunks = static_cast<int64_t>(tokens.size()) / per_chunk;
  if (max_chunks > 0) chunks = std::min(chunks, max_chunks);
  if (chunks == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(tokens.size(), " tokens are fewer than one chunk of ", per_chunk, " (lower --ctx)"));
  }
  absl::StatusOr<int> seq = runtime.NewSequence();
  if (!seq.ok()) return seq.status();
  const int64_t vocab = runtime.model().config().vocab_size;
  PerplexityResult result;
  std::vector<int32_t> chunk;
  chunk.reserve(ctx);
  for (int64_t c = 0; c < chunks; ++c) {
    chunk.clear();
    if (bos) chunk.push_back(tok.bos());
    chunk.insert(chunk.end(), tokens.begin() + c * per_chunk, tokens.begin() + (c + 1) * per_chunk);
    if (absl::Status s = runtime.ResetSequence(*seq); !s.ok()) return s;
    absl::StatusOr<absl::Span<const float>> logits = runtime.Eval(*seq, chunk);
    if (!logits.ok()) return logits.status();
    for (int64_t i = 0; i + 1 < static_cast<int64_t>(chunk.size()); ++i) {
      const float* row = logits->data() + i * vocab;
      float mx = row[0];
      for (int64_t v = 1; v < vocab; ++v) mx = std::max(mx, row[v]);
      double sum = 0;
      for (int64_t v = 0; v < vocab; ++v) sum += std::exp(static_cast<double>(row[v]) - mx);
      result.nll -= static_cast<double>(row[chunk[i + 1]]) - mx - std::log(sum);
      ++result.tokens_scored;
    }
    ++result.chunks;
    if (on_chunk) on_chunk(c + 1, chunks, result.perplexity());
  }
  if (absl::Status s = runtime.EndSequence(*seq); !s.ok()) return s;
  return result;
}

}  // namespace tessel::llm
