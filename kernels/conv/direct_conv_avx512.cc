// Direct convolution for network stems (few input channels, e.g. ResNet-18's 7x7/2 over RGB and
// MobileNetV2's 3x3/2), AVX-512: 6-16 output pixels x up to 64 output channels in up to 24 zmm
// accumulators; per tap (ky, kx, c) the weight vectors are loaded once and meet a broadcast input value
// per pixel, so the tap loop is FMA-bound. Taps read the input in place, or a zero-padded copy of a
// border chunk's columns, so every tap is in range and the loop has no branches; im2col and A packing
// (most of a GEMM's time at K = 147) disappear.
#if defined(__x86_64__)
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/conv/direct_conv.h"

namespace tessel {
namespace {

// One chunk of `pixels` (<= kPixels) output pixels, `kVecs` (1..4) zmm of output channels. rows[ky]
// points at the chunk's first pixel's tap (ky, kx = 0, channel 0): into the input itself, or into a
// zero-padded strip at the image's borders; pixel i's taps are i * sw * c floats further. Outputs (and
// the residual) of the first pixel at y / r, m floats apart.
// kStep: sw * c when known at compile time, so the taps are one pointer plus constant offsets (then
// all kPixels pixels are real); otherwise padding lanes repeat the last pixel.
template <int kVecs, int kPixels, int kStep = 0>
void Chunk(const DirectConvParams& p, const float* const* rows, int pixels, float* y, const float* r) {
  int64_t poff[kPixels];
  for (int i = 0; i < kPixels; ++i) poff[i] = std::min(i, pixels - 1) * p.sw * p.c;
  __m512 acc[kPixels][kVecs];
#pragma GCC unroll 4
  for (int j = 0; j < kVecs; ++j) {
    const __m512 bias = p.bias ? _mm512_loadu_ps(p.bias + 16 * j) : _mm512_setzero_ps();
#pragma GCC unroll 16
    for (int i = 0; i < kPixels; ++i) acc[i][j] = bias;
  }
  const float* w = p.packed_weights;  // [kh][kw][c][m_pad]
  const int64_t taps = p.kw * p.c;    // (kx, c) pairs are contiguous in an input row
  for (int64_t ky = 0; ky < p.kh; ++ky) {
    const float* row = rows[ky];
    for (int64_t t = 0; t < taps; ++t) {
      __m512 wv[kVecs];
#pragma GCC unroll 4
      for (int j = 0; j < kVecs; ++j) wv[j] = _mm512_loadu_ps(w + 16 * j);
      w += p.m_pad;
#pragma GCC unroll 16
      for (int i = 0; i < kPixels; ++i) {
        const __m512 xv = _mm512_set1_ps(kStep ? row[t + i * kStep] : row[t + poff[i]]);
#pragma GCC unroll 4
        for (int j = 0; j < kVecs; ++j) acc[i][j] = _mm512_fmadd_ps(xv, wv[j], acc[i][j]);
      }
    }
  }
  const __m512 lo = _mm512_set1_ps(p.lo), hi = _mm512_set1_ps(p.hi);
  const __mmask16 tail = static_cast<__mmask16>(p.m % 16 ? (1u << (p.m % 16)) - 1 : 0xffff);
#pragma GCC unroll 16
  for (int i = 0; i < pixels; ++i) {
    float* yo = y + i * p.m;
    const float* ro = r ? r + i * p.m : nullptr;
#pragma GCC unroll 4
    for (int j = 0; j < kVecs; ++j) {
      const __mmask16 mask = j == kVecs - 1 ? tail : 0xffff;
      __m512 v = acc[i][j];
      if (ro) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, ro + 16 * j));
      v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);
      _mm512_mask_storeu_ps(yo + 16 * j, mask, v);
    }
  }
}

