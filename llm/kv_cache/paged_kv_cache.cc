// Paged KV cache: pool layout [layer][K|V][block][head][...], where a head's part of a block is
// [head_dim][slot] for K (keys transposed) and [slot][head_dim] for V (see KvView).
#include "llm/kv_cache/paged_kv_cache.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "support/fp16.h"

namespace tessel::llm {

size_t KvCacheOptions::BlockBytes() const {
  const size_t elem = dtype == KvDType::kF16 ? 2 : 4;
  return static_cast<size_t>(num_layers) * 2 * num_kv_heads * block_size * head_dim * elem;
}

size_t PagedKvCache::BlockSliceBytes() const {
  return static_cast<size_t>(options_.num_kv_heads) * options_.block_size * options_.head_dim * ElementBytes();
}

size_t PagedKvCache::LayerBytes() const { return static_cast<size_t>(num_blocks_) * BlockSliceBytes(); }

int32_t PagedKvCache::TakeBlock() {
  const int32_t b = free_.back();
  free_.pop_back();
  refs_[b] = 1;
  return b;
}

void PagedKvCache::CopyBlock(int32_t from, int32_t to) {
  const size_t slice = BlockSliceBytes();
  for (int part = 0; part < 2 * options_.num_layers; ++part) {  // K and V of every layer
    uint8_t* base = pool_.get() + static_cast<size_t>(part) * LayerBytes();
    std::memcpy(base + to * slice, base + from * slice, slice);
  }
}

absl::StatusOr<std::unique_ptr<PagedKvCache>> PagedKvCache::Create(const KvCacheOptions& options) {
  if (options.num_layers <= 0 || options.num_kv_heads <= 0 || options.head_dim <= 0 || options.block_size <= 0 ||
      options.max_sequences <= 0) {
    return absl::InvalidArgumentError("KV cache: layers, heads, head size, block size and sequences must be positive");
  }
  const size_t block_bytes = options.BlockBytes();
  const size_t blocks = options.budget_bytes / block_bytes;
  if (blocks == 0) {
    return absl::ResourceExhaustedError(absl::StrCat("KV cache: a budget of ", options.budget_bytes,
                                                     " bytes holds no block of ", block_bytes, " bytes"));
  }
  if (blocks > static_cast<size_t>(INT32_MAX)) return absl::InvalidArgumentError("KV cache: too many blocks");
  std::unique_ptr<PagedKvCache> c(new PagedKvCache(options));
  c->num_blocks_ = static_cast<int>(blocks);
  c->pool_bytes_ = blocks * block_bytes;
  void* p = std::aligned_alloc(64, (c->pool_bytes_ + 63) / 64 * 64);
  if (p == nullptr) {
    return absl::ResourceExhaustedError(absl::StrCat("KV cache: cannot allocate ", c->pool_bytes_, " bytes"));
  }
  std::memset(p, 0, c->pool_bytes_);
  c->pool_ = std::unique_ptr<uint8_t[], void (*)(uint8_t*)>(static_cast<uint8_t*>(p), [](uint8_t* q) { std::free(q); });
  // Lowest block ids are handed out first.
  c->free_.reserve(blocks);
  for (int b = c->num_blocks_ - 1; b >= 0; --b) c->free_.push_back(b);
  c->refs_.assign(blocks, 0);
  c->seqs_.resize(options.max_sequences);
  for (Sequence& s : c->seqs_) s.blocks.reserve(blocks);
  return c;
}

absl::StatusOr<int> PagedKvCache::AddSequence() {
  for (size_t i = 0; i < seqs_.size(); ++i) {
    if (!seqs_[i].live) {
      seqs_[i].live = true;
      seqs_[i].length = 0;
      return static_cast<int>(i);
    }
  }
  return absl::ResourceExhaustedError(
      absl::StrCat("KV cache: all ", seqs_.size(), " sequences are in use (raise max_sequences)"));
}

void PagedKvCache::Release(Sequence& s) {
  for (auto it = s.blocks.rbegin(); it != s.blocks.rend(); ++it) {
    if (--refs_[*it] == 0) free_.push_back(*it);
  }
  s.blocks.clear();
  s.length = 0;
}

absl::Status PagedKvCache::RemoveSequence(int seq) {
  if (!IsLive(seq)) return absl::InvalidArgumentError(absl::StrCat("KV cache: sequence ", seq, " is not live"));
  Release(seqs_[seq]);
  seqs_[seq].live = false;
  return absl::OkStatus();
}

absl::Status PagedKvCache::Clear(int seq) {
  if (!IsLive(seq)) return absl::InvalidArgumentError(absl::StrCat("KV cache: sequence ", seq, " is not live"));
  Release(seqs_[seq]);
  return absl::OkStatus();
}

absl::Status PagedKvCache::Reserve(int seq, int64_t num_tokens) {
  if (!IsLive(seq)) return absl::InvalidArgumentError(absl::StrCat("KV cache: sequence ", seq, " is not live"));
  Sequence& s = seqs_[seq];
  const int64_t need = (num_tokens + options_.block_size - 1) / options_.block_size;
  const int64_t more = std::max<int64_t>(0, need - static_cast<int64_t>(s.blocks.size()));
  // Only the block holding position `length` can be shared and written: a shared prefix's later blocks
  // are full (SharePrefix), and new blocks are the sequence's own.
  const int64_t first = s.length / options_.block_size;
  const bool copy = num_tokens > s.length && first < static_cast<int64_t>(s.blocks.size()) && refs_[s.blocks[first]] > 1;
  if (more + copy > static_cast<int64_t>(free_.size())) {
    return absl::ResourceExhaustedError(absl::StrCat("KV cache is full: ", num_tokens, " tokens need ", more + copy,
                                                     " more blocks of ", options_.block_size, " tokens, ",
                                                     free_.size(), " of ", num_blocks_, " are free"));
  }
  if (copy) {
    const int32_t shared = s.blocks[first];
    const int32_t own = TakeBlock();
    CopyBlock(shared, own);
    --refs_[shared];
    s.blocks[first] = own;
  }
  for (int64_t i = 0; i < more; ++i) s.blocks.push_back(TakeBlock());
  return absl::OkStatus();
}

absl::Status PagedKvCache::SharePrefix(int src, int dst, int64_t num_tokens) {
  if (!IsLive(src) || !IsLive(dst) || src == dst) {
    return absl::InvalidArgumentError(absl::StrCat("KV cache: cannot share from sequence ", src, " to ", dst));
  }
  Sequence& d = seqs_[dst];
  if (!d.blocks.empty()) return absl::FailedPreconditionError(absl::StrCat("KV cache: sequence ", dst, " is not empty"));
  if (num_tokens <= 0 || num_tokens > seqs_[src].length) {
    return absl::InvalidArgumentError(absl::StrCat("KV cache: a shared prefix of ", num_tokens, " tokens from a sequence of ",
                                                   seqs_[src].length));
  }
  const int64_t blocks = (num_tokens + options_.block_size - 1) / options_.block_size;
  const std::vector<int32_t>& from = seqs_[src].blocks;
  d.blocks.assign(from.begin(), from.begin() + blocks);
  for (int32_t b : d.blocks) ++refs_[b];
  d.length = num_tokens;
  return absl::OkStatus();
}

KvView PagedKvCache::View(int layer, int seq) const {
  KvView v;
  v.dtype = options_.dtype;
  v.block_size = options_.block_size;
  v.num_kv_heads = options_.num_kv_heads;
  v.head_dim = options_.head_dim;
  v.block_table = seqs_[seq].blocks.data();
  const uint8_t* base = pool_.get() + static_cast<size_t>(layer) * 2 * LayerBytes();
  v.k_base = base;
  v.v_base = base + LayerBytes();
  return v;
}

void PagedKvCache::Write(int layer, int seq, int64_t pos, int64_t n, const float* k, const float* v) {
  const KvView view = View(layer, seq);
  uint8_t* k_base = pool_.get() + static_cast<size_t>(layer) * 2 * LayerBytes();
  uint8_t* v_base = k_base + LayerBytes();
  const int hd = options_.head_dim;
  for (int64_t i = 0; i < n; ++i) {
    for (int h = 0; h < options_.num_kv_heads; ++h) {
      const int64_t k_off = view.KeyOffset(pos + i, h, 0);
      const int64_t v_off = view.ValueOffset(pos + i, h);
      const int bs = options_.block_size;
      const float* ks = k + (i * options_.num_kv_heads + h) * hd;
      const float* vs = v + (i * options_.num_kv_heads + h) * hd;
      if (options_.dtype == KvDType::kF32) {
        float* kd = reinterpret_cast<float*>(k_base) + k_off;
        for (int e = 0; e < hd; ++e) kd[static_cast<int64_t>(e) * bs] = ks[e];
        std::memcpy(reinterpret_cast<float*>(v_base) + v_off, vs, hd * sizeof(float));
      } else {
        uint16_t* kd = reinterpret_cast<uint16_t*>(k_base) + k_off;
        uint16_t* vd = reinterpret_cast<uint16_t*>(v_base) + v_off;
        for (int e = 0; e < hd; ++e) {
          kd[static_cast<int64_t>(e) * bs] = FloatToHalf(ks[e]);
          vd[e] = FloatToHalf(vs[e]);
        }
      }
    }
  }
}

}  // namespace tessel::llm
