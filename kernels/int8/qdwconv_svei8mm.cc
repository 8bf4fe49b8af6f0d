// The depthwise u8 x s8 convolution on SVE with i8mm (qdwconv.h), any vector length. Per output pixel and
// svcntb() channels: for each quad of taps, the four taps' input vectors are interleaved (ZIP1 / ZIP2 on
// bytes, then on halfwords) into four vectors whose 32-bit lanes hold one channel's four taps, in channel
// order, and USDOT adds the four products per lane (u8 inputs, s8 weights: no flip); the accumulators
// start at the bias (input zero point folded in). The output stage runs on NEON (requantize_neon.h:
// SQRDMULH and a rounding shift, 3 instructions per 4 lanes against base SVE's ~13 per vector, which
// lacks SVE2's SQRDMULH and SRSHL): the sums go through a stack buffer, 16 channels a step, then the zero
// point and clamp on saturating narrows as in the NEON kernel. Loads are predicated to the c channels; a
// last group of fewer than 16 channels is stored through a copy.
#include <arm_neon.h>
#include <arm_sve.h>

#include <cstdint>
#include <cstring>

#include "kernels/int8/qdwconv.h"
#include "kernels/int8/requantize_neon.h"

namespace tessel {
namespace {

inline svuint8_t Zip16(bool high, svuint8_t a, svuint8_t b) {
  const svuint16_t a16 = svreinterpret_u16_u8(a), b16 = svreinterpret_u16_u8(b);
  return svreinterpret_u8_u16(high ? svzip2_u16(a16, b16) : svzip1_u16(a16, b16));
}

// PackedQDwConvSveWeights' arrays as locals: the u8 stores may alias the vectors' fields.
struct Consts {
  const int32_t *multiplier, *left, *neg_right;
  int16x8_t y_zero_point;
  uint8x16_t lo, hi;
};

// 16 channels' sums at `acc` (from channel ch) requantized, offset, clamped and narrowed to u8.
template <bool kRightOnly>
inline uint8x16_t Output16(const int32_t* acc, int64_t ch, const Consts& k) {
  int32x4_t v[4];
  for (int i = 0; i < 4; ++i) {
    const int32x4_t a = vld1q_s32(acc + 4 * i);
    const int32x4_t m = vld1q_s32(k.multiplier + ch + 4 * i), r = vld1q_s32(k.neg_right + ch + 4 * i);
    v[i] = kRightOnly ? requantize_neon::MultiplyByQuantizedMultiplierRight(a, m, r)
                      : requantize_neon::MultiplyByQuantizedMultiplier(a, m, vld1q_s32(k.left + ch + 4 * i), r);
  }
  // A sum beyond int16 ends beyond [0, 255] either way and clamps as the int32 sum does.
  const int16x8_t v0 = vqaddq_s16(vqmovn_high_s32(vqmovn_s32(v[0]), v[1]), k.y_zero_point);
  const int16x8_t v1 = vqaddq_s16(vqmovn_high_s32(vqmovn_s32(v[2]), v[3]), k.y_zero_point);
  return vminq_u8(vmaxq_u8(vqmovun_high_s16(vqmovun_s16(v0), v1), k.lo), k.hi);
}

template <bool kRightOnly>
void Run(const uint8_t* const* indirection, int64_t pixels, const PackedQDwConvSveWeights& w, const Consts& k,
         uint8_t* y) {
  const int64_t c = w.c, quads = w.quads, cp = w.cp;
  const int64_t vb = static_cast<int64_t>(svcntb()), vw = static_cast<int64_t>(svcntw());
  const int8_t* wp = w.w.data();
  const int32_t* bias = w.bias.data();
  alignas(64) int32_t sums[256];  // 4 vectors of svcntw() lanes: up to 2048-bit SVE
  for (int64_t p = 0; p < pixels; ++p) {
    const uint8_t* const* rows = indirection + p * quads * 4;
    uint8_t* out = y + p * c;
    for (int64_t ch = 0; ch < c; ch += vb) {
      const svbool_t px = svwhilelt_b8_s64(ch, c);
      // Output vector j holds channels [ch + j vw, ch + (j + 1) vw); its weights are bytes
      // [j vb, (j + 1) vb) of the quad's 4 (c - ch) from ch.
      const svbool_t p0 = svwhilelt_b32_s64(ch, c), p1 = svwhilelt_b32_s64(ch + vw, c);
      const svbool_t p2 = svwhilelt_b32_s64(ch + 2 * vw, c), p3 = svwhilelt_b32_s64(ch + 3 * vw, c);
      const int64_t wbytes = 4 * (c - ch);
      const svbool_t w0 = svwhilelt_b8_s64(int64_t{0}, wbytes), w1 = svwhilelt_b8_s64(vb, wbytes);
      const svbool_t w2 = svwhilelt_b8_s64(2 * vb, wbytes), w3 = svwhilelt_b8_s64(3 * vb, wbytes);
      svint32_t a0 = svld1_s32(p0, bias + ch), a1 = svld1_s32(p1, bias + ch + vw);
      svint32_t a2 = svld1_s32(p2, bias + ch + 2 * vw), a3 = svld1_s32(p3, bias + ch + 3 * vw);
      for (int64_t q = 0; q < quads; ++q) {
        const uint8_t* const* r = rows + 4 * q;
        const svuint8_t x0 = svld1_u8(px, r[0] + ch), x1 = svld1_u8(px, r[1] + ch);
        const svuint8_t x2 = svld1_u8(px, r[2] + ch), x3 = svld1_u8(px, r[3] + ch);
        const svuint8_t ab_lo = svzip1_u8(x0, x1), ab_hi = svzip2_u8(x0, x1);
        const svuint8_t cd_lo = svzip1_u8(x2, x3), cd_hi = svzip2_u8(x2, x3);
        const int8_t* wq = wp + (q * cp + ch) * 4;
        a0 = svusdot_s32(a0, Zip16(false, ab_lo, cd_lo), svld1_s8(w0, wq));
        a1 = svusdot_s32(a1, Zip16(true, ab_lo, cd_lo), svld1_s8(w1, wq + vb));
        a2 = svusdot_s32(a2, Zip16(false, ab_hi, cd_hi), svld1_s8(w2, wq + 2 * vb));
        a3 = svusdot_s32(a3, Zip16(true, ab_hi, cd_hi), svld1_s8(w3, wq + 3 * vb));
      }
      const svbool_t all = svptrue_b32();
      svst1_s32(all, sums, a0);
      svst1_s32(all, sums + vw, a1);
      svst1_s32(all, sums + 2 * vw, a2);
      svst1_s32(all, sums + 3 * vw, a3);
      const int64_t n = c - ch < vb ? c - ch : vb;
      int64_t g = 0;
      for (; g + 16 <= n; g += 16) vst1q_u8(out + ch + g, Output16<kRightOnly>(sums + g, ch + g, k));
      if (g < n) {
        // The constants are padded to cp (a multiple of 16), so the last group reads them in full.
        uint8_t bytes[16];
        vst1q_u8(bytes, Output16<kRightOnly>(sums + g, ch + g, k));
        std::memcpy(out + ch + g, bytes, n - g);
      }
    }
  }
}

}  // namespace

void QDwConvU8S8__svei8mm(const uint8_t* const* indirection, int64_t pixels, const PackedQDwConvSveWeights& w,
                          int32_t y_zero_point, int32_t act_min, int32_t act_max, uint8_t* y) {
  const Consts k{w.multiplier.data(), w.left.data(), w.neg_right.data(),
                 vdupq_n_s16(static_cast<int16_t>(y_zero_point)), vdupq_n_u8(static_cast<uint8_t>(act_min)),
                 vdupq_n_u8(static_cast<uint8_t>(act_max))};
  if (w.right_only) {
    Run<true>(indirection, pixels, w, k, y);
  } else {
    Run<false>(indirection, pixels, w, k, y);
  }
}

}  // namespace tessel
