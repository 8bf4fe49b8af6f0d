// The SSA graph IR: a Graph owns Nodes (operations) and Values (tensors). Every Value has one
// producer (a Node output, a graph input, or constant data) and a use list. Passes mutate graphs
// through the helpers here so that use lists stay consistent.
#ifndef TESSEL_GRAPH_GRAPH_H_
#define TESSEL_GRAPH_GRAPH_H_

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "graph/tensor.h"

namespace tessel {

class Node;
class Graph;

// A node attribute, as ONNX has them.
struct Attribute {
  enum class Kind : uint8_t { kInt, kFloat, kString, kInts, kFloats, kStrings, kTensor, kGraph };
  Kind kind = Kind::kInt;
  int64_t i = 0;
  float f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  std::vector<std::string> strings;
  std::shared_ptr<const Tensor> t;
  // A subgraph (If's branches): its inputs are the values it reads from the enclosing graph, which the
  // node also takes as inputs, in the same order, after its own.
  std::shared_ptr<const Graph> g;

  static Attribute Int(int64_t v);
  static Attribute Float(float v);
  static Attribute String(std::string v);
  static Attribute Ints(std::vector<int64_t> v);
  static Attribute Floats(std::vector<float> v);
  static Attribute Strings(std::vector<std::string> v);
  static Attribute TensorValue(Tensor v);
  static Attribute GraphValue(std::shared_ptr<const Graph> v);
  bool operator==(const Attribute& o) const;
  bool operator!=(const Attribute& o) const { return !(*this == o); }
};

struct Use {
  Node* node;
  int input_index;
  bool operator==(const Use& o) const { return node == o.node && input_index == o.input_index; }
};

class Value {
 public:
  const std::string& name() const { return name_; }
  const TensorType& type() const { return type_; }
  void set_type(TensorType t) { type_ = std::move(t); }

  // The producing node, or nullptr for graph inputs and constants.
  Node* producer() const { return producer_; }
  int producer_output() const { return producer_output_; }
  const std::vector<Use>& uses() const { return uses_; }
  bool is_constant() const { return constant_ != nullptr; }
  bool is_graph_input() const { return is_graph_input_; }
  // The constant's data (shared, never copied); nullptr for non-constants.
  const std::shared_ptr<const Tensor>& constant() const { return constant_; }
  int id() const { return id_; }

 private:
  friend class Graph;
  friend class Node;
  int id_ = 0;
  std::string name_;
  TensorType type_;
  Node* producer_ = nullptr;
  int producer_output_ = 0;
  std::vector<Use> uses_;
  std::shared_ptr<const Tensor> constant_;
  bool is_graph_input_ = false;
  std::list<std::unique_ptr<Value>>::iterator self_;
};

class Node {
 public:
  const std::string& op_type() const { return op_type_; }
  void set_op_type(std::string op) { op_type_ = std::move(op); }
  const std::string& name() const { return name_; }
  void set_name(std::string n) { name_ = std::move(n); }
  // ONNX domain: "" for the standard operator set, "tessel" for Tessel's fused operators.
  const std::string& domain() const { return domain_; }
  void set_domain(std::string d) { domain_ = std::move(d); }

  // Inputs may be nullptr for omitted optional inputs.
  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  Value* input(int i) const { return i < num_inputs() ? inputs_[i] : nullptr; }
  Value* output(int i) const { return outputs_[i]; }
  void SetInput(int i, Value* v);
  void AddInput(Value* v);
  void RemoveLastInput();

  const std::map<std::string, Attribute>& attributes() const { return attrs_; }
  bool HasAttr(const std::string& k) const { return attrs_.count(k) > 0; }
  const Attribute* FindAttr(const std::string& k) const;
  void SetAttr(const std::string& k, Attribute a) { attrs_[k] = std::move(a); }
  void RemoveAttr(const std::string& k) { attrs_.erase(k); }
  int64_t GetInt(const std::string& k, int64_t def) const;
  float GetFloat(const std::string& k, float def) const;
  std::string GetString(const std::string& k, const std::string& def) const;
  std::vector<int64_t> GetInts(const std::string& k, std::vector<int64_t> def = {}) const;
  std::vector<float> GetFloats(const std::string& k, std::vector<float> def = {}) const;

  // "Conv 'conv1'" for messages.
  std::string DebugName() const;
  int id() const { return id_; }

 private:
  friend class Graph;
  int id_ = 0;
  std::string op_type_;
  std::string name_;
  std::string domain_;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  std::map<std::string, Attribute> attrs_;
  std::list<std::unique_ptr<Node>>::iterator self_;
};

class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string n) { name_ = std::move(n); }

  // Creation. Names must be unique among values; an empty name gets a fresh one.
  Value* AddInput(std::string name, TensorType type);
  Value* AddConstant(std::string name, std::shared_ptr<const Tensor> data);
  Value* AddConstant(std::string name, Tensor data);
  // A node with fresh output values of unknown type (shape inference fills them in).
  Node* AddNode(std::string op_type, std::vector<Value*> inputs, int num_outputs, std::string name = "",
                std::vector<std::string> output_names = {});
  void AddOutput(Value* v) { outputs_.push_back(v); }
  void SetOutput(int i, Value* v) { outputs_[i] = v; }

  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  const std::list<std::unique_ptr<Node>>& nodes() const { return nodes_; }
  const std::list<std::unique_ptr<Value>>& values() const { return values_; }
  int num_nodes() const { return static_cast<int>(nodes_.size()); }
  std::vector<Value*> Constants() const;

  Value* FindValue(const std::string& name) const;
  // Renames a value; fails if the name is taken.
  absl::Status RenameValue(Value* v, const std::string& name);
  Node* FindNode(const std::string& name) const;
  bool IsGraphOutput(const Value* v) const;

  // Mutation helpers for passes.
  // Every use of `from` (including graph outputs) now reads `to`.
  void ReplaceAllUsesWith(Value* from, Value* to);
  // Removes a node; its outputs must have no uses and not be graph outputs.
  absl::Status EraseNode(Node* n);
  // Removes values with no producer-node, no uses, not graph inputs/outputs (dead constants).
  int RemoveUnusedConstants();
  // A fresh unique value or node name with the given prefix.
  std::string UniqueValueName(const std::string& prefix);
  std::string UniqueNodeName(const std::string& prefix);

  // Nodes in a topological order (stable: ties keep insertion order). Fails on a cycle.
  absl::StatusOr<std::vector<Node*>> TopologicalOrder() const;
  // Reorders the node list topologically.
  absl::Status SortTopologically();

  // Structural checks: SSA (one producer per value, unique names), use lists consistent, acyclic,
  // every input defined, graph outputs defined. When check_types, every node's output types are
  // re-inferred from its inputs and must equal the stored ones (see op_registry.h).
  absl::Status Verify(bool check_types = true) const;

  // Parameter count (elements of constants) and bytes.
  int64_t ConstantElements() const;
  int64_t ConstantBytes() const;

 private:
  Value* NewValue(std::string name);
  std::string name_ = "main";
  std::list<std::unique_ptr<Node>> nodes_;
  std::list<std::unique_ptr<Value>> values_;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  std::map<std::string, Value*> value_by_name_;
  int next_value_id_ = 0;
  int next_node_id_ = 0;
  int64_t fresh_counter_ = 0;
};

}  // namespace tessel

#endif  // TESSEL_GRAPH_GRAPH_H_
