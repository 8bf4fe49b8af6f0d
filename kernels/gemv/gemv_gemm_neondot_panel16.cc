// Panel16 kernels (gemv.h) for aarch64 with the dot-product extension (Cortex-A55, A76 and later,
// Neoverse): Q4_0 / Q8_0 / IQ4_NL, the k-quants (Q2_K ... Q6_K) and IQ4_XS, and the group layout's types
// (Tessel's INT4 / INT3 groups, Q4_1, Q5_0, Q5_1). Decode and prefill on int8 x in the layouts
// QuantizeGemvInput writes (every type but Q8_0 reads x in the Q4_0 layout, with the per-half biases for
// Q2_K, Q3_K and Q6_K).
//
// A 64-byte Panel16 vector (16 rows x 4 bytes) is four q registers of 4 rows each; SDOT by element
// (vdotq_laneq_s32) multiplies each row's 4 weight bytes with the same 4 x bytes, which x's layout holds
// together in one 32-bit lane:
// - Q4_0: aarch64 stores each nibble as code ^ 8 (kPanel16Q4Flip), the 4-bit two's complement of
//   code - 8: SHL #4 and AND 0xF0 make the low and high nibbles 16 x (code - 8) as s8, and the float
//   stage's SCVTF #4 divides the sums by 16 (exactly: they are multiples of 16). No block bias.
// - IQ4_NL (the same bytes): the nibbles (code ^ 8) looked up (vqtbl1q_s8) in ggml's signed levels,
//   permuted to match; no bias.
// - Q8_0: aarch64 stores the signed weights (kPanel16Q8Flip); no bias.
// - 2-, 3- and 5-bit codes are assembled from their bit planes per step (Codes) and meet x the same way;
//   zero points through the block or half biases, mins through the sums of x.
// Each block's 16 int32 row sums become f32 and meet d_w x dx in fused multiply-adds. Q4_0 and Q8_0 run
// the hand-scheduled assembly tiles of internal/panel16_neondot_tiles.inc (RunTiles): decode 16 rows x 1
// token, prefill 4 rows x 8 tokens (then 8 rows x 4, then one token at a time). IQ4_NL runs the
// intrinsics below, tokens four (then two, then one) at a time over a panel; group types and k-quants two
// at a time (the decode of symmetric 4-bit groups, Tessel's INT4, through the tiles' Int4GroupDecodeTile). Each weight vector is loaded and split once for a tile's tokens, and the weights stay in
// the caches between token groups.
#include <arm_neon.h>

#include <cstdint>
#include <cstring>

#include "kernels/gemv/ggml_blocks.h"
#include "kernels/gemv/internal/gemv_kernels.h"

