// Decoding of ONNX TensorProtos (initializers and tensor attributes) into Tessel tensors: raw_data,
// the typed repeated fields, and external data kept in side files beside the model.
#ifndef TESSEL_GRAPH_ONNX_INTERNAL_TENSOR_PROTO_H_
#define TESSEL_GRAPH_ONNX_INTERNAL_TENSOR_PROTO_H_

#include <string>

#include "absl/status/statusor.h"
#include "graph/dtype.h"
#include "graph/tensor.h"
#include "onnx/onnx_pb.h"

namespace tessel {
namespace onnx_internal {

// The Tessel dtype of an ONNX TensorProto.DataType; `what` names the tensor or value in errors.
absl::StatusOr<DType> DTypeFromOnnx(int32_t onnx_type, const std::string& what);

// Decodes `proto` into a tensor with its own 64-byte aligned storage. External data locations are
// resolved relative to `base_dir` and must stay inside it. `what` names the tensor in errors, e.g.
// "initializer 'conv1.weight'".
absl::StatusOr<Tensor> TensorFromProto(const onnx::TensorProto& proto, const std::string& base_dir,
                                       const std::string& what);

}  // namespace onnx_internal
}  // namespace tessel

#endif  // TESSEL_GRAPH_ONNX_INTERNAL_TENSOR_PROTO_H_
