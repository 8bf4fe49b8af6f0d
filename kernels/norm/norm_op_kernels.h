// ONNX LayerNormalization, InstanceNormalization and GroupNormalization as operator-level kernels
// (kernels/registry/op_kernel.h), f32: each normalized block (a row of the trailing axes, an (n, c)
// plane, the planes of an (n, group)) gets its mean and variance in two vectorized passes, then one
// affine pass; blocks are split across the session's pool. One entry per op and ISA of the row kernels
// (portable auto-vectorized, AVX2, AVX-512). LayerNormalization needs a scale (and bias) of exactly the
// normalized elements, and only its Y output (Mean and InvStdDev stay with the reference kernel).
#ifndef TESSEL_KERNELS_NORM_NORM_OP_KERNELS_H_
#define TESSEL_KERNELS_NORM_NORM_OP_KERNELS_H_

#include "kernels/registry/op_kernel.h"

namespace tessel {

void RegisterNormOpKernels(OpKernelRegistry& registry);

}  // namespace tessel

#endif  // TESSEL_KERNELS_NORM_NORM_OP_KERNELS_H_
