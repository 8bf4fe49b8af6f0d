// Q4_0 / Q8_0 / IQ4_NL Panel16 kernels (gemv.h) for aarch64 with the dot-product extension (Cortex-A55,
// A76 and later, Neoverse): decode and prefill on int8 x in the layouts QuantizeGemvInput writes.
//
// A 64-byte Panel16 vector (16 rows x 4 bytes) is four q registers of 4 rows each; SDOT by element
// (vdotq_laneq_s32) multiplies each row's 4 weight bytes with the same 4 x bytes, which x's layout holds
// together in one 32-bit lane:
// - Q4_0: nibble codes 0..15 meet x directly (s8 x s8) and the block bias (-8 x sum x, the sums'
//   starting value) makes them code - 8, as on x86.
// - IQ4_NL: codes looked up (vqtbl1q_s8) into ggml's signed levels; no bias.
// - Q8_0: bytes stored + 128; XOR 0x80 gives the signed weight back; no bias.
// Each block's 16 int32 row sums become f32 and meet d_w x dx in fused multiply-adds. Prefill runs the
// tokens two at a time over a panel (each weight vector loaded and split once for both), whose weights
// stay in L1 between token pairs.
#include <arm_neon.h>

#include <cstdint>
#include <cstring>

#include "kernels/gemv/ggml_blocks.h"
#include "kernels/gemv/internal/gemv_kernels.h"

namespace tessel {
namespace {

constexpr int kPanel = 16;

template <bool kQ4>
constexpr int64_t PairBytes() {
  return kQ4 ? 2 * 4 * 64 + 64 : 2 * 8 * 64 + 64;
}

// The 16 rows' f32 scales of block h of a pair.
__attribute__((always_inline)) inline void LoadScales(const uint8_t* pair, int h, float32x4_t d[4]) {
  const auto* s = reinterpret_cast<const float16_t*>(pair + 32 * h);
#pragma GCC unroll 4
  for (int m = 0; m < 4; ++m) d[m] = vcvt_f32_f16(vld1_f16(s + 4 * m));
}

// Q4_0 / IQ4_NL vector k of a block (16 rows x 4 bytes: elements 4k..4k+3 in the low nibbles, 16 + 4k..
// in the high ones) into the rows' sums of kT tokens: the nibbles are split once for all the tokens.
// Every loop is unrolled so that the sums stay in registers.
template <int kStep, bool kNL, int kT>
__attribute__((always_inline)) inline void Q4Step(const uint8_t* vec, const int8x16_t (&xlo)[kT],
                                                  const int8x16_t (&xhi)[kT], int8x16_t levels,
                                                  int32x4_t (&isum)[kT][4]) {
  const uint8x16_t low4 = vdupq_n_u8(0x0F);
#pragma GCC unroll 4
  for (int m = 0; m < 4; ++m) {
    const uint8x16_t v = vld1q_u8(vec + kStep * 64 + 16 * m);
    int8x16_t lo = vreinterpretq_s8_u8(vandq_u8(v, low4));
    int8x16_t hi = vreinterpretq_s8_u8(vshrq_n_u8(v, 4));
    if constexpr (kNL) {
      lo = vqtbl1q_s8(levels, vreinterpretq_u8_s8(lo));
      hi = vqtbl1q_s8(levels, vreinterpretq_u8_s8(hi));
    }
#pragma GCC unroll 4
    for (int t = 0; t < kT; ++t) {
      isum[t][m] = vdotq_laneq_s32(isum[t][m], lo, xlo[t], kStep);
      isum[t][m] = vdotq_laneq_s32(isum[t][m], hi, xhi[t], kStep);
    }
  }
}

// Q8_0 vector k of a block (elements 4k..4k+3, stored + 128) into the rows' sums of kT tokens; x[t]
// holds elements 16 (k / 4) ...
template <int kStep, int kT>
__attribute__((always_inline)) inline void Q8Step(const uint8_t* vec, const int8x16_t (&x)[kT],
                                                  int32x4_t (&isum)[kT][4]) {
  const uint8x16_t flip = vdupq_n_u8(0x80);
#pragma GCC unroll 4
  for (int m = 0; m < 4; ++m) {
    const int8x16_t w = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(vec + kStep * 64 + 16 * m), flip));
#pragma GCC unroll 4
    for (int t = 0; t < kT; ++t) isum[t][m] = vdotq_laneq_s32(isum[t][m], w, x[t], kStep % 4);
  }
}

