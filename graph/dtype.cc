// Element type names, sizes and half-precision conversions.
#include "graph/dtype.h"

#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"

namespace tessel {

absl::string_view DTypeName(DType t) {
  switch (t) {
    case DType::kF32: return "f32";
    case DType::kF16: return "f16";
    case DType::kBF16: return "bf16";
    case DType::kI8: return "i8";
    case DType::kU8: return "u8";
    case DType::kI32: return "i32";
    case DType::kI64: return "i64";
    case DType::kBool: return "bool";
    case DType::kI4: return "i4";
  }
  return "?";
}

absl::StatusOr<DType> ParseDType(absl::string_view name) {
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16, DType::kI8, DType::kU8, DType::kI32, DType::kI64,
                  DType::kBool, DType::kI4}) {
    if (DTypeName(t) == name) return t;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown dtype '", name, "' (expected f32, f16, bf16, i8, u8, i32, i64, bool or i4)"));
}

int DTypeBits(DType t) {
  switch (t) {
    case DType::kF32:
    case DType::kI32: return 32;
    case DType::kF16:
    case DType::kBF16: return 16;
    case DType::kI8:
    case DType::kU8:
    case DType::kBool: return 8;
    case DType::kI64: return 64;
    case DType::kI4: return 4;
  }
  return 8;
}

size_t DTypeStorageBytes(DType t, int64_t count) {
  if (count <= 0) return 0;
  return (static_cast<size_t>(count) * DTypeBits(t) + 7) / 8;
}

bool IsFloat(DType t) { return t == DType::kF32 || t == DType::kF16 || t == DType::kBF16; }

bool IsInteger(DType t) {
  return t == DType::kI8 || t == DType::kU8 || t == DType::kI32 || t == DType::kI64 || t == DType::kI4;
}

float HalfToFloat(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalize
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      bits = sign | ((127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t FloatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0));
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to infinity
  if (abs < 0x38800000u) {                                              // subnormal or zero in half
    if (abs < 0x33000000u) return static_cast<uint16_t>(sign);
    const uint32_t e = abs >> 23;
    const uint32_t m = (abs & 0x7fffffu) | 0x800000u;
    const int shift = 126 - static_cast<int>(e);  // 14 + (113 - e) ... bits to drop
    const uint32_t half_m = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1);
    const uint32_t mid = 1u << (shift - 1);
    uint32_t r = half_m + ((rem > mid || (rem == mid && (half_m & 1))) ? 1 : 0);
    return static_cast<uint16_t>(sign | r);
  }
  uint32_t r = ((abs - 0x38000000u) >> 13);
  const uint32_t rem = abs & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1))) ++r;
  return static_cast<uint16_t>(sign | r);
}

float BFloat16ToFloat(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t FloatToBFloat16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40);  // quiet NaN
  const uint32_t rounding = 0x7fffu + ((x >> 16) & 1);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

}  // namespace tessel
