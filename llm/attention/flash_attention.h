// Fused causal attention over the paged KV cache, flash-style: keys are visited in tiles (never
// crossing a cache block) with an online softmax per query row, so the score matrix is never
// materialized. One kernel serves prefill (many queries) and decode (one query). Grouped-query
// attention processes every query head of a KV head together, so each key tile is read once per
// group; an optional sliding window limits how far back a query looks.
#ifndef TESSEL_LLM_ATTENTION_FLASH_ATTENTION_H_
#define TESSEL_LLM_ATTENTION_FLASH_ATTENTION_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/attention/flash_tile.h"
#include "llm/kv_cache/kv_view.h"
#include "support/thread_pool.h"

namespace tessel::llm {

// Defined with the tile kernels (kernels/attention/flash_tile.h).
using ::tessel::AttentionParams;

// Per-thread scratch, sized once for the largest head size and group.
class AttentionScratch {
 public:
  static constexpr int kQueryTile = kFlashQueryTile;  // queries per task
  static constexpr int kKeyTile = kFlashKeyTile;      // keys per online-softmax step (one vector)

  AttentionScratch(const AttentionParams& params, int num_threads);
  float* Get(int thread) { return buffers_[thread].get(); }

 private:
  std::vector<std::unique_ptr<float[]>> buffers_;
};

// out[i, h, :] = softmax over visible keys j of (scale * q[i, h] . K[j]) applied to V[j], for
// queries i < n at positions pos0 + i. `kv` must hold positions [0, pos0 + n).
// q and out are [n, num_heads, head_dim].
void FlashAttention(const AttentionParams& p, const float* q, int64_t n, int64_t pos0, const KvView& kv, float* out,
                    ThreadPool* pool, AttentionScratch* scratch);

// FlashAttention with a given tile kernel (tests run every kernel of FlashTileKernels() through this).
void RunFlashAttention(FlashTileFn tile, const AttentionParams& p, const float* q, int64_t n, int64_t pos0,
                       const KvView& kv, float* out, ThreadPool* pool, AttentionScratch* scratch);

}  // namespace tessel::llm

#endif  // TESSEL_LLM_ATTENTION_FLASH_ATTENTION_H_
