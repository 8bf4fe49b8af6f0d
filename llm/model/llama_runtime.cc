// The Llama forward pass: embedding, then per layer RMSNorm -> Q/K/V (one grouped matmul) -> RoPE ->
// KV cache -> flash attention -> output projection -> residual -> RMSNorm -> gate/up (grouped) ->
// SwiGLU -> down -> residual; final RMSNorm and the output head for the rows that need logits.
#include "llm/model/llama_runtime.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "support/size_limits.h"

namespace tessel::llm {
namespace {

// Rotates every head of n token vectors [n, heads, head_dim] at positions pos0 + t.
void Rope(float* x, int64_t n, int64_t pos0, int heads, int head_dim, RopeStyle style, const float* cos_table,
          const float* sin_table) {
  const int half = head_dim / 2;
  for (int64_t t = 0; t < n; ++t) {
    const float* c = cos_table + (pos0 + t) * half;
    const float* s = sin_table + (pos0 + t) * half;
    for (int h = 0; h < heads; ++h) {
      float* v = x + (t * heads + h) * head_dim;
      for (int i = 0; i < half; ++i) {
        const int a = style == RopeStyle::kAdjacentPairs ? 2 * i : i;
        const int b = style == RopeStyle::kAdjacentPairs ? 2 * i + 1 : i + half;
        const float x0 = v[a], x1 = v[b];
        v[a] = x0 * c[i] - x1 * s[i];
        v[b] = x0 * s[i] + x1 * c[i];
      }
    }
  }
}

void AddInPlace(float* x, const float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] += y[i];
}

}  // namespace

LlamaRuntime::LlamaRuntime(const LlamaModel& model, const RuntimeOptions& options)
    : model_(model), options_(options), pool_(options.threads) {}

