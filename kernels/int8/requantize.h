// Fixed-point requantization shared by every int8 kernel (reference and optimized), so that they agree
// bit for bit: gemmlowp / TFLite rounding (SaturatingRoundingDoublingHighMul, then a rounding right
// shift that rounds half away from zero).
#ifndef TESSEL_KERNELS_INT8_REQUANTIZE_H_
#define TESSEL_KERNELS_INT8_REQUANTIZE_H_

#include <cmath>
#include <cstdint>
#include <limits>

namespace tessel {

// real_multiplier ~= multiplier * 2^(shift - 31) with multiplier in [2^30, 2^31), or 0.
struct QuantizedMultiplier {
  int32_t multiplier = 0;
  int32_t shift = 0;
};

// TFLite's QuantizeMultiplier. Multipliers below 2^-31 become 0 (the product always rounds to 0);
// shifts are kept within [-31, 30] so that the kernels' shifts stay defined.
inline QuantizedMultiplier QuantizeMultiplier(double real_multiplier) {
  QuantizedMultiplier q;
  if (!(real_multiplier > 0.0)) return q;
  int exponent = 0;
  const double fraction = std::frexp(real_multiplier, &exponent);
  int64_t m = static_cast<int64_t>(std::round(fraction * (1LL << 31)));
  if (m == (1LL << 31)) {
    m /= 2;
    ++exponent;
  }
  if (exponent < -31) return q;
  if (exponent > 30) exponent = 30, m = (1LL << 31) - 1;
  q.multiplier = static_cast<int32_t>(m);
  q.shift = exponent;
  return q;
}

// round(a * b / 2^31) with ties away from zero; saturates the one overflowing case.
inline int32_t SaturatingRoundingDoublingHighMul(int32_t a, int32_t b) {
  if (a == b && a == std::numeric_limits<int32_t>::min()) return std::numeric_limits<int32_t>::max();
  const int64_t ab = static_cast<int64_t>(a) * static_cast<int64_t>(b);
  const int64_t nudge = ab >= 0 ? (1LL << 30) : (1 - (1LL << 30));
  return static_cast<int32_t>((ab + nudge) / (1LL << 31));
}

// x / 2^exponent rounded to nearest, ties away from zero (exponent in [0, 31]).
inline int32_t RoundingDivideByPOT(int32_t x, int exponent) {
  const int32_t mask = static_cast<int32_t>((1LL << exponent) - 1);
  const int32_t remainder = x & mask;
  const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

// x * real_multiplier, rounded, as TFLite's MultiplyByQuantizedMultiplier computes it. The left shift
// wraps like the kernels' vector shifts do (it only applies to multipliers >= 1, where the caller's
// ranges keep x small).
inline int32_t MultiplyByQuantizedMultiplier(int32_t x, int32_t multiplier, int32_t shift) {
  const int left = shift > 0 ? shift : 0;
  const int right = shift > 0 ? 0 : -shift;
  const int32_t shifted = static_cast<int32_t>(static_cast<uint32_t>(x) << left);
  return RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(shifted, multiplier), right);
}

// The output step every quantized compute kernel ends with: zero point, requantized accumulator,
// an optional requantized residual term, then the clamp that also applies a folded ReLU/ReLU6.
inline int32_t RequantizeClamp(int32_t acc, int32_t multiplier, int32_t shift, int32_t residual_term,
                               int32_t zero_point, int32_t lo, int32_t hi) {
  int32_t v = zero_point + MultiplyByQuantizedMultiplier(acc, multiplier, shift) + residual_term;
  v = v < lo ? lo : v;
  return v > hi ? hi : v;
}

}  // namespace tessel

#endif  // TESSEL_KERNELS_INT8_REQUANTIZE_H_
