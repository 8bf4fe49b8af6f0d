// quantize-int8: lowers a calibrated f32 CNN graph to integer operators. Weights become symmetric
// per-output-channel i8, biases i32, activations take the per-tensor parameters of a calibration table
// (quant/int8). FusedConv -> tessel.QConv, Gemm / MatMulBias -> tessel.QGemm, Add -> tessel.QAdd
// (ReLU / ReLU6 folded into the output clamp; a ReLU that alone reads an Add's sum too); pooling, Transpose, Flatten and Reshape on quantized
// data stay quantized. QuantizeLinear / DequantizeLinear appear exactly where precision changes.
#ifndef TESSEL_PASSES_QUANTIZE_INT8_QUANTIZE_INT8_H_
#define TESSEL_PASSES_QUANTIZE_INT8_QUANTIZE_INT8_H_

#include <map>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "passes/core/pass.h"
#include "graph/quant_params.h"

namespace tessel {

struct QuantizeInt8Options {
  // Compute nodes (by name) that stay f32, e.g. the first convolution or the classifier.
  std::set<std::string> keep_fp32;
  // Weights in [-weight_max, weight_max] (symmetric per channel): 127 (8-bit), or 64 (7-bit), whose byte
  // pairs x 255 fit int16, so that x86 CPUs without VNNI multiply them with vpmaddubsw (qgemm_avx2.cc:
  // 1.7-2.2x the 8-bit kernel's rate on a Zen 3), as ONNX Runtime's quantizer does with reduce_range.
  int weight_max = 127;
};

struct QuantizedTensor {
  std::string quantized_name;  // the u8/i8 value that carries it in the rewritten graph
  TensorQuantParams params;
};

struct QuantizeInt8Summary {
  int nodes_quantized = 0;  // compute and pass-through nodes now integer
  int quantize_inserted = 0;
  int dequantize_inserted = 0;
  int kept_fp32 = 0;  // quantizable compute nodes left f32 (keep list or missing calibration)
  // The quantized compute nodes (QConv, QGemm, QAdd) by name; they keep their f32 node's name.
  std::set<std::string> compute_nodes;
  // Every f32 tensor that has an integer twin, by its f32 name.
  std::map<std::string, QuantizedTensor> tensors;
  // The output of an Add whose QAdd took over the ReLU after it -> that ReLU's output (the sum itself
  // no longer exists).
  std::map<std::string, std::string> relu_folded;
};

// FusedConv, Gemm, MatMulBias and Add: the nodes the pass lowers, and the ones keep_fp32 may name.
bool IsInt8ComputeNode(const Node& n);

// InvalidArgument naming the first keep_fp32 entry that is not a compute node of `graph` (a misspelt
// name would otherwise quantize the node it meant), with some of the graph's compute nodes.
absl::Status CheckKeepFp32(const Graph& graph, const std::set<std::string>& keep_fp32);

// Rewrites `graph` in place. Nodes without calibration entries for their tensors stay f32 (with an
// explanation in ctx when asked). The graph must have inferred types (the cnn pipeline's output).
absl::StatusOr<QuantizeInt8Summary> QuantizeGraphInt8(Graph& graph, const QuantTable& table,
                                                      const QuantizeInt8Options& options, PassContext* ctx);

// Options: table=FILE (a calibration table, graph/quant_params.h), keep-fp32=NODE,NODE...
PassInfo QuantizeInt8PassInfo();

}  // namespace tessel

#endif  // TESSEL_PASSES_QUANTIZE_INT8_QUANTIZE_INT8_H_
