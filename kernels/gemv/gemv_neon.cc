// NEON weight-only GEMV: nibbles split with vand/vshr, recentred in int8, widened (sxtl) to f32 and
// multiplied with x by vfmaq; one block scale per block.
#include <arm_neon.h>

#include "kernels/gemv/internal/gemv_kernels.h"

namespace tessel {
namespace {

// sum over 16 int8 values v[j] * x[j], as 4 lanes.
inline float32x4_t Dot16(int8x16_t v, const float* x) {
  const int16x8_t w0 = vmovl_s8(vget_low_s8(v));
  const int16x8_t w1 = vmovl_s8(vget_high_s8(v));
  float32x4_t t = vmulq_f32(vcvtq_f32_s32(vmovl_s16(vget_low_s16(w0))), vld1q_f32(x));
  t = vfmaq_f32(t, vcvtq_f32_s32(vmovl_s16(vget_high_s16(w0))), vld1q_f32(x + 4));
  t = vfmaq_f32(t, vcvtq_f32_s32(vmovl_s16(vget_low_s16(w1))), vld1q_f32(x + 8));
  return vfmaq_f32(t, vcvtq_f32_s32(vmovl_s16(vget_high_s16(w1))), vld1q_f32(x + 12));
}

// sum_j (nibble_j - zero) * x_j for 16 bytes of nibbles: low nibbles against x_lo, high against x_hi.
inline float32x4_t Nibbles16Dot(const uint8_t* q, const float* x_lo, const float* x_hi, uint8x16_t zero) {
  const uint8x16_t raw = vld1q_u8(q);
  // (nibble - zero) wraps in uint8 and reads back correctly as int8 (range -15..15).
  const int8x16_t lo = vreinterpretq_s8_u8(vsubq_u8(vandq_u8(raw, vdupq_n_u8(0xf)), zero));
  const int8x16_t hi = vreinterpretq_s8_u8(vsubq_u8(vshrq_n_u8(raw, 4), zero));
  return vaddq_f32(Dot16(lo, x_lo), Dot16(hi, x_hi));
}

}  // namespace

void tessel_q4_0_gemv__neon(const GemvArgs& a, int64_t row_begin, int64_t row_end) {
  const int64_t nb = a.cols / kQuantBlock;
  const auto* blocks = static_cast<const BlockQ4_0*>(a.w);
  const uint8x16_t eight = vdupq_n_u8(8);
  for (int64_t r = row_begin; r < row_end; ++r) {
    const BlockQ4_0* row = blocks + r * nb;
    float32x4_t acc = vdupq_n_f32(0.0f);
    for (int64_t b = 0; b < nb; ++b) {
      const float* x = a.x + b * kQuantBlock;
      acc = vfmaq_n_f32(acc, Nibbles16Dot(row[b].qs, x, x + 16, eight), HalfToFloat(row[b].d));
    }
    a.y[r] = vaddvq_f32(acc);
  }
}

void tessel_q8_0_gemv__neon(const GemvArgs& a, int64_t row_begin, int64_t row_end) {
  const int64_t nb = a.cols / kQuantBlock;
  const auto* blocks = static_cast<const BlockQ8_0*>(a.w);
  for (int64_t r = row_begin; r < row_end; ++r) {
    const BlockQ8_0* row = blocks + r * nb;
    float32x4_t acc = vdupq_n_f32(0.0f);
    for (int64_t b = 0; b < nb; ++b) {
      const float* x = a.x + b * kQuantBlock;
      const float32x4_t t = vaddq_f32(Dot16(vld1q_s8(row[b].qs), x), Dot16(vld1q_s8(row[b].qs + 16), x + 16));
      acc = vfmaq_n_f32(acc, t, HalfToFloat(row[b].d));
    }
    a.y[r] = vaddvq_f32(acc);
  }
}

void tessel_i4g_gemv__neon(const GemvArgs& a, int64_t row_begin, int64_t row_end) {
  const int64_t g = a.group_size;
  const int64_t half = g / 2;
  const int64_t ng = a.cols / g;
  const auto* q = static_cast<const uint8_t*>(a.w);
  for (int64_t r = row_begin; r < row_end; ++r) {
    float32x4_t acc = vdupq_n_f32(0.0f);
    for (int64_t gi = 0; gi < ng; ++gi) {
      const uint8_t* qg = q + r * (a.cols / 2) + gi * half;
      const float* x = a.x + gi * g;
      const uint8x16_t zero = vdupq_n_u8(static_cast<uint8_t>(GroupZero(a, r * ng + gi)));
      float32x4_t t = vdupq_n_f32(0.0f);
      for (int64_t c = 0; c < half; c += 16) t = vaddq_f32(t, Nibbles16Dot(qg + c, x + c, x + half + c, zero));
      acc = vfmaq_n_f32(acc, t, GroupScale(a, r * ng + gi));
    }
    a.y[r] = vaddvq_f32(acc);
  }
}

}  // namespace tessel
