// The scheduler loop and the per-request bookkeeping (sampling, stop strings, UTF-8 boundaries).
#include "llm/server/engine.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace tessel::llm {

size_t CompleteUtf8Prefix(absl::string_view s) {
  // Walk back over at most 3 continuation bytes to the last lead byte; cut there when its character
  // needs more bytes than are present.
  size_t i = s.size();
  for (int back = 0; back < 4 && i > 0; ++back) {
    const unsigned char c = static_cast<unsigned char>(s[--i]);
    if ((c & 0xC0) == 0x80) continue;
    const size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    return s.size() - i < need && c >= 0xC0 ? i : s.size();
  }
  return s.size();
}

GenerationUpdate Request::Next() {
  std::optional<GenerationUpdate> u;
  while (!u) u = NextFor(std::chrono::hours(1));
  return *std::move(u);
}

std::optional<GenerationUpdate> Request::NextFor(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!cv_.wait_for(lock, timeout,
                    [this] { return pending_.done || !pending_.text.empty() || !pending_.tokens.empty(); })) {
    return std::nullopt;
  }
  GenerationUpdate u = pending_;
  pending_.text.clear();
  pending_.tokens.clear();
  return u;
}

void Request::Cancel() { cancelled_.store(true, std::memory_order_relaxed); }

absl::StatusOr<std::unique_ptr<Engine>> Engine::Create(const LlamaModel& model, const EngineOptions& options) {
  if (options.parallel < 1 || options.max_queue < 0 || options.max_batch < 1) {
    return absl::InvalidArgumentError("parallel and max_batch must be positive, max_queue at least 0");
  }
  std::unique_ptr<Engine> e(new Engine(model, options));
  RuntimeOptions o;
  o.max_context = options.context;
  o.max_batch = std::max<int64_t>(options.max_batch, options.parallel);
  o.max_sequences = options.parallel + 1;  // the slots and the kept prefix
  o.kv_budget_bytes = options.kv_budget_bytes;
  o.threads = options.threads;
  o.kv_dtype = options.kv_dtype;
  absl::StatusOr<std::unique_ptr<LlamaRuntime>> runtime = LlamaRuntime::Create(model, o);
  if (!runtime.ok()) return runtime.status();
  e->runtime_ = *std::move(runtime);
  e->stats_.total_kv_blocks = e->runtime_->kv_cache().num_blocks();
  e->stats_.free_kv_blocks = e->runtime_->kv_cache().free_blocks();
  e->active_.reserve(options.parallel);
  e->thread_ = std::thread([p = e.get()] { p->Loop(); });
  return e;
}

Engine::~Engine() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  for (auto& r : queue_) Finish(*r, "cancelled", absl::CancelledError("the server is shutting down"));
  for (auto& r : active_) Finish(*r, "cancelled", absl::CancelledError("the server is shutting down"));
}

EngineStats Engine::stats() {
  std::lock_guard<std::mutex> lock(mu_);
  EngineStats s = stats_;
  s.queued = static_cast<int64_t>(queue_.size());
  return s;
}

