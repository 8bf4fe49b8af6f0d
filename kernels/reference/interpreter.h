// The reference interpreter: executes a Graph node by node with the reference kernels. Slow and plain
// on purpose; it is the oracle for compiled artifacts and passes.
#ifndef TESSEL_KERNELS_REFERENCE_INTERPRETER_H_
#define TESSEL_KERNELS_REFERENCE_INTERPRETER_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "graph/tensor.h"

namespace tessel {

struct NodeTiming {
  const Node* node;
  double milliseconds;
};

class ReferenceInterpreter {
 public:
  // The graph must outlive the interpreter and stay unchanged while it is used.
  static absl::StatusOr<ReferenceInterpreter> Create(const Graph* graph);

  // Inputs in graph-input order. Checks dtypes and shapes (static dims must match; a symbolic dim
  // takes one value across all inputs). Returns the graph outputs in order.
  absl::StatusOr<std::vector<Tensor>> Run(const std::vector<Tensor>& inputs);
  absl::StatusOr<std::vector<Tensor>> Run(const std::map<std::string, Tensor>& inputs_by_name);

  // Per-node wall time of the last Run when profiling is on.
  void set_profile(bool on) { profile_ = on; }
  const std::vector<NodeTiming>& last_profile() const { return timings_; }

 private:
  explicit ReferenceInterpreter(const Graph* graph) : graph_(graph) {}
  const Graph* graph_;
  std::vector<Node*> order_;
  // For each node position, the values whose last use is that node (freed afterwards).
  std::vector<std::vector<const Value*>> release_after_;
  bool profile_ = false;
  std::vector<NodeTiming> timings_;
};

// Checks concrete inputs against the graph's input types; names the offending input.
absl::Status CheckInputs(const Graph& graph, const std::vector<Tensor>& inputs);

}  // namespace tessel

#endif  // TESSEL_KERNELS_REFERENCE_INTERPRETER_H_
