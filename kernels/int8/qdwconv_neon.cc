// The depthwise u8 x s8 convolution on aarch64 NEON (baseline Armv8-A), per output pixel 16 channels a
// step, the accumulators starting at the bias. With `pairs` (qdwconv.h) each tap's 16 input bytes are
// flipped to s8 and two taps' products are summed in 16 bits (SMULL, SMLAL) before one widening add into
// the four i32 accumulators (SADDW); otherwise each tap's bytes are widened to u16 and multiplied into the
// accumulators by s16 weights (SMLAL). 3x3 filters (9 taps) are unrolled, their row pointers held for
// the whole pixel. The output stage is requantize_neon.h's f32 one, then the zero point and clamp on saturating
// narrows, as in the GEMM kernels (internal/qgemm_neon.h). A channel tail below 16 reads and writes
// through stack copies.
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
  const int8_t* w8;
  const int16_t* w16;
  const int32_t* bias;
  const float* scale;
  int64_t taps, cp;
};

// acc[0..3] += 16 lanes of 16-bit sums (channels 0-7 in lo, 8-15 in hi).
__attribute__((always_inline)) inline void AddWidened(int32x4_t (&acc)[4], int16x8_t lo, int16x8_t hi) {
  acc[0] = vaddw_s16(acc[0], vget_low_s16(lo));
  acc[1] = vaddw_high_s16(acc[1], lo);
  acc[2] = vaddw_s16(acc[2], vget_low_s16(hi));
  acc[3] = vaddw_high_s16(acc[3], hi);
}

// acc[0..3] += the 16 products of two taps (a, b: s8 inputs and weights), summed in 16 bits.
__attribute__((always_inline)) inline void AddPair(int32x4_t (&acc)[4], int8x16_t xa, int8x16_t wa, int8x16_t xb,
                                                   int8x16_t wb) {
  AddWidened(acc, vmlal_s8(vmull_s8(vget_low_s8(xa), vget_low_s8(wa)), vget_low_s8(xb), vget_low_s8(wb)),
             vmlal_high_s8(vmull_high_s8(xa, wa), xb, wb));
}

// Channels [ch, ch + 16) of one pixel: load(t) gives tap t's 16 input bytes; kTaps > 0 fixes the tap
// count (unrolled), 0 reads it from w.
template <bool kPairs, int kTaps, typename Load>
__attribute__((always_inline)) inline uint8x16_t Channels16(Load&& load, int64_t ch, const Weights& w,
                                                            const Stage& st) {
  int32x4_t acc[4];
  #pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) acc[i] = vld1q_s32(w.bias + ch + 4 * i);
  const int64_t taps = kTaps > 0 ? kTaps : w.taps;
  if (kPairs) {
    const uint8x16_t flip = vdupq_n_u8(0x80);
    const auto x8 = [&](int64_t t) { return vreinterpretq_s8_u8(veorq_u8(load(t), flip)); };
    const int8_t* wt = w.w8 + ch;
    int64_t t = 0;
    #pragma GCC unroll 8
    for (; t + 2 <= taps; t += 2) {
      AddPair(acc, x8(t), vld1q_s8(wt + t * w.cp), x8(t + 1), vld1q_s8(wt + (t + 1) * w.cp));
    }
    if (t < taps) {
      const int8x16_t x = x8(t), wv = vld1q_s8(wt + t * w.cp);
      AddWidened(acc, vmull_s8(vget_low_s8(x), vget_low_s8(wv)), vmull_high_s8(x, wv));
    }
  } else {
    const int16_t* wt = w.w16 + ch;
    #pragma GCC unroll 9
    for (int64_t t = 0; t < taps; ++t) {
      const uint8x16_t x = load(t);
      const int16x8_t xl = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(x)));
      const int16x8_t xh = vreinterpretq_s16_u16(vmovl_high_u8(x));
      const int16x8_t wl = vld1q_s16(wt + t * w.cp), wh = vld1q_s16(wt + t * w.cp + 8);
      acc[0] = vmlal_s16(acc[0], vget_low_s16(xl), vget_low_s16(wl));
      acc[1] = vmlal_high_s16(acc[1], xl, wl);
      acc[2] = vmlal_s16(acc[2], vget_low_s16(xh), vget_low_s16(wh));
      acc[3] = vmlal_high_s16(acc[3], xh, wh);
    }
  }
  #pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) acc[i] = requantize_neon::RoundScaled(acc[i], vld1q_f32(w.scale + ch + 4 * i));
  // A sum beyond int16 ends beyond [0, 255] either way and clamps as the int32 sum does.
  const int16x8_t v0 = vqaddq_s16(vqmovn_high_s32(vqmovn_s32(acc[0]), acc[1]), st.y_zero_point);
  const int16x8_t v1 = vqaddq_s16(vqmovn_high_s32(vqmovn_s32(acc[2]), acc[3]), st.y_zero_point);
  return vminq_u8(vmaxq_u8(vqmovun_high_s16(vqmovun_s16(v0), v1), st.lo), st.hi);
}

