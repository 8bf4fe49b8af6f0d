// ONNX Resize (nearest and linear) on channels-first tensors whose last two axes are resized, with
// constant scales or sizes: the zoo's segmentation and optical-flow upsampling.
#ifndef TESSEL_KERNELS_RESIZE_RESIZE_OP_KERNELS_H_
#define TESSEL_KERNELS_RESIZE_RESIZE_OP_KERNELS_H_

#include "kernels/registry/op_kernel.h"

namespace tessel {

void RegisterResizeOpKernels(OpKernelRegistry& r);

}  // namespace tessel

#endif  // TESSEL_KERNELS_RESIZE_RESIZE_OP_KERNELS_H_
