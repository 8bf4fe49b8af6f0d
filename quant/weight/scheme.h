// Weight-only quantization schemes for LLM linear layers: b-bit codes in groups of G consecutive
// input channels per output row, each group with a scale (rounded to an IEEE half, as stored) and a
// zero point. The quantized matrix is kept unpacked (one code per byte) so that the algorithms (RTN,
// GPTQ, AWQ) share it; the LLM side packs it into GGUF tensor types (llm/quantize/ggml_tensor.h).
#ifndef TESSEL_QUANT_WEIGHT_SCHEME_H_
#define TESSEL_QUANT_WEIGHT_SCHEME_H_

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tessel::quant {

struct QuantScheme {
  int bits = 4;       // 3, 4 or 8
  int group = 128;    // 32, 64 or 128 input channels per scale
  bool asymmetric = false;

  int max_code() const { return (1 << bits) - 1; }
  int sym_zero() const { return 1 << (bits - 1); }
  // "W4 g128 sym"
  std::string ToString() const;
};

// InvalidArgument naming the value and the supported ones: 3, 4 or 8 bits; groups of 32, 64 or 128.
absl::Status ValidateBits(int64_t bits);
absl::Status ValidateGroup(int64_t group);
// ValidateBits, ValidateGroup, and InvalidArgument for a column count the group does not divide.
absl::Status ValidateScheme(const QuantScheme& s, int64_t cols);

// Scale and zero point of one group.
struct GroupParams {
  float scale = 0;  // exactly representable as an IEEE half
  int zero = 0;
};

// Round-to-nearest parameters for a group whose values span [lo, hi], clipped to `clip` (<= 1) of the
// range. Symmetric: scale = clip * max(|lo|, |hi|) / (2^(bits-1) - 0.5), zero = 2^(bits-1); the grid
// reaches -max and +max within half a step. Asymmetric: the range is widened to include 0 (so that
// zeros stay exact), scale = clip * (hi - lo) / (2^bits - 1), zero = round(-lo / scale).
GroupParams ComputeGroupParams(const QuantScheme& s, float lo, float hi, float clip = 1.0f);

// The reference GPTQ quantizer's MSE search (IST-DASLab/gptq quant.py, Quantizer with mse=True): the
// min/max range shrunk by p = 1 - i / grid for i < max_shrink * grid, keeping the p whose grid gives
// the lowest sum_j weight_j |w_j - q_j|^norm over the n values (weight_j = 1 when `weights` is null).
struct ClipSearch {
  int grid = 100;
  float max_shrink = 0.8f;
  float norm = 2.4f;
};
GroupParams SearchGroupParams(const QuantScheme& s, const float* w, const double* weights, int64_t n,
                              const ClipSearch& search);

inline int QuantizeValue(float w, const GroupParams& p, int max_code) {
  const float inv = p.scale != 0.0f ? 1.0f / p.scale : 0.0f;
  int q = static_cast<int>(std::nearbyint(w * inv)) + p.zero;
  return q < 0 ? 0 : (q > max_code ? max_code : q);
}
inline float DequantizeValue(int q, const GroupParams& p) { return static_cast<float>(q - p.zero) * p.scale; }

// [rows, cols] codes with per-(row, group) parameters.
struct QuantizedMatrix {
  QuantScheme scheme;
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<uint8_t> codes;        // [rows, cols]
  std::vector<GroupParams> params;   // [rows, cols / group]

  void Resize(const QuantScheme& s, int64_t r, int64_t c);
  const GroupParams& param(int64_t r, int64_t c) const { return params[r * (cols / scheme.group) + c / scheme.group]; }
  GroupParams& param(int64_t r, int64_t c) { return params[r * (cols / scheme.group) + c / scheme.group]; }
  // The f32 weights the codes stand for, [rows, cols].
  std::vector<float> Dequantize() const;
};

}  // namespace tessel::quant

#endif  // TESSEL_QUANT_WEIGHT_SCHEME_H_
