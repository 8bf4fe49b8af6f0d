// ONNX import: file reading and parsing, structural validation, the supported-operator check, graph
// building with older operator forms rewritten to their opset-18 form, type inference, verification.
#include "graph/onnx/onnx_importer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <exception>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/onnx/internal/tensor_proto.h"
#include "graph/op_registry.h"
#include "onnx/defs/schema.h"
#include "onnx/version_converter/convert.h"
#include "support/mapped_file.h"

namespace tessel {
namespace {

#define TESSEL_RETURN_IF_ERROR(expr)     \
  do {                                   \
    const absl::Status status_ = (expr); \
    if (!status_.ok()) return status_;   \
  } while (0)

using onnx_internal::DTypeFromOnnx;
using onnx_internal::TensorFromProto;

bool IsStandardDomain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

// Tessel's own operators (tessel.FusedConv, tessel.Attention, ...), as `tessel opt -o` writes them.
constexpr char kTesselDomain[] = "tessel";

absl::Status Prefixed(const std::string& label, const absl::Status& s) {
  return absl::Status(s.code(), absl::StrCat(label, ": ", s.message()));
}

// An operator whose attribute became an input in opset `since`. Older nodes get the attribute's
// value as a constant input so that the IR holds one form of each operator.
struct AttrToInput {
  const char* op_type;
  int since;
  const char* attr;
  int input_index;
  bool float_scalar;  // Dropout's ratio; every other moved attribute is a list of int64.
};

constexpr AttrToInput kAttrToInput[] = {
    {"Squeeze", 13, "axes", 1, false},         {"Unsqueeze", 13, "axes", 1, false},
    {"Split", 13, "split", 1, false},          {"ReduceSum", 13, "axes", 1, false},
    {"ReduceMean", 18, "axes", 1, false},      {"ReduceMax", 18, "axes", 1, false},
    {"ReduceMin", 18, "axes", 1, false},       {"ReduceProd", 18, "axes", 1, false},
    {"ReduceL1", 18, "axes", 1, false},        {"ReduceL2", 18, "axes", 1, false},
    {"ReduceLogSum", 18, "axes", 1, false},    {"ReduceLogSumExp", 18, "axes", 1, false},
    {"ReduceSumSquare", 18, "axes", 1, false}, {"Dropout", 12, "ratio", 1, true},
};

// Before opset 13 these flattened their input to 2-D at `axis` (default 1) and normalized each row;
// from 13 on they normalize along the single axis `axis` (default -1).
bool IsLegacyFlattenOp(const std::string& op_type) {
  return op_type == "Softmax" || op_type == "LogSoftmax" || op_type == "Hardmax";
}

std::string NodeDesc(const std::string& op_type, const std::string& name) {
  return absl::StrCat(op_type, " '", name, "'");
}

class Importer {
 public:
  Importer(const onnx::ModelProto& model, std::string base_dir, const OnnxImportOptions& options)
      : model_(model), graph_proto_(model.graph()), base_dir_(std::move(base_dir)), options_(options) {}

  // For one branch of an If (`branch`, a subgraph of `model`), at the enclosing graph's opset.
  Importer(const onnx::ModelProto& model, const onnx::GraphProto& branch, std::string base_dir,
           const OnnxImportOptions& options, int opset)
      : model_(model), graph_proto_(branch), base_dir_(std::move(base_dir)), options_(options), opset_(opset) {}

  // A subgraph (an If branch, a Loop body) as a graph whose inputs are its own (names and types given: a
  // Loop body's; none for an If branch), then `captures` (the enclosing values it reads, by name and
  // type), and whose outputs are its own.
  absl::StatusOr<std::shared_ptr<const Graph>> ImportSubgraph(
      const std::vector<std::pair<std::string, TensorType>>& formals, const std::vector<const Value*>& captures) {
    NameNodes();
    TESSEL_RETURN_IF_ERROR(CheckSupportedOps());
    TESSEL_RETURN_IF_ERROR(CollectDefinitions());
    graph_ = std::make_unique<Graph>();
    graph_->set_name(graph_proto_.name());
    for (const auto& [name, type] : formals) values_[name] = graph_->AddInput(name, type);
    for (const Value* v : captures) values_[v->name()] = graph_->AddInput(v->name(), v->type());
    TESSEL_RETURN_IF_ERROR(AddInitializers());
    for (int i = 0; i < graph_proto_.node_size(); ++i) {
      TESSEL_RETURN_IF_ERROR(AddNode(graph_proto_.node(i), node_names_[i]));
    }
    TESSEL_RETURN_IF_ERROR(AddOutputs());
    TESSEL_RETURN_IF_ERROR(graph_->Verify());
    return std::shared_ptr<const Graph>(std::move(graph_));
  }

  absl::StatusOr<std::unique_ptr<Graph>> Run() {
    if (!model_.has_graph()) {
      return absl::InvalidArgumentError("not a valid ONNX model (it has no graph)");
    }
    TESSEL_RETURN_IF_ERROR(ReadOpset());
    if (graph_proto_.sparse_initializer_size() > 0) {
      return absl::UnimplementedError(absl::StrCat("sparse initializers are not supported (first: '",
                                                   graph_proto_.sparse_initializer(0).values().name(), "')"));
    }
    NameNodes();
    TESSEL_RETURN_IF_ERROR(CheckSupportedOps());
    TESSEL_RETURN_IF_ERROR(CollectDefinitions());
    graph_ = std::make_unique<Graph>();
    if (!graph_proto_.name().empty()) graph_->set_name(graph_proto_.name());
    TESSEL_RETURN_IF_ERROR(AddInitializers());
    TESSEL_RETURN_IF_ERROR(AddInputs());
    for (int i = 0; i < graph_proto_.node_size(); ++i) {
      TESSEL_RETURN_IF_ERROR(AddNode(graph_proto_.node(i), node_names_[i]));
    }
    TESSEL_RETURN_IF_ERROR(AddOutputs());
    // Types were inferred node by node while building (the opset-11 Softmax rewrite needs input
    // ranks), so the whole-graph InferShapes would only repeat that; Verify re-infers and compares.
    TESSEL_RETURN_IF_ERROR(graph_->Verify());
    return std::move(graph_);
  }

