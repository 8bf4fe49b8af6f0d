// Test helpers for passes: drive text IR through a pipeline string and compare with expected IR, and
// check numeric equivalence of a graph before and after with the reference interpreter.
#ifndef TESSEL_PASSES_TESTING_PASS_TEST_UTIL_H_
#define TESSEL_PASSES_TESTING_PASS_TEST_UTIL_H_

#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/graph.h"
#include "passes/pass_manager.h"

namespace tessel::testing {

struct PipelineResult {
  std::unique_ptr<Graph> before;
  std::unique_ptr<Graph> after;
  std::string after_text;
  std::map<std::string, int64_t> stats;  // summed over passes
  std::vector<std::string> explanations;
};

// Parses `ir` (types are re-inferred so tests may write them loosely), runs `pipeline` with
// verify-each, and returns both graphs and the printed result.
absl::StatusOr<PipelineResult> RunPipelineOnIr(absl::string_view ir, absl::string_view pipeline, bool explain = false);

// Collapses runs of whitespace so expected IR can be indented freely.
std::string NormalizeIr(absl::string_view text);

// Runs both graphs on the same seeded random inputs (symbolic dims set to `symbolic_dim`) and checks
// every output agrees within atol + rtol * |reference|. The error names the output and element.
absl::Status CheckNumericallyEquivalent(const Graph& before, const Graph& after, double atol, double rtol,
                                        uint32_t seed = 1, int64_t symbolic_dim = 2);

}  // namespace tessel::testing

#endif  // TESSEL_PASSES_TESTING_PASS_TEST_UTIL_H_
