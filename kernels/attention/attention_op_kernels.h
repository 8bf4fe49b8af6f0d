// tessel.Attention (softmax(scale * Q K^T + mask) V, optional causal masking and grouped-query K/V) as
// an operator-level kernel (kernels/registry/op_kernel.h), f32, for the compiled CNN/encoder path (the
// LLM runtime's paged-cache attention is flash_tile.h). The reference twin is kernels/reference/
// transformer.cc's Attention; //kernels:op_kernels_test checks the entry against it.
#ifndef TESSEL_KERNELS_ATTENTION_ATTENTION_OP_KERNELS_H_
#define TESSEL_KERNELS_ATTENTION_ATTENTION_OP_KERNELS_H_

#include "kernels/registry/op_kernel.h"

namespace tessel {

void RegisterAttentionOpKernels(OpKernelRegistry& registry);

}  // namespace tessel

#endif  // TESSEL_KERNELS_ATTENTION_ATTENTION_OP_KERNELS_H_