namespace tessel {
namespace {

constexpr int kPanel = kPanel16Rows;

// 16 rows' fp16 values at p as f32.
__attribute__((always_inline)) inline void LoadHalves(const uint8_t* p, float32x4_t d[4]) {
  const auto* s = reinterpret_cast<const float16_t*>(p);
#pragma GCC unroll 4
  for (int m = 0; m < 4; ++m) d[m] = vcvt_f32_f16(vld1_f16(s + 4 * m));
}

// Rows 4m..4m+3 of vector step k of a block of kBits-bit codes (gemv.h), as the codes of elements
// 4k..4k+3 (lo) and 16 + 4k.. (hi), one byte per row and element:
// - 2 and 3 bits (Q2_K, Q3_K, INT3 groups): element 4k + j's low two bits are bits 2k, 2k + 1 of byte j
//   of vector 0, element 16 + 4k + j's of vector 1; the third bits are bits k and 4 + k of vector 2.
// - 4 bits: Q4_0's nibbles in vector k.
// - 5 bits (Q5_K, Q5_0, Q5_1): vector 0's byte j holds the fifth bits of elements 4k + j (bit k) and
//   16 + 4k + j (bit 4 + k), vectors 1..4 Q4_0's nibbles.
template <int kBits, int kStep>
__attribute__((always_inline)) inline void Codes(const uint8_t* vec, int m, int8x16_t* lo, int8x16_t* hi) {
  uint8x16_t l, h;
  if constexpr (kBits <= 3) {
    uint8x16_t v0 = vld1q_u8(vec + 16 * m), v1 = vld1q_u8(vec + 64 + 16 * m);
    if constexpr (kStep > 0) {
      v0 = vshrq_n_u8(v0, 2 * kStep);
      v1 = vshrq_n_u8(v1, 2 * kStep);
    }
    if constexpr (kBits == 2) {
      l = kStep == 3 ? v0 : vandq_u8(v0, vdupq_n_u8(3));
      h = kStep == 3 ? v1 : vandq_u8(v1, vdupq_n_u8(3));
    } else {
      // The third bits shifted in above the low two (VSLI keeps those), then the three bits kept.
      uint8x16_t t = vld1q_u8(vec + 128 + 16 * m), tl = t;
      if constexpr (kStep > 0) tl = vshrq_n_u8(t, kStep);
      const uint8x16_t th = vshrq_n_u8(t, 4 + kStep);
      l = vandq_u8(vsliq_n_u8(v0, tl, 2), vdupq_n_u8(7));
      h = vandq_u8(vsliq_n_u8(v1, th, 2), vdupq_n_u8(7));
    }
  } else if constexpr (kBits == 4) {
    const uint8x16_t v = vld1q_u8(vec + kStep * 64 + 16 * m);
    l = vandq_u8(v, vdupq_n_u8(0x0F));
    h = vshrq_n_u8(v, 4);
  } else {
    const uint8x16_t low4 = vdupq_n_u8(0x0F), bit4 = vdupq_n_u8(0x10);
    const uint8x16_t fifth = vld1q_u8(vec + 16 * m);
    const uint8x16_t v = vld1q_u8(vec + (1 + kStep) * 64 + 16 * m);
    // Bit k to bit 4 (low half), bit 4 + k to bit 4 (high half).
    const uint8x16_t b_lo = vandq_u8(vshlq_n_u8(fifth, 4 - kStep), bit4);
    uint8x16_t b_hi = fifth;
    if constexpr (kStep > 0) b_hi = vshrq_n_u8(fifth, kStep);
    b_hi = vandq_u8(b_hi, bit4);
    l = vorrq_u8(vandq_u8(v, low4), b_lo);
    h = vorrq_u8(vshrq_n_u8(v, 4), b_hi);
  }
  *lo = vreinterpretq_s8_u8(l);
  *hi = vreinterpretq_s8_u8(h);
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

// IQ4_NL rows [r, r + rows) of tokens [t0, t0 + kT) over one panel: sum over blocks of d_w dx (sum of
// level x). kT = 2 or 4 (prefill) reads and looks up each weight vector once for that many tokens.
template <int kT>
void PanelTokensNL(const GemmQ8Args& a, const uint8_t* panel, int64_t t0, int64_t r, int rows) {
  const int64_t nb = a.cols / kQuantBlock;
  // Nibble n is code n ^ 8 (kPanel16Q4Flip): ggml's levels with their halves swapped.
  const int8x16_t table = vld1q_s8(kIQ4NLValues), levels = vextq_s8(table, table, 8);
  float32x4_t acc[kT][4];
#pragma GCC unroll 4
  for (int t = 0; t < kT; ++t) {
#pragma GCC unroll 4
    for (int m = 0; m < 4; ++m) acc[t][m] = vdupq_n_f32(0);
  }
  for (int64_t b = 0; b < nb; ++b) {
    const BlockOffsets o = OffsetsOf<true>(b);
    const uint8_t* vec = panel + o.vec;
    int32x4_t isum[kT][4];
    int8x16_t xlo[kT], xhi[kT];
#pragma GCC unroll 4
    for (int t = 0; t < kT; ++t) {
#pragma GCC unroll 4
      for (int m = 0; m < 4; ++m) isum[t][m] = vdupq_n_s32(0);
      const int8_t* xb = a.xq + (t0 + t) * a.xq_stride + o.x;
      xlo[t] = vld1q_s8(xb);
      xhi[t] = vld1q_s8(xb + 64);
    }
    Q4Step<0, true, kT>(vec, xlo, xhi, levels, isum);
    Q4Step<1, true, kT>(vec, xlo, xhi, levels, isum);
    Q4Step<2, true, kT>(vec, xlo, xhi, levels, isum);
    Q4Step<3, true, kT>(vec, xlo, xhi, levels, isum);
    float32x4_t d[4];
    LoadHalves(panel + o.scales, d);
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

void RunNL(const GemmQ8Args& a, int64_t row_begin, int64_t row_end) {
  static_assert(kPanel16Q4Flip == 0x88, "the nibbles are code ^ 8");
  const int64_t nb = a.cols / kQuantBlock;
  const int64_t panel_bytes = (nb + 1) / 2 * Panel16PairBytes(true);
  const auto* w = static_cast<const uint8_t*>(a.w);
  for (int64_t r = row_begin; r < row_end; r += kPanel) {
    const uint8_t* panel = w + (r / kPanel) * panel_bytes;
    const int rows = static_cast<int>(row_end - r < kPanel ? row_end - r : kPanel);
    int64_t t = 0;
    for (; t + 4 <= a.n; t += 4) PanelTokensNL<4>(a, panel, t, r, rows);
    for (; t + 2 <= a.n; t += 2) PanelTokensNL<2>(a, panel, t, r, rows);
    if (t < a.n) PanelTokensNL<1>(a, panel, t, r, rows);
  }
}

#include "kernels/gemv/internal/panel16_neondot_tiles.inc"

// tile(b, offsets) for blocks 0..nb - 1, four at a time: a block's offsets are its quad's plus constants.
template <bool kQ4, typename Tile>
__attribute__((always_inline)) inline void ForEachBlock(int64_t nb, Tile& tile) {
  int64_t b = 0;
  for (; b + 4 <= nb; b += 4) {
    const BlockOffsets q = OffsetsOf<kQ4>(b);
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) {
      const BlockOffsets o = OffsetsOf<kQ4>(i);
      tile(b + i, {q.vec + o.vec - 64, q.scales + o.scales, q.x + o.x});
    }
  }
  for (; b < nb; ++b) tile(b, OffsetsOf<kQ4>(b));
}

// The eight-token tiles read x and dx from token-interleaved copies on the stack (InterleaveTokens8), for
// rows of at most kTile8MaxCols columns (64 KiB of x); longer rows take their tokens four at a time.
constexpr int64_t kTile8MaxCols = 8192;
// Rows per pass of the eight-token tiles: each token group's x is interleaved once per pass (about 1% of
// the pass's work), and the pass's weights (128 rows: 576 KiB of Q4_0 at 8192 columns) stay in the
// caches between the groups.
constexpr int64_t kTile8PassRows = 128;

// Tokens t0..t0 + 7 block by block: x8[256 b + 32 t ..] = token t's 32 x bytes of block b (Q4_0: elements
// 0..15, then 16..31; Q8_0: as quantized), dx8[8 b + t] = its dx.
template <bool kQ4>
void InterleaveTokens8(const GemmQ8Args& a, int64_t t0, int8_t* x8, float* dx8) {
  const int64_t nb = a.cols / kQuantBlock;
  for (int t = 0; t < 8; ++t) {
    const int8_t* xt = a.xq + (t0 + t) * a.xq_stride;
    const float* dt = a.block_scale + (t0 + t) * a.block_stride;
    for (int64_t b = 0; b < nb; ++b) {
      const int8_t* src = xt + OffsetsOf<kQ4>(b).x;
      int8_t* dst = x8 + 256 * b + 32 * t;
      vst1q_s8(dst, vld1q_s8(src));
      vst1q_s8(dst + 16, vld1q_s8(src + (kQ4 ? 64 : 16)));
      dx8[8 * b + t] = dt[b];
    }
  }
}

// Tokens [0, n / 8 x 8) of rows [row_begin, row_end) through the 4-row x 8-token tiles, pass by pass.
// Not inlined: its 65 KiB frame stays off the decode path. Aligned to a 4 KiB page, which the function
// (under 4 KiB of code) then never crosses: qemu ends a translation block at a page boundary, and the
// Arm lab (docs/arm_lab.md) prices the two halves of a split tile as two loops, so without the alignment
// the estimate of this loop moved by 3-4% with the size of unrelated code linked before it.
template <bool kQ4>
__attribute__((noinline, aligned(4096))) void RunTiles8(const GemmQ8Args& a, int64_t row_begin, int64_t row_end) {
  const int64_t nb = a.cols / kQuantBlock;
  const int64_t panel_bytes = (nb + 1) / 2 * Panel16PairBytes(kQ4);
  const auto* w = static_cast<const uint8_t*>(a.w);
  alignas(16) int8_t x8[8 * kTile8MaxCols];
  alignas(16) float dx8[8 * kTile8MaxCols / kQuantBlock];
  for (int64_t pass = row_begin; pass < row_end; pass += kTile8PassRows) {
    const int64_t pass_end = row_end - pass < kTile8PassRows ? row_end : pass + kTile8PassRows;
    for (int64_t t0 = 0; t0 + 8 <= a.n; t0 += 8) {
      InterleaveTokens8<kQ4>(a, t0, x8, dx8);
      for (int64_t r = pass; r < pass_end; r += kPanel) {
        const uint8_t* panel = w + (r / kPanel) * panel_bytes;
        const int rows = static_cast<int>(pass_end - r < kPanel ? pass_end - r : kPanel);
        for (int m = 0; 4 * m < rows; ++m) {
          float32x4_t acc[8];
          for (auto& v : acc) v = vdupq_n_f32(0);
          const uint8_t* wm = panel + 16 * m;  // row group m's bytes of each weight vector
          const uint8_t* sm = panel + 8 * m;   // and of each block's scales
          auto tile = [&](int64_t b, const BlockOffsets& o) __attribute__((always_inline)) {
            if constexpr (kQ4) {
              Q4PrefillTile8(wm + o.vec, x8 + 256 * b, dx8 + 8 * b, sm + o.scales, acc);
            } else {
              Q8PrefillTile8(wm + o.vec, x8 + 256 * b, dx8 + 8 * b, sm + o.scales, acc);
            }
          };
          ForEachBlock<kQ4>(nb, tile);
          const int count = rows - 4 * m < 4 ? rows - 4 * m : 4;
          for (int t = 0; t < 8; ++t) {
            float* y = a.y + (t0 + t) * a.ldy + r + 4 * m;
            if (count == 4) {
              vst1q_f32(y, acc[t]);
            } else {
              float out[4];
              vst1q_f32(out, acc[t]);
              std::memcpy(y, out, sizeof(float) * count);
            }
          }
        }
      }
    }
  }
}

// Q4_0 / Q8_0 through the assembly tiles (panel16_neondot_tiles.inc): tokens eight at a time over each
// 4-row group (RunTiles8), then four at a time over each half panel (8 rows), the rest one at a time
// over the whole panel.
template <bool kQ4>
void RunTiles(const GemmQ8Args& a, int64_t row_begin, int64_t row_end) {
  const int64_t nb = a.cols / kQuantBlock;
  const int64_t panel_bytes = (nb + 1) / 2 * Panel16PairBytes(kQ4);
  const auto* w = static_cast<const uint8_t*>(a.w);
  // aarch64's Panel16 bytes are signed (kPanel16Q4Flip, kPanel16Q8Flip): the tiles read no block biases.
  static_assert(kPanel16Q4Flip == 0x88 && kPanel16Q8Flip == 0, "the tiles take signed Panel16 bytes");
  int64_t first_token = 0;
  if (a.n >= 8 && a.cols <= kTile8MaxCols) {
    RunTiles8<kQ4>(a, row_begin, row_end);
    first_token = a.n / 8 * 8;
  }
  const int64_t xs[4] = {0, a.xq_stride, 2 * a.xq_stride, 3 * a.xq_stride};
  const int64_t bs = 4 * a.block_stride;  // bytes
  for (int64_t r = row_begin; r < row_end; r += kPanel) {
    const uint8_t* panel = w + (r / kPanel) * panel_bytes;
    const int rows = static_cast<int>(row_end - r < kPanel ? row_end - r : kPanel);
    int64_t t0 = first_token;
    for (; t0 + 4 <= a.n; t0 += 4) {
      const int8_t* xt = a.xq + t0 * a.xq_stride;
      const float* dt = a.block_scale + t0 * a.block_stride;
      for (int half = 0; half < 2 && 8 * half < rows; ++half) {
        float32x4_t acc[8];
        for (auto& v : acc) v = vdupq_n_f32(0);
        auto tile = [&](int64_t b, const BlockOffsets& o) __attribute__((always_inline)) {
          const uint8_t* vec = panel + o.vec + 32 * half;
          const uint8_t* scales = panel + o.scales + 16 * half;
          if constexpr (kQ4) {
            Q4PrefillTile(vec, xt + o.x, xs, dt + b, bs, scales, acc);
          } else {
            Q8PrefillTile(vec, xt + o.x, xs, dt + b, bs, scales, acc);
          }
        };
        ForEachBlock<kQ4>(nb, tile);
        const int first = 8 * half, count = rows - first < 8 ? rows - first : 8;
        for (int t = 0; t < 4; ++t) {
          float out[8];
          vst1q_f32(out, acc[2 * t]);
          vst1q_f32(out + 4, acc[2 * t + 1]);
          std::memcpy(a.y + (t0 + t) * a.ldy + r + first, out, sizeof(float) * count);
        }
      }
    }
    for (; t0 < a.n; ++t0) {
      const int8_t* xt = a.xq + t0 * a.xq_stride;
      const float* dt = a.block_scale + t0 * a.block_stride;
      float32x4_t acc[4];
      for (auto& v : acc) v = vdupq_n_f32(0);
      auto tile = [&](int64_t b, const BlockOffsets& o) __attribute__((always_inline)) {
        if constexpr (kQ4) {
          Q4DecodeTile(panel + o.vec, xt + o.x, dt + b, panel + o.scales, acc);
        } else {
          Q8DecodeTile(panel + o.vec, xt + o.x, dt + b, panel + o.scales, acc);
        }
      };
      ForEachBlock<kQ4>(nb, tile);
      float out[kPanel];
      for (int m = 0; m < 4; ++m) vst1q_f32(out + 4 * m, acc[m]);
      std::memcpy(a.y + t0 * a.ldy + r, out, sizeof(float) * rows);
    }
  }
}

// 16 bytes (the 16 rows' u8 or s8 scale bytes) as 4 x 4 floats.
template <bool kSigned>
__attribute__((always_inline)) inline void BytesToFloat(const uint8_t* p, float32x4_t f[4]) {
  if constexpr (kSigned) {
    const int8x16_t v = vld1q_s8(reinterpret_cast<const int8_t*>(p));
    const int16x8_t lo = vmovl_s8(vget_low_s8(v)), hi = vmovl_s8(vget_high_s8(v));
    f[0] = vcvtq_f32_s32(vmovl_s16(vget_low_s16(lo)));
    f[1] = vcvtq_f32_s32(vmovl_s16(vget_high_s16(lo)));
    f[2] = vcvtq_f32_s32(vmovl_s16(vget_low_s16(hi)));
    f[3] = vcvtq_f32_s32(vmovl_s16(vget_high_s16(hi)));
  } else {
    const uint8x16_t v = vld1q_u8(p);
    const uint16x8_t lo = vmovl_u8(vget_low_u8(v)), hi = vmovl_u8(vget_high_u8(v));
    f[0] = vcvtq_f32_u32(vmovl_u16(vget_low_u16(lo)));
    f[1] = vcvtq_f32_u32(vmovl_u16(vget_high_u16(lo)));
    f[2] = vcvtq_f32_u32(vmovl_u16(vget_low_u16(hi)));
    f[3] = vcvtq_f32_u32(vmovl_u16(vget_high_u16(hi)));
  }
}

// Q6_K vector step k of a block (Panel16KQuantGeometry, gemv.h) into the rows' half sums of kT tokens:
// element 4k + j's code is bits 0-5 of byte j of vector 2 + k; element 16 + 4k + j's low nibble is in
// vector k / 2 (low nibble for even k, high for odd) and its high 2 bits in bits 6-7 of vector 2 + k.
// Codes 0..63 meet x; the half biases (-32 x the halves' sums of x) the sums start from make them
// code - 32.
template <int kStep, int kT>
__attribute__((always_inline)) inline void Q6Step(const uint8_t* vec, const int8x16_t (&xlo)[kT],
                                                  const int8x16_t (&xhi)[kT], int32x4_t (&lo_sum)[kT][4],
                                                  int32x4_t (&hi_sum)[kT][4]) {
#pragma GCC unroll 4
  for (int m = 0; m < 4; ++m) {
    const uint8x16_t v = vld1q_u8(vec + (2 + kStep) * 64 + 16 * m);
    const uint8x16_t n = vld1q_u8(vec + (kStep / 2) * 64 + 16 * m);
    const uint8x16_t nib = kStep % 2 == 0 ? vandq_u8(n, vdupq_n_u8(0x0F)) : vshrq_n_u8(n, 4);
    const int8x16_t code_lo = vreinterpretq_s8_u8(vandq_u8(v, vdupq_n_u8(0x3F)));
    const int8x16_t code_hi = vreinterpretq_s8_u8(vorrq_u8(nib, vandq_u8(vshrq_n_u8(v, 2), vdupq_n_u8(0x30))));
#pragma GCC unroll 4
    for (int t = 0; t < kT; ++t) {
      lo_sum[t][m] = vdotq_laneq_s32(lo_sum[t][m], code_lo, xlo[t], kStep);
      hi_sum[t][m] = vdotq_laneq_s32(hi_sum[t][m], code_hi, xhi[t], kStep);
    }
  }
}

// Vector step k of a block of kBits-bit codes (Codes<kBits>) into the rows' sums of kT tokens: both
// halves into one sum (kHalves false: 4 and 5 bits, the group layout's types) or apart, for their
// scales (Q2_K, Q3_K).
template <int kBits, int kStep, int kT, bool kHalves = false>
__attribute__((always_inline)) inline void CodeStep(const uint8_t* vec, const int8x16_t (&xlo)[kT],
                                                    const int8x16_t (&xhi)[kT], int32x4_t (&lo_sum)[kT][4],
                                                    int32x4_t (&hi_sum)[kT][4]) {
#pragma GCC unroll 4
  for (int m = 0; m < 4; ++m) {
    int8x16_t lo, hi;
    Codes<kBits, kStep>(vec, m, &lo, &hi);
#pragma GCC unroll 4
    for (int t = 0; t < kT; ++t) {
      lo_sum[t][m] = vdotq_laneq_s32(lo_sum[t][m], lo, xlo[t], kStep);
      if constexpr (kHalves) {
        hi_sum[t][m] = vdotq_laneq_s32(hi_sum[t][m], hi, xhi[t], kStep);
      } else {
        lo_sum[t][m] = vdotq_laneq_s32(lo_sum[t][m], hi, xhi[t], kStep);
      }
    }
  }
}

// 16 bytes (one per row) as 4 x 4 int32.
template <bool kSigned>
__attribute__((always_inline)) inline void BytesToInt(uint8x16_t v, int32x4_t out[4]) {
  if constexpr (kSigned) {
    const int8x16_t s = vreinterpretq_s8_u8(v);
    const int16x8_t lo = vmovl_s8(vget_low_s8(s)), hi = vmovl_s8(vget_high_s8(s));
    out[0] = vmovl_s16(vget_low_s16(lo));
    out[1] = vmovl_s16(vget_high_s16(lo));
    out[2] = vmovl_s16(vget_low_s16(hi));
    out[3] = vmovl_s16(vget_high_s16(hi));
  } else {
    const uint16x8_t lo = vmovl_u8(vget_low_u8(v)), hi = vmovl_u8(vget_high_u8(v));
    out[0] = vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(lo)));
    out[1] = vreinterpretq_s32_u32(vmovl_u16(vget_high_u16(lo)));
    out[2] = vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(hi)));
    out[3] = vreinterpretq_s32_u32(vmovl_u16(vget_high_u16(hi)));
  }
}

