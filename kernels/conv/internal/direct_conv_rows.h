// The direct stem convolution's rows (direct_conv.h), written once over a vector type: included by
// direct_conv_avx512.cc (V = 16-lane zmm, up to 4 vectors of output channels per pass) and
// direct_conv_avx2.cc (8-lane ymm, up to 2 per pass, the output channels in groups). Chunks of output
// pixels x up to kMaxVecs vectors of output channels accumulate in registers; per tap (ky, kx, c) the
// weight vectors are loaded once and meet a broadcast input value per pixel, so the tap loop is
// FMA-bound. Taps read the input in place, or a zero-padded copy of a border chunk's columns, so every
// tap is in range and the loop has no branches; im2col and A packing (most of a GEMM's time at K = 147)
// disappear.
//
// V supplies: kLanes, kMaxVecs, kWide(vecs) (pixels per wide chunk), Vec, Load, Set1, Zero, Fma, Add,
// Clamp, LoadN(ptr, n) (the first n lanes, zeros after) and StoreN(ptr, v, n).
#ifndef TESSEL_KERNELS_CONV_INTERNAL_DIRECT_CONV_ROWS_H_
#define TESSEL_KERNELS_CONV_INTERNAL_DIRECT_CONV_ROWS_H_

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/conv/direct_conv.h"

namespace tessel {
namespace direct_conv_internal {

// One chunk of `pixels` (<= kPixels) output pixels, kVecs vectors of output channels from channel
// `ch0`. rows[ky] points at the chunk's first pixel's tap (ky, kx = 0, channel 0): into the input
// itself, or into a zero-padded strip at the image's borders; pixel i's taps are i * sw * c floats
// further. Outputs (and the residual) of the first pixel at y / r, m floats apart.
// kStep: sw * c when known at compile time, so the taps are one pointer plus constant offsets (then
// all kPixels pixels are real); otherwise padding lanes repeat the last pixel.
template <class V, int kVecs, int kPixels, int kStep = 0>
void Chunk(const DirectConvParams& p, int64_t ch0, const float* const* rows, int pixels, float* y, const float* r) {
  using Vec = typename V::Vec;
  constexpr int L = V::kLanes;
  int64_t poff[kPixels];
  for (int i = 0; i < kPixels; ++i) poff[i] = std::min(i, pixels - 1) * p.sw * p.c;
  Vec acc[kPixels][kVecs];
#pragma GCC unroll 4
  for (int j = 0; j < kVecs; ++j) {
    const Vec bias = p.bias ? V::Load(p.bias + ch0 + L * j) : V::Zero();
#pragma GCC unroll 16
    for (int i = 0; i < kPixels; ++i) acc[i][j] = bias;
  }
  const float* w = p.packed_weights + ch0;  // [kh][kw][c][m_pad]
  const int64_t taps = p.kw * p.c;          // (kx, c) pairs are contiguous in an input row
  for (int64_t ky = 0; ky < p.kh; ++ky) {
    const float* row = rows[ky];
    for (int64_t t = 0; t < taps; ++t) {
      Vec wv[kVecs];
#pragma GCC unroll 4
      for (int j = 0; j < kVecs; ++j) wv[j] = V::Load(w + L * j);
      w += p.m_pad;
#pragma GCC unroll 16
      for (int i = 0; i < kPixels; ++i) {
        const Vec xv = V::Set1(kStep ? row[t + i * kStep] : row[t + poff[i]]);
#pragma GCC unroll 4
        for (int j = 0; j < kVecs; ++j) acc[i][j] = V::Fma(xv, wv[j], acc[i][j]);
      }
    }
  }
  const Vec lo = V::Set1(p.lo), hi = V::Set1(p.hi);
#pragma GCC unroll 16
  for (int i = 0; i < pixels; ++i) {
    float* yo = y + i * p.m + ch0;
    const float* ro = r ? r + i * p.m + ch0 : nullptr;
#pragma GCC unroll 4
    for (int j = 0; j < kVecs; ++j) {
      const int64_t n = std::min<int64_t>(L, p.m - ch0 - L * j);  // the last vector may be partial
      Vec v = acc[i][j];
      if (ro) v = V::Add(v, V::LoadN(ro + L * j, n));
      V::StoreN(yo + L * j, V::Clamp(v, lo, hi), n);
    }
  }
}

// Output pixels [ox, ox + pixels) of output row (b, oy). A chunk whose taps lie inside the image reads
// the input rows in place (a row above or below the image reads p.zeros); one on the left or right
// border reads a zero-padded copy of its columns, built in `strip`. MobileNetV2's 224x224 stem: 1 of 8
// chunks per row; before, each output row's kh input rows were copied whole into a padded window
// (7% of the stem's time in memcpy).
template <class V, int kVecs, int kPixels, int kStep>
void RunChunk(const DirectConvParams& p, int64_t ch0, const float* const* in_rows, int64_t ox, int pixels,
              float* strip, float* y, const float* r) {
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
  Chunk<V, kVecs, kPixels, kStep>(p, ch0, rows, pixels, y + ox * p.m, r ? r + ox * p.m : nullptr);
}

// Output channels [ch0, ch0 + kVecs vectors) of the rows: chunks of V::kWide(kVecs) pixels (about as
// many accumulators as the registers hold, whatever the output channels, so a narrow stem's weight
// loads serve more pixels), the row's rest in chunks of up to 6.
template <class V, int kVecs>
void Rows(const DirectConvParams& p, int64_t ch0, const float* x, int64_t row_begin, int64_t row_end, float* strip,
          float* y) {
  constexpr int kWide = V::kWide(kVecs);
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
        RunChunk<V, kVecs, kWide, 6>(p, ch0, in_rows, ox, kWide, strip, yr, rr);
      } else {
        RunChunk<V, kVecs, kWide, 0>(p, ch0, in_rows, ox, kWide, strip, yr, rr);
      }
    }
    for (; ox < p.ow; ox += 6) {
      RunChunk<V, kVecs, 6, 0>(p, ch0, in_rows, ox, static_cast<int>(std::min<int64_t>(6, p.ow - ox)), strip, yr, rr);
    }
  }
}

// Every output channel: groups of V::kMaxVecs vectors, the last group as many as remain.
template <class V>
void AllRows(const DirectConvParams& p, const float* x, int64_t row_begin, int64_t row_end, float* strip, float* y) {
  constexpr int64_t kGroup = V::kLanes * V::kMaxVecs;
  for (int64_t ch0 = 0; ch0 < p.m; ch0 += kGroup) {
    switch (std::min<int64_t>(V::kMaxVecs, (p.m - ch0 + V::kLanes - 1) / V::kLanes)) {
      case 1:
        Rows<V, 1>(p, ch0, x, row_begin, row_end, strip, y);
        break;
      case 2:
        Rows<V, 2>(p, ch0, x, row_begin, row_end, strip, y);
        break;
      case 3:
        if constexpr (V::kMaxVecs >= 3) Rows<V, 3>(p, ch0, x, row_begin, row_end, strip, y);
        break;
      default:
        if constexpr (V::kMaxVecs >= 4) Rows<V, 4>(p, ch0, x, row_begin, row_end, strip, y);
        break;
    }
  }
}

}  // namespace direct_conv_internal
}  // namespace tessel

#endif  // TESSEL_KERNELS_CONV_INTERNAL_DIRECT_CONV_ROWS_H_
