// fuse-matmul-bias-gelu: GELU written out as PyTorch exports it (x * 0.5 * (1 + Erf(x / sqrt(2))) in any
// multiplication order, and the tanh approximation) becomes one Gelu node; then MatMul with a constant
// 2-D weight + Add(constant bias) + Gelu becomes tessel.MatMulBiasGelu, a Gemm (any transB, alpha,
// beta) with a per-column bias + Gelu too, and MatMul + bias without GELU becomes tessel.MatMulBias.
#ifndef TESSEL_PASSES_FUSE_MATMUL_BIAS_GELU_FUSE_MATMUL_BIAS_GELU_H_
#define TESSEL_PASSES_FUSE_MATMUL_BIAS_GELU_FUSE_MATMUL_BIAS_GELU_H_

#include "passes/core/pass.h"

namespace tessel {

PassInfo FuseMatMulBiasGeluPassInfo();

}  // namespace tessel

#endif  // TESSEL_PASSES_FUSE_MATMUL_BIAS_GELU_FUSE_MATMUL_BIAS_GELU_H_
