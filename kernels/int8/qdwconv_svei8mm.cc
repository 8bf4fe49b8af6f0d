// The depthwise u8 x s8 convolution on SVE with i8mm (qdwconv.h), any vector length. Per output pixel and
// svcntb() channels: for each quad of taps, the four taps' input vectors are interleaved (ZIP1 / ZIP2 on
// bytes, then on halfwords) into four vectors whose 32-bit lanes hold one channel's four taps, in channel
// order, and USDOT adds the four products per lane (u8 inputs, s8 weights: no flip); the accumulators
// start at the bias (input zero point folded in). The output stage is requantize_sve.h's f32 one on each
// accumulator vector, clamped to the output range before the rounding, and a truncating byte store. Loads
// and stores are predicated to the c channels.
#include <arm_sve.h>

#include <cstdint>

#include "kernels/int8/qdwconv.h"
#include "kernels/int8/requantize_sve.h"

namespace tessel {
namespace {

inline svuint8_t Zip16(bool high, svuint8_t a, svuint8_t b) {
  const svuint16_t a16 = svreinterpret_u16_u8(a), b16 = svreinterpret_u16_u8(b);
  return svreinterpret_u8_u16(high ? svzip2_u16(a16, b16) : svzip1_u16(a16, b16));
}

// One vector of channels' sums (bias included) requantized, offset and stored as u8 (pc: the active
// channels); lo / hi are act_min and act_max less the zero point, so the stored values lie in u8 range.
inline void Output(svbool_t pc, svint32_t acc, const float* scale, float lo, float hi, int32_t zero_point,
                   uint8_t* out) {
  const svint32_t v = requantize_sve::RoundScaled(pc, acc, svld1_f32(pc, scale), lo, hi);
  svst1b_s32(pc, reinterpret_cast<int8_t*>(out), svadd_n_s32_x(pc, v, zero_point));
}

void Run(const uint8_t* const* indirection, int64_t pixels, const PackedQDwConvSveWeights& w, int32_t y_zero_point,
         int32_t act_min, int32_t act_max, uint8_t* y) {
  const float lo = static_cast<float>(act_min - y_zero_point), hi = static_cast<float>(act_max - y_zero_point);
  const int64_t c = w.c, quads = w.quads, cp = w.cp;
  const int64_t vb = static_cast<int64_t>(svcntb()), vw = static_cast<int64_t>(svcntw());
  const int8_t* wp = w.w.data();
  const int32_t* bias = w.bias.data();
  const float* scale = w.scale.data();
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
      Output(p0, a0, scale + ch, lo, hi, y_zero_point, out + ch);
      Output(p1, a1, scale + ch + vw, lo, hi, y_zero_point, out + ch + vw);
      Output(p2, a2, scale + ch + 2 * vw, lo, hi, y_zero_point, out + ch + 2 * vw);
      Output(p3, a3, scale + ch + 3 * vw, lo, hi, y_zero_point, out + ch + 3 * vw);
    }
  }
}

}  // namespace

void QDwConvU8S8__svei8mm(const uint8_t* const* indirection, int64_t pixels, const PackedQDwConvSveWeights& w,
                          int32_t y_zero_point, int32_t act_min, int32_t act_max, uint8_t* y) {
  Run(indirection, pixels, w, y_zero_point, act_min, act_max, y);
}

}  // namespace tessel
