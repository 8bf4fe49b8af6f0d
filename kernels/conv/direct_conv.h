// Direct convolution for network stems (few input channels: RGB images), channels last: AVX-512
// microkernel over each output row's zero-padded input rows, bias, residual and clamp fused. Backend "direct",
// kernel tessel_f32_conv2d_nhwc__direct_avx512 (x86 builds only).
#ifndef TESSEL_KERNELS_CONV_DIRECT_CONV_H_
#define TESSEL_KERNELS_CONV_DIRECT_CONV_H_

#include <cstdint>

#include "kernels/registry/op_kernel.h"

namespace tessel {

// Geometry and operands of one layer; packed_weights is [kh][kw][c][m_pad] (m_pad = m rounded up to 16,
// zero-filled), bias is m_pad long or null.
struct DirectConvParams {
  int64_t n = 0, h = 0, w = 0, c = 0, oh = 0, ow = 0, m = 0, m_pad = 0;
  int64_t kh = 0, kw = 0, sh = 1, sw = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  const float* packed_weights = nullptr;
  const float* bias = nullptr;
  const float* residual = nullptr;  // [n, oh, ow, m] or null
  float lo = 0, hi = 0;
};

// Floats of DirectConvRows__avx512's window: kh rows of (w + pad_left + pad_right) pixels.
inline int64_t DirectConvWindowFloats(const DirectConvParams& p) {
  return p.kh * (p.w + p.pad_left + p.pad_right) * p.c;
}

#if defined(__x86_64__)
// Output rows [row_begin, row_end) (row = b * oh + oy) of y [n, oh, ow, m] from x [n, h, w, c]. `window`
// is scratch for one output row's kh input rows with their padding: DirectConvWindowFloats(p) floats.
// Needs AVX-512F.
void DirectConvRows__avx512(const DirectConvParams& p, const float* x, int64_t row_begin, int64_t row_end,
                            float* window, float* y);
#endif

// Registers the direct stem convolution (x86 builds; nothing elsewhere).
void RegisterDirectConvOpKernels(OpKernelRegistry& registry);

}  // namespace tessel

#endif  // TESSEL_KERNELS_CONV_DIRECT_CONV_H_
