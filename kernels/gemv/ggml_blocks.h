// ggml's weight block layouts (ggml-common.h), bit-exact, with the helpers that decode their scales:
// the one definition the GGUF loader, the quantizers and the GEMV kernels share. Scales are IEEE
// half bits (support/fp16.h converts them).
#ifndef TESSEL_KERNELS_GEMV_GGML_BLOCKS_H_
#define TESSEL_KERNELS_GEMV_GGML_BLOCKS_H_

#include <cstdint>

namespace tessel {

inline constexpr int kQuantBlock = 32;

struct BlockQ8_0 {
  uint16_t d;
  int8_t qs[kQuantBlock];  // value = qs[j] * d
};
static_assert(sizeof(BlockQ8_0) == 34, "ggml block_q8_0 is 34 bytes");

struct BlockQ4_0 {
  uint16_t d;
  // Element j < 16 is the low nibble of qs[j], element j + 16 the high nibble; value = (q - 8) * d.
  uint8_t qs[kQuantBlock / 2];
};
static_assert(sizeof(BlockQ4_0) == 18, "ggml block_q4_0 is 18 bytes");

struct BlockQ4_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qs[kQuantBlock / 2];  // nibbles as in BlockQ4_0; value = q * d + m
};
static_assert(sizeof(BlockQ4_1) == 20, "ggml block_q4_1 is 20 bytes");

// 32 elements with a fifth bit per element: bit j of qh (little-endian) is element j's. Element j < 16
// has its low 4 bits in qs[j]'s low nibble, element j + 16 in its high nibble. value = (q - 16) * d.
struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[kQuantBlock / 2];
};
static_assert(sizeof(BlockQ5_0) == 22, "ggml block_q5_0 is 22 bytes");

struct BlockQ5_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qh[4];
  uint8_t qs[kQuantBlock / 2];  // as BlockQ5_0; value = q * d + m
};
static_assert(sizeof(BlockQ5_1) == 24, "ggml block_q5_1 is 24 bytes");

// ggml's k-quants: super-blocks of 256 elements in sub-blocks with integer scales under fp16
// super-block scales (ggml-common.h).
inline constexpr int kSuperBlock = 256;

// Elements 128n + 32j + l (n < 2, j < 4, l < 32) of a Q2_K / Q3_K super-block have their 2 low bits at
// bits 2j, 2j + 1 of qs[32n + l] and belong to sub-block 8n + 2j + l / 16 (16 sub-blocks of 16).
// Q2_K: scales[s] holds sub-block s's 4-bit scale (low nibble) and min (high nibble);
// value = d * scale * q - dmin * min.
struct BlockQ2_K {
  uint8_t scales[kSuperBlock / 16];
  uint8_t qs[kSuperBlock / 4];
  uint16_t d;
  uint16_t dmin;
};
static_assert(sizeof(BlockQ2_K) == 84, "ggml block_q2_K is 84 bytes");

// Q3_K: the third bit of element 128n + 32j + l is bit 4n + j of hmask[l]; value = d * (s - 32) *
// (q - (third bit ? 0 : 4)) with sub-block s's 6-bit scale: low 4 bits in scales[s % 8] (low nibble for
// s < 8), high 2 bits at bits 2 (s / 4), 2 (s / 4) + 1 of scales[8 + s % 4].
struct BlockQ3_K {
  uint8_t hmask[kSuperBlock / 8];
  uint8_t qs[kSuperBlock / 4];
  uint8_t scales[12];
  uint16_t d;
};
static_assert(sizeof(BlockQ3_K) == 110, "ggml block_q3_K is 110 bytes");

