// The ggml type table (ids, block sizes from gguf-py's GGML_QUANT_SIZES) and reference
// (de)quantization.
#include "llm/gguf/ggml_types.h"

#include <cmath>
#include <algorithm>
#include <array>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "llm/base/fp16.h"

namespace tessel::llm {
namespace {

constexpr GgmlTypeInfo kTypes[] = {
    {0, "F32", 1, 4, true},         {1, "F16", 1, 2, true},         {2, "Q4_0", 32, 18, true},
    {3, "Q4_1", 32, 20, true},      {6, "Q5_0", 32, 22, false},     {7, "Q5_1", 32, 24, false},
    {8, "Q8_0", 32, 34, true},      {9, "Q8_1", 32, 36, false},     {10, "Q2_K", 256, 84, false},
    {11, "Q3_K", 256, 110, false},  {12, "Q4_K", 256, 144, false},  {13, "Q5_K", 256, 176, false},
    {14, "Q6_K", 256, 210, false},  {15, "Q8_K", 256, 292, false},  {16, "IQ2_XXS", 256, 66, false},
    {17, "IQ2_XS", 256, 74, false}, {18, "IQ3_XXS", 256, 98, false}, {19, "IQ1_S", 256, 50, false},
    {20, "IQ4_NL", 32, 18, false},  {21, "IQ3_S", 256, 110, false}, {22, "IQ2_S", 256, 82, false},
    {23, "IQ4_XS", 256, 136, false}, {24, "I8", 1, 1, false},       {25, "I16", 1, 2, false},
    {26, "I32", 1, 4, false},       {27, "I64", 1, 8, false},       {28, "F64", 1, 8, false},
    {29, "IQ1_M", 256, 56, false},  {30, "BF16", 1, 2, true},       {34, "TQ1_0", 256, 54, false},
    {35, "TQ2_0", 256, 66, false},
};

}  // namespace

const GgmlTypeInfo* FindGgmlType(uint32_t id) {
  // Indexed by id: row sizes are computed in hot loops.
  static const std::array<const GgmlTypeInfo*, 64> by_id = [] {
    std::array<const GgmlTypeInfo*, 64> table{};
    for (const GgmlTypeInfo& t : kTypes) table[t.id] = &t;
    return table;
  }();
  return id < by_id.size() ? by_id[id] : nullptr;
}

const GgmlTypeInfo& GetGgmlTypeInfo(GgmlType t) { return *FindGgmlType(static_cast<uint32_t>(t)); }

absl::string_view GgmlTypeName(GgmlType t) { return GetGgmlTypeInfo(t).name; }

absl::StatusOr<GgmlType> ParseGgmlType(absl::string_view name) {
  for (const GgmlTypeInfo& t : kTypes) {
    if (t.supported && absl::EqualsIgnoreCase(name, t.name)) return static_cast<GgmlType>(t.id);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown weight type '", name, "' (supported: ", SupportedGgmlTypeNames(), ")"));
}

const char* SupportedGgmlTypeNames() { return "F32, F16, BF16, Q8_0, Q4_0, Q4_1"; }

void DequantizeRow(GgmlType t, const void* src, float* dst, int64_t n) {
  switch (t) {
    case GgmlType::kF32:
      std::memcpy(dst, src, n * sizeof(float));
      return;
    case GgmlType::kF16: {
      const uint16_t* h = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = HalfToFloat(h[i]);
      return;
    }
    case GgmlType::kBF16: {
      const uint16_t* h = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = BF16ToFloat(h[i]);
      return;
    }
    case GgmlType::kQ8_0: {
      const BlockQ8_0* b = static_cast<const BlockQ8_0*>(src);
      for (int64_t i = 0; i < n / kQuantBlock; ++i) {
        const float d = HalfToFloat(b[i].d);
        for (int j = 0; j < kQuantBlock; ++j) dst[i * kQuantBlock + j] = b[i].qs[j] * d;
      }
      return;
    }
    case GgmlType::kQ4_0: {
      const BlockQ4_0* b = static_cast<const BlockQ4_0*>(src);
      for (int64_t i = 0; i < n / kQuantBlock; ++i) {
        const float d = HalfToFloat(b[i].d);
        float* y = dst + i * kQuantBlock;
        for (int j = 0; j < kQuantBlock / 2; ++j) {
          y[j] = ((b[i].qs[j] & 0x0F) - 8) * d;
          y[j + kQuantBlock / 2] = ((b[i].qs[j] >> 4) - 8) * d;
        }
      }
      return;
    }
    case GgmlType::kQ4_1: {
      const BlockQ4_1* b = static_cast<const BlockQ4_1*>(src);
      for (int64_t i = 0; i < n / kQuantBlock; ++i) {
        const float d = HalfToFloat(b[i].d);
        const float m = HalfToFloat(b[i].m);
        float* y = dst + i * kQuantBlock;
        for (int j = 0; j < kQuantBlock / 2; ++j) {
          y[j] = (b[i].qs[j] & 0x0F) * d + m;
          y[j + kQuantBlock / 2] = (b[i].qs[j] >> 4) * d + m;
        }
      }
      return;
    }
    default:
      // Callers check IsSupported before reaching a kernel; unsupported types have no layout here.
      std::memset(dst, 0, n * sizeof(float));
      return;
  }
}

void QuantizeRow(GgmlType t, const float* src, void* dst, int64_t n) {
  switch (t) {
    case GgmlType::kF32:
      std::memcpy(dst, src, n * sizeof(float));
      return;
    case GgmlType::kF16: {
      uint16_t* h = static_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; ++i) h[i] = FloatToHalf(src[i]);
      return;
    }
    case GgmlType::kBF16: {
      uint16_t* h = static_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; ++i) h[i] = FloatToBF16(src[i]);
      return;
    }
    case GgmlType::kQ8_0: {
      BlockQ8_0* b = static_cast<BlockQ8_0*>(dst);
      for (int64_t i = 0; i < n / kQuantBlock; ++i) {
        const float* x = src + i * kQuantBlock;
        float amax = 0.0f;
        for (int j = 0; j < kQuantBlock; ++j) amax = std::fmax(amax, std::fabs(x[j]));
        const float d = amax / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        b[i].d = FloatToHalf(d);
        for (int j = 0; j < kQuantBlock; ++j) b[i].qs[j] = static_cast<int8_t>(std::round(x[j] * id));
      }
      return;
    }
    case GgmlType::kQ4_0: {
      BlockQ4_0* b = static_cast<BlockQ4_0*>(dst);
      for (int64_t i = 0; i < n / kQuantBlock; ++i) {
        const float* x = src + i * kQuantBlock;
        float amax = 0.0f, max = 0.0f;
        for (int j = 0; j < kQuantBlock; ++j) {
          if (amax < std::fabs(x[j])) {
            amax = std::fabs(x[j]);
            max = x[j];
          }
        }
        const float d = max / -8.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        b[i].d = FloatToHalf(d);
        for (int j = 0; j < kQuantBlock / 2; ++j) {
          const int q0 = std::min(15, static_cast<int>(static_cast<int8_t>(x[j] * id + 8.5f)));
          const int q1 = std::min(15, static_cast<int>(static_cast<int8_t>(x[j + kQuantBlock / 2] * id + 8.5f)));
          b[i].qs[j] = static_cast<uint8_t>(q0 | (q1 << 4));
        }
      }
      return;
    }
    case GgmlType::kQ4_1: {
      BlockQ4_1* b = static_cast<BlockQ4_1*>(dst);
      for (int64_t i = 0; i < n / kQuantBlock; ++i) {
        const float* x = src + i * kQuantBlock;
        float min = x[0], max = x[0];
        for (int j = 1; j < kQuantBlock; ++j) {
          min = std::fmin(min, x[j]);
          max = std::fmax(max, x[j]);
        }
        const float d = (max - min) / 15.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        b[i].d = FloatToHalf(d);
        b[i].m = FloatToHalf(min);
        for (int j = 0; j < kQuantBlock / 2; ++j) {
          const int q0 = std::min(15, static_cast<int>(static_cast<int8_t>((x[j] - min) * id + 0.5f)));
          const int q1 =
              std::min(15, static_cast<int>(static_cast<int8_t>((x[j + kQuantBlock / 2] - min) * id + 0.5f)));
          b[i].qs[j] = static_cast<uint8_t>(q0 | (q1 << 4));
        }
      }
      return;
    }
    default:
      return;
  }
}

}  // namespace tessel::llm
