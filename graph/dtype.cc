// Element type names and sizes.
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
    case DType::kF64: return "f64";
    case DType::kI16: return "i16";
    case DType::kU16: return "u16";
    case DType::kU32: return "u32";
    case DType::kU64: return "u64";
  }
  return "?";
}

absl::StatusOr<DType> ParseDType(absl::string_view name) {
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16, DType::kI8, DType::kU8, DType::kI32, DType::kI64,
                  DType::kBool, DType::kI4, DType::kF64, DType::kI16, DType::kU16, DType::kU32, DType::kU64}) {
    if (DTypeName(t) == name) return t;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown dtype '", name, "' (expected f32, f16, bf16, f64, i8, u8, i16, u16, i32, u32, i64, u64, bool or i4)"));
}

int DTypeBits(DType t) {
  switch (t) {
    case DType::kF32:
    case DType::kI32:
    case DType::kU32: return 32;
    case DType::kF16:
    case DType::kBF16:
    case DType::kI16:
    case DType::kU16: return 16;
    case DType::kI8:
    case DType::kU8:
    case DType::kBool: return 8;
    case DType::kI64:
    case DType::kU64:
    case DType::kF64: return 64;
    case DType::kI4: return 4;
  }
  return 8;
}

size_t DTypeStorageBytes(DType t, int64_t count) {
  if (count <= 0) return 0;
  return (static_cast<size_t>(count) * DTypeBits(t) + 7) / 8;
}

bool IsFloat(DType t) { return t == DType::kF32 || t == DType::kF16 || t == DType::kBF16 || t == DType::kF64; }

bool IsInteger(DType t) {
  return t == DType::kI8 || t == DType::kU8 || t == DType::kI16 || t == DType::kU16 || t == DType::kI32 ||
         t == DType::kU32 || t == DType::kI64 || t == DType::kU64 || t == DType::kI4;
}

}  // namespace tessel
