// QuantizeGemvInput on NEON (aarch64): each 32-element block's max |x| by FMAXNM, x x 127 / max rounded
// to nearest even by FCVTNS and narrowed with saturation, the lanes' sums of 4 bytes by pairwise adds.
// Bit-identical to the portable loop in gemv.cc (gemv_q8_test checks every byte, bias and scale).
#include <arm_neon.h>

#include "kernels/gemv/internal/gemv_kernels.h"

namespace tessel {
namespace {

// x[0..31] quantized into lo (elements 0..15) and hi (16..31); returns dx. A block past the row's end
// (present false) is zeros with dx 0.
inline float QuantizeBlock(const float* x, bool present, int8x16_t* lo, int8x16_t* hi) {
  if (!present) {
    *lo = *hi = vdupq_n_s8(0);
    return 0;
  }
  float32x4_t v[8];
  // From 0, as the portable loop: a NaN never becomes the maximum (FMAXNM returns the number).
  float32x4_t m = vdupq_n_f32(0);
  for (int i = 0; i < 8; ++i) {
    v[i] = vld1q_f32(x + 4 * i);
    m = vmaxnmq_f32(m, vabsq_f32(v[i]));
  }
  const float amax = vmaxnmvq_f32(m);
  const float32x4_t id = vdupq_n_f32(amax > 0 ? 127 / amax : 0.0f);
  int16x8_t h[4];
  for (int i = 0; i < 4; ++i) {
    const int32x4_t a = vcvtnq_s32_f32(vmulq_f32(v[2 * i], id));
    const int32x4_t b = vcvtnq_s32_f32(vmulq_f32(v[2 * i + 1], id));
    h[i] = vcombine_s16(vqmovn_s32(a), vqmovn_s32(b));
  }
  *lo = vcombine_s8(vqmovn_s16(h[0]), vqmovn_s16(h[1]));
  *hi = vcombine_s8(vqmovn_s16(h[2]), vqmovn_s16(h[3]));
  return amax / 127;
}

// Sums of 4 consecutive bytes, one per lane.
inline int32x4_t Sum4(int8x16_t q) { return vpaddlq_s16(vpaddlq_s8(q)); }

}  // namespace

void tessel_quantize_gemv_input__neon(GemvFormat format, const float* x, int64_t cols, const GemvQ8Input& out) {
  const bool q4 = format == GemvFormat::kQ4_0;
  const int64_t blocks = GemvQ8PaddedCols(format, cols) / kQuantBlock;
  for (int64_t b = 0; b < blocks; ++b) {
    int8x16_t lo, hi;
    const float d = QuantizeBlock(x + b * kQuantBlock, b * kQuantBlock < cols, &lo, &hi);
    const float32x4_t dv = vdupq_n_f32(d);
    if (q4) {
      // Group b / 4 of 128 bytes: block i's elements 0..15 at 16 i, 16..31 at 64 + 16 i; lanes 4 i..4 i + 3.
      int8_t* dst = out.q + (b / 4) * 128 + 16 * (b % 4);
      vst1q_s8(dst, lo);
      vst1q_s8(dst + 64, hi);
      const int64_t lane0 = (b / 4) * 16 + 4 * (b % 4);
      vst1q_s32(out.bias + lane0, vmulq_n_s32(vaddq_s32(Sum4(lo), Sum4(hi)), -8));
      vst1q_f32(out.scale + lane0, dv);
    } else {
      int8_t* dst = out.q + b * kQuantBlock;
      vst1q_s8(dst, lo);
      vst1q_s8(dst + 16, hi);
      vst1q_s32(out.bias + b * 8, vmulq_n_s32(Sum4(lo), -128));
      vst1q_s32(out.bias + b * 8 + 4, vmulq_n_s32(Sum4(hi), -128));
      vst1q_f32(out.scale + b * 8, dv);
      vst1q_f32(out.scale + b * 8 + 4, dv);
    }
  }
}

}  // namespace tessel
