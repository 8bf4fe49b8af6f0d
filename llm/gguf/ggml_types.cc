// The ggml type table (ids, block sizes from gguf-py's GGML_QUANT_SIZES) and reference
// (de)quantization.
#include "llm/gguf/ggml_types.h"

#include <cmath>
#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

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
    // Tessel group-wise: G elements take G * bits / 8 code bytes, a half scale and (asymmetric) a zero
    // byte plus a padding byte.
    {100, "TESSEL_I4G32", 32, 18, true},     {101, "TESSEL_I4G32_A", 32, 20, true},
    {102, "TESSEL_I4G64", 64, 34, true},     {103, "TESSEL_I4G64_A", 64, 36, true},
    {104, "TESSEL_I4G128", 128, 66, true},   {105, "TESSEL_I4G128_A", 128, 68, true},
    {106, "TESSEL_I3G32", 32, 14, true},     {107, "TESSEL_I3G32_A", 32, 16, true},
    {108, "TESSEL_I3G64", 64, 26, true},     {109, "TESSEL_I3G64_A", 64, 28, true},
    {110, "TESSEL_I3G128", 128, 50, true},   {111, "TESSEL_I3G128_A", 128, 52, true},
};

constexpr uint32_t kFirstTesselGroupId = 100;
constexpr uint32_t kLastTesselGroupId = 111;

// Nearest code, ties away from zero like ggml's roundf; clamped to the format's range.
int RoundCode(float v, int max_code) {
  const int q = static_cast<int>(std::round(v));
  return std::min(max_code, std::max(0, q));
}

void QuantizeTesselGroupRow(GgmlType t, const TesselGroupFormat& f, const float* x, void* dst, int64_t n) {
  const int64_t ng = n / f.group;
  std::vector<uint8_t> codes(n), zeros(ng);
  std::vector<float> scales(ng);
  for (int64_t g = 0; g < ng; ++g) {
    const float* xg = x + g * f.group;
    float lo = 0.0f, hi = 0.0f;
    for (int j = 0; j < f.group; ++j) {
      lo = std::fmin(lo, xg[j]);
      hi = std::fmax(hi, xg[j]);
    }
    float scale;
    int zero;
    if (f.asymmetric) {
      scale = HalfToFloat(FloatToHalf((hi - lo) / f.max_code()));
      zero = scale != 0.0f ? RoundCode(-lo / scale, f.max_code()) : 0;
    } else {
      scale = HalfToFloat(FloatToHalf(std::fmax(hi, -lo) / (f.zero_point() - 0.5f)));
      zero = f.zero_point();
    }
    const float inv = scale != 0.0f ? 1.0f / scale : 0.0f;
    for (int j = 0; j < f.group; ++j) codes[g * f.group + j] = RoundCode(xg[j] * inv + zero, f.max_code());
    scales[g] = scale;
    zeros[g] = static_cast<uint8_t>(zero);
  }
  PackTesselGroupRow(t, codes.data(), scales.data(), zeros.data(), n, dst);
}

// Group by group with fixed strides (prefill dequantizes every weight row through here).
void DequantizeTesselGroupRow(const TesselGroupFormat& f, const void* src, float* dst, int64_t n) {
  const uint8_t* row = static_cast<const uint8_t*>(src);
  const uint16_t* scales = reinterpret_cast<const uint16_t*>(row + f.ScalesOffset(n));
  const uint8_t* zeros = row + f.ZerosOffset(n);
  const int gb = f.group * f.bits / 8;
  for (int64_t g = 0; g < n / f.group; ++g) {
    const float d = HalfToFloat(scales[g]);
    const int z = f.asymmetric ? zeros[g] : f.zero_point();
    const uint8_t* c = row + g * gb;
    float* y = dst + g * f.group;
    if (f.bits == 4) {
      const int half = f.group / 2;
      for (int j = 0; j < half; ++j) {
        y[j] = ((c[j] & 0x0F) - z) * d;
        y[j + half] = ((c[j] >> 4) - z) * d;
      }
    } else {
      const int quarter = f.group / 4, eighth = f.group / 8;
      for (int k = 0; k < 4; ++k) {
        for (int j = 0; j < quarter; ++j) {
          const int e = k * quarter + j;
          const int high = (c[quarter + e % eighth] >> (e / eighth)) & 1;
          y[e] = ((((c[j] >> (2 * k)) & 3) | (high << 2)) - z) * d;
        }
      }
    }
  }
}

}  // namespace