 private:
  absl::Status ReadOpset() {
    opset_ = -1;
    for (const onnx::OperatorSetIdProto& op : model_.opset_import()) {
      if (!IsStandardDomain(op.domain())) continue;
      if (opset_ >= 0 && op.version() != opset_) {
        return absl::InvalidArgumentError(
            absl::StrCat("the default ONNX domain is imported twice, at opsets ", opset_, " and ", op.version()));
      }
      opset_ = op.version();
    }
    if (opset_ < 0) {
      return absl::InvalidArgumentError("not a valid ONNX model (no opset_import for the default domain)");
    }
    if (opset_ < kMinOnnxOpset || opset_ > kMaxOnnxOpset) {
      return absl::UnimplementedError(absl::StrCat("default-domain opset ", opset_,
                                                   " is not supported; Tessel imports opsets ", kMinConvertedOnnxOpset,
                                                   " to ", kMaxOnnxOpset, " (", kMinConvertedOnnxOpset, " to ",
                                                   kMinOnnxOpset - 1, " converted to ", kMinOnnxOpset, ")"));
    }
    return absl::OkStatus();
  }

  // Keeps ONNX node names; an empty or repeated name becomes "<op type>_<node index>".
  void NameNodes() {
    absl::flat_hash_set<std::string> onnx_names;
    for (const onnx::NodeProto& node : graph_proto_.node()) {
      if (!node.name().empty()) onnx_names.insert(node.name());
    }
    for (int i = 0; i < graph_proto_.node_size(); ++i) {
      const onnx::NodeProto& node = graph_proto_.node(i);
      std::string name = node.name();
      if (name.empty() || used_node_names_.contains(name)) {
        const std::string base = absl::StrCat(node.op_type().empty() ? "node" : node.op_type(), "_", i);
        name = base;
        for (int k = 1; onnx_names.contains(name) || used_node_names_.contains(name); ++k) {
          name = absl::StrCat(base, "_", k);
        }
      }
      used_node_names_.insert(name);
      node_names_.push_back(std::move(name));
    }
  }

  // One error listing every unsupported operator type, so a user sees the whole gap at once.
  absl::Status CheckSupportedOps() const {
    std::vector<std::pair<std::string, std::string>> missing;  // (type, first node)
    absl::flat_hash_set<std::string> seen;
    for (int i = 0; i < graph_proto_.node_size(); ++i) {
      const onnx::NodeProto& node = graph_proto_.node(i);
      const bool standard = IsStandardDomain(node.domain());
      if (standard && node.op_type() == "Constant") continue;  // becomes constant data, not a node
      if (standard && node.op_type() == "If") continue;        // inlined when its condition is known
      if (standard && node.op_type() == "Loop") continue;      // control flow (AddLoopNode)
      // DFT's opset-20 form (axis an input, default -2) is not the opset-17 form Tessel implements.
      const bool newer_form = standard && node.op_type() == "DFT" && opset_ >= 20;
      if (standard && !newer_form && OpRegistry::Global().Find("", node.op_type()) != nullptr) continue;
      if (node.domain() == kTesselDomain && OpRegistry::Global().Find(kTesselDomain, node.op_type()) != nullptr) continue;
      std::string type = standard ? node.op_type() : absl::StrCat(node.domain(), ".", node.op_type());
      if (seen.insert(type).second) missing.emplace_back(std::move(type), node_names_[i]);
    }
    if (missing.empty()) return absl::OkStatus();
    return absl::UnimplementedError(
        absl::StrCat(missing.size(), " unsupported operator type", missing.size() == 1 ? "" : "s", ": ",
                     absl::StrJoin(missing, ", ", [](std::string* out, const std::pair<std::string, std::string>& m) {
                       absl::StrAppend(out, m.first, " (first at node '", m.second, "')");
                     }),
                     " (at default-domain opset ", opset_, ")"));
  }

  // Records where each ONNX value name is defined and rejects names defined twice (ONNX is SSA). An
  // initializer may share its name with a graph input: it is then a constant, as for inference.
  absl::Status CollectDefinitions() {
    for (const onnx::TensorProto& init : graph_proto_.initializer()) {
      if (init.name().empty()) return absl::InvalidArgumentError("an initializer has no name");
      if (!definitions_.emplace(init.name(), absl::StrCat("initializer '", init.name(), "'")).second) {
        return absl::InvalidArgumentError(absl::StrCat("initializer '", init.name(), "' is defined twice"));
      }
      initializer_names_.insert(init.name());
    }
    absl::flat_hash_set<std::string> input_names;
    for (int i = 0; i < graph_proto_.input_size(); ++i) {
      const std::string& name = graph_proto_.input(i).name();
      if (name.empty()) return absl::InvalidArgumentError(absl::StrCat("graph input ", i, " has no name"));
      if (!input_names.insert(name).second) {
        return absl::InvalidArgumentError(absl::StrCat("graph input '", name, "' is listed twice"));
      }
      definitions_.emplace(name, absl::StrCat("graph input '", name, "'"));
    }
    for (int i = 0; i < graph_proto_.node_size(); ++i) {
      const onnx::NodeProto& node = graph_proto_.node(i);
      for (const std::string& out : node.output()) {
        if (out.empty()) continue;
        const std::string desc = absl::StrCat("node ", NodeDesc(node.op_type(), node_names_[i]));
        auto [it, inserted] = definitions_.emplace(out, desc);
        if (!inserted) {
          return absl::InvalidArgumentError(
              absl::StrCat("value '", out, "' is produced by ", desc, " but is already defined by ", it->second));
        }
      }
    }
    return absl::OkStatus();
  }

