// Node-by-node execution for calibration and sensitivity analysis: like the reference interpreter, but
// every computed tensor can be observed (or kept) by name, and a node may be served by another kernel
// (the int8 VNNI kernels, bit-exact with the reference ones). Also a cheap graph clone (constants shared).
#ifndef TESSEL_QUANT_INT8_RUNNER_H_
#define TESSEL_QUANT_INT8_RUNNER_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "graph/graph.h"
#include "graph/tensor.h"

namespace tessel {

// Computes `node` into `outputs` (already allocated) and returns true, or returns false to leave it to
// the reference kernels.
using KernelOverride =
    std::function<absl::StatusOr<bool>(const Node& node, absl::Span<const Tensor* const> inputs, absl::Span<Tensor> outputs)>;

struct RunHooks {
  // Called for every graph input and node output as it is computed.
  std::function<void(const Value& value, const Tensor& tensor)> observe;
  KernelOverride kernel;
};

// Runs `node` on `inputs` into `outputs`: on `kernel` where it takes the node, else on the reference kernel.
absl::Status RunNode(const Node& node, const std::vector<const Tensor*>& inputs, const KernelOverride& kernel,
                     std::vector<Tensor>* outputs);

// Runs `graph` on `inputs` (graph-input order) and returns its outputs. Tensors are released after
// their last use.
absl::StatusOr<std::vector<Tensor>> RunGraph(const Graph& graph, const std::vector<Tensor>& inputs,
                                             const RunHooks& hooks = {});

// A structural copy of `graph` sharing its constants' data.
absl::StatusOr<std::unique_ptr<Graph>> CloneGraph(const Graph& graph);

}  // namespace tessel

#endif  // TESSEL_QUANT_INT8_RUNNER_H_
