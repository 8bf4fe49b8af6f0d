// FlashAttention over the paged cache against naive softmax attention on random data: prefill from
// position 0, chunked prefill, decode, GQA ratios 1/2/4/8, sliding windows shorter and longer than a
// block, block sizes that do and do not match the key tile, f16 storage, several threads; every tile
// kernel (generic, portable vector, AVX-512) on every shape it handles.
#include "llm/attention/flash_attention.h"

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/attention/flash_tile.h"
#include "kernels/registry/registry.h"
#include "llm/attention/reference_attention.h"
#include "support/fp16.h"
#include "llm/kv_cache/paged_kv_cache.h"

namespace tessel::llm {
namespace {

struct Config {
  int heads, kv_heads, head_dim, window, block_size;
  KvDType dtype;
};

struct Kernel {
  const char* name;
  FlashTileFn fn;
  bool vector;  // only for FlashTileVectorShape
};

void RunCase(const Config& cfg, const Kernel& kernel, int threads, uint32_t seed) {
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
    if (kernel.fn == nullptr) {
      FlashAttention(p, q.data() + off, c, pos, view, got.data() + off, &pool, &scratch);
    } else {
      RunFlashAttention(kernel.fn, p, q.data() + off, c, pos, view, got.data() + off, &pool, &scratch);
    }
    pos += c;
  }
  ASSERT_EQ(pos, total);
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], 2e-5f * (1 + std::fabs(want[i])))
        << kernel.name << ": heads " << cfg.heads << "/" << cfg.kv_heads << " hd " << cfg.head_dim << " window " << cfg.window
        << " block " << cfg.block_size << " f16 " << (cfg.dtype == KvDType::kF16) << " threads " << threads
        << " at element " << i << " (query " << i / (cfg.heads * cfg.head_dim) << ")";
  }
}

TEST(FlashAttentionTest, MatchesNaiveSoftmaxAttention) {
  const Config configs[] = {
      {4, 4, 32, 0, 16, KvDType::kF32},    // multi-head, no GQA
      {4, 2, 32, 0, 16, KvDType::kF32},    // GQA 2
      {8, 2, 64, 0, 16, KvDType::kF32},    // GQA 4
      {8, 1, 16, 0, 7, KvDType::kF32},     // multi-query, odd block size
      {4, 2, 32, 5, 16, KvDType::kF32},    // window shorter than a block
      {4, 2, 32, 16, 16, KvDType::kF32},   // window of exactly one block
      {4, 2, 32, 33, 8, KvDType::kF32},    // window across several blocks
      {4, 2, 32, 0, 128, KvDType::kF32},   // one block longer than the key tile (contiguous cache)
      {4, 2, 40, 9, 16, KvDType::kF16},    // f16 storage, head size not a power of two
      // TinyLlama's and Llama's head sizes, f16 and f32, GQA 4 and 8, windows, blocks of 16, 7, 32.
      {16, 4, 64, 0, 16, KvDType::kF16},   // GQA 4
      {32, 4, 64, 0, 16, KvDType::kF16},   // TinyLlama: GQA 8
      {32, 4, 64, 0, 16, KvDType::kF32},
      {16, 2, 64, 21, 32, KvDType::kF16},  // GQA 8, window not a multiple of 16, blocks of 32
      {8, 2, 64, 0, 7, KvDType::kF16},     // blocks of 7: the generic kernel
      {8, 2, 128, 0, 16, KvDType::kF16},   // GQA 4
      {8, 1, 128, 0, 32, KvDType::kF32},   // GQA 8, blocks of 32
      {8, 2, 128, 40, 16, KvDType::kF32},  // window across blocks
      {16, 2, 128, 3, 7, KvDType::kF32},   // blocks of 7, short window
      {4, 1, 256, 17, 16, KvDType::kF16},  // largest vector head size
  };
  std::vector<Kernel> kernels = {{"auto", nullptr, false}, {"generic", flash_tile__generic, false},
                                 {"vec16", flash_tile__vec16, true}};
#if defined(__x86_64__)
  if (CpuSupports(Isa::kAvx2)) {
    kernels.push_back({"avx2", flash_tile__avx2, true});
  } else {
    std::printf("[  SKIPPED ] avx2 kernel: this CPU has no AVX2\n");
  }
  if (CpuSupports(Isa::kAvx512)) {
    kernels.push_back({"avx512", flash_tile__avx512, true});
  } else {
    std::printf("[  SKIPPED ] avx512 kernel: this CPU has no AVX-512\n");
  }
#endif
  uint32_t seed = 1;
  for (const Config& c : configs) {
    for (const Kernel& k : kernels) {
      if (k.vector && !FlashTileVectorShape(c.head_dim, c.block_size)) continue;
      for (int threads : {1, 3}) RunCase(c, k, threads, seed++);
    }
  }
}

// Cache slots past the sequence's end may hold anything (a previous sequence's data, NaN): kernels
// that load whole 16-key vectors must mask them, never let them through.
TEST(FlashAttentionTest, IgnoresStaleSlotsPastTheEnd) {
  AttentionParams p;
  p.num_heads = 8;
  p.num_kv_heads = 2;
  p.head_dim = 64;
  p.scale = 0.125f;
  for (KvDType dtype : {KvDType::kF32, KvDType::kF16}) {
    KvCacheOptions o;
    o.num_layers = 1;
    o.num_kv_heads = 2;
    o.head_dim = 64;
    o.block_size = 16;
    o.dtype = dtype;
    o.budget_bytes = o.BlockBytes();
    auto cache = PagedKvCache::Create(o);
    ASSERT_TRUE(cache.ok());
    const int seq = *(*cache)->AddSequence();
    ASSERT_TRUE((*cache)->Reserve(seq, 16).ok());
    std::vector<float> k(16 * 2 * 64), v(k.size()), q(8 * 64), want(q.size()), got(q.size());
    std::mt19937 rng(7);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    for (float& x : q) x = dist(rng);
    for (float& x : k) x = dist(rng);
    for (float& x : v) x = dist(rng);
    // Poison the whole block, then write 5 tokens.
    std::vector<float> nan(k.size(), NAN);
    (*cache)->Write(0, seq, 0, 16, nan.data(), nan.data());
    (*cache)->Write(0, seq, 0, 5, k.data(), v.data());
    std::vector<float> k_ref = k, v_ref = v;
    if (dtype == KvDType::kF16) {
      for (float& x : k_ref) x = HalfToFloat(FloatToHalf(x));
      for (float& x : v_ref) x = HalfToFloat(FloatToHalf(x));
    }
    ReferenceAttention(p, q.data(), 1, 4, k_ref.data(), v_ref.data(), want.data());
    ThreadPool pool(1);
    AttentionScratch scratch(p, 1);
    FlashAttention(p, q.data(), 1, 4, (*cache)->View(0, seq), got.data(), &pool, &scratch);
    for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], 2e-5f * (1 + std::fabs(want[i]))) << i;
  }
}

}  // namespace
}  // namespace tessel::llm
