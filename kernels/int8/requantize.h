// The requantization shared by every int8 kernel (reference and optimized), so that they agree bit for
// bit: the accumulator times a per-channel f32 scale, rounded half to even (ONNX's QLinearConv arithmetic,
// as ONNX Runtime and XNNPACK's fp32 requantization compute it). The graph stores each scale as a
// TFLite-style (multiplier, shift) pair.
#ifndef TESSEL_KERNELS_INT8_REQUANTIZE_H_
#define TESSEL_KERNELS_INT8_REQUANTIZE_H_

#include <algorithm>
#include <cmath>
#include <cstdint>

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

// A requantization's scale in f32: multiplier * 2^(shift - 31), rounded once from the exact value. The
// graph keeps (multiplier, shift) pairs (QuantizeMultiplier's); every kernel multiplies by this float.
inline float RequantizeScale(int32_t multiplier, int32_t shift) {
  return static_cast<float>(std::ldexp(static_cast<double>(multiplier), shift - 31));
}

// Where scaled values are clamped before rounding, so that every ISA's float -> int32 conversion stays in
// range (x86 returns INT32_MIN out of range, Arm saturates): far past any u8 result.
inline constexpr float kRequantizeBound = 4194304.0f;  // 2^22

// x * scale as ONNX's QLinearConv and ONNX Runtime compute it: the product in f32 (x converted to f32
// first, both roundings to nearest even, as every ISA's vector conversion and multiply round), clamped to
// +-kRequantizeBound, then rounded half to even. Every step is one IEEE operation, so the vector kernels
// (cvtdq2ps / mulps / cvtps2dq, SCVTF / FMUL / FCVTNS, ...) agree with it bit for bit.
inline int32_t RequantizeF32(int32_t x, float scale) {
  float f = static_cast<float>(x) * scale;
  f = std::min(std::max(f, -kRequantizeBound), kRequantizeBound);
  return static_cast<int32_t>(std::nearbyint(f));
}

// Whether a channel's accumulators times `scale` in f32 stay within +-2^29. The accumulator is bias -
// x_zero_point * sum w + sum x * w over u8 inputs x, so at most |bias - x_zero_point * w_sum| + 255 *
// w_abs_sum in magnitude. Then a vector float -> int32 conversion is exact without the +-kRequantizeBound
// clamp, a residual term that fits too (ScaledResidualFitsUnclamped) adds without overflow, and
// saturating narrowing packs can clamp instead (requantize_avx2.h's RoundScaledUnclamped): past 2^22 in
// magnitude, where the clamp would have cut, the sum lands on the same end of [0, 255] either way.
// Packing decides it per layer.
inline bool ScaledAccumulatorsFitInt32(int64_t bias, int32_t x_zero_point, int64_t w_sum, int64_t w_abs_sum,
                                       float scale) {
  const int64_t bias_in = bias - int64_t{x_zero_point} * w_sum;
  const int64_t max_abs_acc = (bias_in < 0 ? -bias_in : bias_in) + 255 * w_abs_sum;
  return max_abs_acc < (int64_t{1} << 31) &&
         static_cast<double>(max_abs_acc) * std::fabs(static_cast<double>(scale)) <= 536870912.0;
}

// Whether a residual term RequantizeF32(R - r_zero_point, r_scale) stays within +-2^21 for every u8 R and
// zero point: then, added unclamped to an accumulator's unclamped term, the sum saturates as the clamped
// terms' sum would (a term past 2^22 outweighs it by more than 255).
inline bool ScaledResidualFitsUnclamped(float r_scale) {
  return 255.0 * std::fabs(static_cast<double>(r_scale)) <= 2097152.0;
}

// The output step every quantized compute kernel ends with: zero point, requantized accumulator (bias
// included), an optional requantized residual term, then the clamp that also applies a folded ReLU/ReLU6.
// Without a residual term this equals rounding clamp(f, lo - zero_point, hi - zero_point) and adding the
// zero point (the bounds are integers), which is how the vector kernels do it.
inline int32_t RequantizeClamp(int32_t acc, float scale, int32_t residual_term, int32_t zero_point, int32_t lo,
                               int32_t hi) {
  int32_t v = zero_point + RequantizeF32(acc, scale) + residual_term;
  v = v < lo ? lo : v;
  return v > hi ? hi : v;
}

}  // namespace tessel

#endif  // TESSEL_KERNELS_INT8_REQUANTIZE_H_
