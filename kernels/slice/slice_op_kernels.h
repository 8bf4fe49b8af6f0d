// ONNX Slice with constant starts, ends, axes and steps as an operator-level kernel
// (kernels/registry/op_kernel.h), f32: the slice is resolved once at creation into an output shape,
// input strides and a first element, and a run copies whole rows where the last axis has step 1.
#ifndef TESSEL_KERNELS_SLICE_SLICE_OP_KERNELS_H_
#define TESSEL_KERNELS_SLICE_SLICE_OP_KERNELS_H_

#include "kernels/registry/op_kernel.h"

namespace tessel {

void RegisterSliceOpKernels(OpKernelRegistry& registry);

}  // namespace tessel

#endif  // TESSEL_KERNELS_SLICE_SLICE_OP_KERNELS_H_
