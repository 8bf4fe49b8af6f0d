// ONNX importer (host side): reads an ONNX model (default-domain opsets 1 to 21; below 11 through the
// ONNX version converter) into a Tessel Graph whose operators take their opset-18 form or a later one
// (opsets 19 to 21 only add attributes, element types and GroupNormalization's per-channel form),
// with types inferred and the graph verified.
#ifndef TESSEL_GRAPH_ONNX_ONNX_IMPORTER_H_
#define TESSEL_GRAPH_ONNX_ONNX_IMPORTER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "onnx/onnx_pb.h"

namespace tessel {

// Opsets kMinConvertedOnnxOpset to kMinOnnxOpset - 1 are converted to kMinOnnxOpset on import.
inline constexpr int kMinConvertedOnnxOpset = 1;
inline constexpr int kMinOnnxOpset = 11;
inline constexpr int kMaxOnnxOpset = 21;

struct OnnxImportOptions {
  // Values for symbolic input dims (e.g. {"batch", 1}); unlisted symbols stay symbolic. Names that
  // no input uses are ignored, so one setting can serve several models.
  std::map<std::string, int64_t> dim_values;
  // Called on each node once its types are inferred; may replace the node by constants of the same
  // output names (erasing it) and return true. An error leaves the node as it is (it must not have
  // changed the graph then). The command-line tools pass fold-shape-ops'
  // FoldShapeNode, so that shape arithmetic on static shapes (Shape -> Gather/Concat/... ->
  // ConstantOfShape -> Expand) is constant where a later node needs a static rank. The importer
  // evaluates nothing itself: graph/ sits below the kernels.
  std::function<absl::StatusOr<bool>(Graph&, Node*)> fold_node;
};

// Reads, parses and imports the model at `path`; external data files are looked up beside it.
// Errors start with the path: NotFound for a missing file, InvalidArgument for a file that is not a
// well-formed ONNX model, Unimplemented for operators, types or features Tessel does not support
// (all unsupported operator types are listed in one error).
absl::StatusOr<std::unique_ptr<Graph>> ImportOnnxFile(const std::string& path, const OnnxImportOptions& options = {});

// Imports an already parsed model; external data locations are relative to `base_dir` ("" means the
// current directory). Errors start with "ONNX model 'GRAPH_NAME'".
absl::StatusOr<std::unique_ptr<Graph>> ImportOnnxModel(const onnx::ModelProto& model, const std::string& base_dir,
                                                       const OnnxImportOptions& options = {});

}  // namespace tessel

#endif  // TESSEL_GRAPH_ONNX_ONNX_IMPORTER_H_
