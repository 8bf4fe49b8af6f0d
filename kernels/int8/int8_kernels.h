// The optimized int8 path for quantized nodes: tessel.QConv (channels-last, group 1) and tessel.QGemm on
// u8 activations run through the VNNI GEMM (im2col where needed); anything else is left to the reference
// kernels. Results equal the reference kernels' bit for bit.
#ifndef TESSEL_KERNELS_INT8_INT8_KERNELS_H_
#define TESSEL_KERNELS_INT8_INT8_KERNELS_H_

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "graph/graph.h"
#include "graph/tensor.h"

namespace tessel {

// Computes `node` into the preallocated `outputs` and returns true when this path serves it; false
// (outputs untouched) for nodes, layouts, dtypes or CPUs it does not cover. Packed weights are cached
// per weight tensor for the life of the process.
absl::StatusOr<bool> RunInt8Node(const Node& node, absl::Span<const Tensor* const> inputs, absl::Span<Tensor> outputs);

}  // namespace tessel

#endif  // TESSEL_KERNELS_INT8_INT8_KERNELS_H_
