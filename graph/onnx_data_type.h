// onnx.TensorProto.DataType values (as in ONNX files and Cast's `to`): their names and the Tessel
// element types that hold them. Shared by the ONNX importer and the operator schemas that take a type
// attribute, so that both accept and name the same types.
#ifndef TESSEL_GRAPH_ONNX_DATA_TYPE_H_
#define TESSEL_GRAPH_ONNX_DATA_TYPE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "graph/dtype.h"

namespace tessel {

// The name of an onnx.TensorProto.DataType value ("FLOAT", "FLOAT8E4M3FN", "INT4"), including the
// types of opsets 19 to 21 that the ONNX library Tessel builds against does not know; "data type N"
// for a value ONNX does not define.
std::string OnnxDataTypeName(int64_t onnx_type);

// The element type that holds an onnx.TensorProto.DataType value. Unimplemented, naming the type and
// listing the supported ones, for the rest (DOUBLE, strings, float8, 4-bit, ...); InvalidArgument for
// UNDEFINED (0).
absl::StatusOr<DType> DTypeFromOnnxDataType(int64_t onnx_type);

}  // namespace tessel

#endif  // TESSEL_GRAPH_ONNX_DATA_TYPE_H_