  absl::Status AddInitializers() {
    for (const onnx::TensorProto& init : graph_proto_.initializer()) {
      absl::StatusOr<Tensor> t = TensorFromProto(init, base_dir_, absl::StrCat("initializer '", init.name(), "'"));
      if (!t.ok()) return t.status();
      values_[init.name()] = graph_->AddConstant(init.name(), std::move(*t));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<Dim> InputDim(const onnx::TensorShapeProto::Dimension& d, const std::string& what) const {
    if (d.has_dim_value()) {
      if (d.dim_value() < 0) {
        return absl::InvalidArgumentError(absl::StrCat(what, " has negative dimension ", d.dim_value()));
      }
      return Dim(d.dim_value());
    }
    if (d.has_dim_param() && !d.dim_param().empty()) {
      auto it = options_.dim_values.find(d.dim_param());
      if (it == options_.dim_values.end()) return Dim::Symbol(d.dim_param());
      if (it->second < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("dim_values gives symbol '", it->first, "' the negative value ", it->second));
      }
      return Dim(it->second);
    }
    return UnknownDim();
  }

  absl::Status AddInputs() {
    for (const onnx::ValueInfoProto& input : graph_proto_.input()) {
      if (initializer_names_.contains(input.name())) continue;
      const std::string what = absl::StrCat("graph input '", input.name(), "'");
      if (!input.type().has_tensor_type()) {
        return absl::UnimplementedError(
            absl::StrCat(what, " is not a tensor (sequence, map and optional inputs are not supported)"));
      }
      const onnx::TypeProto::Tensor& tt = input.type().tensor_type();
      absl::StatusOr<DType> dtype = DTypeFromOnnx(tt.elem_type(), what);
      if (!dtype.ok()) return dtype.status();
      if (!tt.has_shape()) {
        return absl::UnimplementedError(
            absl::StrCat(what, " has no shape (unknown rank); export the model with input shapes"));
      }
      std::vector<Dim> dims;
      int64_t elements = 1;
      for (const onnx::TensorShapeProto::Dimension& d : tt.shape().dim()) {
        absl::StatusOr<Dim> dim = InputDim(d, what);
        if (!dim.ok()) return dim.status();
        if (dim->is_static() && dim->value() > 0) {
          if (elements > (int64_t{1} << 48) / dim->value()) {
            return absl::InvalidArgumentError(absl::StrCat(what, " has too many elements"));
          }
          elements *= dim->value();
        }
        dims.push_back(std::move(*dim));
      }
      values_[input.name()] = graph_->AddInput(input.name(), TensorType(*dtype, std::move(dims)));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<Value*> LookupInput(const std::string& name, const std::string& node_desc) const {
    auto it = values_.find(name);
    if (it != values_.end()) return it->second;
    auto def = definitions_.find(name);
    if (def != definitions_.end()) {
      return absl::InvalidArgumentError(absl::StrCat("node ", node_desc, " reads '", name, "', which ", def->second,
                                                     " defines later; ONNX nodes must be in topological order"));
    }
    return absl::InvalidArgumentError(
        absl::StrCat("node ", node_desc, " reads '", name, "', which no node, initializer or graph input defines"));
  }

  static absl::Status CheckAttrType(const onnx::AttributeProto& a, onnx::AttributeProto::AttributeType want,
                                    const std::string& what) {
    if (a.type() == want) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(what, " has type ",
                                                   onnx::AttributeProto_AttributeType_Name(a.type()), ", expected ",
                                                   onnx::AttributeProto_AttributeType_Name(want)));
  }

  absl::Status AddConstantNode(const onnx::NodeProto& node, const std::string& name) {
    const std::string desc = absl::StrCat("node ", NodeDesc("Constant", name));
    if (node.input_size() != 0 || node.output_size() != 1 || node.output(0).empty()) {
      return absl::InvalidArgumentError(absl::StrCat(desc, " must have no inputs and one named output"));
    }
    if (node.attribute_size() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(desc, " must have exactly one of value, value_float(s), value_int(s); it has ",
                       node.attribute_size(), " attributes"));
    }
    const onnx::AttributeProto& a = node.attribute(0);
    const std::string what = absl::StrCat("attribute '", a.name(), "' of ", desc);
    Tensor t;
    if (a.name() == "value") {
      TESSEL_RETURN_IF_ERROR(CheckAttrType(a, onnx::AttributeProto::TENSOR, what));
      absl::StatusOr<Tensor> decoded = TensorFromProto(a.t(), base_dir_, what);
      if (!decoded.ok()) return decoded.status();
      t = std::move(*decoded);
    } else if (a.name() == "value_float") {
      TESSEL_RETURN_IF_ERROR(CheckAttrType(a, onnx::AttributeProto::FLOAT, what));
      t = Tensor::Scalar(a.f());
    } else if (a.name() == "value_floats") {
      TESSEL_RETURN_IF_ERROR(CheckAttrType(a, onnx::AttributeProto::FLOATS, what));
      t = Tensor::FromVector<float>({a.floats_size()}, std::vector<float>(a.floats().begin(), a.floats().end()));
    } else if (a.name() == "value_int") {
      TESSEL_RETURN_IF_ERROR(CheckAttrType(a, onnx::AttributeProto::INT, what));
      t = Tensor::FromVector<int64_t>({}, {a.i()});
    } else if (a.name() == "value_ints") {
      TESSEL_RETURN_IF_ERROR(CheckAttrType(a, onnx::AttributeProto::INTS, what));
      t = Tensor::FromVector<int64_t>({a.ints_size()}, std::vector<int64_t>(a.ints().begin(), a.ints().end()));
    } else if (a.name() == "value_string" || a.name() == "value_strings" || a.name() == "sparse_value") {
      return absl::UnimplementedError(absl::StrCat(what, ": string and sparse constants are not supported"));
    } else {
      return absl::InvalidArgumentError(absl::StrCat(desc, " has unknown attribute '", a.name(), "'"));
    }
    values_[node.output(0)] = graph_->AddConstant(node.output(0), std::move(t));
    return absl::OkStatus();
  }

  absl::StatusOr<Attribute> ConvertAttribute(const onnx::AttributeProto& a, const std::string& node_desc) const {
    const std::string what = absl::StrCat("attribute '", a.name(), "' of node ", node_desc);
    switch (a.type()) {
      case onnx::AttributeProto::FLOAT:
        return Attribute::Float(a.f());
      case onnx::AttributeProto::INT:
        return Attribute::Int(a.i());
      case onnx::AttributeProto::STRING:
        return Attribute::String(a.s());
      case onnx::AttributeProto::FLOATS:
        return Attribute::Floats(std::vector<float>(a.floats().begin(), a.floats().end()));
      case onnx::AttributeProto::INTS:
        return Attribute::Ints(std::vector<int64_t>(a.ints().begin(), a.ints().end()));
      case onnx::AttributeProto::STRINGS:
        return Attribute::Strings(std::vector<std::string>(a.strings().begin(), a.strings().end()));
      case onnx::AttributeProto::TENSOR: {
        absl::StatusOr<Tensor> t = TensorFromProto(a.t(), base_dir_, what);
        if (!t.ok()) return t.status();
        return Attribute::TensorValue(std::move(*t));
      }
      case onnx::AttributeProto::GRAPH:
      case onnx::AttributeProto::GRAPHS:
        return absl::UnimplementedError(
            absl::StrCat(what, ": subgraph attributes are not supported here (If and Loop import theirs; Scan's "
                               "body does not)"));
      case onnx::AttributeProto::UNDEFINED:
        return absl::InvalidArgumentError(absl::StrCat(what, " has no type"));
      default:
        return absl::UnimplementedError(absl::StrCat(
            what, ": attributes of type ", onnx::AttributeProto_AttributeType_Name(a.type()), " are not supported"));
    }
  }

  // A value or node name that no ONNX name and no earlier generated name uses.
  std::string FreshValueName(const std::string& prefix) const {
    std::string name = prefix;
    for (int k = 1; definitions_.contains(name) || graph_->FindValue(name) != nullptr; ++k) {
      name = absl::StrCat(prefix, "_", k);
    }
    return name;
  }
  std::string FreshNodeName(const std::string& prefix) {
    std::string name = prefix;
    for (int k = 1; used_node_names_.contains(name); ++k) name = absl::StrCat(prefix, "_", k);
    used_node_names_.insert(name);
    return name;
  }

  static absl::Status Infer(Node* n) {
    std::vector<const TensorType*> types;
    std::vector<const Tensor*> constants;
    for (Value* in : n->inputs()) {
      types.push_back(in ? &in->type() : nullptr);
      constants.push_back(in && in->is_constant() ? in->constant().get() : nullptr);
    }
    absl::StatusOr<std::vector<TensorType>> out = InferOutputTypes(*n, std::move(types), std::move(constants));
    if (!out.ok()) return out.status();
    for (int i = 0; i < n->num_outputs(); ++i) n->output(i)->set_type((*out)[i]);
    return absl::OkStatus();
  }

  Node* AddStandardNode(const std::string& op_type, std::vector<Value*> inputs, int num_outputs,
                        const std::string& name, std::vector<std::string> output_names) {
    Node* n = graph_->AddNode(op_type, std::move(inputs), num_outputs, name, std::move(output_names));
    n->set_domain("");
    return n;
  }

  absl::Status AddNode(const onnx::NodeProto& node, const std::string& name) {
    if (IsStandardDomain(node.domain()) && node.op_type() == "Constant") return AddConstantNode(node, name);
    if (IsStandardDomain(node.domain()) && node.op_type() == "If") return AddIfNode(node, name);
    if (IsStandardDomain(node.domain()) && node.op_type() == "Loop") return AddLoopNode(node, name);
    return AddOpNode(node, name);
  }

  // An If whose condition is a constant at import (an initializer, a Constant node, or an If inlined
  // before it that yields one) is inlined: the chosen branch's nodes join the graph, and Identity nodes
  // give its outputs the If's output names. Otherwise it stays control flow (AddControlFlowIf).
  absl::Status AddIfNode(const onnx::NodeProto& node, const std::string& name) {
    const std::string desc = NodeDesc("If", name);
    if (node.input_size() != 1 || node.input(0).empty()) {
      return absl::InvalidArgumentError(absl::StrCat("node ", desc, " must have one input, the condition"));
    }
    absl::StatusOr<Value*> cond = LookupInput(node.input(0), desc);
    if (!cond.ok()) return cond.status();
    const onnx::GraphProto* then_branch = nullptr;
    const onnx::GraphProto* else_branch = nullptr;
    for (const onnx::AttributeProto& a : node.attribute()) {
      const onnx::GraphProto** slot =
          a.name() == "then_branch" ? &then_branch : a.name() == "else_branch" ? &else_branch : nullptr;
      if (slot == nullptr || a.type() != onnx::AttributeProto::GRAPH) {
        return absl::InvalidArgumentError(
            absl::StrCat("node ", desc, ": unexpected attribute '", a.name(), "' (If takes the graphs then_branch "
                         "and else_branch)"));
      }
      *slot = &a.g();
    }
    if (then_branch == nullptr || else_branch == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("node ", desc, " needs both then_branch and else_branch"));
    }
    if (!(*cond)->is_constant()) return AddControlFlowIf(node, name, *cond, *then_branch, *else_branch);
    const Tensor& c = *(*cond)->constant();
    if (c.num_elements() != 1) {
      return absl::InvalidArgumentError(absl::StrCat("node ", desc, ": condition '", (*cond)->name(), "' has type ",
                                                     c.type().ToString(), "; expected a single bool"));
    }
    const bool taken = IsFloat(c.dtype()) ? c.GetAsDouble(0) != 0 : c.GetAsInt64(0) != 0;
    const onnx::GraphProto& branch = taken ? *then_branch : *else_branch;
    if (branch.output_size() != node.output_size()) {
      return absl::InvalidArgumentError(absl::StrCat("node ", desc, ": its ", taken ? "then" : "else", "_branch has ",
                                                     branch.output_size(), " outputs, the If ", node.output_size()));
    }
    for (const onnx::TensorProto& init : branch.initializer()) {
      absl::StatusOr<Tensor> t = TensorFromProto(init, base_dir_, absl::StrCat("initializer '", init.name(), "'"));
      if (!t.ok()) return t.status();
      values_[init.name()] = graph_->AddConstant(init.name(), std::move(*t));
    }
    for (int i = 0; i < branch.node_size(); ++i) {
      const onnx::NodeProto& inner = branch.node(i);
      const std::string inner_name =
          inner.name().empty() ? absl::StrCat(name, "_", inner.op_type(), "_", i) : inner.name();
      TESSEL_RETURN_IF_ERROR(AddNode(inner, FreshNodeName(inner_name)));
    }
    for (int i = 0; i < node.output_size(); ++i) {
      if (node.output(i).empty()) continue;
      absl::StatusOr<Value*> v = LookupInput(branch.output(i).name(), desc);
      if (!v.ok()) return v.status();
      if ((*v)->is_constant()) {  // stays a constant, so that a later If can test it
        values_[node.output(i)] = graph_->AddConstant(node.output(i), *(*v)->constant());
        continue;
      }
      Node* id = AddStandardNode("Identity", {*v}, 1, FreshNodeName(absl::StrCat(name, "_out", i)), {node.output(i)});
      TESSEL_RETURN_IF_ERROR(Infer(id));
      values_[node.output(i)] = id->output(0);
    }
    return absl::OkStatus();
  }

