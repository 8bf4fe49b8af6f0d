// What attention kernels see of one layer of one sequence in the paged KV cache (llm/kv_cache): the
// block table and the layer's K and V block storage.
#ifndef TESSEL_KERNELS_ATTENTION_KV_VIEW_H_
#define TESSEL_KERNELS_ATTENTION_KV_VIEW_H_

#include <cstdint>

namespace tessel {

enum class KvDType { kF32, kF16 };

struct KvView {
  KvDType dtype = KvDType::kF32;
  int block_size = 0;
  int num_kv_heads = 0;
  int head_dim = 0;
  // Physical block of logical block i (token positions [i * block_size, (i + 1) * block_size)).
  const int32_t* block_table = nullptr;
  // Each physical block b holds, per head h, block_size * head_dim elements starting at
  // HeadBlockOffset. Keys are stored transposed: element e of the key at slot s is at
  // k_base[((b * num_kv_heads + h) * head_dim + e) * block_size + s], so the keys of a block lie
  // side by side per element and attention scores a run of keys with one vector per element.
  // Values are stored by token: element e of the value at slot s is at
  // v_base[((b * num_kv_heads + h) * block_size + s) * head_dim + e], so attention adds whole rows.
  const void* k_base = nullptr;
  const void* v_base = nullptr;

  // Start of head `head`'s part of the physical block holding position `pos`, in K and in V.
  int64_t HeadBlockOffset(int64_t pos, int head) const {
    const int64_t b = block_table[pos / block_size];
    return (b * num_kv_heads + head) * block_size * head_dim;
  }
  // Element e of the key at `pos`; the key's next element is block_size further on.
  int64_t KeyOffset(int64_t pos, int head, int e) const {
    return HeadBlockOffset(pos, head) + static_cast<int64_t>(e) * block_size + pos % block_size;
  }
  // Element 0 of the value at `pos`; its elements are contiguous.
  int64_t ValueOffset(int64_t pos, int head) const { return HeadBlockOffset(pos, head) + pos % block_size * head_dim; }
};

}  // namespace tessel

#endif  // TESSEL_KERNELS_ATTENTION_KV_VIEW_H_