absl::StatusOr<std::unique_ptr<LlamaRuntime>> LlamaRuntime::Create(const LlamaModel& model,
                                                                   const RuntimeOptions& options) {
  const LlamaConfig& c = model.config();
  RuntimeOptions o = options;
  if (o.max_context <= 0) o.max_context = c.context_length;
  if (o.threads < 1 || o.threads > 256) {
    return absl::InvalidArgumentError(absl::StrCat("threads must be 1 to 256, not ", o.threads));
  }
  if (o.max_batch < 1 || o.max_sequences < 1 || o.kv_block_size < 1) {
    return absl::InvalidArgumentError("max_batch, max_sequences and kv_block_size must be positive");
  }
  if (o.sliding_window < 0) o.sliding_window = c.sliding_window;
  o.max_batch = std::min(o.max_batch, o.max_context);
  // The plan's sizes grow with max_context, which comes from the user (--ctx) or the model file: they
  // are computed in 64 bits with overflow checks and held to the machine's memory before anything is
  // allocated (or the RoPE tables filled, over a minute's work for 10^8 positions).
  const int64_t B = o.max_batch;
  const int64_t logit_rows = o.all_logits ? B : std::min<int64_t>(B, o.max_sequences);
  const int64_t q_dim = c.num_heads * c.head_dim;
  const int64_t kv_dim = c.num_kv_heads * c.head_dim;
  const int64_t half = c.head_dim / 2;
  const std::pair<int64_t, int64_t> shapes[] = {
      {B, c.dim},     {B, c.dim},     {B, q_dim},     {B, kv_dim},
      {B, kv_dim},    {B, q_dim},     {B, c.ffn_dim}, {B, c.ffn_dim},
      {logit_rows, c.vocab_size},  // logits
      {o.max_context, half},          {o.max_context, half},  // RoPE cos and sin
  };
  bool overflow = false;
  auto mul = [&overflow](int64_t a, int64_t b) {
    const std::optional<int64_t> r = CheckedMul(a, b);
    overflow |= !r;
    return r.value_or(0);
  };
  auto add = [&overflow](int64_t a, int64_t b) {
    const std::optional<int64_t> r = CheckedAdd(a, b);
    overflow |= !r;
    return r.value_or(0);
  };
  int64_t sizes[std::size(shapes)];
  int64_t arena_floats = 16;  // slack to align the first buffer
  for (size_t i = 0; i < std::size(shapes); ++i) {
    sizes[i] = add(mul(shapes[i].first, shapes[i].second), 15) / 16 * 16;  // each on a 64-byte boundary
    arena_floats = add(arena_floats, sizes[i]);
  }
  const int64_t arena_bytes = mul(arena_floats, sizeof(float));
  KvCacheOptions kv;
  kv.num_layers = static_cast<int>(c.num_layers);
  kv.num_kv_heads = static_cast<int>(c.num_kv_heads);
  kv.head_dim = static_cast<int>(c.head_dim);
  kv.block_size = o.kv_block_size;
  kv.dtype = o.kv_dtype;
  kv.max_sequences = o.max_sequences;
  const int64_t blocks_per_seq = o.max_context / o.kv_block_size + (o.max_context % o.kv_block_size != 0);
  std::optional<int64_t> kv_bytes =
      CheckedProduct({c.num_layers, 2, c.num_kv_heads, o.kv_block_size, c.head_dim,
                      o.kv_dtype == KvDType::kF16 ? 2 : 4, blocks_per_seq, o.max_sequences});
  overflow |= !kv_bytes;
  if (o.kv_budget_bytes > 0 && !overflow) {
    const int64_t block_bytes = *kv_bytes / (blocks_per_seq * o.max_sequences);
    const int64_t blocks = static_cast<int64_t>(o.kv_budget_bytes / static_cast<size_t>(block_bytes));
    if (blocks < blocks_per_seq) {
      return absl::InvalidArgumentError(absl::StrCat(
          "a KV budget of ", FormatMiB(o.kv_budget_bytes), " holds ", blocks * o.kv_block_size,
          " tokens, less than one context of ", o.max_context, " tokens (", FormatMiB(blocks_per_seq * block_bytes),
          "); raise the budget or lower the context"));
    }
    kv_bytes = blocks * block_bytes;
  }
  const int64_t total = add(arena_bytes, kv_bytes.value_or(0));
  const std::string context = o.max_sequences == 1
                                  ? absl::StrCat("a context of ", o.max_context, " tokens")
                                  : absl::StrCat(o.max_sequences, " sequences of ", o.max_context, " tokens");
  if (overflow) {
    return absl::InvalidArgumentError(absl::StrCat("the buffers for ", context, " (batch ", B, ") overflow 64-bit sizes"));
  }
  if (absl::Status s = CheckFitsInMemory(
          total, absl::StrCat(context, " (KV cache ", FormatBytes(*kv_bytes), " in ",
                              o.kv_dtype == KvDType::kF16 ? "f16" : "f32", ", activations ", FormatBytes(arena_bytes), ")"));
      !s.ok()) {
    return s;
  }
  kv.budget_bytes = static_cast<size_t>(*kv_bytes);

  std::unique_ptr<LlamaRuntime> r(new LlamaRuntime(model, o));
  for (const char* op : {"rmsnorm", "silu", "vmul"}) {
    absl::StatusOr<const VectorKernel*> k = SelectVectorKernel(op);
    if (absl::IsNotFound(k.status())) {
      // Forcing a backend that has no vector kernels (xnnpack, gemm): say so and use the best one, as gemv does.
      std::fprintf(stderr, "tessel: %s; ignoring TESSEL_FORCE_BACKEND for %s\n", k.status().ToString().c_str(), op);
      k = SelectVectorKernel(op, "");
    }
    if (!k.ok()) return k.status();
    const std::string_view name = op;
    if (name == "rmsnorm") r->rms_norm_ = std::get<RmsNormFn>((*k)->fn);
    if (name == "silu") r->silu_ = std::get<UnaryFn>((*k)->fn);
    if (name == "vmul") r->vmul_ = std::get<BinaryFn>((*k)->fn);
  }

  r->arena_.assign(arena_floats, 0.0f);
  float* p = r->arena_.data();
  p += (16 - reinterpret_cast<uintptr_t>(p) / sizeof(float) % 16) % 16;
  float** slots[] = {&r->x_,    &r->xb_, &r->q_,      &r->k_,        &r->v_,       &r->att_,
                     &r->gate_, &r->up_, &r->logits_, &r->rope_cos_, &r->rope_sin_};
  for (size_t i = 0; i < std::size(slots); ++i) {
    *slots[i] = p;
    p += sizes[i];
  }
  for (int64_t pos = 0; pos < o.max_context; ++pos) {
    for (int64_t i = 0; i < half; ++i) {
      const double angle = pos * std::pow(c.rope_theta, -2.0 * i / c.head_dim);
      r->rope_cos_[pos * half + i] = static_cast<float>(std::cos(angle));
      r->rope_sin_[pos * half + i] = static_cast<float>(std::sin(angle));
    }
  }

  const int64_t max_cols = std::max({c.dim, q_dim, c.ffn_dim});
  r->matmul_ = std::make_unique<Matmul>(max_cols, &r->pool_);
  r->attention_.num_heads = static_cast<int>(c.num_heads);
  r->attention_.num_kv_heads = static_cast<int>(c.num_kv_heads);
  r->attention_.head_dim = static_cast<int>(c.head_dim);
  r->attention_.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(c.head_dim)));
  r->attention_.sliding_window = static_cast<int>(o.sliding_window);
  r->attention_scratch_ = std::make_unique<AttentionScratch>(r->attention_, o.threads);
  r->activation_bytes_ = r->arena_.size() * sizeof(float);
  r->logit_rows_ = logit_rows;
  r->batch_tokens_.reserve(B);
  r->batch_segments_.reserve(logit_rows);

  absl::StatusOr<std::unique_ptr<PagedKvCache>> cache = PagedKvCache::Create(kv);
  if (!cache.ok()) return cache.status();
  r->cache_ = *std::move(cache);
  return r;
}

