// FlashAttention over the paged cache against naive softmax attention on random data: prefill from
// position 0, chunked prefill, decode, GQA ratios 1/2/4/8, sliding windows shorter and longer than a
// block, block sizes that do and do not match the key tile, f16 storage, several threads.
#include "llm/attention/flash_attention.h"

#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "llm/attention/reference_attention.h"
#include "llm/base/fp16.h"
#include "llm/kv_cache/paged_kv_cache.h"

namespace tessel::llm {
namespace {

struct Config {
  int heads, kv_heads, head_dim, window, block_size;
  KvDType dtype;
};

void RunCase(const Config& cfg, int threads, uint32_t seed) {
  AttentionParams p;
  p.num_heads = cfg.heads;
  p.num_kv_heads = cfg.kv_heads;
  p.head_dim = cfg.head_dim;
  p.scale = 1.0f / std::sqrt(static_cast<float>(cfg.head_dim));
  p.sliding_window = cfg.window;
  const int64_t total = 75;  // keys: not a multiple of any block size or tile
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.5f);
  const int64_t kv_elems = total * cfg.kv_heads * cfg.head_dim;
  std::vector<float> k(kv_elems), v(kv_elems), q(total * cfg.heads * cfg.head_dim);
  for (float& x : k) x = dist(rng);
  for (float& x : v) x = dist(rng);
  for (float& x : q) x = dist(rng);
  // The reference sees exactly what the cache stores.
  std::vector<float> k_ref = k, v_ref = v;
  if (cfg.dtype == KvDType::kF16) {
    for (float& x : k_ref) x = HalfToFloat(FloatToHalf(x));
    for (float& x : v_ref) x = HalfToFloat(FloatToHalf(x));
  }

  KvCacheOptions o;
  o.num_layers = 1;
  o.num_kv_heads = cfg.kv_heads;
  o.head_dim = cfg.head_dim;
  o.block_size = cfg.block_size;
  o.dtype = cfg.dtype;
  o.max_sequences = 2;
  o.budget_bytes = o.BlockBytes() * (2 * ((total + cfg.block_size - 1) / cfg.block_size) + 2);
  auto cache = PagedKvCache::Create(o);
  ASSERT_TRUE(cache.ok()) << cache.status();
  // A second sequence takes every other block so that the block table is scattered.
  const int other = *(*cache)->AddSequence();
  const int seq = *(*cache)->AddSequence();
  for (int64_t pos = 0; pos < total; pos += cfg.block_size) {
    ASSERT_TRUE((*cache)->Reserve(other, pos + 1).ok());
    ASSERT_TRUE((*cache)->Reserve(seq, pos + 1).ok());
  }
  (*cache)->Write(0, seq, 0, total, k.data(), v.data());
  (*cache)->SetLength(seq, total);
  const KvView view = (*cache)->View(0, seq);

  ThreadPool pool(threads);
  AttentionScratch scratch(p, threads);
  std::vector<float> want(q.size()), got(q.size(), NAN);
  ReferenceAttention(p, q.data(), total, 0, k_ref.data(), v_ref.data(), want.data());
  // Prefill in chunks of various sizes (the first covers several query tiles), then single-token
  // decodes: every query position gets computed exactly once.
  const int64_t chunks[] = {37, 1, 20, 1, 1, 15};
  int64_t pos = 0;
  for (int64_t c : chunks) {
    const int64_t off = pos * cfg.heads * cfg.head_dim;
    FlashAttention(p, q.data() + off, c, pos, view, got.data() + off, &pool, &scratch);
    pos += c;
  }
  ASSERT_EQ(pos, total);
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], 2e-5f * (1 + std::fabs(want[i])))
        << "heads " << cfg.heads << "/" << cfg.kv_heads << " hd " << cfg.head_dim << " window " << cfg.window
        << " block " << cfg.block_size << " f16 " << (cfg.dtype == KvDType::kF16) << " threads " << threads
        << " at element " << i << " (query " << i / (cfg.heads * cfg.head_dim) << ")";
  }
}

TEST(FlashAttentionTest, MatchesNaiveSoftmaxAttention) {
  const Config configs[] = {
      {4, 4, 32, 0, 16, KvDType::kF32},   // multi-head, no GQA
      {4, 2, 32, 0, 16, KvDType::kF32},   // GQA 2
      {8, 2, 64, 0, 16, KvDType::kF32},   // GQA 4
      {8, 1, 16, 0, 7, KvDType::kF32},    // multi-query, odd block size
      {4, 2, 32, 5, 16, KvDType::kF32},   // window shorter than a block
      {4, 2, 32, 16, 16, KvDType::kF32},  // window of exactly one block
      {4, 2, 32, 33, 8, KvDType::kF32},   // window across several blocks
      {4, 2, 32, 0, 128, KvDType::kF32},  // one block longer than the key tile (contiguous cache)
      {4, 2, 40, 9, 16, KvDType::kF16},   // f16 storage, head size not a power of two
  };
  uint32_t seed = 1;
  for (const Config& c : configs) {
    for (int threads : {1, 3}) RunCase(c, threads, seed++);
  }
}

}  // namespace
}  // namespace tessel::llm
