// The XNNPACK backend's int8 kernels: tessel.QConv (dense, grouped, depthwise) and tessel.QGemm on u8
// activations through XNNPACK's qu8 (per-tensor weights) and qc8 (per-channel weights) operators, and
// tessel.QMaxPool, QAvgPool, QGlobalAvgPool and QAdd through its u8 / qu8 pooling and add operators.
// XNNPACK requantizes with its own float or fixed-point sequences, not step for step as Tessel's
// requantize.h, so results may differ from the reference kernels by 1 (u8 units; max pooling is exact);
// the costs rank these entries after Tessel's own int8 kernels, so they serve what those do not (grouped and, on
// aarch64, depthwise convolutions; CPUs without VNNI or dotprod; the average pools and QAdd).
#ifndef TESSEL_KERNELS_XNNPACK_XNNPACK_INT8_KERNELS_H_
#define TESSEL_KERNELS_XNNPACK_XNNPACK_INT8_KERNELS_H_

#include "kernels/registry/op_kernel.h"

namespace tessel {

// Registers xnn_qu8_conv2d_nhwc__xnnpack, xnn_qc8_conv2d_nhwc__xnnpack, xnn_qu8_fully_connected__xnnpack,
// xnn_qc8_fully_connected__xnnpack, xnn_u8_maxpool2d_nhwc__xnnpack, xnn_qu8_avgpool2d_nhwc__xnnpack,
// xnn_qu8_global_avgpool_nwc__xnnpack and xnn_qu8_add_nd__xnnpack (RegisterXnnpackOpKernels calls it).
void RegisterXnnpackInt8OpKernels(OpKernelRegistry& registry);

}  // namespace tessel

#endif  // TESSEL_KERNELS_XNNPACK_XNNPACK_INT8_KERNELS_H_