// Q2_K (kKind 2) ... Q6_K (6) and IQ4_XS (kKQuantIQ4_XS) rows [r, r + rows) of tokens [t0, t0 + kT)
// over one panel, unit by unit (256 columns): per 32-block the codes' dots with each token's x (every
// weight vector split once for the kT tokens), scaled by the rows' sub-block scales and dx; the mins
// times the block's or halves' sums of x. Decode (kT = 1) gathers a unit's blocks in uacc / macc and
// meets d (and - dmin) once per unit; prefill (kT > 1) folds d and dmin into the blocks' scales and adds
// every block to the tokens' sums, so that more tokens' sums fit in registers. Q2_K and Q3_K scale their
// halves' dots in int32 (|dot x scale| < 2^19).
template <int kKind, int kT>
void KQuantPanelTokens(const GemmQ8Args& a, const uint8_t* panel, int64_t t0, int64_t r, int rows) {
  using G = Panel16KQuantGeometry;
  constexpr G kGeo(0, kKind);
  constexpr bool kUnitScale = kT == 1;
  constexpr bool kMins = kKind == 2 || kKind == 4 || kKind == 5;
  constexpr bool kHalfBias = kKind == 2 || kKind == 3 || kKind == 6;
  const int64_t units = a.cols / G::kUnitCols;
  const int8x16_t levels = vld1q_s8(kIQ4NLValues);  // IQ4_XS's levels
  float32x4_t acc[kT][4];
#pragma GCC unroll 4
  for (int t = 0; t < kT; ++t) {
#pragma GCC unroll 4
    for (int m = 0; m < 4; ++m) acc[t][m] = vdupq_n_f32(0);
  }
  for (int64_t u = 0; u < units; ++u) {
    const uint8_t* unit = panel + u * kGeo.unit_bytes;
    // The blocks' sums land in uacc (and the mins' in macc, to be subtracted) or, in prefill, in acc.
    float32x4_t unit_sum[kT][4], unit_min[kT][4], d[4], dmin[4];
    float32x4_t(&uacc)[kT][4] = kUnitScale ? unit_sum : acc;
    float32x4_t(&macc)[kT][4] = kUnitScale ? unit_min : acc;
    const float msign = kUnitScale ? 1.0f : -1.0f;
    if constexpr (kUnitScale) {
#pragma GCC unroll 4
      for (int m = 0; m < 4; ++m) unit_sum[0][m] = unit_min[0][m] = vdupq_n_f32(0);
    } else {
      LoadHalves(unit + G::D(), d);
      if constexpr (kMins) LoadHalves(unit + G::Dmin(), dmin);
    }
    // Rows' factors s times f (d or dmin) in prefill.
    auto fold = [&](float32x4_t s[4], const float32x4_t f[4]) {
      if constexpr (!kUnitScale) {
#pragma GCC unroll 4
        for (int m = 0; m < 4; ++m) s[m] = vmulq_f32(s[m], f[m]);
      }
    };
    for (int i = 0; i < 8; ++i) {
      const int64_t b = u * 8 + i;
      const uint8_t* vec = unit + kGeo.Vector(i, 0);
      int8x16_t xlo[kT], xhi[kT];
      float dx[kT];
      int32_t bias[kT], hb_lo[kT], hb_hi[kT];
#pragma GCC unroll 4
      for (int t = 0; t < kT; ++t) {
        // Block b's x: elements 0..15 at 16 (b % 4) of its 128-element group, 16..31 64 bytes on.
        const int8_t* xb = a.xq + (t0 + t) * a.xq_stride + (b / 4) * 128 + 16 * (b % 4);
        xlo[t] = vld1q_s8(xb);
        xhi[t] = vld1q_s8(xb + 64);
        dx[t] = a.block_scale[(t0 + t) * a.block_stride + b];
        bias[t] = a.block_bias[(t0 + t) * a.block_stride + b];
        if constexpr (kHalfBias) {
          hb_lo[t] = a.half_bias[(t0 + t) * a.half_stride + 2 * b];
          hb_hi[t] = a.half_bias[(t0 + t) * a.half_stride + 2 * b + 1];
        }
      }
      if constexpr (kKind == 4 || kKind == 5 || kKind == kKQuantIQ4_XS) {
        int32x4_t isum[kT][4];
#pragma GCC unroll 4
        for (int t = 0; t < kT; ++t) {
#pragma GCC unroll 4
          for (int m = 0; m < 4; ++m) isum[t][m] = vdupq_n_s32(0);
        }
        if constexpr (kKind == 5) {
          CodeStep<5, 0, kT>(vec, xlo, xhi, isum, isum);
          CodeStep<5, 1, kT>(vec, xlo, xhi, isum, isum);
          CodeStep<5, 2, kT>(vec, xlo, xhi, isum, isum);
          CodeStep<5, 3, kT>(vec, xlo, xhi, isum, isum);
        } else {
          constexpr bool kNL = kKind == kKQuantIQ4_XS;
          Q4Step<0, kNL, kT>(vec, xlo, xhi, levels, isum);
          Q4Step<1, kNL, kT>(vec, xlo, xhi, levels, isum);
          Q4Step<2, kNL, kT>(vec, xlo, xhi, levels, isum);
          Q4Step<3, kNL, kT>(vec, xlo, xhi, levels, isum);
        }
        float32x4_t sc[4];
        BytesToFloat<kKind == kKQuantIQ4_XS>(unit + kGeo.Scales(i), sc);
        fold(sc, d);
#pragma GCC unroll 4
        for (int t = 0; t < kT; ++t) {
#pragma GCC unroll 4
          for (int m = 0; m < 4; ++m) {
            uacc[t][m] = vfmaq_f32(uacc[t][m], vcvtq_f32_s32(isum[t][m]), vmulq_n_f32(sc[m], dx[t]));
          }
        }
        if constexpr (kMins) {
          float32x4_t mn[4];
          BytesToFloat<false>(unit + kGeo.Mins(i), mn);
          fold(mn, dmin);
#pragma GCC unroll 4
          for (int t = 0; t < kT; ++t) {
            const float sx = msign * dx[t] * static_cast<float>(-bias[t] / 8);  // dx x the block's sum of x
#pragma GCC unroll 4
            for (int m = 0; m < 4; ++m) macc[t][m] = vfmaq_n_f32(macc[t][m], mn[m], sx);
          }
        }
      } else if constexpr (kKind == 2 || kKind == 3) {
        // Q3_K: codes 0..7 from the halves' biases / 8 (-4 x their sums of x), so code - 4.
        int32x4_t lo_sum[kT][4], hi_sum[kT][4];
#pragma GCC unroll 4
        for (int t = 0; t < kT; ++t) {
#pragma GCC unroll 4
          for (int m = 0; m < 4; ++m) {
            lo_sum[t][m] = vdupq_n_s32(kKind == 3 ? hb_lo[t] / 8 : 0);
            hi_sum[t][m] = vdupq_n_s32(kKind == 3 ? hb_hi[t] / 8 : 0);
          }
        }
        CodeStep<kKind, 0, kT, true>(vec, xlo, xhi, lo_sum, hi_sum);
        CodeStep<kKind, 1, kT, true>(vec, xlo, xhi, lo_sum, hi_sum);
        CodeStep<kKind, 2, kT, true>(vec, xlo, xhi, lo_sum, hi_sum);
        CodeStep<kKind, 3, kT, true>(vec, xlo, xhi, lo_sum, hi_sum);
        // Row r's two scale bytes at ScalePair(i) + 2r and + 2r + 1: de-interleaved into the halves'.
        const uint8x16x2_t pair = vld2q_u8(unit + kGeo.ScalePair(i));
        int32x4_t sc_lo[4], sc_hi[4];
        if constexpr (kKind == 3) {
          BytesToInt<true>(pair.val[0], sc_lo);
          BytesToInt<true>(pair.val[1], sc_hi);
        } else {
          // scale | min << 4; the mins meet the halves' sums of x (-half_bias / 32).
          const uint8x16_t low4 = vdupq_n_u8(0x0F);
          BytesToInt<false>(vandq_u8(pair.val[0], low4), sc_lo);
          BytesToInt<false>(vandq_u8(pair.val[1], low4), sc_hi);
          int32x4_t mn_lo[4], mn_hi[4];
          BytesToInt<false>(vshrq_n_u8(pair.val[0], 4), mn_lo);
          BytesToInt<false>(vshrq_n_u8(pair.val[1], 4), mn_hi);
#pragma GCC unroll 4
          for (int t = 0; t < kT; ++t) {
            const int32_t s_lo = -hb_lo[t] / 32, s_hi = -hb_hi[t] / 32;
#pragma GCC unroll 4
            for (int m = 0; m < 4; ++m) {
              const int32x4_t msum = vmlaq_n_s32(vmulq_n_s32(mn_lo[m], s_lo), mn_hi[m], s_hi);
              const float32x4_t f = kUnitScale ? vdupq_n_f32(dx[t]) : vmulq_n_f32(dmin[m], -dx[t]);
              macc[t][m] = vfmaq_f32(macc[t][m], vcvtq_f32_s32(msum), f);
            }
          }
        }
#pragma GCC unroll 4
        for (int t = 0; t < kT; ++t) {
#pragma GCC unroll 4
          for (int m = 0; m < 4; ++m) {
            const int32x4_t sdot = vmlaq_s32(vmulq_s32(lo_sum[t][m], sc_lo[m]), hi_sum[t][m], sc_hi[m]);
            const float32x4_t f = kUnitScale ? vdupq_n_f32(dx[t]) : vmulq_n_f32(d[m], dx[t]);
            uacc[t][m] = vfmaq_f32(uacc[t][m], vcvtq_f32_s32(sdot), f);
          }
        }
      } else {
        int32x4_t lo_sum[kT][4], hi_sum[kT][4];
#pragma GCC unroll 4
        for (int t = 0; t < kT; ++t) {
#pragma GCC unroll 4
          for (int m = 0; m < 4; ++m) {
            lo_sum[t][m] = vdupq_n_s32(hb_lo[t]);
            hi_sum[t][m] = vdupq_n_s32(hb_hi[t]);
          }
        }
        Q6Step<0, kT>(vec, xlo, xhi, lo_sum, hi_sum);
        Q6Step<1, kT>(vec, xlo, xhi, lo_sum, hi_sum);
        Q6Step<2, kT>(vec, xlo, xhi, lo_sum, hi_sum);
        Q6Step<3, kT>(vec, xlo, xhi, lo_sum, hi_sum);
        float32x4_t sc_lo[4], sc_hi[4];
        BytesToFloat<true>(unit + kGeo.Scales(2 * i), sc_lo);
        BytesToFloat<true>(unit + kGeo.Scales(2 * i + 1), sc_hi);
        fold(sc_lo, d);
        fold(sc_hi, d);
#pragma GCC unroll 4
        for (int t = 0; t < kT; ++t) {
#pragma GCC unroll 4
          for (int m = 0; m < 4; ++m) {
            const float32x4_t f =
                vfmaq_f32(vmulq_f32(vcvtq_f32_s32(lo_sum[t][m]), sc_lo[m]), vcvtq_f32_s32(hi_sum[t][m]), sc_hi[m]);
            uacc[t][m] = vfmaq_n_f32(uacc[t][m], f, dx[t]);
          }
        }
      }
    }
    if constexpr (kUnitScale) {
      LoadHalves(unit + G::D(), d);
      if constexpr (kMins) LoadHalves(unit + G::Dmin(), dmin);
#pragma GCC unroll 4
      for (int m = 0; m < 4; ++m) {
        acc[0][m] = vfmaq_f32(acc[0][m], unit_sum[0][m], d[m]);
        if constexpr (kMins) acc[0][m] = vfmsq_f32(acc[0][m], unit_min[0][m], dmin[m]);
      }
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

// Tokens per prefill tile of each k-quant (KQuantPanelTokens): four where a block's dots fill one sum per
// row and token (Q4_K, IQ4_XS), three for Q5_K (its codes take more registers to assemble), two where
// the halves keep their sums apart (Q2_K, Q3_K, Q6_K). By the Arm lab, Q4_K_M's 64-token prefill per
// token on the A76 (A57 model), 1.49e8 cycles one token at a time: Q4_K at 2 / 3 / 4 tokens 1.23e8 /
// 1.19e8 / 1.14e8 (GCC spills some of four tokens' sums, and it still wins); Q6_K at 3 dearer than at 2
// (3.97e7 vs 3.75e7 of its cycles), at 1 dearer still (5.0e7). Q5_K_M on the A55 model: Q5_K at 4
// tokens 1.01x llama.cpp's cycles, at 3 0.95x.
template <int kKind>
constexpr int kKQuantPrefillTokens = kKind == 2 || kKind == 3 || kKind == 6 ? 2 : kKind == 5 ? 3 : 4;

template <int kKind>
void RunKQuant(const GemmQ8Args& a, int64_t row_begin, int64_t row_end) {
  constexpr int kT = kKQuantPrefillTokens<kKind>;
  const Panel16KQuantGeometry geo(a.cols, kKind);
  const auto* w = static_cast<const uint8_t*>(a.w);
  for (int64_t r = row_begin; r < row_end; r += kPanel) {
    const uint8_t* panel = w + (r / kPanel) * geo.panel_bytes();
    const int rows = static_cast<int>(row_end - r < kPanel ? row_end - r : kPanel);
    int64_t t = 0;
    if constexpr (kT > 1) {
      for (; t + kT <= a.n; t += kT) KQuantPanelTokens<kKind, kT>(a, panel, t, r, rows);
    }
    for (; t < a.n; ++t) KQuantPanelTokens<kKind, 1>(a, panel, t, r, rows);
  }
}

// Every k-quant layout (GemmQ8Args::kquant).
void RunKQuantLayout(const GemmQ8Args& a, int64_t row_begin, int64_t row_end) {
  switch (a.kquant) {
    case 2: return RunKQuant<2>(a, row_begin, row_end);
    case 3: return RunKQuant<3>(a, row_begin, row_end);
    case 4: return RunKQuant<4>(a, row_begin, row_end);
    case 5: return RunKQuant<5>(a, row_begin, row_end);
    case 6: return RunKQuant<6>(a, row_begin, row_end);
    default: return RunKQuant<kKQuantIQ4_XS>(a, row_begin, row_end);
  }
}

// Group-layout rows [r, r + rows) of tokens [t0, t0 + kT) over one panel (gemv.h, Panel16GroupGeometry),
// group by group: per 32-block the codes' dot with x (symmetric types from the block bias scaled to the
// zero point: 8 for 4 bits, 4 for 3, 16 for Q5_0), times the group's scale and dx; per group, the zero
// points' (asymmetric) or mins' (Q4_1, Q5_1) term times the group's sum over blocks of dx x sum(x_q).
template <int kG, bool kAsym, int kBits, bool kMins, int kT>
void GroupPanelTokens(const GemmQ8Args& a, const uint8_t* panel, int64_t t0, int64_t r, int rows) {
  constexpr Panel16GroupGeometry kGeo(0, kG, kAsym, kBits, kMins);
  constexpr int kBlocksPerGroup = kG / kQuantBlock;
  constexpr int kGroupsPerUnit = Panel16GroupGeometry::kUnitCols / kG;
  constexpr bool kOffset = kAsym || kMins;  // a per-group term in float instead of a block bias
  const int64_t groups = a.cols / kG;
  float32x4_t acc[kT][4];
#pragma GCC unroll 4
  for (int t = 0; t < kT; ++t) {
#pragma GCC unroll 4
    for (int m = 0; m < 4; ++m) acc[t][m] = vdupq_n_f32(0);
  }
  for (int64_t gg = 0; gg < groups; ++gg) {
    const uint8_t* unit = panel + gg / kGroupsPerUnit * kGeo.unit_bytes;
    const int gi = static_cast<int>(gg % kGroupsPerUnit);
    float32x4_t d[4];
    LoadHalves(unit + Panel16GroupGeometry::Scales(gi), d);
    float xsum[kT] = {};
    if constexpr (kBits == 4 && !kOffset && kT == 1) {
      // Decode of Tessel's symmetric INT4: the scheduled assembly tile (panel16_neondot_tiles.inc). A
      // group's blocks are consecutive vectors of one unit and consecutive 16-byte steps of x within one
      // 128-element chunk (kG <= 128), so the pointers step by constants.
      const int64_t b0 = gg * kBlocksPerGroup;
      const uint8_t* vec = unit + kGeo.Vector(b0 % 8, 0);
      const int8_t* xb = a.xq + t0 * a.xq_stride + (b0 / 4) * 128 + 16 * (b0 % 4);
      const float* dxb = a.block_scale + t0 * a.block_stride + b0;
      const int32_t* biasb = a.block_bias + t0 * a.block_stride + b0;
#pragma GCC unroll 1
      for (int bi = 0; bi < kBlocksPerGroup; ++bi) {
        Int4GroupDecodeTile(vec, xb, dxb, biasb, d, acc[0]);
        vec += kGeo.vectors_per_block * 64, xb += 16, ++dxb, ++biasb;
      }
      continue;
    }
#pragma GCC unroll 1
    for (int bi = 0; bi < kBlocksPerGroup; ++bi) {
      const int64_t b = gg * kBlocksPerGroup + bi;
      const uint8_t* vec = unit + kGeo.Vector(b % 8, 0);
      int8x16_t xlo[kT], xhi[kT];
      int32x4_t isum[kT][4];
#pragma GCC unroll 4
      for (int t = 0; t < kT; ++t) {
        // Block b's x: elements 0..15 at 16 (b % 4) of its 128-element group, 16..31 64 bytes on.
        const int8_t* xb = a.xq + (t0 + t) * a.xq_stride + (b / 4) * 128 + 16 * (b % 4);
        xlo[t] = vld1q_s8(xb);
        xhi[t] = vld1q_s8(xb + 64);
        const int32_t bias = a.block_bias[(t0 + t) * a.block_stride + b];  // -8 sum(x_q)
        const int32_t start = kOffset ? 0 : kBits == 4 ? bias : kBits == 5 ? 2 * bias : bias / 2;
#pragma GCC unroll 4
        for (int m = 0; m < 4; ++m) isum[t][m] = vdupq_n_s32(start);
      }
      CodeStep<kBits, 0, kT>(vec, xlo, xhi, isum, isum);
      CodeStep<kBits, 1, kT>(vec, xlo, xhi, isum, isum);
      CodeStep<kBits, 2, kT>(vec, xlo, xhi, isum, isum);
      CodeStep<kBits, 3, kT>(vec, xlo, xhi, isum, isum);
#pragma GCC unroll 4
      for (int t = 0; t < kT; ++t) {
        const float dx = a.block_scale[(t0 + t) * a.block_stride + b];
        if constexpr (kOffset) xsum[t] += dx * static_cast<float>(-a.block_bias[(t0 + t) * a.block_stride + b] / 8);
#pragma GCC unroll 4
        for (int m = 0; m < 4; ++m) acc[t][m] = vfmaq_f32(acc[t][m], vcvtq_f32_s32(isum[t][m]), vmulq_n_f32(d[m], dx));
      }
    }
    if constexpr (kMins) {
      // value = code x scale + min.
      float32x4_t mn[4];
      LoadHalves(unit + kGeo.Mins(gi), mn);
#pragma GCC unroll 4
      for (int t = 0; t < kT; ++t) {
#pragma GCC unroll 4
        for (int m = 0; m < 4; ++m) acc[t][m] = vfmaq_n_f32(acc[t][m], mn[m], xsum[t]);
      }
    } else if constexpr (kAsym) {
      // value = (code - zero) x scale.
      float32x4_t z[4];
      BytesToFloat<false>(unit + kGeo.Zeros(gi), z);
#pragma GCC unroll 4
      for (int t = 0; t < kT; ++t) {
#pragma GCC unroll 4
        for (int m = 0; m < 4; ++m) acc[t][m] = vfmsq_f32(acc[t][m], vmulq_f32(d[m], z[m]), vdupq_n_f32(xsum[t]));
      }
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

template <int kG, bool kAsym, int kBits, bool kMins>
void RunGroup(const GemmQ8Args& a, int64_t row_begin, int64_t row_end) {
  const Panel16GroupGeometry geo(a.cols, kG, kAsym, kBits, kMins);
  const auto* w = static_cast<const uint8_t*>(a.w);
  for (int64_t r = row_begin; r < row_end; r += kPanel) {
    const uint8_t* panel = w + (r / kPanel) * geo.panel_bytes();
    const int rows = static_cast<int>(row_end - r < kPanel ? row_end - r : kPanel);
    int64_t t = 0;
    for (; t + 2 <= a.n; t += 2) GroupPanelTokens<kG, kAsym, kBits, kMins, 2>(a, panel, t, r, rows);
    if (t < a.n) GroupPanelTokens<kG, kAsym, kBits, kMins, 1>(a, panel, t, r, rows);
  }
}

template <bool kAsym, int kBits>
void RunGroupSizes(const GemmQ8Args& a, int64_t row_begin, int64_t row_end) {
  switch (a.group_size) {
    case 32: return RunGroup<32, kAsym, kBits, false>(a, row_begin, row_end);
    case 64: return RunGroup<64, kAsym, kBits, false>(a, row_begin, row_end);
    default: return RunGroup<128, kAsym, kBits, false>(a, row_begin, row_end);
  }
}

}  // namespace

void tessel_q4_0_panel16_q8_gemm__neondot(const GemmQ8Args& a, int64_t row_begin, int64_t row_end) {
  if (a.nonlinear) return RunNL(a, row_begin, row_end);
  RunTiles<true>(a, row_begin, row_end);
}

void tessel_q8_0_panel16_q8_gemm__neondot(const GemmQ8Args& a, int64_t row_begin, int64_t row_end) {
  RunTiles<false>(a, row_begin, row_end);
}

void tessel_kquant_panel16_q8_gemm__neondot(const GemmQ8Args& a, int64_t row_begin, int64_t row_end) {
  RunKQuantLayout(a, row_begin, row_end);
}

void tessel_group_panel16_q8_gemm__neondot(const GemmQ8Args& a, int64_t row_begin, int64_t row_end) {
  // Every group-layout type (GemmQ8Args group_bits, asymmetric, group_mins, group_size), and the k-quants
  // as the x86 group kernels take them.
  if (a.kquant != 0) return RunKQuantLayout(a, row_begin, row_end);
  if (a.group_mins) {
    return a.group_bits == 5 ? RunGroup<32, false, 5, true>(a, row_begin, row_end)
                             : RunGroup<32, false, 4, true>(a, row_begin, row_end);
  }
  if (a.group_bits == 5) return RunGroup<32, false, 5, false>(a, row_begin, row_end);
  if (a.group_bits == 3) {
    return a.asymmetric ? RunGroupSizes<true, 3>(a, row_begin, row_end) : RunGroupSizes<false, 3>(a, row_begin, row_end);
  }
  a.asymmetric ? RunGroupSizes<true, 4>(a, row_begin, row_end) : RunGroupSizes<false, 4>(a, row_begin, row_end);
}

}  // namespace tessel
