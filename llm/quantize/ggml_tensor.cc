// Quantized matrices packed into GGUF tensor types.
#include "llm/quantize/ggml_tensor.h"

#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "support/fp16.h"

namespace tessel::quant {

absl::StatusOr<GgmlTensorData> ToGgmlTensor(const QuantizedMatrix& q, bool prefer_ggml) {
  const QuantScheme& s = q.scheme;
  const int64_t ng = q.cols / s.group;
  GgmlTensorData out;
  if (s.group == 32 && (s.bits == 8 ? !s.asymmetric : (s.bits == 4 && prefer_ggml))) {
    out.type = s.bits == 8 ? llm::GgmlType::kQ8_0 : s.asymmetric ? llm::GgmlType::kQ4_1 : llm::GgmlType::kQ4_0;
    const size_t row_bytes = llm::GgmlRowBytes(out.type, q.cols);
    out.bytes.assign(q.rows * row_bytes, '\0');
    for (int64_t r = 0; r < q.rows; ++r) {
      uint8_t* row = reinterpret_cast<uint8_t*>(&out.bytes[r * row_bytes]);
      for (int64_t g = 0; g < ng; ++g) {
        const GroupParams& p = q.params[r * ng + g];
        const uint8_t* c = &q.codes[r * q.cols + g * 32];
        if (out.type == llm::GgmlType::kQ8_0) {
          BlockQ8_0 b;
          b.d = FloatToHalf(p.scale);
          for (int j = 0; j < 32; ++j) b.qs[j] = static_cast<int8_t>(c[j] - p.zero);
          std::memcpy(row + g * sizeof(b), &b, sizeof(b));
        } else if (out.type == llm::GgmlType::kQ4_0) {
          BlockQ4_0 b;
          b.d = FloatToHalf(p.scale);
          for (int j = 0; j < 16; ++j) b.qs[j] = static_cast<uint8_t>(c[j] | (c[j + 16] << 4));
          std::memcpy(row + g * sizeof(b), &b, sizeof(b));
        } else {
          BlockQ4_1 b;
          b.d = FloatToHalf(p.scale);
          b.m = FloatToHalf(-p.zero * p.scale);
          for (int j = 0; j < 16; ++j) b.qs[j] = static_cast<uint8_t>(c[j] | (c[j + 16] << 4));
          std::memcpy(row + g * sizeof(b), &b, sizeof(b));
        }
      }
    }
    return out;
  }
  if (s.bits == 8) {
    return absl::InvalidArgumentError(
        absl::StrCat("8-bit weights are stored only as Q8_0 (group 32, symmetric), not ", s.ToString()));
  }
  absl::StatusOr<llm::GgmlType> type = llm::TesselGroupType(s.bits, s.group, s.asymmetric);
  if (!type.ok()) return type.status();
  out.type = *type;
  const size_t row_bytes = llm::GgmlRowBytes(out.type, q.cols);
  out.bytes.assign(q.rows * row_bytes, '\0');
  std::vector<float> scales(ng);
  std::vector<uint8_t> zeros(ng);
  for (int64_t r = 0; r < q.rows; ++r) {
    for (int64_t g = 0; g < ng; ++g) {
      scales[g] = q.params[r * ng + g].scale;
      zeros[g] = static_cast<uint8_t>(q.params[r * ng + g].zero);
    }
    llm::PackTesselGroupRow(out.type, &q.codes[r * q.cols], scales.data(), zeros.data(), q.cols,
                            &out.bytes[r * row_bytes]);
  }
  return out;
}

}  // namespace tessel::quant