  // Every value name a (sub)graph reads and every one it defines, its nested subgraphs included.
  static void CollectNames(const onnx::GraphProto& g, std::set<std::string>* defined, std::vector<std::string>* used) {
    for (const onnx::TensorProto& t : g.initializer()) defined->insert(t.name());
    for (const onnx::ValueInfoProto& v : g.input()) defined->insert(v.name());
    for (const onnx::NodeProto& n : g.node()) {
      for (const std::string& in : n.input()) {
        if (!in.empty()) used->push_back(in);
      }
      for (const std::string& out : n.output()) defined->insert(out);
      for (const onnx::AttributeProto& a : n.attribute()) {
        if (a.type() == onnx::AttributeProto::GRAPH) CollectNames(a.g(), defined, used);
        for (const onnx::GraphProto& sub : a.graphs()) CollectNames(sub, defined, used);
      }
    }
    for (const onnx::ValueInfoProto& v : g.output()) used->push_back(v.name());
  }

  // The enclosing values that `graphs` read (names used there but defined in none of them), in order of
  // first use: the captures a subgraph node passes as inputs.
  absl::StatusOr<std::vector<Value*>> Captures(const std::vector<const onnx::GraphProto*>& graphs,
                                               const std::string& desc) {
    std::set<std::string> defined;
    std::vector<std::string> used;
    for (const onnx::GraphProto* g : graphs) CollectNames(*g, &defined, &used);
    std::vector<Value*> captures;
    std::set<std::string> seen;
    for (const std::string& u : used) {
      if (defined.count(u) || !seen.insert(u).second) continue;
      absl::StatusOr<Value*> v = LookupInput(u, desc);
      if (!v.ok()) return v.status();
      captures.push_back(*v);
    }
    return captures;
  }

