// The view attention kernels read of one layer of one sequence in the paged KV cache; defined with the
// kernels (kernels/attention/kv_view.h), named here for the LLM runtime.
#ifndef TESSEL_LLM_KV_CACHE_KV_VIEW_H_
#define TESSEL_LLM_KV_CACHE_KV_VIEW_H_

#include "kernels/attention/kv_view.h"

namespace tessel::llm {

using ::tessel::KvDType;
using ::tessel::KvView;

}  // namespace tessel::llm

#endif  // TESSEL_LLM_KV_CACHE_KV_VIEW_H_