absl::StatusOr<absl::Span<const float>> LlamaRuntime::Eval(int seq, absl::Span<const int32_t> tokens) {
  const LlamaConfig& c = model_.config();
  if (!cache_->IsLive(seq)) return absl::InvalidArgumentError(absl::StrCat("sequence ", seq, " does not exist"));
  if (tokens.empty()) return absl::InvalidArgumentError("no tokens to evaluate");
  if (options_.all_logits && static_cast<int64_t>(tokens.size()) > options_.max_batch) {
    return absl::InvalidArgumentError(absl::StrCat(tokens.size(), " tokens exceed the batch of ", options_.max_batch,
                                                   " that all-token logits were planned for"));
  }
  for (int32_t t : tokens) {
    if (t < 0 || t >= c.vocab_size) {
      return absl::InvalidArgumentError(absl::StrCat("token id ", t, " is outside the vocabulary of ", c.vocab_size));
    }
  }
  const int64_t pos0 = cache_->length(seq);
  const int64_t end = pos0 + static_cast<int64_t>(tokens.size());
  if (end > options_.max_context) {
    return absl::OutOfRangeError(absl::StrCat("context is full: ", end, " tokens exceed the ", options_.max_context,
                                              "-token context (start a new sequence or raise the context size)"));
  }
  if (absl::Status s = cache_->Reserve(seq, end); !s.ok()) return s;
  for (int64_t done = 0; done < static_cast<int64_t>(tokens.size());) {
    const int64_t n = std::min<int64_t>(options_.max_batch, tokens.size() - done);
    Forward(seq, tokens.data() + done, n, pos0 + done, options_.all_logits);
    done += n;
  }
  const int64_t rows = options_.all_logits ? static_cast<int64_t>(tokens.size()) : 1;
  return absl::Span<const float>(logits_, rows * c.vocab_size);
}

absl::StatusOr<absl::Span<const float>> LlamaRuntime::EvalBatch(absl::Span<const SequenceTokens> items) {
  const LlamaConfig& c = model_.config();
  if (items.empty()) return absl::InvalidArgumentError("no sequences to evaluate");
  if (static_cast<int64_t>(items.size()) > logit_rows_) {
    return absl::InvalidArgumentError(absl::StrCat(items.size(), " sequences exceed the ", logit_rows_,
                                                   " rows of logits the runtime was planned for (max_sequences)"));
  }
  int64_t total = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    const SequenceTokens& it = items[i];
    if (!cache_->IsLive(it.seq)) return absl::InvalidArgumentError(absl::StrCat("sequence ", it.seq, " does not exist"));
    if (it.tokens.empty()) return absl::InvalidArgumentError(absl::StrCat("sequence ", it.seq, " has no tokens"));
    for (size_t j = 0; j < i; ++j) {
      if (items[j].seq == it.seq) return absl::InvalidArgumentError(absl::StrCat("sequence ", it.seq, " appears twice"));
    }
    for (int32_t t : it.tokens) {
      if (t < 0 || t >= c.vocab_size) {
        return absl::InvalidArgumentError(absl::StrCat("token id ", t, " is outside the vocabulary of ", c.vocab_size));
      }
    }
    const int64_t end = cache_->length(it.seq) + static_cast<int64_t>(it.tokens.size());
    if (end > options_.max_context) {
      return absl::OutOfRangeError(absl::StrCat("context is full: sequence ", it.seq, " would hold ", end,
                                                " tokens, more than the ", options_.max_context, "-token context"));
    }
    total += static_cast<int64_t>(it.tokens.size());
  }
  if (total > options_.max_batch) {
    return absl::InvalidArgumentError(absl::StrCat(total, " tokens exceed the batch of ", options_.max_batch));
  }
  for (const SequenceTokens& it : items) {
    if (absl::Status s = cache_->Reserve(it.seq, cache_->length(it.seq) + it.tokens.size()); !s.ok()) return s;
  }
  batch_tokens_.clear();
  batch_segments_.clear();
  for (const SequenceTokens& it : items) {
    const int64_t n = static_cast<int64_t>(it.tokens.size());
    batch_segments_.push_back({it.seq, static_cast<int64_t>(batch_tokens_.size()), n, cache_->length(it.seq)});
    batch_tokens_.insert(batch_tokens_.end(), it.tokens.begin(), it.tokens.end());
  }
  ForwardSegments(batch_tokens_.data(), total, batch_segments_, /*all_logits=*/false);
  return absl::Span<const float>(logits_, items.size() * c.vocab_size);
}

