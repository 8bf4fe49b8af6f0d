// The f32 depthwise 3x3 microkernels (channels-last, channel multiplier 1) that kernels/conv/dwconv3x3.cc
// drives: a row kernel for output pixels whose windows lie inside the image, a pixel kernel for the borders.
// Each aarch64 ISA library (NEON, SVE) defines one pair; they never allocate and never fail.
#ifndef TESSEL_KERNELS_CONV_INTERNAL_DWCONV3X3_UKERNELS_H_
#define TESSEL_KERNELS_CONV_INTERNAL_DWCONV3X3_UKERNELS_H_

#include <algorithm>
#include <cstdint>

namespace tessel {

// Output pixels per row-kernel call in the operator kernels: the run's three input rows (at most 2 x 16 + 2
// pixels each) stay in L1 while every channel tile sweeps them. A zero row standing for a row outside the
// image holds (kDwConv3x3RunPixels * stride + 3) pixels.
constexpr int64_t kDwConv3x3RunPixels = 16;

// The output columns [begin, end) whose three column taps all lie inside the image, 0 <= ox * sw - pad_left
// <= w - 3 (the row kernel's); the others are border pixels (the pixel kernel's). Empty for images narrower
// than the kernel (w - 3 + pad_left may be negative: no division of it rounds up).
struct DwConv3x3Interior {
  int64_t begin = 0, end = 0;
};
inline DwConv3x3Interior DwConv3x3InteriorColumns(int64_t w, int64_t ow, int64_t sw, int64_t pad_left) {
  const int64_t first = std::min(ow, (pad_left + sw - 1) / sw);
  const int64_t span = w - 3 + pad_left;
  const int64_t last = span >= 0 ? std::min(ow - 1, span / sw) : -1;
  return {first, std::max(first, last + 1)};
}

// What every call for one layer shares.
struct DwConv3x3Params {
  int64_t channels = 0;
  int64_t stride = 1;              // horizontal stride of the row kernel: 1 or 2
  const float* weights = nullptr;  // [9][channels], tap t = 3 * ky + kx
  const float* bias = nullptr;     // [channels] (zeros when the node has none)
  float lo = 0, hi = 0;            // the clamp, applied after bias and residual
};

// Output pixels [0, count) of one output row: out[i, ch] = clamp(bias[ch] + residual[i, ch] +
// sum_{ky, kx} rows[ky][(i * stride + kx) * channels + ch] * weights[3 ky + kx][ch]). rows[ky] points at the
// first pixel's left tap (or at a zero row long enough for the whole run). residual (may be null, may equal
// out) and out hold count x channels floats.
using DwConv3x3RowFn = void (*)(const DwConv3x3Params& p, int64_t count, const float* const (&rows)[3],
                                const float* residual, float* out);

// One output pixel: out[ch] = clamp(bias[ch] + residual[ch] + sum_t taps[t][ch] * weights[t][ch]); taps[t]
// points at tap t's input pixel or at a zero row (padding).
using DwConv3x3PixelFn = void (*)(const DwConv3x3Params& p, const float* const (&taps)[9], const float* residual,
                                  float* out);

// Output columns [ox_begin, ox_end) of one output row through a row / pixel microkernel pair: border
// pixels one at a time, the interior in runs of kDwConv3x3RunPixels. rows[ky]: input row ky of the window
// at column 0, or null outside the image; zeros: a zero row (kDwConv3x3RunPixels * stride + 3 pixels);
// residual (may be null) and out point at column ox_begin.
inline void DwConv3x3Columns(DwConv3x3RowFn row, DwConv3x3PixelFn pixel, const DwConv3x3Params& p,
                             DwConv3x3Interior interior, int64_t w, int64_t pad_left, const float* const (&rows)[3],
                             const float* zeros, int64_t ox_begin, int64_t ox_end, const float* residual,
                             float* out) {
  const int64_t c = p.channels;
  for (int64_t ox = ox_begin; ox < ox_end;) {
    const int64_t off = (ox - ox_begin) * c;
    const float* r = residual != nullptr ? residual + off : nullptr;
    const int64_t ix0 = ox * p.stride - pad_left;
    if (ox >= interior.begin && ox < interior.end) {
      const int64_t n = std::min({kDwConv3x3RunPixels, interior.end - ox, ox_end - ox});
      const float* run[3];
      for (int ky = 0; ky < 3; ++ky) run[ky] = rows[ky] != nullptr ? rows[ky] + ix0 * c : zeros;
      row(p, n, run, r, out + off);
      ox += n;
      continue;
    }
    const float* taps[9];
    for (int ky = 0; ky < 3; ++ky) {
      for (int kx = 0; kx < 3; ++kx) {
        const int64_t ix = ix0 + kx;
        taps[3 * ky + kx] = rows[ky] != nullptr && ix >= 0 && ix < w ? rows[ky] + ix * c : zeros;
      }
    }
    pixel(p, taps, r, out + off);
    ++ox;
  }
}

#if defined(__aarch64__)
void tessel_f32_dwconv3x3_row__neon(const DwConv3x3Params& p, int64_t count, const float* const (&rows)[3],
                                    const float* residual, float* out);
void tessel_f32_dwconv3x3_pixel__neon(const DwConv3x3Params& p, const float* const (&taps)[9], const float* residual,
                                      float* out);
void tessel_f32_dwconv3x3_row__sve(const DwConv3x3Params& p, int64_t count, const float* const (&rows)[3],
                                   const float* residual, float* out);
void tessel_f32_dwconv3x3_pixel__sve(const DwConv3x3Params& p, const float* const (&taps)[9], const float* residual,
                                     float* out);
#endif

}  // namespace tessel

#endif  // TESSEL_KERNELS_CONV_INTERNAL_DWCONV3X3_UKERNELS_H_
