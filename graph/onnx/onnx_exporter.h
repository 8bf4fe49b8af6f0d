// ONNX export of a Tessel graph (host side), so an optimized graph opens in Netron and other ONNX
// tools. Tessel's fused operators are written in the "tessel" domain.
#ifndef TESSEL_GRAPH_ONNX_ONNX_EXPORTER_H_
#define TESSEL_GRAPH_ONNX_ONNX_EXPORTER_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "onnx/onnx_pb.h"

namespace tessel {

absl::StatusOr<onnx::ModelProto> ExportOnnxModel(const Graph& graph, int opset = 18);
absl::Status ExportOnnxFile(const Graph& graph, const std::string& path, int opset = 18);

}  // namespace tessel

#endif  // TESSEL_GRAPH_ONNX_ONNX_EXPORTER_H_
