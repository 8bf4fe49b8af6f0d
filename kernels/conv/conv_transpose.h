// 2-D ConvTranspose (f32, group 1, constant weights) as an operator-level kernel (kernels/registry/
// op_kernel.h): per image, the input transposed to [pixels, C] times the weights as a [C, M x kh x kw]
// matrix on the prepacked GEMM (PackedGemmF32), then each column added into its output pixel (col2im,
// any stride, dilation, padding and output_padding). The reference twin is kernels/reference/nn.cc's
// ConvTransposeKernel, which //kernels:op_kernels_test checks this entry against. Images are independent,
// so a detection head's mask upsampling runs it over a data-dependent batch (a row-wise op).
#ifndef TESSEL_KERNELS_CONV_CONV_TRANSPOSE_H_
#define TESSEL_KERNELS_CONV_CONV_TRANSPOSE_H_

#include "kernels/registry/op_kernel.h"

namespace tessel {

void RegisterConvTransposeOpKernels(OpKernelRegistry& registry);

}  // namespace tessel

#endif  // TESSEL_KERNELS_CONV_CONV_TRANSPOSE_H_
