// Per-tensor activation quantization parameters (scale, zero point, u8 or i8) and the calibration
// table that maps tensor names to them, with its text form (one "name scale zero_point dtype" a line).
#ifndef TESSEL_GRAPH_QUANT_PARAMS_H_
#define TESSEL_GRAPH_QUANT_PARAMS_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/dtype.h"

namespace tessel {

struct TensorQuantParams {
  float scale = 1.0f;
  int32_t zero_point = 0;
  DType dtype = DType::kU8;  // kU8 (asymmetric) or kI8 (symmetric, zero_point 0)

  int32_t qmin() const { return dtype == DType::kU8 ? 0 : -128; }
  int32_t qmax() const { return dtype == DType::kU8 ? 255 : 127; }
  // The integer that represents `x` (round half to even, saturated), as QuantizeLinear computes it.
  int32_t Quantize(float x) const;
  float Dequantize(int32_t q) const { return static_cast<float>(q - zero_point) * scale; }
};

// Parameters covering [lo, hi] (widened to include 0 so that zero and padding are exact). u8 is
// asymmetric over the range; i8 is symmetric (zero point 0, scale max(|lo|, |hi|) / 127).
TensorQuantParams ChooseQuantParams(float lo, float hi, DType dtype);

using QuantTable = std::map<std::string, TensorQuantParams>;

std::string FormatQuantTable(const QuantTable& table);
// Parses FormatQuantTable's output; `origin` names the source in errors (file name).
absl::StatusOr<QuantTable> ParseQuantTable(absl::string_view text, absl::string_view origin);

}  // namespace tessel

#endif  // TESSEL_GRAPH_QUANT_PARAMS_H_
