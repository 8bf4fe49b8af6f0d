// QuantizeLinear f32 -> 8 bits on aarch64 NEON (quantize.h). Each step is the portable kernel's, as one
// IEEE operation per lane (no fused multiply-add), so the bytes are the same: the division, the clamp to
// [-1024, 1024], rounding half to even by adding and subtracting 1.5 * 2^23, the zero point, the clamp to
// [lo, hi], and NaN (which the min / max carry through) replaced by 0 at the end.
//
// The division is FDIV only where it can matter. x times the reciprocal of the scale differs from the
// rounded quotient by at most 2^-13 + 2^-14 while the quotient lies in the clamp's range (two roundings of
// 2^-24 relative each on the product, one on the quotient, at |x / scale| <= 1024), so the two round to
// the same integer unless the product lies within 2^-10 of a half-integer (past the clamp both give
// +-1024). Vectors with such a lane (ties and near-ties) take FDIV; the others a multiply. FDIV is not pipelined on small cores: the division alone was most of the kernel's cycles.
#include <arm_neon.h>

#include <cmath>
#include <cstring>

#include "kernels/int8/quantize.h"

namespace tessel {
namespace {

// What the kernel needs of the scale: the scale for FDIV, its reciprocal (or 0: always divide).
struct Scale {
  float32x4_t s, r;
  bool multiply;
};

// v clamped to [-1024, 1024] and rounded half to even (adding and subtracting 1.5 * 2^23).
inline float32x4_t Clamp(float32x4_t v) {
  return vminq_f32(vmaxq_f32(v, vdupq_n_f32(-1024.0f)), vdupq_n_f32(1024.0f));
}
inline float32x4_t Round(float32x4_t v) {
  const float32x4_t magic = vdupq_n_f32(12582912.0f);
  return vsubq_f32(vaddq_f32(v, magic), magic);
}

// The rounded value plus the zero point, clamped to [lo, hi], as int32; NaN quotients (`number` false)
// give 0.
inline int32x4_t Finish(float32x4_t rounded, uint32x4_t number, float32x4_t zp, float32x4_t lo, float32x4_t hi) {
  const float32x4_t q = vminq_f32(vmaxq_f32(vaddq_f32(rounded, zp), lo), hi);
  return vandq_s32(vcvtq_s32_f32(q), vreinterpretq_s32_u32(number));
}

// 16 values to 16 bytes: the low byte of each (the values lie in [lo, hi], within 8 bits). The loops
// over the four vectors are unrolled (GCC otherwise kept the arrays on the stack, as loops).
inline uint8x16_t Sixteen(const float* x, const Scale& sc, float32x4_t zp, float32x4_t lo, float32x4_t hi) {
  float32x4_t in[4], v[4], rounded[4];
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) in[i] = vld1q_f32(x + 4 * i);
  bool divide = !sc.multiply;
  if (sc.multiply) {
    // A lane within 2^-10 of a half-integer rounds to within 2^-10 of 0.5 away from it.
    const float32x4_t near_half = vdupq_n_f32(0.5f - 1.0f / 1024.0f);
    uint32x4_t near = vdupq_n_u32(0);
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) {
      v[i] = vmulq_f32(in[i], sc.r);
      const float32x4_t c = Clamp(v[i]);
      rounded[i] = Round(c);
      near = vorrq_u32(near, vcgeq_f32(vabdq_f32(c, rounded[i]), near_half));
    }
    divide = vmaxvq_u32(near) != 0;
  }
  if (divide) {
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) {
      v[i] = vdivq_f32(in[i], sc.s);
      rounded[i] = Round(Clamp(v[i]));
    }
  }
  int32x4_t q[4];
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) q[i] = Finish(rounded[i], vceqq_f32(v[i], v[i]), zp, lo, hi);
  const int16x8_t a = vcombine_s16(vmovn_s32(q[0]), vmovn_s32(q[1]));
  const int16x8_t b = vcombine_s16(vmovn_s32(q[2]), vmovn_s32(q[3]));
  return vreinterpretq_u8_s8(vcombine_s8(vmovn_s16(a), vmovn_s16(b)));
}

}  // namespace

void QuantizeF32__neon(const float* x, int64_t n, float scale, float zp, float lo, float hi, uint8_t* y) {
  const float r = 1.0f / scale;
  // The bound above needs a finite, nonzero reciprocal of a positive scale (a tiny scale's reciprocal
  // overflows, and 0 x inf would be NaN where 0 / scale is 0).
  const Scale sc{vdupq_n_f32(scale), vdupq_n_f32(r), scale > 0 && std::isfinite(scale) && std::isfinite(r) && r > 0};
  const float32x4_t z = vdupq_n_f32(zp), l = vdupq_n_f32(lo), h = vdupq_n_f32(hi);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) vst1q_u8(y + i, Sixteen(x + i, sc, z, l, h));
  if (i < n) {
    // The tail through a zero-padded copy.
    float in[16] = {};
    uint8_t out[16];
    std::memcpy(in, x + i, (n - i) * sizeof(float));
    vst1q_u8(out, Sixteen(in, sc, z, l, h));
    std::memcpy(y + i, out, n - i);
  }
}

}  // namespace tessel
