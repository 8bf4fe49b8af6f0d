// Weight-only quantization schemes for LLM linear layers: b-bit codes in groups of G consecutive
// input channels per output row, each group with a scale (rounded to an IEEE half, as stored) and a
// zero point. The quantized matrix is kept unpacked (one code per byte) so that the algorithms (RTN,
// GPTQ, AWQ) share it; ToGgmlTensor packs it into a GGUF tensor type.
#ifndef TESSEL_QUANT_WEIGHT_SCHEME_H_
#define TESSEL_QUANT_WEIGHT_SCHEME_H_

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "llm/gguf/ggml_types.h"

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

// InvalidArgument for unsupported bits or group sizes, or a column count the group does not divide.
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

struct GgmlTensorData {
  llm::GgmlType type;
  std::string bytes;  // rows * GgmlRowBytes(type, cols)
};

// Packs into the GGUF type that stores the scheme exactly: ggml's Q4_0 (W4 g32 symmetric), Q4_1 (W4
// g32 asymmetric; its min is the half-rounded -zero * scale) or Q8_0 (W8 g32 symmetric) when
// `prefer_ggml` and the scheme fits, so that llama.cpp loads the file; else Tessel's group-wise types.
// InvalidArgument for a scheme no type stores (8 bits other than g32 symmetric).
absl::StatusOr<GgmlTensorData> ToGgmlTensor(const QuantizedMatrix& q, bool prefer_ggml);

}  // namespace tessel::quant

#endif  // TESSEL_QUANT_WEIGHT_SCHEME_H_
