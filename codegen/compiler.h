// Compiles an imported graph to a deployable artifact: runs the pass pipeline, fixes static shapes,
// chooses a kernel per op, plans activation memory, lays out the weights and writes the plan.
#ifndef TESSEL_CODEGEN_COMPILER_H_
#define TESSEL_CODEGEN_COMPILER_H_

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "artifact/artifact.pb.h"
#include "graph/graph.h"
#include "kernels/registry/op_kernel.h"

namespace tessel {

struct CompileOptions {
  std::string pipeline = "O2";
  // "host" (this machine's family), "aarch64-neon" or "aarch64-sve".
  std::string target = "host";
  std::string memory_algorithm = "greedy-by-size";
  // Values for symbolic input dims ("batch" -> 1); compiled artifacts have static shapes.
  std::map<std::string, int64_t> dim_values;
  // Restricts kernel selection to one backend ("xnnpack", "gemm", "reference") or one kernel name;
  // empty: the cheapest legal kernel per op. Defaults to TESSEL_FORCE_BACKEND.
  std::string force_backend = ForcedBackendFromEnv();
  // Tuning: for every op with more than one legal kernel, time each candidate on the op's real shape
  // and weights (single thread, about `tune_seconds_per_candidate` each) and keep the fastest. Choices
  // are read from and added to `tune_cache` (a text file keyed by CPU model and op signature; empty:
  // no file), so compiling again with a complete cache times nothing and is deterministic.
  bool tune = false;
  std::string tune_cache;
  double tune_seconds_per_candidate = 0.05;
  // Progress lines for long steps (nullptr: quiet).
  std::function<void(const std::string&)> progress;
};

struct CompileResult {
  artifact::Plan plan;
  std::string weights;  // the weights section, 64-byte aligned tensors
  int nodes_before = 0;
  int nodes_after = 0;
  std::string pass_report;
  // Ops per backend ("xnnpack" -> 21, "reference" -> 1), for the compile summary.
  std::map<std::string, int> kernels_per_backend;
  // With tune: ops timed now, and ops whose choice came from the cache.
  int tuned_ops = 0;
  int cached_ops = 0;
  // The cost model's time for one run on this CPU: the sum of the chosen kernels' estimates (reference
  // kernels priced from their work; tuned choices count their estimate, not their timing).
  double estimated_seconds = 0;
  // Each op's share of it, by node name.
  std::map<std::string, double> op_seconds;
  // The ops left on reference kernels, with why no optimized kernel took them, for the compile warning.
  struct ReferenceOp {
    std::string name;     // the node
    std::string op;       // "GridSample", "tessel.RMSNorm"
    std::string reason;   // "no optimized kernel for GridSample on f32", or each candidate's refusal
    double estimated_seconds = 0;
  };
  std::vector<ReferenceOp> reference_ops;
};

// The kernel for one node: the name of the cheapest legal operator-level kernel (see
// kernels/op_kernels.h) honouring `force`, or "reference/<domain.>op" when none applies; its backend, its
// estimated seconds and, for a reference kernel, why no optimized one applies.
std::string SelectKernel(const Node& node, const std::string& force, std::string* backend = nullptr,
                         double* seconds = nullptr, std::string* why_reference = nullptr);

// `graph` is optimized in place.
absl::StatusOr<CompileResult> CompileGraph(Graph& graph, const CompileOptions& options);

// This CPU's model name, family, model and usable features ("AMD EPYC 9R45 (family 26 model 2; x86-64
// avx2 ...)", or the features alone where /proc/cpuinfo has no name), the machine half of tuning-cache
// keys.
std::string CpuModelName();

// Resolves "host" to the running machine's target name.
std::string ResolveTarget(const std::string& target);

}  // namespace tessel

#endif  // TESSEL_CODEGEN_COMPILER_H_
