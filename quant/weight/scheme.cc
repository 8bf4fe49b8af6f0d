// Group parameters, dequantization and packing into GGUF tensor types.
#include "quant/weight/scheme.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"

namespace tessel::quant {
namespace {

// IEEE half conversions through the F16 row converters (round to nearest even).
uint16_t HalfBits(float v) {
  uint16_t h;
  llm::QuantizeRow(llm::GgmlType::kF16, &v, &h, 1);
  return h;
}

float RoundToHalf(float v) {
  const uint16_t h = HalfBits(v);
  float out;
  llm::DequantizeRow(llm::GgmlType::kF16, &h, &out, 1);
  return out;
}

}  // namespace

std::string QuantScheme::ToString() const {
  return absl::StrCat("W", bits, " g", group, asymmetric ? " asym" : " sym");
}

absl::Status ValidateScheme(const QuantScheme& s, int64_t cols) {
  if (s.bits != 3 && s.bits != 4 && s.bits != 8) {
    return absl::InvalidArgumentError(absl::StrCat("unsupported bit width ", s.bits, " (use 3, 4 or 8)"));
  }
  if (s.group != 32 && s.group != 64 && s.group != 128) {
    return absl::InvalidArgumentError(absl::StrCat("unsupported group size ", s.group, " (use 32, 64 or 128)"));
  }
  if (cols % s.group != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("a matrix with ", cols, " columns cannot be split into groups of ", s.group));
  }
  return absl::OkStatus();
}

GroupParams ComputeGroupParams(const QuantScheme& s, float lo, float hi, float clip) {
  GroupParams p;
  if (s.asymmetric) {
    lo = std::fmin(lo, 0.0f) * clip;
    hi = std::fmax(hi, 0.0f) * clip;
    p.scale = RoundToHalf((hi - lo) / s.max_code());
    p.zero = p.scale != 0.0f ? std::clamp(static_cast<int>(std::nearbyint(-lo / p.scale)), 0, s.max_code()) : 0;
  } else {
    const float amax = std::fmax(std::fabs(lo), std::fabs(hi)) * clip;
    p.scale = RoundToHalf(amax / (s.sym_zero() - 0.5f));
    p.zero = s.sym_zero();
  }
  return p;
}

GroupParams SearchGroupParams(const QuantScheme& s, const float* w, const double* weights, int64_t n,
                              const ClipSearch& search) {
  const auto [lo, hi] = std::minmax_element(w, w + n);
  GroupParams best = ComputeGroupParams(s, *lo, *hi);
  double best_err = std::numeric_limits<double>::infinity();
  const int steps = std::max(1, static_cast<int>(search.max_shrink * search.grid));
  for (int i = 0; i < steps; ++i) {
    const float clip = 1.0f - static_cast<float>(i) / search.grid;
    const GroupParams p = ComputeGroupParams(s, *lo, *hi, clip);
    double err = 0;
    for (int64_t j = 0; j < n; ++j) {
      const double d = std::fabs(static_cast<double>(w[j]) - DequantizeValue(QuantizeValue(w[j], p, s.max_code()), p));
      const double e = search.norm == 2.0f ? d * d : std::pow(d, static_cast<double>(search.norm));
      err += weights != nullptr ? weights[j] * e : e;
    }
    if (err < best_err) {
      best_err = err;
      best = p;
    }
  }
  return best;
}

void QuantizedMatrix::Resize(const QuantScheme& s, int64_t r, int64_t c) {
  scheme = s;
  rows = r;
  cols = c;
  codes.assign(r * c, 0);
  params.assign(r * (c / s.group), GroupParams{});
}

std::vector<float> QuantizedMatrix::Dequantize() const {
  std::vector<float> w(rows * cols);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) w[r * cols + c] = DequantizeValue(codes[r * cols + c], param(r, c));
  }
  return w;
}

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
          llm::BlockQ8_0 b;
          b.d = HalfBits(p.scale);
          for (int j = 0; j < 32; ++j) b.qs[j] = static_cast<int8_t>(c[j] - p.zero);
          std::memcpy(row + g * sizeof(b), &b, sizeof(b));
        } else if (out.type == llm::GgmlType::kQ4_0) {
          llm::BlockQ4_0 b;
          b.d = HalfBits(p.scale);
          for (int j = 0; j < 16; ++j) b.qs[j] = static_cast<uint8_t>(c[j] | (c[j + 16] << 4));
          std::memcpy(row + g * sizeof(b), &b, sizeof(b));
        } else {
          llm::BlockQ4_1 b;
          b.d = HalfBits(p.scale);
          b.m = HalfBits(-p.zero * p.scale);
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
