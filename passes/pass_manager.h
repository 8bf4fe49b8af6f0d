// Runs a pipeline of registered passes over a graph: optional verification after every pass,
// IR dumps after chosen passes, per-pass timing and statistics, and fusion explanations.
#ifndef TESSEL_PASSES_PASS_MANAGER_H_
#define TESSEL_PASSES_PASS_MANAGER_H_

#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/graph.h"
#include "passes/core/pass.h"
#include "passes/core/pipeline.h"

namespace tessel {

struct PassManagerOptions {
  bool verify_each = false;
  // Pass names after which to print the IR, or {"all"}.
  std::vector<std::string> print_after;
  bool explain = false;
  // Where IR dumps go (stderr when null).
  std::ostream* dump = nullptr;
};

struct PassRecord {
  std::string name;
  double milliseconds = 0;
  int nodes_before = 0;
  int nodes_after = 0;
  std::map<std::string, int64_t> stats;
};

class PassManager {
 public:
  // Parses and expands the pipeline, creating each pass with its options.
  static absl::StatusOr<PassManager> Create(absl::string_view pipeline, PassManagerOptions options = {});

  // Runs every pass in order; the first failure stops the run and names the pass. With verify_each,
  // the graph is verified (structure and types) after every pass.
  absl::Status Run(Graph& graph);

  const std::string& pipeline() const { return pipeline_; }
  const std::vector<PassRecord>& records() const { return records_; }
  const std::vector<std::string>& explanations() const { return ctx_.explanations(); }
  // A table of per-pass time, node counts and statistics.
  std::string Report() const;

 private:
  PassManager() = default;
  std::string pipeline_;
  PassManagerOptions options_;
  std::vector<PassSpec> specs_;
  std::vector<std::unique_ptr<Pass>> passes_;
  std::vector<PassRecord> records_;
  PassContext ctx_;
};

// Registers Tessel's built-in passes into PassRegistry::Global() once (PassManager::Create calls it).
void RegisterBuiltinPasses();

}  // namespace tessel

#endif  // TESSEL_PASSES_PASS_MANAGER_H_