void LlamaRuntime::Forward(int seq, const int32_t* tokens, int64_t n, int64_t pos0, bool all_logits) {
  const Segment segment{seq, 0, n, pos0};
  ForwardSegments(tokens, n, absl::MakeConstSpan(&segment, 1), all_logits);
}

void LlamaRuntime::ForwardSegments(const int32_t* tokens, int64_t n, absl::Span<const Segment> segments,
                                   bool all_logits) {
  const LlamaConfig& c = model_.config();
  const LlamaWeights& w = model_.weights();
  const int64_t dim = c.dim;
  const int heads = static_cast<int>(c.num_heads);
  const int kv_heads = static_cast<int>(c.num_kv_heads);
  const int head_dim = static_cast<int>(c.head_dim);
  const int64_t q_dim = c.num_heads * c.head_dim;
  const int64_t kv_dim = c.num_kv_heads * c.head_dim;
  for (int64_t t = 0; t < n; ++t) {
    DequantizeRow(w.token_embedding.type, w.token_embedding.row(tokens[t]), x_ + t * dim, dim);
  }
  for (int64_t l = 0; l < c.num_layers; ++l) {
    const LlamaLayerWeights& lw = w.layers[l];
    rms_norm_(n, dim, x_, lw.attn_norm.data(), c.norm_eps, xb_);
    const MatmulJob qkv[] = {{&lw.wq, q_}, {&lw.wk, k_}, {&lw.wv, v_}};
    matmul_->RunGroup(qkv, xb_, n);
    // Position-dependent work per segment: RoPE at its positions, its KV, attention over its own cache.
    for (const Segment& s : segments) {
      float* q = q_ + s.row0 * q_dim;
      float* k = k_ + s.row0 * kv_dim;
      Rope(q, s.n, s.pos0, heads, head_dim, c.rope_style, rope_cos_, rope_sin_);
      Rope(k, s.n, s.pos0, kv_heads, head_dim, c.rope_style, rope_cos_, rope_sin_);
      cache_->Write(static_cast<int>(l), s.seq, s.pos0, s.n, k, v_ + s.row0 * kv_dim);
      FlashAttention(attention_, q, s.n, s.pos0, cache_->View(static_cast<int>(l), s.seq), att_ + s.row0 * q_dim,
                     &pool_, attention_scratch_.get());
    }
    matmul_->Run(lw.wo, att_, n, xb_);
    AddInPlace(x_, xb_, n * dim);
    rms_norm_(n, dim, x_, lw.ffn_norm.data(), c.norm_eps, xb_);
    const MatmulJob gate_up[] = {{&lw.w_gate, gate_}, {&lw.w_up, up_}};
    matmul_->RunGroup(gate_up, xb_, n);
    // SwiGLU: gate = silu(gate) * up, in place, on the vector kernels.
    silu_(n * c.ffn_dim, gate_, gate_);
    vmul_(n * c.ffn_dim, gate_, up_, gate_, -std::numeric_limits<float>::infinity(),
          std::numeric_limits<float>::infinity());
    matmul_->Run(lw.w_down, gate_, n, xb_);
    AddInPlace(x_, xb_, n * dim);
  }
  for (const Segment& s : segments) cache_->SetLength(s.seq, s.pos0 + s.n);
  // Only the rows whose logits are wanted go through the (vocabulary-sized) output head.
  if (all_logits) {
    rms_norm_(n, dim, x_, w.output_norm.data(), c.norm_eps, xb_);
    matmul_->Run(w.output, xb_, n, logits_);
    return;
  }
  for (size_t i = 0; i < segments.size(); ++i) {
    const Segment& s = segments[i];
    rms_norm_(1, dim, x_ + (s.row0 + s.n - 1) * dim, w.output_norm.data(), c.norm_eps, xb_ + i * dim);
  }
  matmul_->Run(w.output, xb_, static_cast<int64_t>(segments.size()), logits_);
}

}  // namespace tessel::llm
