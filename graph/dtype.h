// Element types of Tessel tensors and their sizes and names.
#ifndef TESSEL_GRAPH_DTYPE_H_
#define TESSEL_GRAPH_DTYPE_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "support/fp16.h"  // HalfToFloat, FloatToHalf, BF16ToFloat, FloatToBF16

namespace tessel {

enum class DType : uint8_t {
  kF32,
  kF16,
  kBF16,
  kI8,
  kU8,
  kI32,
  kI64,
  kBool,
  kI4,  // packed two per byte, low nibble first
  kF64,
  kI16,
  kU16,
  kU32,
  kU64,  // new values go last: artifacts store the numbers
};

// Short name used by the text IR ("f32", "i64", ...).
absl::string_view DTypeName(DType t);
absl::StatusOr<DType> ParseDType(absl::string_view name);

// Storage bits per element (4 for kI4, 8 for kBool).
int DTypeBits(DType t);

// Bytes needed for `count` elements (rounds packed types up).
size_t DTypeStorageBytes(DType t, int64_t count);

bool IsFloat(DType t);
bool IsInteger(DType t);

template <typename T>
struct DTypeOf;
template <>
struct DTypeOf<float> {
  static constexpr DType value = DType::kF32;
};
template <>
struct DTypeOf<double> {
  static constexpr DType value = DType::kF64;
};
template <>
struct DTypeOf<int8_t> {
  static constexpr DType value = DType::kI8;
};
template <>
struct DTypeOf<uint8_t> {
  static constexpr DType value = DType::kU8;
};
template <>
struct DTypeOf<int32_t> {
  static constexpr DType value = DType::kI32;
};
template <>
struct DTypeOf<int64_t> {
  static constexpr DType value = DType::kI64;
};
template <>
struct DTypeOf<bool> {
  static constexpr DType value = DType::kBool;
};
template <>
struct DTypeOf<int16_t> {
  static constexpr DType value = DType::kI16;
};
template <>
struct DTypeOf<uint16_t> {
  static constexpr DType value = DType::kU16;
};
template <>
struct DTypeOf<uint32_t> {
  static constexpr DType value = DType::kU32;
};
template <>
struct DTypeOf<uint64_t> {
  static constexpr DType value = DType::kU64;
};


}  // namespace tessel

#endif  // TESSEL_GRAPH_DTYPE_H_
