// The XNNPACK backend: f32 operator-level kernels built on XNNPACK operators (convolution including
// depthwise and grouped, depthwise+pointwise pairs, fully connected, pooling, add), and the int8 ones
// of xnnpack_int8_kernels.h. Operators are created (weights packed) and set up on the session's arena
// once; a run is xnn_run_operator calls.
#ifndef TESSEL_KERNELS_XNNPACK_XNNPACK_KERNELS_H_
#define TESSEL_KERNELS_XNNPACK_XNNPACK_KERNELS_H_

#include "kernels/registry/op_kernel.h"

namespace tessel {

// The f32 kernels and RegisterXnnpackInt8OpKernels'.
void RegisterXnnpackOpKernels(OpKernelRegistry& registry);

}  // namespace tessel

#endif  // TESSEL_KERNELS_XNNPACK_XNNPACK_KERNELS_H_
