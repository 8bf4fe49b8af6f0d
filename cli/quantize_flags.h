// `tessel compile --quantize=int8 ...`: the flags and the driver that cmd_compile.cc calls before
// compiling. Calibration data is a .npy file or a directory of .npy files holding samples for the
// model's single input (one sample, or a stack [N, ...] of them).
#ifndef TESSEL_CLI_QUANTIZE_FLAGS_H_
#define TESSEL_CLI_QUANTIZE_FLAGS_H_

#include <ostream>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/cli.h"
#include "graph/graph.h"
#include "quant/int8/quantize.h"

namespace tessel {

// --quantize, --calibration, --calibration-method, --keep-fp32, --int8-min-sqnr, --calibration-batch,
// --activations (u8|i8), --dump-ranges FILE.
std::vector<cli::FlagSpec> QuantizeFlagSpecs();

// Without --quantize: returns false and leaves the graph alone. With --quantize=int8: runs the int8
// pipeline, calibration (printing progress to `log`), quantization and sensitivity on `graph` in place,
// prints the per-layer report and returns true; the caller then compiles the graph without re-running
// fusion passes (pipeline "dce").
absl::StatusOr<bool> MaybeQuantizeInt8(const cli::Args& args, Graph& graph, std::ostream& log);

// The calibration batches for `graph` from a .npy file or directory (for tests and other tools).
absl::Status LoadCalibrationData(const std::string& path, const Graph& graph, int64_t batch, CalibrationOptions* options);

}  // namespace tessel

#endif  // TESSEL_CLI_QUANTIZE_FLAGS_H_
