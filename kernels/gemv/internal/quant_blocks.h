// Weight block layouts shared by the GEMV kernels (ggml's Q4_0 and Q8_0) and IEEE half <-> float
// conversion in portable C++ (x86 kernels use F16C instead).
#ifndef TESSEL_KERNELS_GEMV_INTERNAL_QUANT_BLOCKS_H_
#define TESSEL_KERNELS_GEMV_INTERNAL_QUANT_BLOCKS_H_

#include <cstdint>
#include <cstring>

namespace tessel {

inline constexpr int kQBlock = 32;  // elements per Q4_0 / Q8_0 block

struct BlockQ4_0 {
  uint16_t d;       // fp16 scale
  uint8_t qs[16];   // byte j: element j in the low nibble, element j + 16 in the high nibble
};
static_assert(sizeof(BlockQ4_0) == 18, "ggml Q4_0 block is 18 bytes");

struct BlockQ4_1 {
  uint16_t d;       // fp16 scale
  uint16_t m;       // fp16 min: value = q * d + m
  uint8_t qs[16];   // as BlockQ4_0
};
static_assert(sizeof(BlockQ4_1) == 20, "ggml Q4_1 block is 20 bytes");

// ggml's k-quants (the layouts llm/gguf/ggml_types.h describes).
inline constexpr int kKBlock = 256;  // elements per k-quant super-block

struct BlockQ4_K {
  uint16_t d, dmin;      // fp16 super-block scales
  uint8_t scales[12];    // 8 x (6-bit scale, 6-bit min): KScaleMin
  uint8_t qs[128];       // chunk c < 4 of 32 bytes: elements 64c + l (low) and 64c + 32 + l (high nibble)
};
static_assert(sizeof(BlockQ4_K) == 144, "ggml Q4_K block is 144 bytes");

struct BlockQ2_K {
  uint8_t scales[16];  // sub-block s (16 elements): 4-bit scale (low nibble) and min (high nibble)
  uint8_t qs[64];      // bits 2j, 2j + 1 of qs[32n + l]: element 128n + 32j + l
  uint16_t d, dmin;
};
static_assert(sizeof(BlockQ2_K) == 84, "ggml Q2_K block is 84 bytes");

struct BlockQ3_K {
  uint8_t hmask[32];   // bit 4n + j of hmask[l]: the third bit of element 128n + 32j + l
  uint8_t qs[64];      // bits 2j, 2j + 1 of qs[32n + l]: that element's low 2 bits
  uint8_t scales[12];  // sub-block s (16 elements): low 4 bits in scales[s % 8] (high nibble for s >= 8),
                       // high 2 bits at 2 (s / 4) of scales[8 + s % 4]; scale = that - 32
  uint16_t d;
};
static_assert(sizeof(BlockQ3_K) == 110, "ggml Q3_K block is 110 bytes");

struct BlockQ5_K {
  uint16_t d, dmin;      // as BlockQ4_K
  uint8_t scales[12];
  uint8_t qh[32];        // bit i (sub-block i) of qh[l]: the fifth bit of that sub-block's element l
  uint8_t qs[128];       // as BlockQ4_K
};
static_assert(sizeof(BlockQ5_K) == 176, "ggml Q5_K block is 176 bytes");

// ggml's IQ4_NL / IQ4_XS levels (kvalues_iq4nl): a 4-bit code indexes them.
inline constexpr int8_t kIQ4Levels[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

struct BlockIQ4_XS {
  uint16_t d;          // fp16 super-block scale
  uint16_t scales_h;   // bits 2j, 2j + 1: the high bits of sub-block j's 6-bit scale
  uint8_t scales_l[4]; // the low 4 bits (low nibble for even j) of sub-block j's scale (j / 2)
  uint8_t qs[128];     // sub-block j (32 elements): Q4_0's nibbles at qs[16j]; value = d (scale - 32) level
};
static_assert(sizeof(BlockIQ4_XS) == 136, "ggml IQ4_XS block is 136 bytes");

struct BlockQ6_K {
  uint8_t ql[128];  // half h: ql[64h + l + 32 (k % 2)] holds element 128h + 32k + l's low 4 bits
  uint8_t qh[64];   // (low nibble for k < 2); qh[32h + l] bits 2k, 2k + 1 its high 2 bits
  int8_t scales[16];  // element 128h + 32k + l: scales[8h + 2k + l / 16]
  uint16_t d;
};
static_assert(sizeof(BlockQ6_K) == 210, "ggml Q6_K block is 210 bytes");

// Q4_K / Q5_K sub-block j's 6-bit scale and min.
inline void KScaleMin(const uint8_t* s, int j, int* sc, int* m) {
  if (j < 4) {
    *sc = s[j] & 63;
    *m = s[j + 4] & 63;
  } else {
    *sc = (s[j + 4] & 0x0F) | ((s[j - 4] >> 6) << 4);
    *m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
  }
}

struct BlockQ8_0 {
  uint16_t d;      // fp16 scale
  int8_t qs[32];
};
static_assert(sizeof(BlockQ8_0) == 34, "ggml Q8_0 block is 34 bytes");

inline float Fp16ToF32(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  const uint32_t man = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    const float f = static_cast<float>(man) * (1.0f / 16777216.0f);  // subnormal: man x 2^-24
    std::memcpy(&bits, &f, 4);
    bits |= sign;
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (man << 13);
  } else {
    bits = sign | ((exp + 112) << 23) | (man << 13);
  }
  float out;
  std::memcpy(&out, &bits, 4);
  return out;
}

// Round to nearest even; overflow goes to infinity, tiny values flush through the subnormal range.
inline uint16_t F32ToFp16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) return sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u);
  if (abs >= 0x477ff000u) return sign | 0x7c00u;  // rounds past 65504
  if (abs < 0x38800000u) {                         // below the smallest normal half: subnormal
    float a;
    std::memcpy(&a, &abs, 4);
    const float scaled = a * 16777216.0f;  // in units of 2^-24
    const uint32_t q = static_cast<uint32_t>(scaled);
    const float rem = scaled - static_cast<float>(q);
    const uint32_t r = q + ((rem > 0.5f || (rem == 0.5f && (q & 1))) ? 1 : 0);
    return sign | static_cast<uint16_t>(r);
  }
  const uint32_t mant_lsb = (abs >> 13) & 1;
  const uint32_t rounded = abs + 0xfffu + mant_lsb;
  return sign | static_cast<uint16_t>(((rounded >> 13) - (112u << 10)) & 0x7fffu);
}

// All 65536 halves as floats (256 KiB, built on first use). x86 kernels read block scales through it:
// one broadcast load instead of a scalar convert and a shuffle per block, as llama.cpp does.
const float* Fp16ToF32Table();

}  // namespace tessel

#endif  // TESSEL_KERNELS_GEMV_INTERNAL_QUANT_BLOCKS_H_
