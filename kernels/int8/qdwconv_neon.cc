// The depthwise u8 x s8 convolution on aarch64 NEON (baseline Armv8-A): per output pixel, 16 channels a
// step, each tap's 16 input bytes widened to u16 and multiplied by the pre-widened s16 weights into four
// i32 accumulators (SMLAL, SMLAL2; 255 x 128 fits in 16 bits, the sums in 32), which start at the bias.
// The output stage is requantize_neon.h's, then the zero point and clamp on saturating narrows, as in
// the GEMM kernels (internal/qgemm_neon.h). A channel tail below 16 reads and writes through a stack copy.
#include <arm_neon.h>

#include <cstring>

#include "kernels/int8/qdwconv.h"
#include "kernels/int8/requantize_neon.h"

namespace tessel {
namespace {

struct Stage {
  int16x8_t y_zero_point;
  uint8x16_t lo, hi;
};

// PackedQDwConvNeonWeights' arrays and sizes as locals: the u8 stores may alias the vectors' fields,
// which would make every step reload them.
struct Weights {
  const int16_t* w;
  const int32_t *bias, *multiplier, *left, *neg_right;
  int64_t taps, cp;
};

// Channels [ch, ch + 16) of one pixel; load(t) gives tap t's 16 input bytes.
template <bool kRightOnly, typename Load>
__attribute__((always_inline)) inline uint8x16_t Channels16(Load&& load, int64_t ch, const Weights& w,
                                                            const Stage& st) {
  int32x4_t acc[4];
  for (int i = 0; i < 4; ++i) acc[i] = vld1q_s32(w.bias + ch + 4 * i);
  const int16_t* wt = w.w + ch;
  for (int64_t t = 0; t < w.taps; ++t, wt += w.cp) {
    const uint8x16_t x = load(t);
    const int16x8_t xl = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(x)));
    const int16x8_t xh = vreinterpretq_s16_u16(vmovl_high_u8(x));
    const int16x8_t wl = vld1q_s16(wt), wh = vld1q_s16(wt + 8);
    acc[0] = vmlal_s16(acc[0], vget_low_s16(xl), vget_low_s16(wl));
    acc[1] = vmlal_high_s16(acc[1], xl, wl);
    acc[2] = vmlal_s16(acc[2], vget_low_s16(xh), vget_low_s16(wh));
    acc[3] = vmlal_high_s16(acc[3], xh, wh);
  }
  for (int i = 0; i < 4; ++i) {
    const int32x4_t m = vld1q_s32(w.multiplier + ch + 4 * i);
    const int32x4_t r = vld1q_s32(w.neg_right + ch + 4 * i);
    acc[i] = kRightOnly ? requantize_neon::MultiplyByQuantizedMultiplierRight(acc[i], m, r)
                        : requantize_neon::MultiplyByQuantizedMultiplier(
                              acc[i], m, vld1q_s32(w.left + ch + 4 * i), r);
  }
  // A sum beyond int16 ends beyond [0, 255] either way and clamps as the int32 sum does.
  const int16x8_t v0 = vqaddq_s16(vqmovn_high_s32(vqmovn_s32(acc[0]), acc[1]), st.y_zero_point);
  const int16x8_t v1 = vqaddq_s16(vqmovn_high_s32(vqmovn_s32(acc[2]), acc[3]), st.y_zero_point);
  return vminq_u8(vmaxq_u8(vqmovun_high_s16(vqmovun_s16(v0), v1), st.lo), st.hi);
}

template <bool kRightOnly>
void Run(const uint8_t* const* indirection, int64_t pixels, const PackedQDwConvNeonWeights& packed, const Stage& st,
         uint8_t* y) {
  const Weights w{packed.w.data(),    packed.bias.data(),      packed.multiplier.data(),
                  packed.left.data(), packed.neg_right.data(), packed.taps,
                  packed.cp};
  const int64_t c = packed.c, whole = c / 16 * 16, tail = c - whole;
  for (int64_t p = 0; p < pixels; ++p) {
    const uint8_t* const* rows = indirection + p * w.taps;
    uint8_t* out = y + p * c;
    for (int64_t ch = 0; ch < whole; ch += 16) {
      vst1q_u8(out + ch, Channels16<kRightOnly>([&](int64_t t) { return vld1q_u8(rows[t] + ch); }, ch, w, st));
    }
    if (tail > 0) {
      // The last channels through copies, so that no load or store passes the c bytes a pointer addresses.
      const auto load = [&](int64_t t) {
        uint8_t bytes[16] = {};
        std::memcpy(bytes, rows[t] + whole, tail);
        return vld1q_u8(bytes);
      };
      uint8_t bytes[16];
      vst1q_u8(bytes, Channels16<kRightOnly>(load, whole, w, st));
      std::memcpy(out + whole, bytes, tail);
    }
  }
}

}  // namespace

void QDwConvU8S8__neon(const uint8_t* const* indirection, int64_t pixels, const PackedQDwConvNeonWeights& w,
                       int32_t y_zero_point, int32_t act_min, int32_t act_max, uint8_t* y) {
  const Stage st{vdupq_n_s16(static_cast<int16_t>(y_zero_point)), vdupq_n_u8(static_cast<uint8_t>(act_min)),
                 vdupq_n_u8(static_cast<uint8_t>(act_max))};
  if (w.right_only) {
    Run<true>(indirection, pixels, w, st, y);
  } else {
    Run<false>(indirection, pixels, w, st, y);
  }
}

}  // namespace tessel