  // An If whose condition is known only at run time: a node holding both branches as subgraphs. The
  // enclosing values the branches read (captures) become its inputs after the condition, and the
  // inputs of both subgraphs, in the same order.
  absl::Status AddControlFlowIf(const onnx::NodeProto& node, const std::string& name, Value* cond,
                                const onnx::GraphProto& then_branch, const onnx::GraphProto& else_branch) {
    const std::string desc = NodeDesc("If", name);
    absl::StatusOr<std::vector<Value*>> captured = Captures({&then_branch, &else_branch}, desc);
    if (!captured.ok()) return captured.status();
    const std::vector<const Value*> captures(captured->begin(), captured->end());
    std::vector<Value*> inputs = {cond};
    inputs.insert(inputs.end(), captured->begin(), captured->end());
    std::shared_ptr<const Graph> branches[2];
    const onnx::GraphProto* protos[2] = {&then_branch, &else_branch};
    for (int b = 0; b < 2; ++b) {
      Importer sub(model_, *protos[b], base_dir_, options_, opset_);
      absl::StatusOr<std::shared_ptr<const Graph>> g = sub.ImportSubgraph({}, captures);
      if (!g.ok()) {
        return Prefixed(absl::StrCat("node ", desc, ", ", b == 0 ? "then" : "else", "_branch"), g.status());
      }
      branches[b] = std::move(*g);
    }
    std::vector<std::string> outputs(node.output().begin(), node.output().end());
    Node* n = AddStandardNode("If", inputs, static_cast<int>(outputs.size()), name, outputs);
    n->SetAttr("then_branch", Attribute::GraphValue(branches[0]));
    n->SetAttr("else_branch", Attribute::GraphValue(branches[1]));
    TESSEL_RETURN_IF_ERROR(Infer(n));
    for (int i = 0; i < n->num_outputs(); ++i) {
      if (!outputs[i].empty()) values_[outputs[i]] = n->output(i);
    }
    return absl::OkStatus();
  }

  // Loop: a node holding its body as a subgraph. Its inputs are M and cond (nullptr where omitted), the
  // initial carried values, then the enclosing values the body reads (captures), which also follow the
  // body's own inputs (iteration, cond, carried...) as its graph inputs; attribute `carried` counts the
  // carried values.
  absl::Status AddLoopNode(const onnx::NodeProto& node, const std::string& name) {
    const std::string desc = NodeDesc("Loop", name);
    if (node.input_size() < 2) {
      return absl::InvalidArgumentError(absl::StrCat("node ", desc, " needs inputs M and cond (either may be empty)"));
    }
    const onnx::GraphProto* body = nullptr;
    for (const onnx::AttributeProto& a : node.attribute()) {
      if (a.name() != "body" || a.type() != onnx::AttributeProto::GRAPH) {
        return absl::InvalidArgumentError(
            absl::StrCat("node ", desc, ": unexpected attribute '", a.name(), "' (Loop takes the graph body)"));
      }
      body = &a.g();
    }
    if (body == nullptr) return absl::InvalidArgumentError(absl::StrCat("node ", desc, " needs the graph body"));
    const int carried = node.input_size() - 2;
    if (body->input_size() != 2 + carried || body->output_size() < 1 + carried) {
      return absl::InvalidArgumentError(absl::StrCat("node ", desc, ": its body has ", body->input_size(), " inputs and ",
                                                     body->output_size(), " outputs for ", carried,
                                                     " carried values (expected ", 2 + carried, " inputs and at least ",
                                                     1 + carried, " outputs)"));
    }
    std::vector<Value*> inputs;
    for (int i = 0; i < node.input_size(); ++i) {
      if (node.input(i).empty()) {
        if (i >= 2) return absl::InvalidArgumentError(absl::StrCat("node ", desc, ": carried value ", i - 2, " is empty"));
        inputs.push_back(nullptr);
        continue;
      }
      absl::StatusOr<Value*> v = LookupInput(node.input(i), desc);
      if (!v.ok()) return v.status();
      inputs.push_back(*v);
    }
    // The body's own inputs: the iteration count, the condition, and each carried value's element type
    // and rank with extents left open (an iteration may change them).
    std::vector<std::pair<std::string, TensorType>> formals = {{body->input(0).name(), TensorType(DType::kI64, {})},
                                                               {body->input(1).name(), TensorType(DType::kBool, {})}};
    for (int k = 0; k < carried; ++k) {
      const TensorType& init = inputs[2 + k]->type();
      formals.push_back({body->input(2 + k).name(), TensorType(init.dtype, std::vector<Dim>(init.rank(), UnknownDim()))});
    }
    absl::StatusOr<std::vector<Value*>> captured = Captures({body}, desc);
    if (!captured.ok()) return captured.status();
    const std::vector<const Value*> captures(captured->begin(), captured->end());
    inputs.insert(inputs.end(), captured->begin(), captured->end());
    Importer sub(model_, *body, base_dir_, options_, opset_);
    absl::StatusOr<std::shared_ptr<const Graph>> g = sub.ImportSubgraph(formals, captures);
    if (!g.ok()) return Prefixed(absl::StrCat("node ", desc, ", body"), g.status());
    std::vector<std::string> outputs(node.output().begin(), node.output().end());
    Node* n = AddStandardNode("Loop", inputs, static_cast<int>(outputs.size()), name, outputs);
    n->SetAttr("body", Attribute::GraphValue(*g));
    n->SetAttr("carried", Attribute::Int(carried));
    TESSEL_RETURN_IF_ERROR(Infer(n));
    for (int i = 0; i < n->num_outputs(); ++i) {
      if (!outputs[i].empty()) values_[outputs[i]] = n->output(i);
    }
    return absl::OkStatus();
  }

