// Sampler stages and the chain.
#include "llm/sampling/sampler.h"

#include <algorithm>
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace tessel::llm {
namespace {

bool Before(const TokenCandidate& a, const TokenCandidate& b) {
  return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

class RepetitionPenalty : public SamplerStage {
 public:
  RepetitionPenalty(float penalty, int last_n, int vocab) : penalty_(penalty), last_n_(last_n), seen_(vocab, 0) {}
  void Apply(Candidates& c, absl::Span<const int32_t> history) override {
    const size_t n = std::min<size_t>(history.size(), static_cast<size_t>(last_n_));
    const absl::Span<const int32_t> recent = history.subspan(history.size() - n);
    for (int32_t t : recent) {
      if (t >= 0 && t < static_cast<int32_t>(seen_.size())) seen_[t] = 1;
    }
    for (size_t i = 0; i < c.size(); ++i) {
      if (!seen_[c[i].id]) continue;
      c[i].logit = c[i].logit > 0 ? c[i].logit / penalty_ : c[i].logit * penalty_;
    }
    for (int32_t t : recent) {
      if (t >= 0 && t < static_cast<int32_t>(seen_.size())) seen_[t] = 0;
    }
  }
  std::string Describe() const override { return absl::StrFormat("repeat-penalty %g (last %d)", penalty_, last_n_); }

 private:
  float penalty_;
  int last_n_;
  std::vector<uint8_t> seen_;  // scratch, cleared after each use
};

class TopK : public SamplerStage {
 public:
  explicit TopK(int k) : k_(k) {}
  void Apply(Candidates& c, absl::Span<const int32_t>) override {
    c.KeepTop(static_cast<size_t>(k_));
  }
  std::string Describe() const override { return absl::StrCat("top-k ", k_); }

 private:
  int k_;
};

class TopP : public SamplerStage {
 public:
  explicit TopP(float p) : p_(p) {}
  void Apply(Candidates& c, absl::Span<const int32_t>) override {
    c.Sort();
    c.Softmax();
    double cum = 0;
    for (size_t i = 0; i < c.size(); ++i) {
      cum += c[i].p;
      if (cum >= p_) {
        c.Truncate(i + 1);
        return;
      }
    }
  }
  std::string Describe() const override { return absl::StrFormat("top-p %g", p_); }

 private:
  float p_;
};

class MinP : public SamplerStage {
 public:
  explicit MinP(float p) : p_(p) {}
  void Apply(Candidates& c, absl::Span<const int32_t>) override {
    c.Sort();
    c.Softmax();
    const float threshold = c[0].p * p_;
    size_t keep = 1;
    while (keep < c.size() && c[keep].p >= threshold) ++keep;
    c.Truncate(keep);
  }
  std::string Describe() const override { return absl::StrFormat("min-p %g", p_); }

 private:
  float p_;
};

class Temperature : public SamplerStage {
 public:
  explicit Temperature(float t) : t_(t) {}
  void Apply(Candidates& c, absl::Span<const int32_t>) override {
    for (size_t i = 0; i < c.size(); ++i) c[i].logit /= t_;
  }
  std::string Describe() const override { return absl::StrFormat("temperature %g", t_); }

 private:
  float t_;
};

}  // namespace

Candidates::Candidates(int vocab_size) : items_(vocab_size) {}

void Candidates::Reset(absl::Span<const float> logits) {
  size_ = std::min(logits.size(), items_.size());
  for (size_t i = 0; i < size_; ++i) items_[i] = {static_cast<int32_t>(i), logits[i], 0.0f};
  sorted_ = false;
}

void Candidates::Sort() {
  if (sorted_) return;
  std::sort(items_.begin(), items_.begin() + size_, Before);
  sorted_ = true;
}

void Candidates::KeepTop(size_t n) {
  if (n >= size_) {
    Sort();
    return;
  }
  if (!sorted_) std::partial_sort(items_.begin(), items_.begin() + n, items_.begin() + size_, Before);
  size_ = n;
  sorted_ = true;
}

void Candidates::Softmax() {
  float mx = -INFINITY;
  for (size_t i = 0; i < size_; ++i) mx = std::max(mx, items_[i].logit);
  double sum = 0;
  for (size_t i = 0; i < size_; ++i) {
    items_[i].p = std::exp(items_[i].logit - mx);
    sum += items_[i].p;
  }
  for (size_t i = 0; i < size_; ++i) items_[i].p = static_cast<float>(items_[i].p / sum);
}

std::unique_ptr<SamplerStage> MakeRepetitionPenalty(float penalty, int last_n, int vocab_size) {
  return std::make_unique<RepetitionPenalty>(penalty, last_n, vocab_size);
}
std::unique_ptr<SamplerStage> MakeTopK(int k) { return std::make_unique<TopK>(k); }
std::unique_ptr<SamplerStage> MakeTopP(float p) { return std::make_unique<TopP>(p); }
std::unique_ptr<SamplerStage> MakeMinP(float p) { return std::make_unique<MinP>(p); }
std::unique_ptr<SamplerStage> MakeTemperature(float t) { return std::make_unique<Temperature>(t); }

SamplerChain::SamplerChain(const SamplingParams& params, int vocab_size)
    : params_(params), candidates_(vocab_size), rng_(params.seed) {}

absl::StatusOr<std::unique_ptr<SamplerChain>> SamplerChain::Create(const SamplingParams& p, int vocab_size) {
  if (vocab_size <= 0) return absl::InvalidArgumentError("sampling: empty vocabulary");
  if (!(p.top_p > 0)) return absl::InvalidArgumentError(absl::StrCat("top-p must be in (0, 1], got ", p.top_p));
  if (!(p.min_p >= 0 && p.min_p <= 1)) return absl::InvalidArgumentError(absl::StrCat("min-p must be in [0, 1], got ", p.min_p));
  if (!(p.repeat_penalty > 0)) {
    return absl::InvalidArgumentError(absl::StrCat("repeat penalty must be positive, got ", p.repeat_penalty));
  }
  if (p.repeat_last_n < 0) return absl::InvalidArgumentError("repeat-last-n must not be negative");
  if (std::isnan(p.temperature)) return absl::InvalidArgumentError("temperature is not a number");
  std::unique_ptr<SamplerChain> c(new SamplerChain(p, vocab_size));
  if (p.repeat_penalty != 1.0f && p.repeat_last_n > 0) {
    c->stages_.push_back(MakeRepetitionPenalty(p.repeat_penalty, p.repeat_last_n, vocab_size));
  }
  if (p.temperature > 0) {
    if (p.top_k > 0 && p.top_k < vocab_size) c->stages_.push_back(MakeTopK(p.top_k));
    if (p.top_p < 1.0f) c->stages_.push_back(MakeTopP(p.top_p));
    if (p.min_p > 0.0f) c->stages_.push_back(MakeMinP(p.min_p));
    c->stages_.push_back(MakeTemperature(p.temperature));
  }
  return c;
}

int32_t SamplerChain::Sample(absl::Span<const float> logits, absl::Span<const int32_t> history) {
  candidates_.Reset(logits);
  for (const auto& s : stages_) s->Apply(candidates_, history);
  if (params_.temperature <= 0) {
    size_t best = 0;
    for (size_t i = 1; i < candidates_.size(); ++i) {
      if (Before(candidates_[i], candidates_[best])) best = i;
    }
    return candidates_[best].id;
  }
  candidates_.Softmax();
  // 53 random bits: the same draw on every platform for the same seed.
  const double u = static_cast<double>(rng_() >> 11) * 0x1.0p-53;
  double cum = 0;
  for (size_t i = 0; i < candidates_.size(); ++i) {
    cum += candidates_[i].p;
    if (u < cum) return candidates_[i].id;
  }
  return candidates_[candidates_.size() - 1].id;
}

std::string SamplerChain::Describe() const {
  std::vector<std::string> parts;
  for (const auto& s : stages_) parts.push_back(s->Describe());
  parts.push_back(params_.temperature > 0 ? absl::StrCat("draw (seed ", params_.seed, ")") : "greedy");
  return absl::StrJoin(parts, " -> ");
}

}  // namespace tessel::llm
