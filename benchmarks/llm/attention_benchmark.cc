// Decode attention (one query token) on TinyLlama's shape: 32 query heads, 4 KV heads, head size 64,
// f16 paged cache in 16-token blocks, one layer. Context lengths 128, 512 and 2048. "warm": the layer's
// cache stays in the caches between calls; "cold": 64 MiB of other data is read between calls, as the
// weights streaming through the caches between two tokens do in a real decode step (only the attention
// call is timed). F32KV=1 in the environment: an f32 cache instead.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <random>
#include <vector>

#include "llm/attention/flash_attention.h"
#include "llm/kv_cache/paged_kv_cache.h"

namespace tessel::llm {
namespace {

void BM_DecodeAttention(benchmark::State& state) {
  const int64_t ctx = state.range(0);
  const bool cold = state.range(1) != 0;
  AttentionParams p;
  p.num_heads = 32;
  p.num_kv_heads = 4;
  p.head_dim = 64;
  p.scale = 1.0f / 8.0f;
  KvCacheOptions o;
  o.num_layers = 1;
  o.num_kv_heads = p.num_kv_heads;
  o.head_dim = p.head_dim;
  o.block_size = 16;
  o.dtype = std::getenv("F32KV") ? KvDType::kF32 : KvDType::kF16;
  o.max_sequences = 1;
  o.budget_bytes = o.BlockBytes() * (ctx / o.block_size + 1);
  auto cache = PagedKvCache::Create(o);
  if (!cache.ok()) {
    state.SkipWithError(cache.status().ToString().c_str());
    return;
  }
  const int seq = *(*cache)->AddSequence();
  if (!(*cache)->Reserve(seq, ctx).ok()) {
    state.SkipWithError("reserve failed");
    return;
  }
  std::mt19937 rng(1);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> k(ctx * p.num_kv_heads * p.head_dim), v(k.size()), q(p.num_heads * p.head_dim),
      out(q.size());
  for (float& x : k) x = dist(rng);
  for (float& x : v) x = dist(rng);
  for (float& x : q) x = dist(rng);
  (*cache)->Write(0, seq, 0, ctx, k.data(), v.data());
  (*cache)->SetLength(seq, ctx);
  const KvView view = (*cache)->View(0, seq);
  ThreadPool pool(1);
  AttentionScratch scratch(p, 1);
  std::vector<uint64_t> flush(cold ? (64 << 20) / 8 : 0, 1);
  uint64_t sink = 0;
  for (auto _ : state) {
    if (cold) {
      state.PauseTiming();
      for (uint64_t x : flush) sink += x;
      state.ResumeTiming();
    }
    FlashAttention(p, q.data(), 1, ctx - 1, view, out.data(), &pool, &scratch);
    benchmark::DoNotOptimize(out.data());
  }
  benchmark::DoNotOptimize(sink);
  // Multiply-adds: scores and values, every query head against every key.
  state.counters["GMACs"] = benchmark::Counter(2.0 * p.num_heads * ctx * p.head_dim * state.iterations(),
                                               benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
}
BENCHMARK(BM_DecodeAttention)
    ->ArgNames({"ctx", "cold"})
    ->ArgsProduct({{128, 512, 2048}, {0, 1}})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace tessel::llm
