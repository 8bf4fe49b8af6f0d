// Concat and Pad as operator-level kernels (kernels/registry/op_kernel.h), f32, static shapes: copies
// resolved at creation into contiguous runs. Concat copies each input's block per outer index; Pad maps
// every output coordinate to an input one or to the fill value per axis (constant, edge and reflect
// alike, as the reference kernel does) and copies the last axis in runs of consecutive elements. The
// reference twins are in kernels/reference/ (tensor.cc's Concat, nn.cc's Pad); //kernels:op_kernels_test
// checks both entries against them.
#ifndef TESSEL_KERNELS_SLICE_CONCAT_PAD_OP_KERNELS_H_
#define TESSEL_KERNELS_SLICE_CONCAT_PAD_OP_KERNELS_H_

#include "kernels/registry/op_kernel.h"

namespace tessel {

void RegisterConcatPadOpKernels(OpKernelRegistry& registry);

}  // namespace tessel

#endif  // TESSEL_KERNELS_SLICE_CONCAT_PAD_OP_KERNELS_H_
