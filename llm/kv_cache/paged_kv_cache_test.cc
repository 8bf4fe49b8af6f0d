// Block accounting (budget, growth, exhaustion, freeing) and that what is written is what the view
// addresses, for f32 and f16 and interleaved sequences.
#include "llm/kv_cache/paged_kv_cache.h"

#include <vector>

#include "gtest/gtest.h"
#include "support/fp16.h"

namespace tessel::llm {
namespace {

KvCacheOptions Small(KvDType dtype, int blocks) {
  KvCacheOptions o;
  o.num_layers = 2;
  o.num_kv_heads = 2;
  o.head_dim = 4;
  o.block_size = 4;
  o.dtype = dtype;
  o.max_sequences = 3;
  o.budget_bytes = o.BlockBytes() * blocks + o.BlockBytes() / 2;  // a partial block is not usable
  return o;
}

TEST(PagedKvCacheTest, BlocksComeFromTheBudgetAndReturnOnRemove) {
  const KvCacheOptions o = Small(KvDType::kF32, 5);
  EXPECT_EQ(o.BlockBytes(), 2u * 2 * 2 * 4 * 4 * 4);
  auto c = PagedKvCache::Create(o);
  ASSERT_TRUE(c.ok()) << c.status();
  PagedKvCache& cache = **c;
  EXPECT_EQ(cache.num_blocks(), 5);
  EXPECT_EQ(cache.pool_bytes(), 5 * o.BlockBytes());
  const int a = *cache.AddSequence();
  const int b = *cache.AddSequence();
  ASSERT_TRUE(cache.Reserve(a, 5).ok());  // 2 blocks
  EXPECT_EQ(cache.free_blocks(), 3);
  ASSERT_TRUE(cache.Reserve(a, 8).ok());  // still 2 blocks
  EXPECT_EQ(cache.free_blocks(), 3);
  ASSERT_TRUE(cache.Reserve(b, 12).ok());  // 3 blocks
  EXPECT_EQ(cache.free_blocks(), 0);
  absl::Status full = cache.Reserve(a, 9);
  EXPECT_EQ(full.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(full.message().find("full"), absl::string_view::npos);
  ASSERT_TRUE(cache.RemoveSequence(b).ok());
  EXPECT_EQ(cache.free_blocks(), 3);
  EXPECT_TRUE(cache.Reserve(a, 20).ok());
  EXPECT_EQ(cache.free_blocks(), 0);
  ASSERT_TRUE(cache.Clear(a).ok());
  EXPECT_EQ(cache.free_blocks(), 5);
  EXPECT_EQ(cache.RemoveSequence(b).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(cache.AddSequence().ok());
  EXPECT_TRUE(cache.AddSequence().ok());
  EXPECT_EQ(cache.AddSequence().status().code(), absl::StatusCode::kResourceExhausted);
  KvCacheOptions tiny = o;
  tiny.budget_bytes = o.BlockBytes() - 1;
  EXPECT_EQ(PagedKvCache::Create(tiny).status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(PagedKvCacheTest, WritesLandWhereTheViewPoints) {
  for (KvDType dtype : {KvDType::kF32, KvDType::kF16}) {
    KvCacheOptions o = Small(dtype, 10);
    o.block_size = 5;  // differs from head_dim, so that a layout mixing the two up shows
    auto c = PagedKvCache::Create(o);
    ASSERT_TRUE(c.ok());
    PagedKvCache& cache = **c;
    const int s0 = *cache.AddSequence();
    const int s1 = *cache.AddSequence();
    // Interleave growth so that the sequences' blocks are not contiguous.
    auto value = [](int seq, int layer, int64_t pos, int h, int e, int kv) {
      return static_cast<float>(seq * 1000 + layer * 100 + pos * 10 + h * 4 + e) * (kv ? -0.5f : 0.25f);
    };
    for (int64_t pos = 0; pos < 13; ++pos) {
      for (int seq : {s0, s1}) {
        ASSERT_TRUE(cache.Reserve(seq, pos + 1).ok());
        for (int layer = 0; layer < 2; ++layer) {
          std::vector<float> k(8), v(8);
          for (int h = 0; h < 2; ++h) {
            for (int e = 0; e < 4; ++e) {
              k[h * 4 + e] = value(seq, layer, pos, h, e, 0);
              v[h * 4 + e] = value(seq, layer, pos, h, e, 1);
            }
          }
          cache.Write(layer, seq, pos, 1, k.data(), v.data());
        }
        cache.SetLength(seq, pos + 1);
      }
    }
    EXPECT_NE(cache.View(0, s0).block_table[1], cache.View(0, s0).block_table[0] + 1);
    for (int seq : {s0, s1}) {
      EXPECT_EQ(cache.length(seq), 13);
      for (int layer = 0; layer < 2; ++layer) {
        const KvView view = cache.View(layer, seq);
        for (int64_t pos = 0; pos < 13; ++pos) {
          for (int h = 0; h < 2; ++h) {
            for (int e = 0; e < 4; ++e) {
              // The layout KvView documents, spelled out: keys transposed within a block, values by token.
              const int64_t b = view.block_table[pos / 5], s = pos % 5;
              const int64_t k_off = ((b * 2 + h) * 4 + e) * 5 + s;
              const int64_t v_off = ((b * 2 + h) * 5 + s) * 4 + e;
              ASSERT_EQ(view.KeyOffset(pos, h, e), k_off);
              ASSERT_EQ(view.ValueOffset(pos, h) + e, v_off);
              float k, v;
              if (dtype == KvDType::kF32) {
                k = static_cast<const float*>(view.k_base)[k_off];
                v = static_cast<const float*>(view.v_base)[v_off];
              } else {
                k = HalfToFloat(static_cast<const uint16_t*>(view.k_base)[k_off]);
                v = HalfToFloat(static_cast<const uint16_t*>(view.v_base)[v_off]);
              }
              // Values up to ~1300 * 0.5 are exact in half precision (11-bit significand, step <= 0.5).
              ASSERT_EQ(k, value(seq, layer, pos, h, e, 0));
              ASSERT_EQ(v, value(seq, layer, pos, h, e, 1));
            }
          }
        }
      }
    }
  }
}

// Prefix sharing: the second sequence reads the first one's prefix from the same blocks; the first
// write into a shared, partly filled block copies it, so each sequence keeps its own later tokens; blocks
// return to the pool only when no sequence holds them.
TEST(PagedKvCacheTest, SharedPrefixBlocksAreCopiedOnWrite) {
  const KvCacheOptions o = Small(KvDType::kF32, 8);  // blocks of 4 tokens
  auto c = PagedKvCache::Create(o);
  ASSERT_TRUE(c.ok());
  PagedKvCache& cache = **c;
  const int a = *cache.AddSequence();
  const int b = *cache.AddSequence();
  // Each position's K and V hold seq * 100 + layer * 10 + pos in every element.
  auto write = [&](int seq, int64_t pos, float tag) {
    ASSERT_TRUE(cache.Reserve(seq, pos + 1).ok());
    for (int layer = 0; layer < 2; ++layer) {
      std::vector<float> kv(8, tag + layer * 10 + pos);
      cache.Write(layer, seq, pos, 1, kv.data(), kv.data());
    }
    cache.SetLength(seq, pos + 1);
  };
  auto read = [&](int seq, int layer, int64_t pos) {
    const KvView v = cache.View(layer, seq);
    return static_cast<const float*>(v.v_base)[v.ValueOffset(pos, 1) + 3];
  };
  for (int64_t pos = 0; pos < 6; ++pos) write(a, pos, 100);  // blocks: [0-3] full, [4-5] partial
  EXPECT_EQ(cache.free_blocks(), 6);
  ASSERT_TRUE(cache.SharePrefix(a, b, 6).ok());
  EXPECT_EQ(cache.length(b), 6);
  EXPECT_EQ(cache.free_blocks(), 6);  // nothing copied yet
  EXPECT_EQ(cache.View(0, b).block_table[1], cache.View(0, a).block_table[1]);
  EXPECT_EQ(cache.block_refs(cache.View(0, a).block_table[0]), 2);
  for (int64_t pos = 0; pos < 6; ++pos) EXPECT_EQ(read(b, 1, pos), 110 + pos);
  // b writes position 6 into the shared partial block: b gets a copy; a's block is untouched.
  write(b, 6, 200);
  EXPECT_EQ(cache.free_blocks(), 5);
  EXPECT_NE(cache.View(0, b).block_table[1], cache.View(0, a).block_table[1]);
  EXPECT_EQ(cache.View(0, b).block_table[0], cache.View(0, a).block_table[0]);  // the full block stays shared
  for (int64_t pos = 0; pos < 6; ++pos) EXPECT_EQ(read(b, 1, pos), 110 + pos) << pos;
  EXPECT_EQ(read(b, 0, 6), 206);
  write(a, 6, 100);  // a's block is its own again (refs 1): no copy
  EXPECT_EQ(cache.free_blocks(), 5);
  EXPECT_EQ(read(a, 0, 6), 106);
  EXPECT_EQ(read(b, 0, 6), 206);
  ASSERT_TRUE(cache.RemoveSequence(a).ok());
  EXPECT_EQ(cache.free_blocks(), 6);  // a's second block; the first is still b's
  for (int64_t pos = 0; pos < 6; ++pos) EXPECT_EQ(read(b, 1, pos), 110 + pos);
  ASSERT_TRUE(cache.RemoveSequence(b).ok());
  EXPECT_EQ(cache.free_blocks(), 8);
  // Errors.
  const int x = *cache.AddSequence();
  const int y = *cache.AddSequence();
  EXPECT_EQ(cache.SharePrefix(x, y, 1).code(), absl::StatusCode::kInvalidArgument);  // x is empty
  write(x, 0, 0);
  EXPECT_EQ(cache.SharePrefix(x, x, 1).code(), absl::StatusCode::kInvalidArgument);
  write(y, 0, 0);
  EXPECT_EQ(cache.SharePrefix(x, y, 1).code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace tessel::llm
