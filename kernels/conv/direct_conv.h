// Direct convolution for network stems (few input channels: RGB images), channels last: AVX-512 and
// AVX2 microkernels (one template, internal/direct_conv_rows.h) over each output row's zero-padded input
// rows, bias, residual and clamp fused. Backend "direct", kernels tessel_f32_conv2d_nhwc__direct_avx512
// and __direct_avx2 (x86 builds only).
#ifndef TESSEL_KERNELS_CONV_DIRECT_CONV_H_
#define TESSEL_KERNELS_CONV_DIRECT_CONV_H_

#include <cstdint>

#include "kernels/registry/op_kernel.h"

namespace tessel {

// The largest kernel height and width the direct convolution takes.
constexpr int64_t kDirectConvMaxKernel = 16;

// Geometry and operands of one layer; packed_weights is [kh][kw][c][m_pad] (m_pad = m rounded up to 16,
// zero-filled), bias is m_pad long or null; zeros: DirectConvZeroFloats(p) zeros (the taps of a row
// above or below the image).
struct DirectConvParams {
  int64_t n = 0, h = 0, w = 0, c = 0, oh = 0, ow = 0, m = 0, m_pad = 0;
  int64_t kh = 0, kw = 0, sh = 1, sw = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  const float* packed_weights = nullptr;
  const float* bias = nullptr;
  const float* residual = nullptr;  // [n, oh, ow, m] or null
  const float* zeros = nullptr;
  float lo = 0, hi = 0;
};

// Floats one chunk of output pixels (at most 16) reads from an input row: its taps' columns.
inline int64_t DirectConvZeroFloats(const DirectConvParams& p) { return (15 * p.sw + p.kw) * p.c; }

// Floats of the rows functions' strip: a border chunk's kh rows of tap columns, zero-padded.
inline int64_t DirectConvStripFloats(const DirectConvParams& p) { return p.kh * DirectConvZeroFloats(p); }

#if defined(__x86_64__)
// Output rows [row_begin, row_end) (row = b * oh + oy) of y [n, oh, ow, m] from x [n, h, w, c]. `strip`
// is scratch for a border chunk's zero-padded taps: DirectConvStripFloats(p) floats. Needs AVX-512F.
void DirectConvRows__avx512(const DirectConvParams& p, const float* x, int64_t row_begin, int64_t row_end,
                            float* strip, float* y);
// The same with AVX2 and FMA.
void DirectConvRows__avx2(const DirectConvParams& p, const float* x, int64_t row_begin, int64_t row_end, float* strip,
                          float* y);
#endif

// Registers the direct stem convolution (x86 builds; nothing elsewhere).
void RegisterDirectConvOpKernels(OpKernelRegistry& registry);

}  // namespace tessel

#endif  // TESSEL_KERNELS_CONV_DIRECT_CONV_H_
