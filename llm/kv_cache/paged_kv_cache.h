// Paged KV cache: one pool of fixed-size blocks (block_size tokens of K and V for every layer),
// allocated once from a byte budget and shared by several sequences, each with its own block table.
// Blocks are taken from a free list as a sequence grows and returned when it is cleared or removed.
// f32 or f16 storage.
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
  // Makes room for positions [0, num_tokens): takes blocks from the pool as needed.
  // ResourceExhausted (and no change) when the pool runs out.
  absl::Status Reserve(int seq, int64_t num_tokens);
  // Stores K and V ([n, num_kv_heads, head_dim] f32) of layer `layer` at positions [pos, pos + n),
  // which Reserve must have covered. Does not change the length.
  void Write(int layer, int seq, int64_t pos, int64_t n, const float* k, const float* v);
  // Marks positions [0, length) as filled, after every layer has been written.
  void SetLength(int seq, int64_t length) { seqs_[seq].length = length; }

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

  KvCacheOptions options_;
  int num_blocks_ = 0;
  size_t pool_bytes_ = 0;
  std::unique_ptr<uint8_t[], void (*)(uint8_t*)> pool_{nullptr, nullptr};
  std::vector<int32_t> free_;
  std::vector<Sequence> seqs_;
};

}  // namespace tessel::llm

#endif  // TESSEL_LLM_KV_CACHE_PAGED_KV_CACHE_H_
