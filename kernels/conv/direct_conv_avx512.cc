// Direct convolution for network stems (few input channels, e.g. ResNet-18's 7x7/2 over RGB and
// MobileNetV2's 3x3/2), AVX-512: 6-16 output pixels x up to 64 output channels in up to 24 zmm
// accumulators; per tap (ky, kx, c) the weight vectors are loaded once and meet a broadcast input value
// per pixel, so the tap loop is FMA-bound. Taps read a zero-padded copy of the input, so every tap is
// in range and the loop has no branches; im2col and A packing (most of a GEMM's time at K = 147)
// disappear.
#if defined(__x86_64__)
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/conv/direct_conv.h"

namespace tessel {
namespace {

// One chunk of `pixels` (<= kPixels) output pixels of output row (b, oy), `vecs` (1..4) zmm of output
// channels, its taps from `window`: the row's kh input rows, padded ([kh][wp][c]).
// kStep: sw * c (floats between consecutive pixels' taps) when known at compile time, so the taps are
// one pointer plus constant offsets rather than kPixels pointers (GPRs spilled around the tap loop).
template <int kVecs, int kPixels, int kStep = 0>
void Chunk(const DirectConvParams& p, const float* window, int64_t b, int64_t oy, int64_t ox0, int pixels, float* y) {
  const int64_t wp = p.w + p.pad_left + p.pad_right;
  const float* base[kPixels];
  for (int i = 0; i < kPixels; ++i) {
    const int64_t ox = ox0 + std::min(i, pixels - 1);  // padding lanes repeat the last pixel
    base[i] = window + ox * p.sw * p.c;
  }
  __m512 acc[kPixels][kVecs];
#pragma GCC unroll 4
  for (int j = 0; j < kVecs; ++j) {
    const __m512 bias = p.bias ? _mm512_loadu_ps(p.bias + 16 * j) : _mm512_setzero_ps();
#pragma GCC unroll 16
    for (int i = 0; i < kPixels; ++i) acc[i][j] = bias;
  }
  const float* w = p.packed_weights;  // [kh][kw][c][m_pad]
  const int64_t row_stride = wp * p.c;
  for (int64_t ky = 0; ky < p.kh; ++ky) {
    for (int64_t t = 0; t < p.kw * p.c; ++t) {  // (kx, c) pairs are contiguous in the padded row
      const int64_t off = ky * row_stride + t;
      __m512 wv[kVecs];
#pragma GCC unroll 4
      for (int j = 0; j < kVecs; ++j) wv[j] = _mm512_loadu_ps(w + 16 * j);
      w += p.m_pad;
#pragma GCC unroll 16
      for (int i = 0; i < kPixels; ++i) {
        const __m512 xv = _mm512_set1_ps(kStep ? base[0][off + i * kStep] : base[i][off]);
#pragma GCC unroll 4
        for (int j = 0; j < kVecs; ++j) acc[i][j] = _mm512_fmadd_ps(xv, wv[j], acc[i][j]);
      }
    }
  }
  const __m512 lo = _mm512_set1_ps(p.lo), hi = _mm512_set1_ps(p.hi);
  const __mmask16 tail = static_cast<__mmask16>(p.m % 16 ? (1u << (p.m % 16)) - 1 : 0xffff);
#pragma GCC unroll 16
  for (int i = 0; i < pixels; ++i) {
    const int64_t pixel = (b * p.oh + oy) * p.ow + ox0 + i;
    float* yo = y + pixel * p.m;
    const float* r = p.residual ? p.residual + pixel * p.m : nullptr;
#pragma GCC unroll 4
    for (int j = 0; j < kVecs; ++j) {
      const __mmask16 mask = j == kVecs - 1 ? tail : 0xffff;
      __m512 v = acc[i][j];
      if (r) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, r + 16 * j));
      v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);
      _mm512_mask_storeu_ps(yo + 16 * j, mask, v);
    }
  }
}

// The kh input rows under output row (b, oy), padded: window[ky][ix + pad_left][c], zeros outside
// the image. Built per output row in a buffer that stays in L1 (MobileNetV2's 3x3 stem: 8 KiB; ResNet's
// 7x7: 19 KiB) rather than a padded copy of the whole input made before the rows: that copy's 600 KB of
// writes missed to memory every run (0.05-0.07 ms of MobileNetV2's 0.27 ms stem).
void FillWindow(const DirectConvParams& p, const float* x, int64_t b, int64_t oy, float* window) {
  const int64_t wp = p.w + p.pad_left + p.pad_right, row = wp * p.c;
  for (int64_t ky = 0; ky < p.kh; ++ky) {
    float* dst = window + ky * row;
    const int64_t iy = oy * p.sh - p.pad_top + ky;
    if (iy < 0 || iy >= p.h) {
      std::memset(dst, 0, row * sizeof(float));
      continue;
    }
    std::memset(dst, 0, p.pad_left * p.c * sizeof(float));
    std::memcpy(dst + p.pad_left * p.c, x + (b * p.h + iy) * p.w * p.c, p.w * p.c * sizeof(float));
    std::memset(dst + (p.pad_left + p.w) * p.c, 0, p.pad_right * p.c * sizeof(float));
  }
}

// Chunks of 24 / kVecs pixels (16 for one vector): about 24 accumulators whatever the output
// channels, so a narrow stem's weight loads serve more pixels (MobileNetV2's 3x3/2 stem, 32 output
// channels, 12 pixels instead of 6: 0.296 -> 0.277 ms); the row's rest in chunks of up to 6.
template <int kVecs>
void Rows(const DirectConvParams& p, const float* x, int64_t row_begin, int64_t row_end, float* window, float* y) {
  constexpr int kWide = kVecs == 1 ? 16 : 24 / kVecs;
  for (int64_t row = row_begin; row < row_end; ++row) {
    const int64_t b = row / p.oh, oy = row % p.oh;
    FillWindow(p, x, b, oy, window);
    int64_t ox = 0;
    if (p.sw * p.c == 6) {  // RGB stems at stride 2 (MobileNetV2's 3x3/2: 0.278 -> 0.265 ms; ResNet's 7x7/2)
      for (; ox + kWide <= p.ow; ox += kWide) Chunk<kVecs, kWide, 6>(p, window, b, oy, ox, kWide, y);
    } else {
      for (; ox + kWide <= p.ow; ox += kWide) Chunk<kVecs, kWide>(p, window, b, oy, ox, kWide, y);
    }
    for (; ox < p.ow; ox += 6) {
      Chunk<kVecs, 6>(p, window, b, oy, ox, static_cast<int>(std::min<int64_t>(6, p.ow - ox)), y);
    }
  }
}

}  // namespace

void DirectConvRows__avx512(const DirectConvParams& p, const float* x, int64_t row_begin, int64_t row_end,
                            float* window, float* y) {
  switch ((p.m + 15) / 16) {
    case 1:
      return Rows<1>(p, x, row_begin, row_end, window, y);
    case 2:
      return Rows<2>(p, x, row_begin, row_end, window, y);
    case 3:
      return Rows<3>(p, x, row_begin, row_end, window, y);
    default:
      return Rows<4>(p, x, row_begin, row_end, window, y);
  }
}

}  // namespace tessel
#endif  // defined(__x86_64__)