absl::StatusOr<std::shared_ptr<Request>> Engine::Submit(GenerationParams params) {
  const int64_t ctx = context();
  const int64_t vocab = model_.config().vocab_size;
  const int64_t n = static_cast<int64_t>(params.prompt.size());
  if (n == 0) return absl::InvalidArgumentError("the prompt has no tokens");
  for (int32_t t : params.prompt) {
    if (t < 0 || t >= vocab) return absl::InvalidArgumentError(absl::StrCat("token id ", t, " is outside the vocabulary of ", vocab));
  }
  if (n >= ctx) {
    return absl::OutOfRangeError(absl::StrCat("the prompt has ", n, " tokens; the context holds ", ctx,
                                              " (prompt and completion together): shorten it or restart with a larger --ctx"));
  }
  for (const std::string& s : params.stop) {
    if (s.empty()) return absl::InvalidArgumentError("stop strings must not be empty");
  }
  if (params.max_tokens < 1) return absl::InvalidArgumentError("max_tokens must be at least 1");
  if (params.max_tokens > ctx - n) {
    return absl::OutOfRangeError(absl::StrCat("max_tokens ", params.max_tokens, " and the prompt's ", n,
                                              " tokens exceed the context of ", ctx, " tokens (at most ", ctx - n,
                                              " more tokens fit)"));
  }
  absl::StatusOr<std::unique_ptr<SamplerChain>> sampler = SamplerChain::Create(params.sampling, static_cast<int>(vocab));
  if (!sampler.ok()) return sampler.status();
  std::shared_ptr<Request> r(new Request(std::move(params)));
  r->sampler_ = *std::move(sampler);
  r->history_ = r->params_.prompt;
  r->history_.reserve(static_cast<size_t>(n + r->params_.max_tokens));
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (static_cast<int64_t>(queue_.size()) >= options_.max_queue &&
        stats_.active + static_cast<int64_t>(queue_.size()) >= options_.parallel) {
      return absl::ResourceExhaustedError(absl::StrCat("the server is busy: ", options_.parallel,
                                                       " requests are running and ", queue_.size(),
                                                       " are waiting (the most it queues); retry later"));
    }
    queue_.push_back(r);
  }
  cv_.notify_all();
  return r;
}

void Engine::Publish(Request& r, std::vector<int32_t> tokens, bool done, const std::string& reason,
                     absl::Status error) {
  size_t end = r.text_.size();
  if (!done) {
    // Hold back a tail that could begin a stop string, then a character cut by the token boundary.
    size_t hold = 0;
    for (const std::string& s : r.params_.stop) {
      for (size_t k = std::min(s.size() - 1, end - r.sent_); k > hold; --k) {
        if (r.text_.compare(end - k, k, s, 0, k) == 0) {
          hold = k;
          break;
        }
      }
    }
    end -= hold;
    end = r.sent_ + CompleteUtf8Prefix(absl::string_view(r.text_).substr(r.sent_, end - r.sent_));
  }
  {
    std::lock_guard<std::mutex> lock(r.mu_);
    GenerationUpdate& u = r.pending_;
    u.text.append(r.text_, r.sent_, end - r.sent_);
    u.tokens.insert(u.tokens.end(), tokens.begin(), tokens.end());
    u.done = done;
    u.finish_reason = reason;
    u.error = std::move(error);
    u.prompt_tokens = static_cast<int64_t>(r.params_.prompt.size());
    u.completion_tokens = r.generated_;
  }
  r.sent_ = end;
  r.cv_.notify_all();
}

void Engine::Finish(Request& r, const std::string& reason, absl::Status error) {
  Publish(r, {}, true, reason, std::move(error));
}

int64_t Engine::BlocksFor(int64_t tokens) const {
  const int64_t bs = runtime_->options().kv_block_size;
  return (tokens + bs - 1) / bs;
}

bool Engine::FitsInPool(const Request& r) {
  // Every running request's table grows to at most BlocksFor(prompt + max_tokens) entries, and the kept
  // prefix holds its own; blocks shared among them are counted twice, so the sum bounds the pool's use
  // and a running request never finds it empty.
  const int64_t need = BlocksFor(static_cast<int64_t>(r.params_.prompt.size()) + r.params_.max_tokens);
  const int64_t total = runtime_->kv_cache().num_blocks();
  auto kept = [&] { return kept_seq_ >= 0 ? BlocksFor(runtime_->SequenceLength(kept_seq_)) : 0; };
  if (reserved_blocks_ + need + kept() <= total) return true;
  if (kept_seq_ < 0) return false;
  (void)runtime_->EndSequence(kept_seq_);
  kept_seq_ = -1;
  kept_tokens_.clear();
  stats_.cached_kv_blocks = 0;
  return reserved_blocks_ + need <= total;
}