  absl::Status AddOpNode(const onnx::NodeProto& node, const std::string& name) {
    const std::string desc = NodeDesc(node.op_type(), name);
    std::vector<Value*> inputs;
    for (const std::string& in : node.input()) {
      if (in.empty()) {  // an omitted optional input
        inputs.push_back(nullptr);
        continue;
      }
      absl::StatusOr<Value*> v = LookupInput(in, desc);
      if (!v.ok()) return v.status();
      inputs.push_back(*v);
    }
    // Trailing empty output names are how ONNX omits optional outputs; inner ones still exist.
    int num_outputs = node.output_size();
    while (num_outputs > 0 && node.output(num_outputs - 1).empty()) --num_outputs;
    std::vector<std::string> output_names;
    for (int i = 0; i < num_outputs; ++i) {
      output_names.push_back(node.output(i).empty() ? FreshValueName(absl::StrCat(name, "_out", i)) : node.output(i));
    }
    std::map<std::string, Attribute> attrs;
    for (const onnx::AttributeProto& a : node.attribute()) {
      absl::StatusOr<Attribute> attr = ConvertAttribute(a, desc);
      if (!attr.ok()) return attr.status();
      if (!attrs.emplace(a.name(), std::move(*attr)).second) {
        return absl::InvalidArgumentError(absl::StrCat("node ", desc, " has attribute '", a.name(), "' twice"));
      }
    }

    if (opset_ < 13 && IsLegacyFlattenOp(node.op_type())) {
      return AddLegacyFlattenOp(node.op_type(), name, inputs, output_names, std::move(attrs));
    }
    Node* n = AddStandardNode(node.op_type(), std::move(inputs), num_outputs, name, std::move(output_names));
    if (node.domain() == kTesselDomain) n->set_domain(kTesselDomain);
    for (auto& [k, v] : attrs) n->SetAttr(k, std::move(v));
    // RoiAlign before opset 16 has no coordinate_transformation_mode and samples as output_half_pixel
    // does; the IR's default is opset 16's half_pixel.
    if (opset_ < 16 && n->op_type() == "RoiAlign" && n->FindAttr("coordinate_transformation_mode") == nullptr) {
      n->SetAttr("coordinate_transformation_mode", Attribute::String("output_half_pixel"));
    }
    TESSEL_RETURN_IF_ERROR(MoveAttributesToInputs(n));
    TESSEL_RETURN_IF_ERROR(Infer(n));
    TESSEL_RETURN_IF_ERROR(CheckOpsetForm(n));
    if (options_.fold_node) {
      std::vector<std::string> names;
      for (Value* out : n->outputs()) names.push_back(out->name());
      // Erases n when it folds. A node the folder cannot evaluate (a reference kernel lacking its
      // element type) stays a node, as it would without folding; the folder changes nothing then.
      absl::StatusOr<bool> folded = options_.fold_node(*graph_, n);
      if (folded.ok() && *folded) {
        for (const std::string& out : names) values_[out] = graph_->FindValue(out);
        return absl::OkStatus();
      }
    }
    for (Value* out : n->outputs()) values_[out->name()] = out;
    return absl::OkStatus();
  }

  // The IR's GroupNormalization takes scale and bias per group (opset 18) or per channel (opset 21); a
  // model below opset 21 must use the per-group form.
  absl::Status CheckOpsetForm(const Node* n) const {
    if (n->op_type() != "GroupNormalization" || opset_ >= 21 || n->num_inputs() < 2 || n->input(1) == nullptr) {
      return absl::OkStatus();
    }
    const TensorType& scale = n->input(1)->type();
    const int64_t groups = n->GetInt("num_groups", 0);
    if (scale.rank() == 1 && scale.dims[0].is_static() && scale.dims[0].value() != groups) {
      return absl::InvalidArgumentError(absl::StrCat(
          "node ", n->DebugName(), ": at opset ", opset_, ", GroupNormalization takes one scale and bias per group "
          "(num_groups = ", groups, "), but scale has ", scale.dims[0].value(), " (the per-channel form is opset 21)"));
    }
    return absl::OkStatus();
  }

  absl::Status MoveAttributesToInputs(Node* n) {
    for (const AttrToInput& u : kAttrToInput) {
      if (n->op_type() != u.op_type || opset_ >= u.since) continue;
      if (n->num_inputs() > u.input_index) {
        return absl::InvalidArgumentError(absl::StrCat("node ", n->DebugName(), ": at opset ", opset_, ", ", u.op_type,
                                                       " takes '", u.attr, "' as an attribute and has ", u.input_index,
                                                       " input(s), not ", n->num_inputs()));
      }
      const Attribute* a = n->FindAttr(u.attr);
      if (a == nullptr) continue;
      const Attribute::Kind want = u.float_scalar ? Attribute::Kind::kFloat : Attribute::Kind::kInts;
      if (a->kind != want) {
        return absl::InvalidArgumentError(absl::StrCat("node ", n->DebugName(), ": attribute '", u.attr, "' must be ",
                                                       u.float_scalar ? "a float" : "a list of ints"));
      }
      Tensor value = u.float_scalar ? Tensor::Scalar(a->f)
                                    : Tensor::FromVector<int64_t>({static_cast<int64_t>(a->ints.size())}, a->ints);
      Value* c = graph_->AddConstant(FreshValueName(absl::StrCat(n->name(), "_", u.attr)), std::move(value));
      while (n->num_inputs() < u.input_index) n->AddInput(nullptr);
      n->AddInput(c);
      n->RemoveAttr(u.attr);
    }
    // Opset 18 Split takes either a split input or num_outputs; older Splits without sizes meant
    // equal parts, one per output.
    if (n->op_type() == "Split" && opset_ < 18 && n->input(1) == nullptr && !n->HasAttr("num_outputs")) {
      n->SetAttr("num_outputs", Attribute::Int(n->num_outputs()));
    }
    return absl::OkStatus();
  }

