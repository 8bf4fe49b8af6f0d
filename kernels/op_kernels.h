// The catalog of every operator-level kernel built into this binary (XNNPACK, GEMM-based, layout,
// int8 and vector kernels), filled once; what `tessel compile` selects from and the executor instantiates.
#ifndef TESSEL_KERNELS_OP_KERNELS_H_
#define TESSEL_KERNELS_OP_KERNELS_H_

#include "kernels/registry/op_kernel.h"

namespace tessel {

const OpKernelRegistry& OpKernels();

}  // namespace tessel

#endif  // TESSEL_KERNELS_OP_KERNELS_H_
