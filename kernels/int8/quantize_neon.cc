// QuantizeLinear f32 -> 8 bits on aarch64 NEON (quantize.h). Each step is the portable kernel's, as one
// IEEE operation per lane (no fused multiply-add), so the bytes are the same: the division, the clamp to
// [-1024, 1024], rounding half to even by adding and subtracting 1.5 * 2^23, the zero point, the clamp to
// [lo, hi], and NaN (which the min / max carry through) replaced by 0 at the end.
#include <arm_neon.h>

#include <cstring>

#include "kernels/int8/quantize.h"

namespace tessel {
namespace {

inline int32x4_t Four(float32x4_t x, float32x4_t scale, float32x4_t zp, float32x4_t lo, float32x4_t hi) {
  const float32x4_t round = vdupq_n_f32(12582912.0f);  // 1.5 * 2^23
  float32x4_t v = vdivq_f32(x, scale);
  const uint32x4_t number = vceqq_f32(v, v);
  v = vminq_f32(vmaxq_f32(v, vdupq_n_f32(-1024.0f)), vdupq_n_f32(1024.0f));
  float32x4_t q = vaddq_f32(vsubq_f32(vaddq_f32(v, round), round), zp);
  q = vminq_f32(vmaxq_f32(q, lo), hi);
  return vandq_s32(vcvtq_s32_f32(q), vreinterpretq_s32_u32(number));
}

// 16 values to 16 bytes: the low byte of each (the values lie in [lo, hi], within 8 bits).
inline uint8x16_t Sixteen(const float* x, float32x4_t scale, float32x4_t zp, float32x4_t lo, float32x4_t hi) {
  int32x4_t v[4];
  for (int i = 0; i < 4; ++i) v[i] = Four(vld1q_f32(x + 4 * i), scale, zp, lo, hi);
  const int16x8_t a = vcombine_s16(vmovn_s32(v[0]), vmovn_s32(v[1]));
  const int16x8_t b = vcombine_s16(vmovn_s32(v[2]), vmovn_s32(v[3]));
  return vreinterpretq_u8_s8(vcombine_s8(vmovn_s16(a), vmovn_s16(b)));
}

}  // namespace

void QuantizeF32__neon(const float* x, int64_t n, float scale, float zp, float lo, float hi, uint8_t* y) {
  const float32x4_t s = vdupq_n_f32(scale), z = vdupq_n_f32(zp), l = vdupq_n_f32(lo), h = vdupq_n_f32(hi);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) vst1q_u8(y + i, Sixteen(x + i, s, z, l, h));
  if (i < n) {
    // The tail through a zero-padded copy.
    float in[16] = {};
    uint8_t out[16];
    std::memcpy(in, x + i, (n - i) * sizeof(float));
    vst1q_u8(out, Sixteen(in, s, z, l, h));
    std::memcpy(y + i, out, n - i);
  }
}

}  // namespace tessel
