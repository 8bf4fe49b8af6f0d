// Gelu (exact and tanh approximation), Tanh, Erf and LogSoftmax (last axis) as operator-level kernels
// on the row kernels of act_rows.h, one entry per ISA (autovec, AVX2, AVX-512). The reference twins
// are in kernels/reference/elementwise.cc and nn.cc; //kernels:op_kernels_test checks every entry
// against them.
#ifndef TESSEL_KERNELS_ACTIVATION_ACT_OP_KERNELS_H_
#define TESSEL_KERNELS_ACTIVATION_ACT_OP_KERNELS_H_

#include "kernels/registry/op_kernel.h"

namespace tessel {

void RegisterActivationOpKernels(OpKernelRegistry& registry);

}  // namespace tessel

#endif  // TESSEL_KERNELS_ACTIVATION_ACT_OP_KERNELS_H_
