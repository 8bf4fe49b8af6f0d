// Weight and output-stage packing for the depthwise int8 microkernel (see qdwconv.h).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "kernels/int8/qdwconv.h"
#include "kernels/int8/requantize.h"

namespace tessel {
namespace {

// The output-stage constants of channel `ch` (weights summing to `sum`) at entry i of `p`'s arrays;
// `flip_bias` adds 128 * sum for kernels that flip the inputs to s8.
template <typename Packed>
void SetOutputStage(Packed& p, size_t i, int64_t ch, int32_t sum, const int32_t* bias, int32_t x_zero_point,
                    const std::vector<int64_t>& multiplier, const std::vector<int64_t>& shift,
                    bool flip_bias = false) {
  const size_t q = multiplier.size() == 1 ? 0 : static_cast<size_t>(ch);
  p.bias[i] = (bias != nullptr ? bias[ch] : 0) - x_zero_point * sum + (flip_bias ? 128 * sum : 0);
  p.scale[i] = RequantizeScale(static_cast<int32_t>(multiplier[q]), static_cast<int32_t>(shift[q]));
}

// W [c, taps] as [taps / G][cp][G] (G taps of a channel side by side, zero-padded to whole groups and cp
// channels) in `out`; returns each channel's weight sum.
template <int G, typename T>
std::vector<int32_t> PackTapGroups(const int8_t* w, int64_t c, int64_t taps, int64_t cp, std::vector<T>* out) {
  out->assign((taps + G - 1) / G * cp * G, 0);
  std::vector<int32_t> sums(c, 0);
  for (int64_t ch = 0; ch < c; ++ch) {
    for (int64_t t = 0; t < taps; ++t) {
      const int8_t v = w[ch * taps + t];
      sums[ch] += v;
      (*out)[((t / G) * cp + ch) * G + t % G] = v;
    }
  }
  return sums;
}

template <typename Packed>
void AssignOutputStage(Packed& p, size_t entries) {
  p.bias.assign(entries, 0);
  p.scale.assign(entries, 0.0f);
}

}  // namespace

PackedQDwConvWeights PackQDwConvWeights(const int8_t* w, int64_t c, int64_t taps, const int32_t* bias,
                                        int32_t x_zero_point, const std::vector<int64_t>& multiplier,
                                        const std::vector<int64_t>& shift) {
  PackedQDwConvWeights p;
  p.c = c;
  p.taps = taps;
  p.quads = (taps + 3) / 4;
  p.blocks = (c + kQDwConvBlock - 1) / kQDwConvBlock;
  p.w.assign(p.blocks * p.quads * 4 * kQDwConvBlock, 0);
  const size_t lanes = p.blocks * kQDwConvBlock;
  AssignOutputStage(p, lanes);
  p.half_tail = c % kQDwConvBlock != 0 && c % kQDwConvBlock <= 32;
  for (int64_t b = 0; b < p.blocks; ++b) {
    const bool half = p.half_tail && b == p.blocks - 1;
    for (int acc = 0; acc < 4; ++acc) {
      for (int lane = 0; lane < (half ? 8 : 16); ++lane) {
        const int64_t ch = b * kQDwConvBlock + QDwConvChannel(acc, lane);
        if (ch >= c) continue;
        int32_t sum = 0;
        for (int64_t t = 0; t < taps; ++t) {
          const int8_t v = w[ch * taps + t];
          sum += v;
          const int64_t g = t / 4;
          p.w[half ? b * p.quads * 256 + (g * 4 + acc) * 32 + lane * 4 + t % 4
                   : ((b * p.quads + g) * 4 + acc) * 64 + lane * 4 + t % 4] = v;
        }
        const size_t i = half ? b * kQDwConvBlock + (acc % 2) * 16 + (acc / 2) * 8 + lane : (b * 4 + acc) * 16 + lane;
        SetOutputStage(p, i, ch, sum, bias, x_zero_point, multiplier, shift);
      }
    }
  }
  return p;
}

PackedQDwConvAvx2Weights PackQDwConvAvx2Weights(const int8_t* w, int64_t c, int64_t taps, const int32_t* bias,
                                                int32_t x_zero_point, const std::vector<int64_t>& multiplier,
                                                const std::vector<int64_t>& shift) {
  PackedQDwConvAvx2Weights p;
  p.c = c;
  p.taps = taps;
  p.pairs = (taps + 1) / 2;
  p.cp = (c + 15) / 16 * 16;
  p.byte_pairs = true;
  for (int64_t ch = 0; ch < c; ++ch) {
    for (int64_t t = 0; t < taps; t += 2) {
      const int pair = std::abs(int{w[ch * taps + t]}) + (t + 1 < taps ? std::abs(int{w[ch * taps + t + 1]}) : 0);
      p.byte_pairs = p.byte_pairs && pair <= 128;
    }
  }
  const std::vector<int32_t> sums =
      p.byte_pairs ? PackTapGroups<2>(w, c, taps, p.cp, &p.w8) : PackTapGroups<2>(w, c, taps, p.cp, &p.w16);
  AssignOutputStage(p, p.cp);
  p.scaled_fits_int32 = true;
  for (int64_t ch = 0; ch < c; ++ch) {
    // The byte kernel's order: each 16-channel group's even channels, then its odd ones.
    const int64_t r = ch % 16;
    const size_t i = static_cast<size_t>(p.byte_pairs ? ch - r + (r % 2) * 8 + r / 2 : ch);
    SetOutputStage(p, i, ch, sums[ch], bias, x_zero_point, multiplier, shift);
    int64_t abs_sum = 0;
    for (int64_t t = 0; t < taps; ++t) abs_sum += std::abs(int{w[ch * taps + t]});
    p.scaled_fits_int32 = p.scaled_fits_int32 && ScaledAccumulatorsFitInt32(bias != nullptr ? bias[ch] : 0,
                                                                            x_zero_point, sums[ch], abs_sum,
                                                                            p.scale[i]);
  }
  return p;
}

PackedQDwConvSveWeights PackQDwConvSveWeights(const int8_t* w, int64_t c, int64_t taps, const int32_t* bias,
                                              int32_t x_zero_point, const std::vector<int64_t>& multiplier,
                                              const std::vector<int64_t>& shift) {
  PackedQDwConvSveWeights p;
  p.c = c;
  p.taps = taps;
  p.quads = (taps + 3) / 4;
  p.cp = (c + 15) / 16 * 16;
  const std::vector<int32_t> sums = PackTapGroups<4>(w, c, taps, p.cp, &p.w);
  AssignOutputStage(p, p.cp);
  for (int64_t ch = 0; ch < c; ++ch) {
    SetOutputStage(p, static_cast<size_t>(ch), ch, sums[ch], bias, x_zero_point, multiplier, shift);
  }
  return p;
}

PackedQDwConvNeonWeights PackQDwConvNeonWeights(const int8_t* w, int64_t c, int64_t taps, const int32_t* bias,
                                                int32_t x_zero_point, const std::vector<int64_t>& multiplier,
                                                const std::vector<int64_t>& shift) {
  PackedQDwConvNeonWeights p;
  p.c = c;
  p.taps = taps;
  p.cp = (c + 15) / 16 * 16;
  p.pairs = true;
  for (int64_t ch = 0; ch < c; ++ch) {
    for (int64_t t = 0; t + 1 < taps; t += 2) {
      if (w[ch * taps + t] == -128 && w[ch * taps + t + 1] == -128) p.pairs = false;
    }
  }
  if (p.pairs) {
    p.w8.assign(taps * p.cp, 0);
  } else {
    p.w16.assign(taps * p.cp, 0);
  }
  AssignOutputStage(p, p.cp);
  for (int64_t ch = 0; ch < c; ++ch) {
    int32_t sum = 0;
    for (int64_t t = 0; t < taps; ++t) {
      const int8_t v = w[ch * taps + t];
      sum += v;
      if (p.pairs) {
        p.w8[t * p.cp + ch] = v;
      } else {
        p.w16[t * p.cp + ch] = v;
      }
    }
    SetOutputStage(p, static_cast<size_t>(ch), ch, sum, bias, x_zero_point, multiplier, shift, /*flip_bias=*/p.pairs);
  }
  return p;
}

}  // namespace tessel
