// Flash attention: tasks are (KV head, tile of queries); each task streams its key range tile by
// tile with running max / sum / accumulator per (query, head) row. The tile kernel is picked once per
// process: the widest vector kernel the CPU has (kernels/attention) for the head sizes and block sizes
// it handles, else the generic one.
#include "llm/attention/flash_attention.h"

#include <string>

#include "kernels/attention/flash_tile.h"
#include "kernels/registry/registry.h"

namespace tessel::llm {
namespace {

constexpr int kQT = AttentionScratch::kQueryTile;
// Multiply-adds below which waking the thread pool costs more than it saves.
constexpr int64_t kMinParallelWork = 1 << 16;

}  // namespace

AttentionScratch::AttentionScratch(const AttentionParams& params, int num_threads) {
  const size_t floats = FlashScratchFloats(params);
  for (int t = 0; t < num_threads; ++t) buffers_.emplace_back(new float[floats]);
}

void RunFlashAttention(FlashTileFn tile, const AttentionParams& p, const float* q, int64_t n, int64_t pos0,
                       const KvView& kv, float* out, ThreadPool* pool, AttentionScratch* scratch) {
  const int64_t query_tiles = (n + kQT - 1) / kQT;
  auto task = [&](int64_t t, int thread) {
    const int kv_head = static_cast<int>(t % p.num_kv_heads);
    const int64_t i0 = (t / p.num_kv_heads) * kQT;
    tile(p, q, n, pos0, kv, out, kv_head, i0, scratch->Get(thread));
  };
  // Short attention (decode early in a sequence) stays on the calling thread: see kMinParallelWork.
  const int64_t work = n * (pos0 + n) * p.num_heads * p.head_dim;
  if (work < kMinParallelWork) {
    for (int64_t t = 0; t < query_tiles * p.num_kv_heads; ++t) task(t, 0);
  } else {
    pool->Run(query_tiles * p.num_kv_heads, task);
  }
}

namespace {

// The kernel for a vector shape (vector = true) or any other. TESSEL_FORCE_BACKEND=reference runs the
// generic kernel, as it does the portable GEMVs; other settings name no tile kernel and are ignored here.
FlashTileFn SelectTile(bool vector) {
  const std::string force = ForcedBackendFromEnv() == "reference" ? "reference" : "";
  const ProblemShape shape = vector ? ProblemShape{128, 16, 0, 0} : ProblemShape{0, 0, 0, 0};
  absl::StatusOr<const FlashTileKernel*> e = FlashTileKernels().Select("flash_tile", "f32", "paged", shape, force);
  return e.ok() ? (*e)->fn : flash_tile__generic;
}

}  // namespace

void FlashAttention(const AttentionParams& p, const float* q, int64_t n, int64_t pos0, const KvView& kv, float* out,
                    ThreadPool* pool, AttentionScratch* scratch) {
  // Chosen once: legality depends only on whether the head and block sizes suit the vector kernels.
  static const FlashTileFn vector_tile = SelectTile(true);
  static const FlashTileFn generic_tile = SelectTile(false);
  const FlashTileFn tile = FlashTileVectorShape(p.head_dim, kv.block_size) ? vector_tile : generic_tile;
  RunFlashAttention(tile, p, q, n, pos0, kv, out, pool, scratch);
}

}  // namespace tessel::llm