template <bool kPairs, int kTaps>
void Run(const uint8_t* const* indirection, int64_t pixels, const Weights& w, int64_t c, const Stage& st,
         uint8_t* y) {
  const int64_t whole = c / 16 * 16, tail = c - whole, taps = kTaps > 0 ? kTaps : w.taps;
  constexpr int kHeld = kTaps > 0 ? kTaps : 1;
  for (int64_t p = 0; p < pixels; ++p) {
    const uint8_t* const* rows = indirection + p * taps;
    uint8_t* out = y + p * c;
    // With a fixed tap count the row pointers stay in registers across the channel steps.
    const uint8_t* held[kHeld];
    #pragma GCC unroll 9
    for (int t = 0; t < kHeld; ++t) held[t] = rows[kTaps > 0 ? t : 0];
    for (int64_t ch = 0; ch < whole; ch += 16) {
      const auto load = [&](int64_t t) { return vld1q_u8((kTaps > 0 ? held[t] : rows[t]) + ch); };
      vst1q_u8(out + ch, Channels16<kPairs, kTaps>(load, ch, w, st));
    }
    if (tail > 0) {
      // The last channels through copies, so that no load or store passes the c bytes a pointer addresses.
      const auto load = [&](int64_t t) {
        uint8_t bytes[16] = {};
        std::memcpy(bytes, rows[t] + whole, tail);
        return vld1q_u8(bytes);
      };
      uint8_t bytes[16];
      vst1q_u8(bytes, Channels16<kPairs, kTaps>(load, whole, w, st));
      std::memcpy(out + whole, bytes, tail);
    }
  }
}

template <bool kPairs>
void RunTaps(const uint8_t* const* indirection, int64_t pixels, const Weights& w, int64_t c, const Stage& st,
             uint8_t* y) {
  if (w.taps == 9) {
    Run<kPairs, 9>(indirection, pixels, w, c, st, y);
  } else {
    Run<kPairs, 0>(indirection, pixels, w, c, st, y);
  }
}

}  // namespace

void QDwConvU8S8__neon(const uint8_t* const* indirection, int64_t pixels, const PackedQDwConvNeonWeights& packed,
                       int32_t y_zero_point, int32_t act_min, int32_t act_max, uint8_t* y) {
  const Stage st{vdupq_n_s16(static_cast<int16_t>(y_zero_point)), vdupq_n_u8(static_cast<uint8_t>(act_min)),
                 vdupq_n_u8(static_cast<uint8_t>(act_max))};
  const Weights w{packed.w8.data(), packed.w16.data(), packed.bias.data(), packed.scale.data(), packed.taps,
                  packed.cp};
  const int64_t c = packed.c;
  if (packed.pairs) {
    RunTaps<true>(indirection, pixels, w, c, st, y);
  } else {
    RunTaps<false>(indirection, pixels, w, c, st, y);
  }
}

}  // namespace tessel