// Output pixels [ox, ox + pixels) of output row (b, oy). A chunk whose taps lie inside the image reads
// the input rows in place (a row above or below the image reads p.zeros); one on the left or right
// border reads a zero-padded copy of its columns, built in `strip`. MobileNetV2's 224x224 stem: 1 of 8
// chunks per row; before, each output row's kh input rows were copied whole into a padded window
// (7% of the stem's time in memcpy).
template <int kVecs, int kPixels, int kStep>
void RunChunk(const DirectConvParams& p, const float* const* in_rows, int64_t ox, int pixels, float* strip, float* y,
              const float* r) {
  const int64_t ix0 = ox * p.sw - p.pad_left;
  const int64_t ix1 = (ox + pixels - 1) * p.sw - p.pad_left + p.kw;  // one past the last tap's column
  const float* rows[kDirectConvMaxKernel];
  if (ix0 >= 0 && ix1 <= p.w) {
    for (int64_t ky = 0; ky < p.kh; ++ky) rows[ky] = in_rows[ky] ? in_rows[ky] + ix0 * p.c : p.zeros;
  } else {
    const int64_t cols = ix1 - ix0, lo = std::max<int64_t>(ix0, 0), hi = std::min(ix1, p.w);
    for (int64_t ky = 0; ky < p.kh; ++ky) {
      float* dst = strip + ky * cols * p.c;
      rows[ky] = dst;
      if (in_rows[ky] == nullptr || hi <= lo) {
        std::memset(dst, 0, cols * p.c * sizeof(float));
        continue;
      }
      std::memset(dst, 0, (lo - ix0) * p.c * sizeof(float));
      std::memcpy(dst + (lo - ix0) * p.c, in_rows[ky] + lo * p.c, (hi - lo) * p.c * sizeof(float));
      std::memset(dst + (hi - ix0) * p.c, 0, (ix1 - hi) * p.c * sizeof(float));
    }
  }
  Chunk<kVecs, kPixels, kStep>(p, rows, pixels, y + ox * p.m, r ? r + ox * p.m : nullptr);
}

// Chunks of kWide pixels, about 28 accumulators whatever the output channels, so a narrow stem's weight
// loads serve more pixels (MobileNetV2's 3x3/2 stem, 32 output channels: 14 pixels, which divide its
// 112-pixel rows); the row's rest in chunks of up to 6.
template <int kVecs>
void Rows(const DirectConvParams& p, const float* x, int64_t row_begin, int64_t row_end, float* strip, float* y) {
  constexpr int kWide = kVecs == 1 ? 16 : kVecs == 2 ? 14 : 24 / kVecs;
  const bool rgb2 = p.sw * p.c == 6;  // RGB stems at stride 2: constant-offset taps
  for (int64_t row = row_begin; row < row_end; ++row) {
    const int64_t b = row / p.oh, oy = row % p.oh;
    const float* in_rows[kDirectConvMaxKernel];
    for (int64_t ky = 0; ky < p.kh; ++ky) {
      const int64_t iy = oy * p.sh - p.pad_top + ky;
      in_rows[ky] = iy >= 0 && iy < p.h ? x + (b * p.h + iy) * p.w * p.c : nullptr;
    }
    float* yr = y + row * p.ow * p.m;
    const float* rr = p.residual ? p.residual + row * p.ow * p.m : nullptr;
    int64_t ox = 0;
    for (; ox + kWide <= p.ow; ox += kWide) {
      if (rgb2) {
        RunChunk<kVecs, kWide, 6>(p, in_rows, ox, kWide, strip, yr, rr);
      } else {
        RunChunk<kVecs, kWide, 0>(p, in_rows, ox, kWide, strip, yr, rr);
      }
    }
    for (; ox < p.ow; ox += 6) {
      RunChunk<kVecs, 6, 0>(p, in_rows, ox, static_cast<int>(std::min<int64_t>(6, p.ow - ox)), strip, yr, rr);
    }
  }
}

}  // namespace

void DirectConvRows__avx512(const DirectConvParams& p, const float* x, int64_t row_begin, int64_t row_end,
                            float* strip, float* y) {
  switch ((p.m + 15) / 16) {
    case 1:
      return Rows<1>(p, x, row_begin, row_end, strip, y);
    case 2:
      return Rows<2>(p, x, row_begin, row_end, strip, y);
    case 3:
      return Rows<3>(p, x, row_begin, row_end, strip, y);
    default:
      return Rows<4>(p, x, row_begin, row_end, strip, y);
  }
}

}  // namespace tessel
#endif  // defined(__x86_64__)