// Rows [r, r + rows) of tokens [t0, t0 + kT) over one panel: sum over blocks of d_w dx (sum of w x).
// kT = 2 (prefill) reads and splits each weight vector once for two tokens; 16 f32 and 8 int32
// accumulators, 4 x registers.
template <bool kQ4, bool kNL, int kT>
void PanelTokens(const GemmQ8Args& a, const uint8_t* panel, int64_t t0, int64_t r, int rows) {
  constexpr int kK = kQ4 ? 4 : 8;
  const int64_t nb = a.cols / kQuantBlock;
  const int8x16_t levels = vld1q_s8(kIQ4NLValues);
  float32x4_t acc[kT][4];
#pragma GCC unroll 4
  for (int t = 0; t < kT; ++t) {
#pragma GCC unroll 4
    for (int m = 0; m < 4; ++m) acc[t][m] = vdupq_n_f32(0);
  }
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* pair = panel + (b / 2) * PairBytes<kQ4>();
    const int h = static_cast<int>(b % 2);
    const uint8_t* vec = pair + 64 + h * kK * 64;
    int32x4_t isum[kT][4];
#pragma GCC unroll 4
    for (int t = 0; t < kT; ++t) {
      const int32_t start = kQ4 && !kNL ? a.block_bias[(t0 + t) * a.block_stride + b] : 0;
#pragma GCC unroll 4
      for (int m = 0; m < 4; ++m) isum[t][m] = vdupq_n_s32(start);
    }
    if constexpr (kQ4) {
      // Block b's x: elements 0..15 at 16 (b % 4) of its 128-element group, 16..31 64 bytes on.
      int8x16_t xlo[kT], xhi[kT];
#pragma GCC unroll 4
      for (int t = 0; t < kT; ++t) {
        const int8_t* xb = a.xq + (t0 + t) * a.xq_stride + (b / 4) * 128 + 16 * (b % 4);
        xlo[t] = vld1q_s8(xb);
        xhi[t] = vld1q_s8(xb + 64);
      }
      Q4Step<0, kNL, kT>(vec, xlo, xhi, levels, isum);
      Q4Step<1, kNL, kT>(vec, xlo, xhi, levels, isum);
      Q4Step<2, kNL, kT>(vec, xlo, xhi, levels, isum);
      Q4Step<3, kNL, kT>(vec, xlo, xhi, levels, isum);
    } else {
      int8x16_t x0[kT], x1[kT];
#pragma GCC unroll 4
      for (int t = 0; t < kT; ++t) {
        const int8_t* xb = a.xq + (t0 + t) * a.xq_stride + b * kQuantBlock;
        x0[t] = vld1q_s8(xb);
        x1[t] = vld1q_s8(xb + 16);
      }
      Q8Step<0, kT>(vec, x0, isum);
      Q8Step<1, kT>(vec, x0, isum);
      Q8Step<2, kT>(vec, x0, isum);
      Q8Step<3, kT>(vec, x0, isum);
      Q8Step<4, kT>(vec, x1, isum);
      Q8Step<5, kT>(vec, x1, isum);
      Q8Step<6, kT>(vec, x1, isum);
      Q8Step<7, kT>(vec, x1, isum);
    }
    float32x4_t d[4];
    LoadScales(pair, h, d);
#pragma GCC unroll 4
    for (int t = 0; t < kT; ++t) {
      const float dx = a.block_scale[(t0 + t) * a.block_stride + b];
#pragma GCC unroll 4
      for (int m = 0; m < 4; ++m) acc[t][m] = vfmaq_f32(acc[t][m], vcvtq_f32_s32(isum[t][m]), vmulq_n_f32(d[m], dx));
    }
  }
#pragma GCC unroll 4
  for (int t = 0; t < kT; ++t) {
    float out[kPanel];
#pragma GCC unroll 4
    for (int m = 0; m < 4; ++m) vst1q_f32(out + 4 * m, acc[t][m]);
    std::memcpy(a.y + (t0 + t) * a.ldy + r, out, sizeof(float) * rows);
  }
}

template <bool kQ4, bool kNL>
void Run(const GemmQ8Args& a, int64_t row_begin, int64_t row_end) {
  const int64_t nb = a.cols / kQuantBlock;
  const int64_t panel_bytes = (nb + 1) / 2 * PairBytes<kQ4>();
  const auto* w = static_cast<const uint8_t*>(a.w);
  for (int64_t r = row_begin; r < row_end; r += kPanel) {
    const uint8_t* panel = w + (r / kPanel) * panel_bytes;
    const int rows = static_cast<int>(row_end - r < kPanel ? row_end - r : kPanel);
    int64_t t = 0;
    for (; t + 2 <= a.n; t += 2) PanelTokens<kQ4, kNL, 2>(a, panel, t, r, rows);
    if (t < a.n) PanelTokens<kQ4, kNL, 1>(a, panel, t, r, rows);
  }
}

}  // namespace

void tessel_q4_0_panel16_q8_gemm__neondot(const GemmQ8Args& a, int64_t row_begin, int64_t row_end) {
  if (a.nonlinear) return Run<true, true>(a, row_begin, row_end);
  Run<true, false>(a, row_begin, row_end);
}

void tessel_q8_0_panel16_q8_gemm__neondot(const GemmQ8Args& a, int64_t row_begin, int64_t row_end) {
  Run<false, false>(a, row_begin, row_end);
}

}  // namespace tessel