// 8 sub-blocks of 32. Sub-block j's 6-bit scale sc and min m (KQuantScaleMin): bytes j and j + 4 of
// `scales` (low 6 bits) for j < 4; for j >= 4 the low nibble (sc) and high nibble (m) of byte j + 4,
// with their top two bits in bits 6-7 of bytes j - 4 (sc) and j (m). The 128 `qs` bytes hold the
// elements in four 64-element chunks of 32 bytes: byte l of chunk c has element 64c + l in its low
// nibble (sub-block 2c) and element 64c + 32 + l in its high nibble (sub-block 2c + 1).
// value = d * sc * q - dmin * m.
struct BlockQ4_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qs[kSuperBlock / 2];
};
static_assert(sizeof(BlockQ4_K) == 144, "ggml block_q4_K is 144 bytes");

// Q4_K plus a fifth bit: bit 2c (sub-block 2c) or 2c + 1 (sub-block 2c + 1) of qh[l] is the high bit of
// the element whose low nibble is in byte l of chunk c. value = d * sc * (q + 16 * h) - dmin * m.
struct BlockQ5_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qh[kSuperBlock / 8];
  uint8_t qs[kSuperBlock / 2];
};
static_assert(sizeof(BlockQ5_K) == 176, "ggml block_q5_K is 176 bytes");

// 16 sub-blocks of 16 with int8 scales; two halves of 128 elements, half h using ql[64h ..], qh[32h ..]
// and scales[8h ..]. Within a half, element 32k + l (k < 4, l < 32) has its low 4 bits in ql[l + 32 *
// (k % 2)] (low nibble for k < 2, high nibble for k >= 2), its high 2 bits at bits 2k..2k+1 of qh[l],
// and the scale scales[2k + l / 16]. value = d * scale * (q - 32).
struct BlockQ6_K {
  uint8_t ql[kSuperBlock / 2];
  uint8_t qh[kSuperBlock / 4];
  int8_t scales[kSuperBlock / 16];
  uint16_t d;
};
static_assert(sizeof(BlockQ6_K) == 210, "ggml block_q6_K is 210 bytes");

// ggml's non-linear 4-bit types: a code indexes kIQ4NLValues, which spaces the 16 levels more densely
// near zero than a uniform grid.
inline constexpr int8_t kIQ4NLValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                             1,    13,   25,  38,  53,  69,  89,  113};

// IQ4_NL: Q4_0's block (element j < 16 in the low nibble of qs[j], j + 16 in its high nibble) with
// value = d * kIQ4NLValues[q].
using BlockIQ4_NL = BlockQ4_0;

// IQ4_XS: 8 sub-blocks of 32, each IQ4_NL's nibbles (qs[16 j ..]) under a 6-bit scale ls: low 4 bits
// in scales_l[j / 2] (low nibble for even j), high 2 bits at bits 2j, 2j + 1 of scales_h.
// value = d * (ls - 32) * kIQ4NLValues[q].
struct BlockIQ4_XS {
  uint16_t d;
  uint16_t scales_h;
  uint8_t scales_l[kSuperBlock / 64];
  uint8_t qs[kSuperBlock / 2];
};
static_assert(sizeof(BlockIQ4_XS) == 136, "ggml block_iq4_xs is 136 bytes");

// IQ4_XS sub-block j's (j < 8) scale ls - 32 (-32 .. 31).
inline int IQ4XSScale(const BlockIQ4_XS& b, int j) {
  return (((b.scales_l[j / 2] >> (4 * (j % 2))) & 0x0F) | (((b.scales_h >> (2 * j)) & 3) << 4)) - 32;
}

// Q4_K / Q5_K sub-block j's (j < 8) 6-bit scale and min.
inline void KQuantScaleMin(const uint8_t* scales, int j, int* sc, int* m) {
  if (j < 4) {
    *sc = scales[j] & 63;
    *m = scales[j + 4] & 63;
  } else {
    *sc = (scales[j + 4] & 0x0F) | ((scales[j - 4] >> 6) << 4);
    *m = (scales[j + 4] >> 4) | ((scales[j] >> 6) << 4);
  }
}

}  // namespace tessel

#endif  // TESSEL_KERNELS_GEMV_GGML_BLOCKS_H_
