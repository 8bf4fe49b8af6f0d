// INT8 post-training quantization of a CNN: runs the fusion pipeline, calibrates every activation over
// a calibration set (streaming histograms; min/max, percentile, entropy or MSE per model and per
// tensor), lowers to integer operators (passes/quantize_int8), measures per-layer SQNR against f32 and
// moves the most sensitive layers back to f32 until an output-SQNR budget holds.
#ifndef TESSEL_QUANT_INT8_QUANTIZE_H_
#define TESSEL_QUANT_INT8_QUANTIZE_H_

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "passes/quantize_int8/quantize_int8.h"
#include "quant/int8/histogram.h"
#include "graph/quant_params.h"
#include "quant/int8/runner.h"

namespace tessel {

// The f32 pipeline before calibration: `cnn` without fuse-depthwise-pointwise, so that the tensor
// between a depthwise and a pointwise convolution is observed and quantized like any other.
inline constexpr char kInt8Pipeline[] =
    "fold-shape-ops,fold-constants,simplify,cse,fold-batchnorm,fuse-conv-add,fuse-conv-activation,layout,dce";

struct CalibrationOptions {
  CalibrationMethod method = CalibrationMethod::kMse;
  // Per-tensor overrides of `method`, by tensor name.
  std::map<std::string, CalibrationMethod> tensor_methods;
  double percentile = 99.99;
  DType activation_dtype = DType::kU8;  // u8 asymmetric or i8 symmetric
  int weight_max = 127;                 // QuantizeInt8Options::weight_max: 127 (8-bit) or 64 (7-bit)
  std::set<std::string> keep_fp32;      // compute nodes that stay f32 whatever the budget
  std::string pipeline = kInt8Pipeline;  // run on the graph first ("" when it already ran)

  // Calibration batches: num_batches, and batch(i) giving the graph inputs in order.
  int num_batches = 0;
  std::function<absl::StatusOr<std::vector<Tensor>>(int i)> batch;
  // Sensitivity: the first `sensitivity_batches` calibration batches are compared f32 vs int8. With
  // min_output_sqnr_db > 0, the layers with the lowest SQNR fall back to f32 until every graph output's
  // SQNR reaches it.
  int sensitivity_batches = 4;
  double min_output_sqnr_db = 0;
  // The kernels of the calibration and sensitivity runs; empty: the catalog's fastest for this CPU on
  // every core (CatalogKernelOverride, catalog_kernels.h).
  KernelOverride kernel;
  // Called after each calibration batch (done, total) and at each fallback step.
  std::function<void(const std::string& stage, int done, int total)> progress;
};

struct LayerSensitivity {
  std::string node;
  std::string op;              // the f32 operator (FusedConv, Gemm, ...)
  bool int8 = false;           // chosen precision
  double layer_sqnr_db = 0;    // this layer alone quantized, fed f32 reference inputs
  double output_sqnr_db = 0;   // its output tensor in the quantized graph vs f32 (errors accumulated)
};

struct QuantizeInt8Result {
  QuantTable table;
  QuantizeInt8Summary summary;
  std::vector<LayerSensitivity> layers;  // in graph order
  std::vector<double> graph_output_sqnr_db;
  std::vector<std::string> fallback;     // nodes the budget moved to f32, in order
  // The per-layer table: node, op, precision, layer SQNR, output SQNR.
  std::string Report() const;
};

// SQNR in dB of `test` against `reference` (same element count): 10 log10(sum ref^2 / sum (ref-test)^2).
double Sqnr(double signal, double noise);

// Runs the pipeline, calibration, quantization and sensitivity on `graph` in place.
absl::StatusOr<QuantizeInt8Result> QuantizeInt8(Graph& graph, const CalibrationOptions& options);

// Calibration alone: the table for every f32 activation of an (already fused) graph.
absl::StatusOr<QuantTable> Calibrate(const Graph& graph, const CalibrationOptions& options);

}  // namespace tessel

#endif  // TESSEL_QUANT_INT8_QUANTIZE_H_
