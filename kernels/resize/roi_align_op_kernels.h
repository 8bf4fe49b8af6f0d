// RoiAlign (avg mode, f32 X, half_pixel or output_half_pixel) as an operator-level kernel
// (kernels/registry/op_kernel.h): per region, each bin's bilinear samples resolved once to four offsets
// and weights, then every channel reads them. It takes the region count of each run from its rois
// operand (OpKernelEntry::any_extent), so detection heads whose regions come out of NonMaxSuppression run
// it within their planned bound. Max mode stays with the reference kernel (kernels/reference/detection.cc,
// the twin //kernels:op_kernels_test checks this entry against).
#ifndef TESSEL_KERNELS_RESIZE_ROI_ALIGN_OP_KERNELS_H_
#define TESSEL_KERNELS_RESIZE_ROI_ALIGN_OP_KERNELS_H_

#include "kernels/registry/op_kernel.h"

namespace tessel {

void RegisterRoiAlignOpKernels(OpKernelRegistry& registry);

}  // namespace tessel

#endif  // TESSEL_KERNELS_RESIZE_ROI_ALIGN_OP_KERNELS_H_
