// `tessel compile --quantize=int8 ...`: the flags and the driver that cmd_compile.cc calls before
// compiling. Calibration data is a .npy file or a directory of .npy files holding samples for the
// model's single input (one sample, or a stack [N, ...] of them).
#ifndef TESSEL_CLI_QUANTIZE_FLAGS_H_
#define TESSEL_CLI_QUANTIZE_FLAGS_H_

#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/cli.h"
#include "graph/graph.h"
#include "quant/int8/quantize.h"

namespace tessel {

// --quantize, --calibration, --calibration-method, --keep-fp32, --int8-min-sqnr, --calibration-batch,
// --activations (u8|i8), --dump-ranges FILE, --int8-fallback (cost|none).
std::vector<cli::FlagSpec> QuantizeFlagSpecs();

// Without --quantize: returns false and leaves the graph alone. With --quantize=int8: runs the int8
// pipeline, calibration (printing progress to `log`), quantization and sensitivity on `graph` in place,
// prints the per-layer report and returns true; the caller then compiles the graph without re-running
// fusion passes (pipeline "dce").
// `result` (optional) receives the table, the report and the budget's f32 layers.
absl::StatusOr<bool> MaybeQuantizeInt8(const cli::Args& args, Graph& graph, std::ostream& log,
                                       QuantizeInt8Result* result = nullptr);

// The f32 passes that --quantize=int8 runs before calibration (--pipeline, else kInt8Pipeline).
std::string Int8F32Pipeline(const cli::Args& args);

// `graph` (as loaded) through Int8F32Pipeline and quantized with `table`, the compute nodes in `keep`
// left f32: the int8 graph again, without calibrating again.
absl::Status RequantizeInt8(const cli::Args& args, const QuantTable& table, const std::set<std::string>& keep,
                            Graph& graph);

// The calibration batches for `graph` from a .npy file or directory (for tests and other tools).
absl::Status LoadCalibrationData(const std::string& path, const Graph& graph, int64_t batch, CalibrationOptions* options);

}  // namespace tessel

#endif  // TESSEL_CLI_QUANTIZE_FLAGS_H_
