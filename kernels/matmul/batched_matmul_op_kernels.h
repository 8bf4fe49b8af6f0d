// ONNX MatMul on two activations, or with batch dimensions on both sides (attention's Q K^T and P V,
// RAFT's correlation volume), as an operator-level kernel (kernels/registry/op_kernel.h), f32: one
// GEMM of the f32 GEMM kernels (kernels/gemm, selected once for the m x n x k problem) per batch,
// batch dimensions broadcast numpy-style. A constant rank-2 B stays with the fully connected kernels,
// which pack it once at load.
#ifndef TESSEL_KERNELS_MATMUL_BATCHED_MATMUL_OP_KERNELS_H_
#define TESSEL_KERNELS_MATMUL_BATCHED_MATMUL_OP_KERNELS_H_

#include "kernels/registry/op_kernel.h"

namespace tessel {

void RegisterBatchedMatMulOpKernels(OpKernelRegistry& registry);

}  // namespace tessel

#endif  // TESSEL_KERNELS_MATMUL_BATCHED_MATMUL_OP_KERNELS_H_
