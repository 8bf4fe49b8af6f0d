// The vector family as operator-level kernels (kernels/registry/op_kernel.h): ONNX Softmax over the
// last axis and tessel.RMSNorm over trailing axes, f32, one entry per ISA (portable, x86 AVX-512,
// NEON, SVE); rows are split across the session's thread pool.
#ifndef TESSEL_KERNELS_VECTOR_VECTOR_OP_KERNELS_H_
#define TESSEL_KERNELS_VECTOR_VECTOR_OP_KERNELS_H_

#include "kernels/registry/op_kernel.h"

namespace tessel {

void RegisterVectorOpKernels(OpKernelRegistry& registry);

}  // namespace tessel

#endif  // TESSEL_KERNELS_VECTOR_VECTOR_OP_KERNELS_H_
