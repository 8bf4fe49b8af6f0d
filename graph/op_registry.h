// Operator schemas: arity and output type inference for every supported operator. The same
// inference serves compile time (constant inputs known) and run time (all inputs known).
#ifndef TESSEL_GRAPH_OP_REGISTRY_H_
#define TESSEL_GRAPH_OP_REGISTRY_H_

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "graph/graph.h"

namespace tessel {

inline constexpr char kTesselDomain[] = "tessel";

struct InferenceContext {
  const Node& node;
  // One per node input; nullptr for an omitted optional input.
  std::vector<const TensorType*> input_types;
  // The input's value when known (constants at compile time, everything at run time), else nullptr.
  std::vector<const Tensor*> input_values;

  int num_inputs() const { return static_cast<int>(input_types.size()); }
  bool has_input(int i) const { return i < num_inputs() && input_types[i] != nullptr; }
  const TensorType& type(int i) const { return *input_types[i]; }
  const Tensor* value(int i) const { return i < static_cast<int>(input_values.size()) ? input_values[i] : nullptr; }
};

using InferFn = std::function<absl::StatusOr<std::vector<TensorType>>(const InferenceContext&)>;

struct OpSchema {
  std::string op_type;
  std::string domain;  // "" (ONNX standard) or kTesselDomain
  int min_inputs = 1;
  int max_inputs = 1;
  int min_outputs = 1;
  int max_outputs = 1;
  InferFn infer;
  std::string summary;
};

// A fresh symbolic dimension for an extent that is unknown until run time.
Dim UnknownDim();

class OpRegistry {
 public:
  // The process-wide registry, holding every built-in operator. Other repositories may add theirs.
  static OpRegistry& Global();

  void Register(OpSchema schema);
  const OpSchema* Find(const std::string& domain, const std::string& op_type) const;
  std::vector<const OpSchema*> All() const;

 private:
  std::map<std::pair<std::string, std::string>, OpSchema> schemas_;
};

// Checks the node's arity against its schema and runs its inference.
absl::StatusOr<std::vector<TensorType>> InferOutputTypes(const Node& node,
                                                         std::vector<const TensorType*> input_types,
                                                         std::vector<const Tensor*> input_values);

// Infers one node's output types from its inputs' (and constant inputs' values) and stores them.
absl::Status InferNodeTypes(Node* node);

// Infers the output types of every node in topological order and stores them on the values.
// Errors name the node.
absl::Status InferShapes(Graph& graph);

// Re-infers each node's outputs and compares with the stored types (used by Graph::Verify).
absl::Status VerifyTypes(const Graph& graph, const std::vector<Node*>& order);

// Built-in operator groups (called by OpRegistry::Global()).
void RegisterElementwiseOps(OpRegistry& r);
void RegisterNnOps(OpRegistry& r);
void RegisterTensorOps(OpRegistry& r);
void RegisterDetectionOps(OpRegistry& r);
void RegisterControlFlowOps(OpRegistry& r);
void RegisterLossOps(OpRegistry& r);
// Tessel's own fused operators (domain kTesselDomain), produced by passes.
void RegisterFusedCnnOps(OpRegistry& r);
void RegisterTransformerOps(OpRegistry& r);

}  // namespace tessel

#endif  // TESSEL_GRAPH_OP_REGISTRY_H_
