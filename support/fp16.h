// IEEE half and bfloat16 <-> float conversions as branch-free bit arithmetic, so that loops over
// weights vectorize on any target (no F16C or NEON fp16 instructions assumed).
#ifndef TESSEL_SUPPORT_FP16_H_
#define TESSEL_SUPPORT_FP16_H_

#include <cstdint>
#include <cstring>

namespace tessel {

inline float BitsToFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

inline uint32_t FloatToBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

// Exact for every half value, including subnormals, infinities and NaN. Branch-free integer and
// float operations so that loops over f16 weights vectorize: the exponent and mantissa move into
// float position and a multiply by 2^112 rebiases the exponent (turning half subnormals into float
// normals); infinities and NaNs get the all-ones exponent back.
inline float HalfToFloat(uint16_t h) {
  const uint32_t em = static_cast<uint32_t>(h & 0x7FFFu) << 13;
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t scaled = FloatToBits(BitsToFloat(em) * 0x1.0p+112f);
  const uint32_t inf_nan = em >= (0x1Fu << 23) ? 0x7F800000u : 0u;
  return BitsToFloat(sign | scaled | inf_nan);
}

// Round to nearest even, like numpy's float16 cast and ggml's GGML_FP32_TO_FP16.
inline uint16_t FloatToHalf(float f) {
  float base = (f < 0 ? -f : f) * 0x1.0p+112f * 0x1.0p-110f;
  const uint32_t w = FloatToBits(f);
  const uint32_t shl1_w = w + w;
  const uint32_t sign = w & 0x80000000u;
  uint32_t bias = shl1_w & 0xFF000000u;
  if (bias < 0x71000000u) bias = 0x71000000u;
  base = BitsToFloat((bias >> 1) + 0x07800000u) + base;
  const uint32_t bits = FloatToBits(base);
  const uint32_t exp_bits = (bits >> 13) & 0x00007C00u;
  const uint32_t mantissa_bits = bits & 0x00000FFFu;
  const uint32_t nonsign = exp_bits + mantissa_bits;
  return static_cast<uint16_t>((sign >> 16) | (shl1_w > 0xFF000000u ? 0x7E00u : nonsign));
}

inline float BF16ToFloat(uint16_t b) { return BitsToFloat(static_cast<uint32_t>(b) << 16); }

// Round to nearest even; NaN stays NaN.
inline uint16_t FloatToBF16(float f) {
  const uint32_t u = FloatToBits(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((u >> 16) | 0x40);
  return static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1)) >> 16);
}

}  // namespace tessel

#endif  // TESSEL_SUPPORT_FP16_H_
