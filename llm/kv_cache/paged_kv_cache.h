// Paged KV cache: one pool of fixed-size blocks (block_size tokens of K and V for every layer),
// allocated once from a byte budget and shared by several sequences, each with its own block table.
// Blocks are taken from a free list as a sequence grows and returned when it is cleared or removed.
// Blocks are reference-counted: SharePrefix gives a new sequence another one's prefix blocks without a
// copy (a common system prompt computed once), and a write into a shared block copies it first
// (copy-on-write, in Reserve), so neither sequence sees the other's later tokens. f32 or f16 storage.
#ifndef TESSEL_LLM_KV_CACHE_PAGED_KV_CACHE_H_
#define TESSEL_LLM_KV_CACHE_PAGED_KV_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "llm/kv_cache/kv_view.h"

namespace tessel::llm {

struct KvCacheOptions {
  int num_layers = 0;
  int num_kv_heads = 0;
  int head_dim = 0;
  int block_size = 16;
  KvDType dtype = KvDType::kF32;
  size_t budget_bytes = 0;  // the pool gets floor(budget / BlockBytes()) blocks
  int max_sequences = 1;

  // Bytes of one block: K and V, every layer.
  size_t BlockBytes() const;
};

class PagedKvCache {
 public:
  static absl::StatusOr<std::unique_ptr<PagedKvCache>> Create(const KvCacheOptions& options);

  const KvCacheOptions& options() const { return options_; }
  int num_blocks() const { return num_blocks_; }
  int free_blocks() const { return static_cast<int>(free_.size()); }
  size_t pool_bytes() const { return pool_bytes_; }

  // A new empty sequence; ResourceExhausted when max_sequences are live.
  absl::StatusOr<int> AddSequence();
  // Frees the sequence's blocks and its id.
  absl::Status RemoveSequence(int seq);
  // Drops every token (keeps the id).
  absl::Status Clear(int seq);

  int64_t length(int seq) const { return seqs_[seq].length; }
  // Makes room for positions [0, num_tokens): takes blocks from the pool as needed, and copies a shared
  // block that positions [length, num_tokens) would write into. ResourceExhausted (and no change) when
  // the pool runs out.
  absl::Status Reserve(int seq, int64_t num_tokens);
  // Stores K and V ([n, num_kv_heads, head_dim] f32) of layer `layer` at positions [pos, pos + n),
  // which Reserve must have covered. Does not change the length.
  void Write(int layer, int seq, int64_t pos, int64_t n, const float* k, const float* v);
  // Marks positions [0, length) as filled, after every layer has been written.
  void SetLength(int seq, int64_t length) { seqs_[seq].length = length; }

  // Gives empty sequence `dst` the first `num_tokens` positions of `src` (0 < num_tokens <= src's length)
  // by sharing src's blocks; dst's length becomes num_tokens.
  absl::Status SharePrefix(int src, int dst, int64_t num_tokens);
  // Sequences holding block b (0: free); tests and diagnostics.
  int block_refs(int32_t b) const { return refs_[b]; }

  bool IsLive(int seq) const { return seq >= 0 && seq < static_cast<int>(seqs_.size()) && seqs_[seq].live; }
  KvView View(int layer, int seq) const;

 private:
  struct Sequence {
    bool live = false;
    int64_t length = 0;
    std::vector<int32_t> blocks;
  };
  explicit PagedKvCache(const KvCacheOptions& options) : options_(options) {}
  void Release(Sequence& s);
  size_t ElementBytes() const { return options_.dtype == KvDType::kF16 ? 2 : 4; }
  size_t LayerBytes() const;  // one of K or V for one layer, all blocks
  size_t BlockSliceBytes() const;  // one block's part of LayerBytes
  int32_t TakeBlock();
  void CopyBlock(int32_t from, int32_t to);

  KvCacheOptions options_;
  int num_blocks_ = 0;
  size_t pool_bytes_ = 0;
  std::unique_ptr<uint8_t[], void (*)(uint8_t*)> pool_{nullptr, nullptr};
  std::vector<int32_t> free_;
  std::vector<int32_t> refs_;  // per block: the sequences whose tables hold it
  std::vector<Sequence> seqs_;
};

}  // namespace tessel::llm

#endif  // TESSEL_LLM_KV_CACHE_PAGED_KV_CACHE_H_