void Engine::Retire(Request& r) {
  reserved_blocks_ -= r.kv_blocks_;
  r.kv_blocks_ = 0;
  // A request that ran to its end keeps its sequence as the prefix for the next ones (replacing the one
  // kept before); a cancelled or failed one frees everything at once.
  const int64_t length = runtime_->SequenceLength(r.seq_);
  int64_t cached = 0;
  if (!r.cancelled() && length > 0) {
    if (kept_seq_ >= 0) (void)runtime_->EndSequence(kept_seq_);
    kept_seq_ = r.seq_;
    kept_tokens_.assign(r.history_.begin(), r.history_.begin() + length);
    cached = (length + runtime_->options().kv_block_size - 1) / runtime_->options().kv_block_size;
  } else {
    (void)runtime_->EndSequence(r.seq_);
  }
  std::lock_guard<std::mutex> lock(mu_);
  ++stats_.completed;
  stats_.free_kv_blocks = runtime_->kv_cache().free_blocks();
  if (kept_seq_ == r.seq_) stats_.cached_kv_blocks = cached;
}

void Engine::SharePrefix(Request& r) {
  const std::vector<int32_t>& prompt = r.params_.prompt;
  // At least one prompt token is left to run: its logits give the first completion token.
  const int64_t limit = static_cast<int64_t>(prompt.size()) - 1;
  int64_t best = 0;
  int donor = -1;
  auto consider = [&](int seq, const std::vector<int32_t>& tokens) {
    const int64_t n = std::min({limit, runtime_->SequenceLength(seq), static_cast<int64_t>(tokens.size())});
    int64_t k = 0;
    while (k < n && tokens[k] == prompt[k]) ++k;
    if (k > best) {
      best = k;
      donor = seq;
    }
  };
  for (const auto& a : active_) {
    if (a.get() != &r) consider(a->seq_, a->history_);
  }
  if (kept_seq_ >= 0) consider(kept_seq_, kept_tokens_);
  // A prefix shorter than a block saves less than the copy of the block its first write makes.
  if (donor < 0 || best < runtime_->options().kv_block_size) return;
  if (!runtime_->SharePrefix(donor, r.seq_, best).ok()) return;
  r.prefilled_ = static_cast<size_t>(best);
  stats_.reused_prompt_tokens += best;  // under mu_: called from the admission loop
}

bool Engine::Advance(Request& r, absl::Span<const float> logits) {
  const Tokenizer& tok = model_.tokenizer();
  const int32_t t = r.sampler_->Sample(logits, r.history_);
  if (tok.IsEndOfGeneration(t)) {
    Retire(r);
    Publish(r, {t}, true, "stop", absl::OkStatus());
    return true;
  }
  r.history_.push_back(t);
  ++r.generated_;
  const size_t before = r.text_.size();
  r.text_ += tok.TokenPiece(t);
  size_t cut = std::string::npos;
  for (const std::string& s : r.params_.stop) {
    const size_t from = before >= s.size() ? before - s.size() + 1 : 0;
    cut = std::min(cut, r.text_.find(s, from));
  }
  if (cut != std::string::npos) {
    r.text_.resize(cut);
    Retire(r);
    Publish(r, {t}, true, "stop", absl::OkStatus());
    return true;
  }
  const bool length = r.generated_ >= r.params_.max_tokens || static_cast<int64_t>(r.history_.size()) >= context();
  if (length) Retire(r);
  Publish(r, {t}, length, "length", absl::OkStatus());
  r.next_token_ = t;
  return length;
}

