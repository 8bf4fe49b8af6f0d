// NCHW -> NHWC layout conversion.
#include "passes/layout/layout.h"

#include <cstring>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "passes/utils/pass_utils.h"
#include "passes/utils/rewrite.h"

namespace tessel {
namespace {

const std::vector<int64_t> kToNhwc = {0, 2, 3, 1};
const std::vector<int64_t> kToNchw = {0, 3, 1, 2};

// The channels-last tessel operator `n` becomes, or "" when it has none.
std::string SpatialTarget(const Node* n) {
  const std::string& op = n->op_type();
  if (n->num_outputs() != 1) return "";  // MaxPool's Indices are NCHW flat indices
  // The channels-last kernels are floating point (u8 / i8 MaxPool stays NCHW, on the reference kernel).
  if (n->num_inputs() > 0 && n->input(0) != nullptr && !IsFloat(n->input(0)->type().dtype)) return "";
  if (n->domain().empty()) {
    if (op == "Conv") return "FusedConv";
    if (op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool") return op;
    return "";
  }
  if (n->domain() != kTesselDomain || n->GetString("layout", "nchw") != "nchw") return "";
  if (op == "FusedConv" || op == "DwPwConv" || op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool") {
    return op;
  }
  return "";
}

bool IsChannelsLastOp(const Node* n) {
  return n->domain() == kTesselDomain && n->GetString("layout", "nchw") == "nhwc";
}

// Elementwise operators: they compute the same thing on NHWC data once their constant operands are
// permuted alike.
bool IsElementwise(const Node* n) {
  static const char* const kOps[] = {"Relu", "Clip",      "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Erf",
                                     "Gelu", "Sqrt",      "Exp",     "Neg",         "Reciprocal", "Add", "Sub",
                                     "Mul",  "Div",       "Pow",     "LeakyRelu",   "PRelu",     "Elu",  "Selu",
                                     "Celu", "Softplus",  "Softsign"};
  if (!n->domain().empty() || n->num_outputs() != 1) return false;
  for (const char* op : kOps) {
    if (n->op_type() == op) return true;
  }
  return false;
}

// A rank-4 tensor with its axes permuted (out axis d = in axis perm[d]).
Tensor Permute4(const Tensor& t, const std::vector<int64_t>& perm) {
  std::vector<int64_t> shape(4);
  for (int d = 0; d < 4; ++d) shape[d] = t.dim(perm[d]);
  Tensor out(t.dtype(), shape);
  const size_t bytes = DTypeBits(t.dtype()) / 8;
  const std::vector<int64_t> strides = RowMajorStrides(t.shape());
  const char* src = static_cast<const char*>(t.raw_data());
  char* dst = static_cast<char*>(out.raw_data());
  int64_t i = 0;
  for (int64_t a = 0; a < shape[0]; ++a) {
    for (int64_t b = 0; b < shape[1]; ++b) {
      for (int64_t c = 0; c < shape[2]; ++c) {
        for (int64_t d = 0; d < shape[3]; ++d, ++i) {
          const int64_t off = a * strides[perm[0]] + b * strides[perm[1]] + c * strides[perm[2]] + d * strides[perm[3]];
          std::memcpy(dst + i * bytes, src + off * bytes, bytes);
        }
      }
    }
  }
  return out;
}

bool IsStatic1(const Dim& d) { return d.is_static() && d.value() == 1; }

class LayoutPass : public Pass {
 public:
  absl::Status Run(Graph& graph, PassContext& ctx) override {
    nhwc_.clear();
    converted_.clear();
    absl::StatusOr<std::vector<Node*>> order = graph.TopologicalOrder();
    if (!order.ok()) return order.status();
    // Build the NHWC twin of every convertible node, in dataflow order so inputs have theirs.
    for (Node* n : *order) {
      absl::Status s;
      if (IsChannelsLastOp(n)) {
        nhwc_[n->output(0)] = n->output(0);
      } else if (std::string target = SpatialTarget(n); !target.empty()) {
        s = ConvertSpatial(graph, n, target, ctx);
      } else if (IsElementwise(n)) {
        s = ConvertElementwise(graph, n, ctx);
      } else if (IsOp(n, "Concat")) {
        s = ConvertConcat(graph, n, ctx);
      } else if (IsOp(n, "InstanceNormalization")) {
        s = ConvertInstanceNorm(graph, n, ctx);
      }
      if (!s.ok()) return s;
    }
    absl::Status s = ReplaceOriginals(graph, ctx);
    if (!s.ok()) return s;
    s = CancelTransposePairs(graph, ctx);
    if (!s.ok()) return s;
    graph.RemoveUnusedConstants();
    return absl::OkStatus();
  }

 private:
  // v in NHWC: its twin, a permuted constant, or a new Transpose.
  absl::StatusOr<Value*> ToNhwc(Graph& graph, Value* v, PassContext& ctx) {
    auto it = nhwc_.find(v);
    if (it != nhwc_.end()) return it->second;
    Value* twin;
    if (v->is_constant()) {
      twin = graph.AddConstant(v->name() + "_nhwc", Permute4(*v->constant(), kToNhwc));
    } else {
      Node* t = graph.AddNode("Transpose", {v}, 1, v->name() + "/to_nhwc");
      t->SetAttr("perm", Attribute::Ints(kToNhwc));
      absl::Status s = InferNodeTypes(t);
      if (!s.ok()) return s;
      twin = t->output(0);
      TensorType type = twin->type();
      type.layout = Layout::kNHWC;
      twin->set_type(type);
      ++ctx.stat("transposes-inserted");
    }
    nhwc_[v] = twin;
    return twin;
  }

  // Why `n` stays NCHW; "" when it converts.
  static std::string SpatialBlocker(const Node* n) {
    if (n->num_outputs() != 1) return "it has more than one output";
    for (const Value* in : n->inputs()) {
      if (in == nullptr || in->type().rank() == 1) continue;  // biases
      if (in->type().rank() != 4) return absl::StrCat("input '", in->name(), "' is not 4-D");
      if (DTypeBits(in->type().dtype) % 8 != 0) return absl::StrCat("input '", in->name(), "' is packed");
    }
    return "";
  }

  absl::Status ConvertSpatial(Graph& graph, Node* n, const std::string& target, PassContext& ctx) {
    const std::string reason = SpatialBlocker(n);
    if (!reason.empty()) {
      if (ctx.explain()) ctx.Explain(absl::StrCat(n->DebugName(), " kept NCHW: ", reason));
      return absl::OkStatus();
    }
    // Data, weights and residuals are 4-D and all move their channel axis last; biases stay.
    std::vector<Value*> inputs;
    for (Value* in : n->inputs()) {
      if (in == nullptr || in->type().rank() != 4) {
        inputs.push_back(in);
        continue;
      }
      absl::StatusOr<Value*> t = ToNhwc(graph, in, ctx);
      if (!t.ok()) return t.status();
      inputs.push_back(*t);
    }
    Node* twin = graph.AddNode(target, inputs, 1, n->name(), {n->output(0)->name() + "_nhwc"});
    twin->set_domain(kTesselDomain);
    for (const auto& [k, v] : n->attributes()) twin->SetAttr(k, v);
    twin->SetAttr("layout", Attribute::String("nhwc"));
    return Record(n, twin, ctx);
  }

  absl::Status ConvertElementwise(Graph& graph, Node* n, PassContext& ctx) {
    if (n->output(0)->type().rank() != 4) return absl::OkStatus();
    bool any_nhwc = false;
    for (const Value* in : n->inputs()) {
      if (in == nullptr) continue;
      if (nhwc_.count(in)) {
        any_nhwc = true;
      } else if (!in->is_constant() || in->type().rank() > 4 || DTypeBits(in->type().dtype) % 8 != 0) {
        return absl::OkStatus();  // an NCHW operand: converting would cost a Transpose
      }
    }
    if (!any_nhwc) return absl::OkStatus();
    std::vector<Value*> inputs;
    for (Value* in : n->inputs()) {
      if (in != nullptr && in->is_constant() && !nhwc_.count(in) && in->constant()->num_elements() != 1) {
        // Broadcast constants such as [C, 1, 1] become rank 4, then channels-last.
        std::vector<int64_t> shape(4 - in->type().rank(), 1);
        for (int64_t d : in->constant()->shape()) shape.push_back(d);
        absl::StatusOr<Tensor> r = in->constant()->Reshaped(shape);
        if (!r.ok()) return r.status();
        nhwc_[in] = graph.AddConstant(in->name() + "_nhwc", Permute4(*r, kToNhwc));
      }
      inputs.push_back(in == nullptr || !nhwc_.count(in) ? in : nhwc_[in]);
    }
    Node* twin = graph.AddNode(n->op_type(), inputs, 1, n->name(), {n->output(0)->name() + "_nhwc"});
    for (const auto& [k, v] : n->attributes()) twin->SetAttr(k, v);
    return Record(n, twin, ctx);
  }

  // A rank-4 Concat whose data inputs are all NHWC (constants permute): the same Concat over the
  // channels-last axis. DenseNet's dense blocks concatenate channels before every layer; left NCHW,
  // each layer's concat, batch norm and ReLU ran between two Transposes (131 in DenseNet-121, 10% of its
  // time).
  absl::Status ConvertConcat(Graph& graph, Node* n, PassContext& ctx) {
    if (n->output(0)->type().rank() != 4 || n->num_outputs() != 1) return absl::OkStatus();
    bool any_nhwc = false;
    for (const Value* in : n->inputs()) {
      if (in == nullptr) return absl::OkStatus();
      if (nhwc_.count(in)) {
        any_nhwc = true;
      } else if (!in->is_constant() || in->type().rank() != 4 || DTypeBits(in->type().dtype) % 8 != 0) {
        return absl::OkStatus();  // an NCHW operand: converting would cost a Transpose
      }
    }
    if (!any_nhwc) return absl::OkStatus();
    int64_t axis = n->GetInt("axis", 0);
    if (axis < 0) axis += 4;
    if (axis < 0 || axis > 3) return absl::OkStatus();
    constexpr int64_t kNhwcAxis[4] = {0, 3, 1, 2};  // NCHW axis a is NHWC axis kNhwcAxis[a]
    std::vector<Value*> inputs;
    for (Value* in : n->inputs()) {
      absl::StatusOr<Value*> t = ToNhwc(graph, in, ctx);  // a twin, or a permuted constant
      if (!t.ok()) return t.status();
      inputs.push_back(*t);
    }
    Node* twin = graph.AddNode("Concat", inputs, 1, n->name(), {n->output(0)->name() + "_nhwc"});
    for (const auto& [k, v] : n->attributes()) twin->SetAttr(k, v);
    twin->SetAttr("axis", Attribute::Int(kNhwcAxis[axis]));
    return Record(n, twin, ctx);
  }

  // InstanceNormalization of a rank-4 NHWC value: tessel.InstanceNorm with layout nhwc (scale and B stay
  // per channel). Left NCHW, RAFT's encoders ran each instance norm between two Transposes.
  absl::Status ConvertInstanceNorm(Graph& graph, Node* n, PassContext& ctx) {
    Value* x = n->input(0);
    if (n->num_inputs() != 3 || x == nullptr || x->type().rank() != 4 || !nhwc_.count(x) || n->num_outputs() != 1) {
      return absl::OkStatus();
    }
    Node* twin = graph.AddNode("InstanceNorm", {nhwc_[x], n->input(1), n->input(2)}, 1, n->name(),
                               {n->output(0)->name() + "_nhwc"});
    twin->set_domain(kTesselDomain);
    for (const auto& [k, v] : n->attributes()) twin->SetAttr(k, v);
    twin->SetAttr("layout", Attribute::String("nhwc"));
    return Record(n, twin, ctx);
  }

  absl::Status Record(Node* n, Node* twin, PassContext& ctx) {
    absl::Status s = InferNodeTypes(twin);
    if (!s.ok()) return s;
    TensorType type = twin->output(0)->type();
    type.layout = Layout::kNHWC;
    twin->output(0)->set_type(type);
    nhwc_[n->output(0)] = twin->output(0);
    converted_.push_back(n);
    ++ctx.stat("nodes-converted");
    return absl::OkStatus();
  }

  // Readers outside the NHWC region get NCHW back through one Transpose per value (a Flatten of a
  // 1x1 map needs none: both layouts hold the same bytes); then the NCHW originals go.
  absl::Status ReplaceOriginals(Graph& graph, PassContext& ctx) {
    absl::flat_hash_set<const Node*> converted(converted_.begin(), converted_.end());
    std::vector<Value*> backs;
    for (Node* n : converted_) {
      Value* old = n->output(0);
      Value* twin = nhwc_[old];
      bool needed = graph.IsGraphOutput(old);
      const std::vector<Use> uses = old->uses();
      for (const Use& u : uses) {
        if (converted.count(u.node)) continue;
        const std::vector<Dim>& d = twin->type().dims;
        if (IsOp(u.node, "Flatten") && u.node->GetInt("axis", 1) == 1 && IsStatic1(d[1]) && IsStatic1(d[2])) {
          u.node->SetInput(u.input_index, twin);
          ++ctx.stat("transposes-avoided");
          continue;
        }
        needed = true;
      }
      Value* back = nullptr;
      if (needed) {
        Node* t = graph.AddNode("Transpose", {twin}, 1, old->name() + "/to_nchw");
        t->SetAttr("perm", Attribute::Ints(kToNchw));
        absl::Status s = InferNodeTypes(t);
        if (!s.ok()) return s;
        back = t->output(0);
        graph.ReplaceAllUsesWith(old, back);
        ++ctx.stat("transposes-inserted");
      }
      backs.push_back(back);
    }
    // Reverse dataflow order: a converted node's converted readers go first.
    for (size_t i = converted_.size(); i-- > 0;) {
      Node* n = converted_[i];
      const std::string name = n->output(0)->name();
      Value* twin = nhwc_[n->output(0)];
      absl::Status s = graph.EraseNode(n);
      if (!s.ok()) return s;
      s = graph.RenameValue(backs[i] ? backs[i] : twin, name);
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }

  // Transpose(Transpose(x, p), q) with q∘p the identity reads x.
  absl::Status CancelTransposePairs(Graph& graph, PassContext& ctx) {
    absl::StatusOr<std::vector<Node*>> order = graph.TopologicalOrder();
    if (!order.ok()) return order.status();
    for (Node* n : *order) {
      Node* p = n->input(0) ? n->input(0)->producer() : nullptr;
      if (!IsOp(n, "Transpose") || !IsOp(p, "Transpose")) continue;
      const std::vector<int64_t> outer = n->GetInts("perm");
      const std::vector<int64_t> inner = p->GetInts("perm");
      if (outer.size() != inner.size() || outer.empty()) continue;
      bool identity = true;
      for (size_t i = 0; i < outer.size(); ++i) identity &= inner[outer[i]] == static_cast<int64_t>(i);
      if (!identity) continue;
      Value* x = p->input(0);
      // A graph input read straight back out keeps the Transposes: the output needs a name of its own.
      if (x->is_graph_input() && graph.IsGraphOutput(n->output(0))) continue;
      absl::Status s = BypassNode(graph, n, x);
      if (!s.ok()) return s;
      if (NumUsers(graph, p->output(0)) == 0) {
        s = graph.EraseNode(p);
        if (!s.ok()) return s;
      }
      ++ctx.stat("transposes-cancelled");
    }
    return absl::OkStatus();
  }

  // Per run: each converted or channels-last value's NHWC twin, and the nodes replaced, in order.
  absl::flat_hash_map<const Value*, Value*> nhwc_;
  std::vector<Node*> converted_;
};

}  // namespace

PassInfo LayoutPassInfo() {
  return SimplePassInfo<LayoutPass>(
      "layout", "NCHW to NHWC for conv/pool chains, with Transposes only at the region boundaries");
}

}  // namespace tessel
