// Activation quantization parameters and the calibration table's text form.
#include "graph/quant_params.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace tessel {

int32_t TensorQuantParams::Quantize(float x) const {
  const float q = std::nearbyint(x / scale) + static_cast<float>(zero_point);
  return static_cast<int32_t>(std::min<float>(std::max<float>(q, qmin()), qmax()));
}

TensorQuantParams ChooseQuantParams(float lo, float hi, DType dtype) {
  TensorQuantParams p;
  p.dtype = dtype;
  lo = std::min(lo, 0.0f);
  hi = std::max(hi, 0.0f);
  if (dtype == DType::kI8) {
    const float a = std::max(-lo, hi);
    p.scale = a > 0 ? a / 127.0f : 1.0f;
    return p;
  }
  if (!(hi - lo > 0)) return p;
  p.scale = (hi - lo) / 255.0f;
  p.zero_point = static_cast<int32_t>(std::min(255.0f, std::max(0.0f, std::nearbyint(-lo / p.scale))));
  return p;
}

std::string FormatQuantTable(const QuantTable& table) {
  std::string out;
  for (const auto& [name, p] : table) {
    absl::StrAppend(&out, name, " ", absl::StrFormat("%.9g", p.scale), " ", p.zero_point, " ", DTypeName(p.dtype), "\n");
  }
  return out;
}

absl::StatusOr<QuantTable> ParseQuantTable(absl::string_view text, absl::string_view origin) {
  QuantTable table;
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    TensorQuantParams p;
    absl::StatusOr<DType> dt = f.size() == 4 ? ParseDType(f[3]) : absl::InvalidArgumentError("");
    if (f.size() != 4 || !absl::SimpleAtof(f[1], &p.scale) || !absl::SimpleAtoi(f[2], &p.zero_point) || !dt.ok() ||
        (*dt != DType::kU8 && *dt != DType::kI8) || !(p.scale > 0) || !std::isfinite(p.scale)) {
      return absl::InvalidArgumentError(absl::StrCat(origin, ":", line_no, ": expected 'TENSOR SCALE ZERO_POINT u8|i8' "
                                                     "with a positive scale; got '", line, "'"));
    }
    p.dtype = *dt;
    if (p.zero_point < p.qmin() || p.zero_point > p.qmax()) {
      return absl::InvalidArgumentError(absl::StrCat(origin, ":", line_no, ": zero point ", p.zero_point,
                                                     " is outside the ", f[3], " range"));
    }
    table[f[0]] = p;
  }
  return table;
}

}  // namespace tessel
