// What attention kernels see of one layer of one sequence in the paged KV cache: the block table and
// the layer's K and V block storage.
#ifndef TESSEL_LLM_KV_CACHE_KV_VIEW_H_
#define TESSEL_LLM_KV_CACHE_KV_VIEW_H_

#include <cstdint>

namespace tessel::llm {

enum class KvDType { kF32, kF16 };

struct KvView {
  KvDType dtype = KvDType::kF32;
  int block_size = 0;
  int num_kv_heads = 0;
  int head_dim = 0;
  // Physical block of logical block i (token positions [i * block_size, (i + 1) * block_size)).
  const int32_t* block_table = nullptr;
  // Element e of head h at token slot s of physical block b is at
  // base[((b * num_kv_heads + h) * block_size + s) * head_dim + e]: each head's keys are contiguous
  // within a block, so attention streams them.
  const void* k_base = nullptr;
  const void* v_base = nullptr;

  int64_t Offset(int64_t pos, int head) const {
    const int64_t b = block_table[pos / block_size];
    return ((b * num_kv_heads + head) * block_size + pos % block_size) * head_dim;
  }
};

}  // namespace tessel::llm

#endif  // TESSEL_LLM_KV_CACHE_KV_VIEW_H_
