// Token sampling as a chain of stages over a candidate list, like llama.cpp's sampler chain:
// repetition penalty -> top-k -> top-p -> min-p -> temperature -> a seeded random draw (or greedy
// argmax when the temperature is 0). The candidate buffer is allocated once for the vocabulary.
#ifndef TESSEL_LLM_SAMPLING_SAMPLER_H_
#define TESSEL_LLM_SAMPLING_SAMPLER_H_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace tessel::llm {

struct TokenCandidate {
  int32_t id;
  float logit;
  float p;  // filled by Softmax()
};

class Candidates {
 public:
  explicit Candidates(int vocab_size);
  // Every token of the vocabulary, in id order.
  void Reset(absl::Span<const float> logits);

  size_t size() const { return size_; }
  TokenCandidate& operator[](size_t i) { return items_[i]; }
  const TokenCandidate& operator[](size_t i) const { return items_[i]; }
  bool sorted() const { return sorted_; }
  // Descending by logit (ties: lower id first).
  void Sort();
  // Keeps the n most likely, sorted (a partial sort: O(size log n)).
  void KeepTop(size_t n);
  // Keeps the first n (after Sort, the n most likely).
  void Truncate(size_t n) { size_ = std::min(size_, n); }
  // p = softmax(logit) over the current candidates.
  void Softmax();

 private:
  std::vector<TokenCandidate> items_;
  size_t size_ = 0;
  bool sorted_ = false;
};

class SamplerStage {
 public:
  virtual ~SamplerStage() = default;
  // `history` holds the tokens of the sequence so far (prompt included).
  virtual void Apply(Candidates& c, absl::Span<const int32_t> history) = 0;
  virtual std::string Describe() const = 0;
};

// CTRL-style: positive logits of recently seen tokens are divided by `penalty`, negative ones
// multiplied; each distinct token of the last `last_n` counts once.
std::unique_ptr<SamplerStage> MakeRepetitionPenalty(float penalty, int last_n, int vocab_size);
// The k most likely tokens.
std::unique_ptr<SamplerStage> MakeTopK(int k);
// The smallest most-likely prefix whose probability reaches p (at least one token).
std::unique_ptr<SamplerStage> MakeTopP(float p);
// Tokens at least p times as likely as the most likely one.
std::unique_ptr<SamplerStage> MakeMinP(float p);
// logit / t.
std::unique_ptr<SamplerStage> MakeTemperature(float t);

struct SamplingParams {
  float temperature = 0.8f;  // <= 0: greedy
  int top_k = 40;            // <= 0: off
  float top_p = 0.95f;       // >= 1: off
  float min_p = 0.05f;       // <= 0: off
  float repeat_penalty = 1.0f;  // 1: off
  int repeat_last_n = 64;
  uint64_t seed = 0;
};

class SamplerChain {
 public:
  // InvalidArgument for out-of-range parameters.
  static absl::StatusOr<std::unique_ptr<SamplerChain>> Create(const SamplingParams& params, int vocab_size);

  int32_t Sample(absl::Span<const float> logits, absl::Span<const int32_t> history);
  // "repeat-penalty 1.1 (last 64) -> top-k 40 -> ... -> draw (seed 7)".
  std::string Describe() const;
  // The candidates left by the last Sample() before the final pick (tests, diagnostics).
  const Candidates& candidates() const { return candidates_; }

 private:
  SamplerChain(const SamplingParams& params, int vocab_size);

  SamplingParams params_;
  std::vector<std::unique_ptr<SamplerStage>> stages_;
  Candidates candidates_;
  std::mt19937_64 rng_;
};

}  // namespace tessel::llm

#endif  // TESSEL_LLM_SAMPLING_SAMPLER_H_
