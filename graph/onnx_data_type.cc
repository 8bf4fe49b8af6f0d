// onnx.TensorProto.DataType values: their names and the Tessel element types that hold them.
#include "graph/onnx_data_type.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace tessel {

std::string OnnxDataTypeName(int64_t onnx_type) {
  // onnx.proto's TensorProto.DataType, in order of value.
  static constexpr const char* kNames[] = {
      "UNDEFINED", "FLOAT",   "UINT8",     "INT8",         "UINT16",     "INT16",          "INT32",
      "INT64",     "STRING",  "BOOL",      "FLOAT16",      "DOUBLE",     "UINT32",         "UINT64",
      "COMPLEX64", "COMPLEX128", "BFLOAT16", "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ",
      "UINT4",     "INT4",    "FLOAT4E2M1"};
  if (onnx_type >= 0 && onnx_type < static_cast<int64_t>(sizeof(kNames) / sizeof(kNames[0]))) {
    return kNames[onnx_type];
  }
  return absl::StrCat("data type ", onnx_type);
}

absl::StatusOr<DType> DTypeFromOnnxDataType(int64_t onnx_type) {
  switch (onnx_type) {
    case 1: return DType::kF32;
    case 2: return DType::kU8;
    case 3: return DType::kI8;
    case 4: return DType::kU16;
    case 5: return DType::kI16;
    case 6: return DType::kI32;
    case 7: return DType::kI64;
    case 9: return DType::kBool;
    case 10: return DType::kF16;
    case 11: return DType::kF64;
    case 12: return DType::kU32;
    case 13: return DType::kU64;
    case 16: return DType::kBF16;
    case 0: return absl::InvalidArgumentError("element type is not set (UNDEFINED)");
  }
  return absl::UnimplementedError(absl::StrCat(
      "element type ", OnnxDataTypeName(onnx_type),
      " is not supported (Tessel handles FLOAT, DOUBLE, FLOAT16, BFLOAT16, INT8, UINT8, INT16, UINT16, INT32, UINT32, "
      "INT64, UINT64 and BOOL)"));
}

}  // namespace tessel