void Engine::Loop() {
  std::vector<SequenceTokens> items;
  std::vector<Request*> owners;
  items.reserve(options_.parallel);
  owners.reserve(options_.parallel);
  const int64_t max_batch = runtime_->options().max_batch;
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stop_ || !queue_.empty() || !active_.empty(); });
      if (stop_) return;
      // Requests cancelled while waiting leave the queue; the rest fill free slots in arrival order.
      for (auto it = queue_.begin(); it != queue_.end();) {
        if ((*it)->cancelled()) {
          Finish(**it, "cancelled");
          ++stats_.cancelled;
          it = queue_.erase(it);
        } else {
          ++it;
        }
      }
      // In arrival order: a request that does not fit in the KV pool yet waits, and those behind it too.
      while (!queue_.empty() && static_cast<int>(active_.size()) < options_.parallel && FitsInPool(*queue_.front())) {
        std::shared_ptr<Request> r = std::move(queue_.front());
        queue_.pop_front();
        absl::StatusOr<int> seq = runtime_->NewSequence();
        if (!seq.ok()) {
          Finish(*r, "error", seq.status());
          continue;
        }
        r->seq_ = *seq;
        r->kv_blocks_ = BlocksFor(static_cast<int64_t>(r->params_.prompt.size()) + r->params_.max_tokens);
        reserved_blocks_ += r->kv_blocks_;
        active_.push_back(std::move(r));
        SharePrefix(*active_.back());
      }
      stats_.active = static_cast<int64_t>(active_.size());
      stats_.reserved_kv_blocks = reserved_blocks_;
    }
    // A cancelled request (its client went away) frees its sequence before the step.
    for (auto it = active_.begin(); it != active_.end();) {
      if ((*it)->cancelled()) {
        Retire(**it);
        Finish(**it, "cancelled");
        {
          std::lock_guard<std::mutex> lock(mu_);
          ++stats_.cancelled;
        }
        it = active_.erase(it);
      } else {
        ++it;
      }
    }
    if (active_.empty()) {
      std::lock_guard<std::mutex> lock(mu_);
      stats_.active = 0;
      continue;
    }
    // One step: a decode token for every sequence past its prompt, then prompt chunks in the budget left.
    items.clear();
    owners.clear();
    int64_t budget = max_batch;
    for (auto& r : active_) {
      if (r->prefilled_ < r->params_.prompt.size()) continue;
      items.push_back({r->seq_, absl::MakeConstSpan(&r->next_token_, 1)});
      owners.push_back(r.get());
      --budget;
    }
    for (auto& r : active_) {
      const size_t left = r->params_.prompt.size() - r->prefilled_;
      if (left == 0 || budget <= 0) continue;
      r->chunk_ = std::min<size_t>(left, static_cast<size_t>(budget));
      items.push_back({r->seq_, absl::MakeConstSpan(r->params_.prompt).subspan(r->prefilled_, r->chunk_)});
      owners.push_back(r.get());
      budget -= static_cast<int64_t>(r->chunk_);
    }
    absl::StatusOr<absl::Span<const float>> logits = runtime_->EvalBatch(items);
    const int64_t vocab = model_.config().vocab_size;
    int64_t prefill = 0, decode = 0;
    std::vector<Request*> finished;
    for (size_t i = 0; i < owners.size(); ++i) {
      Request& r = *owners[i];
      if (!logits.ok()) {
        Retire(r);
        Finish(r, "error", logits.status());
        finished.push_back(&r);
        continue;
      }
      if (r.prefilled_ < r.params_.prompt.size()) {
        r.prefilled_ += r.chunk_;
        prefill += static_cast<int64_t>(r.chunk_);
        if (r.prefilled_ < r.params_.prompt.size()) continue;  // more prompt next step
      } else {
        ++decode;
      }
      if (Advance(r, logits->subspan(i * vocab, vocab))) finished.push_back(&r);
    }
    for (Request* r : finished) {
      active_.erase(std::find_if(active_.begin(), active_.end(), [r](const auto& a) { return a.get() == r; }));
    }
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.steps;
    stats_.rows += static_cast<int64_t>(items.size());
    stats_.prefill_tokens += prefill;
    stats_.decode_tokens += decode;
    stats_.active = static_cast<int64_t>(active_.size());
    stats_.free_kv_blocks = runtime_->kv_cache().free_blocks();
    stats_.reserved_kv_blocks = reserved_blocks_;
  }
}

}  // namespace tessel::llm