  // Softmax, LogSoftmax or Hardmax below opset 13. When `axis` is not the last axis the old meaning
  // (normalize over all axes from `axis` on) becomes Flatten(axis) -> op(axis=-1) -> Reshape back.
  absl::Status AddLegacyFlattenOp(const std::string& op_type, const std::string& name,
                                  const std::vector<Value*>& inputs, const std::vector<std::string>& output_names,
                                  std::map<std::string, Attribute> attrs) {
    const std::string desc = NodeDesc(op_type, name);
    if (inputs.size() != 1 || inputs[0] == nullptr || output_names.size() != 1) {
      return absl::InvalidArgumentError(absl::StrCat("node ", desc, " must have one input and one output"));
    }
    Value* x = inputs[0];
    const int rank = x->type().rank();
    auto axis_it = attrs.find("axis");
    int64_t axis = 1;
    if (axis_it != attrs.end()) {
      if (axis_it->second.kind != Attribute::Kind::kInt) {
        return absl::InvalidArgumentError(absl::StrCat("node ", desc, ": attribute 'axis' must be an int"));
      }
      axis = axis_it->second.i;
    }
    if (axis < -rank || axis >= rank) {
      return absl::InvalidArgumentError(absl::StrCat("node ", desc, ": axis ", axis, " is out of range for input '",
                                                     x->name(), "' of type ", x->type().ToString()));
    }
    if (axis < 0) axis += rank;
    attrs["axis"] = Attribute::Int(-1);
    if (axis == rank - 1) {
      Node* n = AddStandardNode(op_type, {x}, 1, name, output_names);
      for (auto& [k, v] : attrs) n->SetAttr(k, std::move(v));
      TESSEL_RETURN_IF_ERROR(Infer(n));
      values_[output_names[0]] = n->output(0);
      return absl::OkStatus();
    }
    Node* flatten = AddStandardNode("Flatten", {x}, 1, FreshNodeName(absl::StrCat(name, "_flatten")),
                                    {FreshValueName(absl::StrCat(x->name(), "_2d"))});
    flatten->SetAttr("axis", Attribute::Int(axis));
    TESSEL_RETURN_IF_ERROR(Infer(flatten));
    Node* op =
        AddStandardNode(op_type, {flatten->output(0)}, 1, name, {FreshValueName(absl::StrCat(output_names[0], "_2d"))});
    for (auto& [k, v] : attrs) op->SetAttr(k, std::move(v));
    TESSEL_RETURN_IF_ERROR(Infer(op));
    Value* shape;
    if (x->type().is_static()) {
      const std::vector<int64_t> dims = x->type().StaticShape();
      shape =
          graph_->AddConstant(FreshValueName(absl::StrCat(name, "_shape")), Tensor::FromVector<int64_t>({rank}, dims));
    } else {
      Node* shape_node = AddStandardNode("Shape", {x}, 1, FreshNodeName(absl::StrCat(name, "_shape")),
                                         {FreshValueName(absl::StrCat(name, "_shape"))});
      TESSEL_RETURN_IF_ERROR(Infer(shape_node));
      shape = shape_node->output(0);
    }
    Node* reshape = AddStandardNode("Reshape", {op->output(0), shape}, 1, FreshNodeName(absl::StrCat(name, "_reshape")),
                                    output_names);
    TESSEL_RETURN_IF_ERROR(Infer(reshape));
    values_[output_names[0]] = reshape->output(0);
    return absl::OkStatus();
  }

  absl::Status AddOutputs() {
    if (graph_proto_.output_size() == 0) return absl::InvalidArgumentError("the graph has no outputs");
    for (const onnx::ValueInfoProto& out : graph_proto_.output()) {
      auto it = values_.find(out.name());
      if (it == values_.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat("graph output '", out.name(), "' is not defined by any node, initializer or graph input"));
      }
      TESSEL_RETURN_IF_ERROR(CheckDeclaredOutput(out, it->second->type()));
      graph_->AddOutput(it->second);
    }
    return absl::OkStatus();
  }

  // A graph output's declared element type and static extents must be what the graph computes: an
  // inconsistent model (an output declared int64 that the nodes compute as float) is an error here,
  // not an artifact whose output means something else than the file says.
  static absl::Status CheckDeclaredOutput(const onnx::ValueInfoProto& out, const TensorType& computed) {
    if (!out.type().has_tensor_type()) return absl::OkStatus();
    const onnx::TypeProto::Tensor& tt = out.type().tensor_type();
    const std::string what = absl::StrCat("graph output '", out.name(), "'");
    if (tt.elem_type() != onnx::TensorProto::UNDEFINED) {
      absl::StatusOr<DType> declared = DTypeFromOnnx(tt.elem_type(), what);
      if (!declared.ok()) return declared.status();
      if (*declared != computed.dtype) {
        return absl::InvalidArgumentError(absl::StrCat(what, " is declared ", DTypeName(*declared),
                                                       " but the graph computes ", computed.ToString()));
      }
    }
    if (!tt.has_shape()) return absl::OkStatus();
    if (tt.shape().dim_size() != computed.rank()) {
      return absl::InvalidArgumentError(absl::StrCat(what, " is declared with rank ", tt.shape().dim_size(),
                                                     " but the graph computes ", computed.ToString()));
    }
    for (int d = 0; d < computed.rank(); ++d) {
      const onnx::TensorShapeProto::Dimension& dim = tt.shape().dim(d);
      if (dim.has_dim_value() && dim.dim_value() > 0 && computed.dims[d].is_static() &&
          computed.dims[d].value() != dim.dim_value()) {
        return absl::InvalidArgumentError(absl::StrCat(what, " is declared with extent ", dim.dim_value(),
                                                       " on axis ", d, " but the graph computes ",
                                                       computed.ToString()));
      }
    }
    return absl::OkStatus();
  }

  const onnx::ModelProto& model_;
  const onnx::GraphProto& graph_proto_;
  const std::string base_dir_;
  const OnnxImportOptions& options_;
  int opset_ = -1;
  std::vector<std::string> node_names_;  // per ONNX node, unique
  absl::flat_hash_set<std::string> used_node_names_;
  absl::flat_hash_map<std::string, std::string> definitions_;  // ONNX value name -> what defines it
  absl::flat_hash_set<std::string> initializer_names_;
  absl::flat_hash_map<std::string, Value*> values_;  // ONNX value name -> value built so far
  std::unique_ptr<Graph> graph_;
};


// The model file's bytes, mapped (no copy: protobuf parses from the page cache's own pages; a read into
// a string cost a zero-filled copy of the whole file, page faults included). The checks come first so
// that errors name the path and the reason.
absl::StatusOr<std::shared_ptr<const MappedFile>> MapModelFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    const std::string msg = absl::StrCat(path, ": cannot open: ", std::strerror(err));
    if (err == ENOENT) return absl::NotFoundError(absl::StrCat(path, ": no such file"));
    if (err == EACCES) return absl::PermissionDeniedError(msg);
    return absl::InvalidArgumentError(msg);
  }
  struct stat st;
  const bool regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  close(fd);
  if (!regular) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a regular file (expected an .onnx model file)"));
  }
  if (st.st_size > INT_MAX) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", st.st_size,
                                                   " bytes is over protobuf's 2 GiB limit; save the model with "
                                                   "its weights as external data"));
  }
  if (st.st_size == 0) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a valid ONNX model (the file is empty)"));
  }
  absl::StatusOr<std::shared_ptr<const MappedFile>> file = MappedFile::Open(path, FileLoad::kMap);
  if (!file.ok()) return file.status();
  (*file)->Prefault();  // one system call instead of a fault per 64 KiB
  return file;
}

std::string DirName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