const GgmlTypeInfo* FindGgmlType(uint32_t id) {
  // Indexed by id: row sizes are computed in hot loops.
  static const std::array<const GgmlTypeInfo*, 128> by_id = [] {
    std::array<const GgmlTypeInfo*, 128> table{};
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

const char* SupportedGgmlTypeNames() {
  return "F32, F16, BF16, Q8_0, Q4_0, Q4_1, TESSEL_I{4,3}G{32,64,128}[_A]";
}

bool GetTesselGroupFormat(GgmlType t, TesselGroupFormat* format) {
  const uint32_t id = static_cast<uint32_t>(t);
  if (id < kFirstTesselGroupId || id > kLastTesselGroupId) return false;
  const uint32_t k = id - kFirstTesselGroupId;
  format->bits = k < 6 ? 4 : 3;
  format->group = 32 << ((k % 6) / 2);
  format->asymmetric = (k % 2) == 1;
  return true;
}

absl::StatusOr<GgmlType> TesselGroupType(int bits, int group, bool asymmetric) {
  if ((bits != 3 && bits != 4) || (group != 32 && group != 64 && group != 128)) {
    return absl::InvalidArgumentError(absl::StrCat("no Tessel group-wise type for ", bits, " bits, group ", group,
                                                   " (bits 3 or 4, group 32, 64 or 128)"));
  }
  const int group_index = group == 32 ? 0 : group == 64 ? 1 : 2;
  return static_cast<GgmlType>(kFirstTesselGroupId + (bits == 4 ? 0 : 6) + group_index * 2 + (asymmetric ? 1 : 0));
}

int TesselGroupCode(const TesselGroupFormat& f, const uint8_t* row, int64_t i) {
  const int64_t g = i / f.group;
  const int j = static_cast<int>(i % f.group);
  const uint8_t* codes = row + g * f.group * f.bits / 8;
  if (f.bits == 4) {
    const int half = f.group / 2;
    return j < half ? codes[j] & 0x0F : codes[j - half] >> 4;
  }
  const int quarter = f.group / 4, eighth = f.group / 8;
  const int low = (codes[j % quarter] >> (2 * (j / quarter))) & 3;
  const int high = (codes[quarter + j % eighth] >> (j / eighth)) & 1;
  return low | (high << 2);
}

void PackTesselGroupRow(GgmlType t, const uint8_t* codes, const float* scales, const uint8_t* zeros, int64_t n,
                        void* dst) {
  TesselGroupFormat f;
  GetTesselGroupFormat(t, &f);
  uint8_t* row = static_cast<uint8_t*>(dst);
  std::memset(row, 0, GgmlRowBytes(t, n));
  const int64_t ng = n / f.group;
  for (int64_t g = 0; g < ng; ++g) {
    uint8_t* out = row + g * f.group * f.bits / 8;
    const uint8_t* c = codes + g * f.group;
    if (f.bits == 4) {
      const int half = f.group / 2;
      for (int j = 0; j < half; ++j) out[j] = static_cast<uint8_t>((c[j] & 0x0F) | (c[j + half] << 4));
    } else {
      const int quarter = f.group / 4, eighth = f.group / 8;
      for (int j = 0; j < f.group; ++j) {
        out[j % quarter] |= static_cast<uint8_t>((c[j] & 3) << (2 * (j / quarter)));
        out[quarter + j % eighth] |= static_cast<uint8_t>(((c[j] >> 2) & 1) << (j / eighth));
      }
    }
  }
  uint16_t* s = reinterpret_cast<uint16_t*>(row + f.ScalesOffset(n));
  for (int64_t g = 0; g < ng; ++g) s[g] = FloatToHalf(scales[g]);
  if (f.asymmetric) std::memcpy(row + f.ZerosOffset(n), zeros, ng);
}

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
    default: {
      TesselGroupFormat f;
      if (GetTesselGroupFormat(t, &f)) {
        DequantizeTesselGroupRow(f, src, dst, n);
        return;
      }
      // Callers check IsSupported before reaching a kernel; unsupported types have no layout here.
      std::memset(dst, 0, n * sizeof(float));
      return;
    }
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
    default: {
      TesselGroupFormat f;
      if (GetTesselGroupFormat(t, &f)) QuantizeTesselGroupRow(t, f, src, dst, n);
      return;
    }
  }
}

}  // namespace tessel::llm
