// NEON f32 depthwise 3x3 microkernels. The row kernel keeps a tile's 9 taps of weights and its bias in
// registers (8 channels = 2 q registers, 18 + 2 of the 32) while two output pixels per iteration sweep the
// row, loading the input columns the two windows share once; then a 4-channel tile, the last 1-3 channels
// in scalar code. The pixel kernel (image borders) reads its 9 taps through pointers.
#include <arm_neon.h>

#include "kernels/conv/internal/dwconv3x3_ukernels.h"

namespace tessel {
namespace {

// out = clamp(acc + residual) for kRegs q registers of channels.
template <int kRegs>
inline void Store(const float32x4_t (&acc)[kRegs], const float* residual, float32x4_t lo, float32x4_t hi,
                  float* out) {
#pragma GCC unroll 2
  for (int r = 0; r < kRegs; ++r) {
    float32x4_t v = acc[r];
    if (residual != nullptr) v = vaddq_f32(v, vld1q_f32(residual + 4 * r));
    vst1q_f32(out + 4 * r, vminq_f32(vmaxq_f32(v, lo), hi));
  }
}

inline float ClampScalar(float v, float lo, float hi) {
  v = v < lo ? lo : v;
  return v > hi ? hi : v;
}

// Channels [ch, ch + 4 kRegs) of a row run. Pixel i + 1's window starts kStride columns after pixel i's,
// so a pair reads kStride + 3 columns per input row instead of 6.
template <int kRegs, int kStride>
void RowTile(const DwConv3x3Params& p, int64_t ch, int64_t count, const float* const (&rows)[3],
             const float* residual, float* out) {
  const int64_t c = p.channels;
  float32x4_t w[9][kRegs], bias[kRegs];
#pragma GCC unroll 9
  for (int t = 0; t < 9; ++t) {
#pragma GCC unroll 2
    for (int r = 0; r < kRegs; ++r) w[t][r] = vld1q_f32(p.weights + t * c + ch + 4 * r);
  }
#pragma GCC unroll 2
  for (int r = 0; r < kRegs; ++r) bias[r] = vld1q_f32(p.bias + ch + 4 * r);
  const float32x4_t lo = vdupq_n_f32(p.lo), hi = vdupq_n_f32(p.hi);
  int64_t i = 0;
  for (; i + 2 <= count; i += 2) {
    float32x4_t acc0[kRegs], acc1[kRegs];
#pragma GCC unroll 2
    for (int r = 0; r < kRegs; ++r) acc0[r] = acc1[r] = bias[r];
#pragma GCC unroll 3
    for (int ky = 0; ky < 3; ++ky) {
      const float* src = rows[ky] + i * kStride * c + ch;
#pragma GCC unroll 5
      for (int j = 0; j < kStride + 3; ++j) {
#pragma GCC unroll 2
        for (int r = 0; r < kRegs; ++r) {
          const float32x4_t x = vld1q_f32(src + j * c + 4 * r);
          if (j < 3) acc0[r] = vfmaq_f32(acc0[r], x, w[3 * ky + j][r]);
          if (j >= kStride) acc1[r] = vfmaq_f32(acc1[r], x, w[3 * ky + j - kStride][r]);
        }
      }
    }
    const int64_t off = i * c + ch;
    Store(acc0, residual != nullptr ? residual + off : nullptr, lo, hi, out + off);
    Store(acc1, residual != nullptr ? residual + off + c : nullptr, lo, hi, out + off + c);
  }
  if (i < count) {
    float32x4_t acc[kRegs];
#pragma GCC unroll 2
    for (int r = 0; r < kRegs; ++r) acc[r] = bias[r];
#pragma GCC unroll 3
    for (int ky = 0; ky < 3; ++ky) {
      const float* src = rows[ky] + i * kStride * c + ch;
#pragma GCC unroll 3
      for (int kx = 0; kx < 3; ++kx) {
#pragma GCC unroll 2
        for (int r = 0; r < kRegs; ++r) acc[r] = vfmaq_f32(acc[r], vld1q_f32(src + kx * c + 4 * r), w[3 * ky + kx][r]);
      }
    }
    const int64_t off = i * c + ch;
    Store(acc, residual != nullptr ? residual + off : nullptr, lo, hi, out + off);
  }
}

// Channels [ch, channels) of a row run, one at a time.
void RowScalar(const DwConv3x3Params& p, int64_t ch, int64_t count, const float* const (&rows)[3],
               const float* residual, float* out) {
  const int64_t c = p.channels;
  for (; ch < c; ++ch) {
    for (int64_t i = 0; i < count; ++i) {
      float acc = p.bias[ch];
      for (int ky = 0; ky < 3; ++ky) {
        const float* src = rows[ky] + i * p.stride * c + ch;
        for (int kx = 0; kx < 3; ++kx) acc += src[kx * c] * p.weights[(3 * ky + kx) * c + ch];
      }
      if (residual != nullptr) acc += residual[i * c + ch];
      out[i * c + ch] = ClampScalar(acc, p.lo, p.hi);
    }
  }
}

template <int kStride>
void Row(const DwConv3x3Params& p, int64_t count, const float* const (&rows)[3], const float* residual, float* out) {
  const int64_t c = p.channels;
  int64_t ch = 0;
  for (; ch + 8 <= c; ch += 8) RowTile<2, kStride>(p, ch, count, rows, residual, out);
  if (ch + 4 <= c) {
    RowTile<1, kStride>(p, ch, count, rows, residual, out);
    ch += 4;
  }
  if (ch < c) RowScalar(p, ch, count, rows, residual, out);
}

template <int kRegs>
void PixelTile(const DwConv3x3Params& p, int64_t ch, const float* const (&taps)[9], const float* residual,
               float* out) {
  const int64_t c = p.channels;
  float32x4_t acc[kRegs];
#pragma GCC unroll 2
  for (int r = 0; r < kRegs; ++r) acc[r] = vld1q_f32(p.bias + ch + 4 * r);
#pragma GCC unroll 9
  for (int t = 0; t < 9; ++t) {
#pragma GCC unroll 2
    for (int r = 0; r < kRegs; ++r) {
      acc[r] = vfmaq_f32(acc[r], vld1q_f32(taps[t] + ch + 4 * r), vld1q_f32(p.weights + t * c + ch + 4 * r));
    }
  }
  Store(acc, residual != nullptr ? residual + ch : nullptr, vdupq_n_f32(p.lo), vdupq_n_f32(p.hi), out + ch);
}

}  // namespace

void tessel_f32_dwconv3x3_row__neon(const DwConv3x3Params& p, int64_t count, const float* const (&rows)[3],
                                    const float* residual, float* out) {
  if (p.stride == 1) {
    Row<1>(p, count, rows, residual, out);
  } else {
    Row<2>(p, count, rows, residual, out);
  }
}

void tessel_f32_dwconv3x3_pixel__neon(const DwConv3x3Params& p, const float* const (&taps)[9], const float* residual,
                                      float* out) {
  const int64_t c = p.channels;
  int64_t ch = 0;
  for (; ch + 8 <= c; ch += 8) PixelTile<2>(p, ch, taps, residual, out);
  if (ch + 4 <= c) {
    PixelTile<1>(p, ch, taps, residual, out);
    ch += 4;
  }
  for (; ch < c; ++ch) {
    float acc = p.bias[ch];
    for (int t = 0; t < 9; ++t) acc += taps[t][ch] * p.weights[t * c + ch];
    if (residual != nullptr) acc += residual[ch];
    out[ch] = ClampScalar(acc, p.lo, p.hi);
  }
}

}  // namespace tessel
