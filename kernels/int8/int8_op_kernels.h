// The int8 VNNI path as operator-level kernels (kernels/registry/op_kernel.h): tessel.QConv and
// tessel.QGemm on u8 activations, and depthwise tessel.QConv (group == C) on its own kernel, chosen by the
// compiler and prepared once per session.
#ifndef TESSEL_KERNELS_INT8_INT8_OP_KERNELS_H_
#define TESSEL_KERNELS_INT8_INT8_OP_KERNELS_H_

#include "kernels/registry/op_kernel.h"

namespace tessel {

void RegisterInt8OpKernels(OpKernelRegistry& registry);

}  // namespace tessel

#endif  // TESSEL_KERNELS_INT8_INT8_OP_KERNELS_H_
