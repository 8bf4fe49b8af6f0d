// Compiles an imported graph to a deployable artifact: runs the pass pipeline, fixes static shapes,
// chooses a kernel per op, plans activation memory, lays out the weights and writes the plan.
#ifndef TESSEL_CODEGEN_COMPILER_H_
#define TESSEL_CODEGEN_COMPILER_H_

#include <functional>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "codegen/artifact.pb.h"
#include "graph/graph.h"

namespace tessel {

struct CompileOptions {
  std::string pipeline = "O2";
  // "host" (this machine's family), "aarch64-neon" or "aarch64-sve".
  std::string target = "host";
  std::string memory_algorithm = "greedy-by-size";
  // Values for symbolic input dims ("batch" -> 1); compiled artifacts have static shapes.
  std::map<std::string, int64_t> dim_values;
  // Progress lines for long steps (nullptr: quiet).
  std::function<void(const std::string&)> progress;
};

struct CompileResult {
  artifact::Plan plan;
  std::string weights;  // the weights section, 64-byte aligned tensors
  int nodes_before = 0;
  int nodes_after = 0;
  std::string pass_report;
};

// `graph` is optimized in place.
absl::StatusOr<CompileResult> CompileGraph(Graph& graph, const CompileOptions& options);

// Resolves "host" to the running machine's target name.
std::string ResolveTarget(const std::string& target);

}  // namespace tessel

#endif  // TESSEL_CODEGEN_COMPILER_H_