namespace {

// Models of opsets 1 to 10 are rewritten to opset 11 by the ONNX library's version converter (the one
// onnx.version_converter.convert_version calls), which adapts the operators whose meaning changed
// (Upsample, Slice's attributes, BatchNormalization's spatial, Dropout, ...). Null: no conversion
// needed; an error names what the converter refused.
//
// The converter trusts its input (a graph output no node defines crashed it, and so did a two-input
// Scatter, whose adapter reads a third), so the graph's structure is checked first: every name defined
// once and before its use, every output defined, no subgraphs, initializers of sane sizes whose data
// matches their dims, and every default-domain node's input and output counts within its schema at
// `opset`.
absl::Status CheckStructureForConversion(const onnx::GraphProto& g, int opset) {
  absl::flat_hash_set<std::string> defined;
  auto define = [&defined](const std::string& name, const std::string& what) -> absl::Status {
    if (name.empty()) return absl::InvalidArgumentError(absl::StrCat(what, " has an empty name"));
    if (!defined.insert(name).second) return absl::InvalidArgumentError(absl::StrCat("'", name, "' is defined twice"));
    return absl::OkStatus();
  };
  for (const onnx::TensorProto& t : g.initializer()) {
    TESSEL_RETURN_IF_ERROR(define(t.name(), "an initializer"));
    int64_t elements = 1;
    for (int64_t d : t.dims()) {
      if (d < 0 || d > (int64_t{1} << 40) || (d > 0 && elements > (int64_t{1} << 40) / d)) {
        return absl::InvalidArgumentError(absl::StrCat("initializer '", t.name(), "' has bad dims"));
      }
      elements *= d;
    }
    const int64_t stored = t.has_raw_data() ? -1
                           : t.float_data_size() + t.int32_data_size() + t.int64_data_size() +
                                 t.double_data_size() + t.uint64_data_size() + t.string_data_size();
    if (t.data_location() == onnx::TensorProto::EXTERNAL ||
        (stored >= 0 && stored != elements) ||
        (stored < 0 && t.raw_data().size() % std::max<int64_t>(elements, 1) != 0)) {
      return absl::InvalidArgumentError(absl::StrCat("initializer '", t.name(), "' holds data that does not match its dims"));
    }
  }
  for (const onnx::ValueInfoProto& in : g.input()) {
    if (!defined.contains(in.name())) TESSEL_RETURN_IF_ERROR(define(in.name(), "a graph input"));
  }
  for (const onnx::NodeProto& n : g.node()) {
    if (n.op_type().empty()) return absl::InvalidArgumentError("a node has no operator type");
    if (IsStandardDomain(n.domain())) {
      const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(n.op_type(), opset, "");
      if (schema == nullptr) {
        return absl::UnimplementedError(
            absl::StrCat("node '", n.name(), "': operator ", n.op_type(), " is not defined at opset ", opset));
      }
      if (n.input_size() < schema->min_input() || n.input_size() > schema->max_input() ||
          n.output_size() < schema->min_output() || n.output_size() > schema->max_output()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "node '", n.name(), "' (", n.op_type(), " at opset ", opset, ") has ", n.input_size(), " inputs and ",
            n.output_size(), " outputs; its schema takes ", schema->min_input(), " to ", schema->max_input(),
            " inputs and ", schema->min_output(), " to ", schema->max_output(), " outputs"));
      }
    }
    for (const onnx::AttributeProto& a : n.attribute()) {
      if (a.has_g() || a.graphs_size() > 0) {
        return absl::UnimplementedError(absl::StrCat("node '", n.name(), "': subgraph attributes are not supported"));
      }
    }
    for (const std::string& in : n.input()) {
      if (!in.empty() && !defined.contains(in)) {
        return absl::InvalidArgumentError(
            absl::StrCat("node '", n.name(), "' reads '", in, "', which no earlier node, initializer or input defines"));
      }
    }
    for (const std::string& out : n.output()) {
      if (!out.empty()) TESSEL_RETURN_IF_ERROR(define(out, "a node output"));
    }
  }
  for (const onnx::ValueInfoProto& out : g.output()) {
    if (!defined.contains(out.name())) {
      return absl::InvalidArgumentError(absl::StrCat("graph output '", out.name(), "' is not defined"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<onnx::ModelProto>> UpgradeOldOpset(const onnx::ModelProto& model) {
  int opset = -1;
  for (const onnx::OperatorSetIdProto& op : model.opset_import()) {
    if (IsStandardDomain(op.domain())) opset = static_cast<int>(op.version());
  }
  if (opset < kMinConvertedOnnxOpset || opset >= kMinOnnxOpset) return nullptr;
  if (absl::Status s = CheckStructureForConversion(model.graph(), opset); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("default-domain opset ", opset, " model: ", s.message()));
  }
  // Intermediate types are inferred again on import; the converter need not read them.
  onnx::ModelProto copy = model;
  copy.mutable_graph()->clear_value_info();
  try {
    return std::make_unique<onnx::ModelProto>(onnx::version_conversion::ConvertVersion(copy, kMinOnnxOpset));
  } catch (const std::exception& e) {
    return absl::UnimplementedError(absl::StrCat("default-domain opset ", opset, " cannot be converted to opset ",
                                                 kMinOnnxOpset, " by the ONNX version converter: ", e.what()));
  }
}

#undef TESSEL_RETURN_IF_ERROR

}  // namespace

absl::StatusOr<std::unique_ptr<Graph>> ImportOnnxFile(const std::string& path, const OnnxImportOptions& options) {
  absl::StatusOr<std::shared_ptr<const MappedFile>> file = MapModelFile(path);
  if (!file.ok()) return file.status();
  onnx::ModelProto model;
  if (!model.ParseFromArray((*file)->data(), static_cast<int>((*file)->size()))) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a valid ONNX model (protobuf parse failed on ",
                                                   (*file)->size(), " bytes; the file is truncated or corrupt)"));
  }
  file->reset();  // the parsed message holds its own copy of every field
  absl::StatusOr<std::unique_ptr<onnx::ModelProto>> upgraded = UpgradeOldOpset(model);
  if (!upgraded.ok()) return Prefixed(path, upgraded.status());
  absl::StatusOr<std::unique_ptr<Graph>> graph = Importer(*upgraded ? **upgraded : model, DirName(path), options).Run();
  if (!graph.ok()) return Prefixed(path, graph.status());
  return graph;
}

absl::StatusOr<std::unique_ptr<Graph>> ImportOnnxModel(const onnx::ModelProto& model, const std::string& base_dir,
                                                       const OnnxImportOptions& options) {
  const std::string& name = model.graph().name();
  const std::string label = name.empty() ? "ONNX model" : absl::StrCat("ONNX model '", name, "'");
  absl::StatusOr<std::unique_ptr<onnx::ModelProto>> upgraded = UpgradeOldOpset(model);
  if (!upgraded.ok()) return Prefixed(label, upgraded.status());
  absl::StatusOr<std::unique_ptr<Graph>> graph = Importer(*upgraded ? **upgraded : model, base_dir, options).Run();
  if (!graph.ok()) return Prefixed(label, graph.status());
  return graph;
}

}  // namespace tessel
