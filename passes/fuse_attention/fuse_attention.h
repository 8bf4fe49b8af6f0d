// fuse-attention: recognizes scaled dot-product attention, MatMul(Q, K^T) -> scale -> mask -> Softmax
// -> MatMul(V), including repeated (grouped-query) K/V and causal masks, as one tessel.Attention.
#ifndef TESSEL_PASSES_FUSE_ATTENTION_FUSE_ATTENTION_H_
#define TESSEL_PASSES_FUSE_ATTENTION_FUSE_ATTENTION_H_

#include "passes/core/pass.h"

namespace tessel {

PassInfo FuseAttentionPassInfo();

}  // namespace tessel

#endif  // TESSEL_PASSES_FUSE_ATTENTION_FUSE_ATTENTION_H_
