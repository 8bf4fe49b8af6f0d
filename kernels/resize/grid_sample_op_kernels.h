// GridSample (4-D, bilinear, zeros or border padding, either align_corners) as an operator-level kernel
// (kernels/registry/op_kernel.h), f32: per output point, the four taps' offsets and weights once (a tap
// outside the image gets weight 0), then every channel reads them. Nearest, bicubic and reflection stay
// with the reference kernel (kernels/reference/detection.cc, the twin //kernels:op_kernels_test checks
// this entry against).
#ifndef TESSEL_KERNELS_RESIZE_GRID_SAMPLE_OP_KERNELS_H_
#define TESSEL_KERNELS_RESIZE_GRID_SAMPLE_OP_KERNELS_H_

#include "kernels/registry/op_kernel.h"

namespace tessel {

void RegisterGridSampleOpKernels(OpKernelRegistry& registry);

}  // namespace tessel

#endif  // TESSEL_KERNELS_RESIZE_GRID_SAMPLE_OP_KERNELS_H_
