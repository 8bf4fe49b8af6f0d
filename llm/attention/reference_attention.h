// Reference twin of FlashAttention: the textbook softmax(q K^T * scale) V over contiguous K and V,
// in double precision. For tests.
#ifndef TESSEL_LLM_ATTENTION_REFERENCE_ATTENTION_H_
#define TESSEL_LLM_ATTENTION_REFERENCE_ATTENTION_H_

#include <cstdint>

#include "llm/attention/flash_attention.h"

namespace tessel::llm {

// k and v are [num_keys, num_kv_heads, head_dim] for positions 0..num_keys-1; q and out are
// [n, num_heads, head_dim] for positions pos0 + i.
void ReferenceAttention(const AttentionParams& p, const float* q, int64_t n, int64_t pos0, const float* k,
                        const float* v, float* out);

}  // namespace tessel::llm

#endif  // TESSEL_LLM_ATTENTION_REFERENCE_ATTENTION_H_
