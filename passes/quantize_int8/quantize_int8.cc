// INT8 lowering of a calibrated f32 graph.
#include "passes/quantize_int8/quantize_int8.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "kernels/int8/requantize.h"

namespace tessel {
namespace {

bool Is(const Node* n, const std::string& domain, const char* op) {
  return n != nullptr && n->domain() == domain && n->op_type() == op;
}

bool IsPool(const Node* n) {
  if (n->num_outputs() != 1) return false;  // MaxPool with Indices stays f32
  for (const char* op : {"MaxPool", "AveragePool", "GlobalAveragePool"}) {
    if (Is(n, kTesselDomain, op) || Is(n, "", op)) return true;
  }
  return false;
}

// Conv attributes that carry over to QConv (everything but the float activation).
bool IsActivationAttr(const std::string& key) {
  return key == "activation" || key == "clip_min" || key == "clip_max";
}

const Tensor* ConstantF32(const Value* v) {
  if (v == nullptr || !v->is_constant() || v->constant()->dtype() != DType::kF32) return nullptr;
  return v->constant().get();
}

// Symmetric per-output-channel i8 weights: channel = first dimension; scale = max|w| / qmax.
struct QuantizedWeights {
  Tensor q;
  std::vector<float> scales;
};

QuantizedWeights QuantizeWeights(const Tensor& w, bool transpose_2d, int qmax) {
  const std::vector<int64_t>& s = w.shape();
  const bool t = transpose_2d && s.size() == 2;
  const int64_t channels = t ? s[1] : s[0];
  const int64_t per = w.num_elements() / std::max<int64_t>(channels, 1);
  // Element (channel c, position k) of the source.
  auto at = [&](int64_t c, int64_t k) { return t ? w.data<float>()[k * s[1] + c] : w.data<float>()[c * per + k]; };
  QuantizedWeights out;
  std::vector<int64_t> shape = t ? std::vector<int64_t>{s[1], s[0]} : s;
  out.q = Tensor(DType::kI8, shape);
  for (int64_t c = 0; c < channels; ++c) {
    float amax = 0;
    for (int64_t k = 0; k < per; ++k) amax = std::max(amax, std::fabs(at(c, k)));
    const float hi = static_cast<float>(qmax);
    const float scale = amax > 0 ? amax / hi : 1.0f;
    out.scales.push_back(scale);
    for (int64_t k = 0; k < per; ++k) {
      const float q = std::nearbyint(at(c, k) / scale);
      out.q.data<int8_t>()[c * per + k] = static_cast<int8_t>(std::min(hi, std::max(-hi, q)));
    }
  }
  return out;
}

class Rewriter {
 public:
  Rewriter(Graph& graph, const QuantTable& table, const QuantizeInt8Options& options, PassContext* ctx)
      : graph_(graph), table_(table), options_(options), ctx_(ctx) {}

  absl::Status Run() {
    absl::StatusOr<std::vector<Node*>> order = graph_.TopologicalOrder();
    if (!order.ok()) return order.status();
    for (Node* n : *order) {
      if (folded_.count(n)) continue;  // a ReLU a QAdd took over (erased; the pointer is not read)
      absl::Status s = Visit(n);
      if (!s.ok()) return absl::Status(s.code(), absl::StrCat("quantize-int8 at ", n->DebugName(), ": ", s.message()));
    }
    // Quantize / dequantize nodes nothing reads: consumers that took the integer value directly, or
    // nodes that stayed f32 after their inputs were quantized.
    bool erased = true;
    while (erased) {
      erased = false;
      for (const auto& node : graph_.nodes()) {
        Node* n = node.get();
        const bool dq = Is(n, "", "DequantizeLinear");
        if ((dq || Is(n, "", "QuantizeLinear")) && n->output(0)->uses().empty() &&
            !graph_.IsGraphOutput(n->output(0))) {
          absl::Status s = graph_.EraseNode(n);
          if (!s.ok()) return s;
          --(dq ? summary_.dequantize_inserted : summary_.quantize_inserted);
          erased = true;
          break;
        }
      }
    }
    for (auto it = summary_.tensors.begin(); it != summary_.tensors.end();) {
      it = graph_.FindValue(it->second.quantized_name) == nullptr ? summary_.tensors.erase(it) : std::next(it);
    }
    if (ctx_ != nullptr) {
      ctx_->stat("quantize-inserted") = summary_.quantize_inserted;
      ctx_->stat("dequantize-inserted") = summary_.dequantize_inserted;
    }
    graph_.RemoveUnusedConstants();
    return graph_.SortTopologically();
  }

  QuantizeInt8Summary& summary() { return summary_; }

 private:
  struct QValue {
    Value* q = nullptr;
    TensorQuantParams params;
  };

  void Explain(const std::string& message) {
    if (ctx_ != nullptr && ctx_->explain()) ctx_->Explain(message);
  }

  const TensorQuantParams* Calibrated(const Value* v) const {
    auto it = table_.find(v->name());
    return it == table_.end() ? nullptr : &it->second;
  }

  Value* Scalar(float v) { return graph_.AddConstant(graph_.UniqueValueName("qscale"), Tensor::Scalar(v)); }
  Value* ZeroPoint(const TensorQuantParams& p) {
    Tensor t(p.dtype, {});
    if (p.dtype == DType::kU8) {
      t.data<uint8_t>()[0] = static_cast<uint8_t>(p.zero_point);
    } else {
      t.data<int8_t>()[0] = static_cast<int8_t>(p.zero_point);
    }
    return graph_.AddConstant(graph_.UniqueValueName("qzero"), std::move(t));
  }

  // The integer twin of f32 value v, inserting a QuantizeLinear when v is produced in f32. Null when
  // v has no calibration entry.
  const QValue* Quantized(Value* v) {
    auto it = qvalues_.find(v);
    if (it != qvalues_.end()) return &it->second;
    const TensorQuantParams* p = Calibrated(v);
    if (p == nullptr) return nullptr;
    Node* q = graph_.AddNode("QuantizeLinear", {v, Scalar(p->scale), ZeroPoint(*p)}, 1,
                             graph_.UniqueNodeName(v->name() + "/quantize"), {graph_.UniqueValueName(v->name() + "_q")});
    if (!InferNodeTypes(q).ok()) return nullptr;
    ++summary_.quantize_inserted;
    summary_.tensors[v->name()] = {q->output(0)->name(), *p};
    return &(qvalues_[v] = {q->output(0), *p});
  }

  // Replaces n (single f32 output) by qnode, whose output carries `yp`; f32 readers get a DequantizeLinear
  // that keeps the output's name.
  absl::Status Replace(Node* n, Node* qnode, const TensorQuantParams& yp) {
    Value* y = n->output(0);
    const std::string name = y->name(), node_name = n->name();
    absl::Status s = InferNodeTypes(qnode);
    if (!s.ok()) return s;
    Value* yq = qnode->output(0);
    Node* dq = graph_.AddNode("DequantizeLinear", {yq, Scalar(yp.scale), ZeroPoint(yp)}, 1,
                              graph_.UniqueNodeName(name + "/dequantize"));
    s = InferNodeTypes(dq);
    if (!s.ok()) return s;
    Value* yf = dq->output(0);
    graph_.ReplaceAllUsesWith(y, yf);
    s = graph_.EraseNode(n);
    if (!s.ok()) return s;
    s = graph_.RenameValue(yf, name);
    if (!s.ok()) return s;
    qnode->set_name(node_name);
    qvalues_[yf] = {yq, yp};
    summary_.tensors[name] = {yq->name(), yp};
    ++summary_.nodes_quantized;
    ++summary_.dequantize_inserted;
    if (ctx_ != nullptr) ++ctx_->stat("nodes-quantized");
    return absl::OkStatus();
  }

  Node* NewNode(const std::string& op, std::vector<Value*> inputs, const Value* out, bool tessel) {
    Node* q = graph_.AddNode(op, std::move(inputs), 1, graph_.UniqueNodeName(op),
                             {graph_.UniqueValueName(out->name() + "_q")});
    if (tessel) q->set_domain(kTesselDomain);
    return q;
  }

  void KeepFp32(const Node* n, const std::string& why) {
    ++summary_.kept_fp32;
    if (ctx_ != nullptr) ++ctx_->stat("kept-fp32");
    Explain(absl::StrCat(n->name(), " kept f32: ", why));
  }

  // The requantization attributes for real multipliers `m` under prefix.
  static void SetRequant(Node* q, const std::string& prefix, const std::vector<double>& m) {
    std::vector<int64_t> mult, shift;
    for (double v : m) {
      const QuantizedMultiplier qm = QuantizeMultiplier(v);
      mult.push_back(qm.multiplier);
      shift.push_back(qm.shift);
    }
    q->SetAttr(prefix + "multiplier", Attribute::Ints(mult));
    q->SetAttr(prefix + "shift", Attribute::Ints(shift));
  }

  // y_zero_point and the clamp, with a ReLU / clip activation folded in.
  static void SetOutputStage(Node* q, const TensorQuantParams& yp, const std::string& act, float lo, float hi) {
    int64_t qlo = yp.qmin(), qhi = yp.qmax();
    if (act == "relu" || act == "clip") qlo = std::max<int64_t>(qlo, act == "relu" ? yp.zero_point : yp.Quantize(lo));
    if (act == "clip") qhi = std::min<int64_t>(qhi, yp.Quantize(hi));
    q->SetAttr("y_zero_point", Attribute::Int(yp.zero_point));
    q->SetAttr("act_min", Attribute::Int(qlo));
    q->SetAttr("act_max", Attribute::Int(qhi));
  }

  // Calibration of the node's output and inputs; false (and an explanation) when one is missing or the
  // dtypes disagree.
  bool Ready(const Node* n, const std::vector<const QValue*>& ins, const TensorQuantParams* yp) {
    if (yp == nullptr) {
      KeepFp32(n, absl::StrCat("no calibration entry for its output '", n->output(0)->name(), "'"));
      return false;
    }
    for (size_t i = 0; i < ins.size(); ++i) {
      if (ins[i] == nullptr) {
        KeepFp32(n, absl::StrCat("no calibration entry for input ", i));
        return false;
      }
      if (ins[i]->params.dtype != yp->dtype) {
        KeepFp32(n, "input and output activation dtypes differ");
        return false;
      }
    }
    return true;
  }

  absl::Status Visit(Node* n) {
    if (n->num_outputs() != 1 || n->output(0)->type().dtype != DType::kF32) return absl::OkStatus();
    if (IsInt8ComputeNode(*n) && options_.keep_fp32.count(n->name())) {
      KeepFp32(n, "on the keep-fp32 list");
      return absl::OkStatus();
    }
    if (Is(n, kTesselDomain, "FusedConv")) return VisitConv(n);
    if (Is(n, "", "Gemm") || Is(n, kTesselDomain, "MatMulBias")) return VisitGemm(n);
    if (Is(n, "", "Add")) return VisitAdd(n);
    if (IsPool(n) || Is(n, "", "Transpose") || Is(n, "", "Flatten") || Is(n, "", "Reshape")) return VisitPassThrough(n);
    return absl::OkStatus();
  }

  absl::Status VisitConv(Node* n) {
    const Tensor* w = ConstantF32(n->input(1));
    const Tensor* b = ConstantF32(n->input(2));
    const std::string act = n->GetString("activation", "none");
    if (w == nullptr || w->rank() != 4 || (n->input(2) != nullptr && b == nullptr) ||
        (act != "none" && act != "relu" && act != "clip") || n->input(0)->type().rank() != 4) {
      KeepFp32(n, "needs a 2-D convolution with constant f32 weights and bias and a none/relu/clip activation");
      return absl::OkStatus();
    }
    const TensorQuantParams* yp = Calibrated(n->output(0));
    std::vector<const QValue*> ins = {Quantized(n->input(0))};
    if (n->input(3) != nullptr) ins.push_back(Quantized(n->input(3)));
    if (!Ready(n, ins, yp)) return absl::OkStatus();
    const QuantizedWeights qw = QuantizeWeights(*w, false, options_.weight_max);
    const float sx = ins[0]->params.scale;
    std::vector<Value*> inputs = {ins[0]->q, graph_.AddConstant(graph_.UniqueValueName(n->input(1)->name() + "_i8"), qw.q)};
    inputs.push_back(QuantizedBias(n->input(2), b, sx, qw.scales));
    if (n->input(3) != nullptr) inputs.push_back(ins[1]->q);
    Node* q = NewNode("QConv", inputs, n->output(0), true);
    for (const auto& [key, attr] : n->attributes()) {
      if (!IsActivationAttr(key)) q->SetAttr(key, attr);
    }
    q->SetAttr("x_zero_point", Attribute::Int(ins[0]->params.zero_point));
    std::vector<double> m;
    for (float sw : qw.scales) m.push_back(static_cast<double>(sx) * sw / yp->scale);
    SetRequant(q, "", m);
    if (n->input(3) != nullptr) {
      q->SetAttr("r_zero_point", Attribute::Int(ins[1]->params.zero_point));
      SetRequant(q, "r_", {static_cast<double>(ins[1]->params.scale) / yp->scale});
    }
    SetOutputStage(q, *yp, act, n->GetFloat("clip_min", 0), n->GetFloat("clip_max", 0));
    summary_.compute_nodes.insert(n->name());
    return Replace(n, q, *yp);
  }

  // i32 bias in units of x_scale * w_scale[c] (zeros when the node has none).
  Value* QuantizedBias(const Value* v, const Tensor* b, float sx, const std::vector<float>& sw) {
    Tensor qb(DType::kI32, {static_cast<int64_t>(sw.size())});
    for (size_t c = 0; b != nullptr && c < sw.size(); ++c) {
      const double r = std::nearbyint(static_cast<double>(b->data<float>()[c]) / (static_cast<double>(sx) * sw[c]));
      qb.data<int32_t>()[c] = static_cast<int32_t>(std::min<double>(std::max<double>(r, INT32_MIN), INT32_MAX));
    }
    const std::string name = v != nullptr ? v->name() + "_i32" : "qbias";
    return graph_.AddConstant(graph_.UniqueValueName(name), std::move(qb));
  }

  absl::Status VisitGemm(Node* n) {
    const bool gemm = n->op_type() == "Gemm";
    const Tensor* w = ConstantF32(n->input(1));
    const Tensor* b = ConstantF32(n->input(2));
    const bool trans_b = gemm && n->GetInt("transB", 0) != 0;
    const bool plain = !gemm || (n->GetFloat("alpha", 1) == 1 && n->GetFloat("beta", 1) == 1 && n->GetInt("transA", 0) == 0);
    const int64_t cols = w == nullptr || w->rank() != 2 ? -1 : (trans_b ? w->dim(0) : w->dim(1));
    if (!plain || cols < 0 || n->input(0)->type().rank() != 2 || (n->input(2) != nullptr && b == nullptr) ||
        (b != nullptr && (b->rank() != 1 || b->dim(0) != cols))) {
      KeepFp32(n, "needs a 2-D A, constant f32 weights, a 1-D constant bias, alpha = beta = 1 and no transA");
      return absl::OkStatus();
    }
    const TensorQuantParams* yp = Calibrated(n->output(0));
    std::vector<const QValue*> ins = {Quantized(n->input(0))};
    if (!Ready(n, ins, yp)) return absl::OkStatus();
    // QGemm takes W as [N, K]: ONNX Gemm with transB already is; MatMul-style [K, N] is transposed.
    const QuantizedWeights qw = QuantizeWeights(*w, !trans_b, options_.weight_max);
    const float sx = ins[0]->params.scale;
    Node* q = NewNode("QGemm",
                      {ins[0]->q, graph_.AddConstant(graph_.UniqueValueName(n->input(1)->name() + "_i8"), qw.q),
                       QuantizedBias(n->input(2), b, sx, qw.scales)},
                      n->output(0), true);
    q->SetAttr("x_zero_point", Attribute::Int(ins[0]->params.zero_point));
    std::vector<double> m;
    for (float sw : qw.scales) m.push_back(static_cast<double>(sx) * sw / yp->scale);
    SetRequant(q, "", m);
    SetOutputStage(q, *yp, "none", 0, 0);
    summary_.compute_nodes.insert(n->name());
    return Replace(n, q, *yp);
  }

  // The ReLU that is the only reader of n's output (not a graph output), else null.
  Node* SoleReluReader(const Node* n) const {
    const Value* y = n->output(0);
    if (y->uses().size() != 1 || graph_.IsGraphOutput(y)) return nullptr;
    Node* r = y->uses()[0].node;
    return Is(r, "", "Relu") ? r : nullptr;
  }

  // Shapes may be symbolic (the batch while calibrating): QAdd is element-wise on equal types. A ReLU
  // that alone reads the sum folds into QAdd's output clamp with the ReLU output's parameters, as in
  // ResNet's residual blocks once fuse-conv-add is left out (XNNPACK's qu8 add clamps too).
  absl::Status VisitAdd(Node* n) {
    if (n->input(0)->is_constant() || n->input(1)->is_constant() || n->input(0)->type() != n->input(1)->type()) {
      KeepFp32(n, "QAdd needs two computed inputs of the same shape");
      return absl::OkStatus();
    }
    Node* relu = SoleReluReader(n);
    if (relu != nullptr && Calibrated(relu->output(0)) == nullptr) relu = nullptr;
    Node* last = relu != nullptr ? relu : n;
    const TensorQuantParams* yp = Calibrated(last->output(0));
    std::vector<const QValue*> ins = {Quantized(n->input(0)), Quantized(n->input(1))};
    if (!Ready(n, ins, yp)) return absl::OkStatus();
    Node* q = NewNode("QAdd", {ins[0]->q, ins[1]->q}, last->output(0), true);
    q->SetAttr("a_zero_point", Attribute::Int(ins[0]->params.zero_point));
    q->SetAttr("b_zero_point", Attribute::Int(ins[1]->params.zero_point));
    SetRequant(q, "a_", {static_cast<double>(ins[0]->params.scale) / yp->scale});
    SetRequant(q, "b_", {static_cast<double>(ins[1]->params.scale) / yp->scale});
    SetOutputStage(q, *yp, relu != nullptr ? "relu" : "none", 0, 0);
    summary_.compute_nodes.insert(n->name());
    if (relu == nullptr) return Replace(n, q, *yp);
    const std::string name = n->name(), sum = n->output(0)->name(), activated = relu->output(0)->name();
    folded_.insert(relu);
    absl::Status s = Replace(relu, q, *yp);
    if (!s.ok()) return s;
    s = graph_.EraseNode(n);  // its one reader, the ReLU, is gone
    if (!s.ok()) return s;
    q->set_name(name);  // the compute node keeps the Add's name (keep-fp32, sensitivity report)
    summary_.relu_folded[sum] = activated;
    if (ctx_ != nullptr) ++ctx_->stat("relus-folded");
    return absl::OkStatus();
  }

  // Data movement and pooling stay integer when their input already is (same scale and zero point).
  absl::Status VisitPassThrough(Node* n) {
    auto it = qvalues_.find(n->input(0));
    if (it == qvalues_.end()) return absl::OkStatus();
    const QValue in = it->second;
    if (IsPool(n) && n->input(0)->type().rank() != 4) return absl::OkStatus();
    std::string op = n->op_type();
    bool tessel = false;
    if (IsPool(n)) {
      op = op == "MaxPool" ? "QMaxPool" : op == "AveragePool" ? "QAvgPool" : "QGlobalAvgPool";
      tessel = true;
    }
    std::vector<Value*> inputs = n->inputs();
    inputs[0] = in.q;
    Node* q = NewNode(op, inputs, n->output(0), tessel);
    for (const auto& [key, attr] : n->attributes()) q->SetAttr(key, attr);
    if (op == "QAvgPool" || op == "QGlobalAvgPool") q->SetAttr("x_zero_point", Attribute::Int(in.params.zero_point));
    return Replace(n, q, in.params);
  }

  Graph& graph_;
  const QuantTable& table_;
  const QuantizeInt8Options& options_;
  PassContext* ctx_;
  std::map<Value*, QValue> qvalues_;
  std::set<const Node*> folded_;
  QuantizeInt8Summary summary_;
};

class QuantizeInt8Pass : public Pass {
 public:
  QuantizeInt8Pass(QuantTable table, QuantizeInt8Options options)
      : table_(std::move(table)), options_(std::move(options)) {}
  absl::Status Run(Graph& graph, PassContext& ctx) override {
    if (absl::Status s = CheckKeepFp32(graph, options_.keep_fp32); !s.ok()) return s;
    return QuantizeGraphInt8(graph, table_, options_, &ctx).status();
  }

 private:
  QuantTable table_;
  QuantizeInt8Options options_;
};

}  // namespace

bool IsInt8ComputeNode(const Node& n) {
  return Is(&n, kTesselDomain, "FusedConv") || Is(&n, "", "Gemm") || Is(&n, kTesselDomain, "MatMulBias") ||
         Is(&n, "", "Add");
}

absl::Status CheckKeepFp32(const Graph& graph, const std::set<std::string>& keep_fp32) {
  std::vector<std::string> compute;
  for (const std::unique_ptr<Node>& n : graph.nodes()) {
    if (IsInt8ComputeNode(*n)) compute.push_back(n->name());
  }
  for (const std::string& name : keep_fp32) {
    if (std::find(compute.begin(), compute.end(), name) != compute.end()) continue;
    const Node* n = graph.FindNode(name);
    std::string message = n == nullptr ? absl::StrCat("keep-fp32: the graph has no node '", name, "'")
                                       : absl::StrCat("keep-fp32: '", name, "' (", n->op_type(), ") is not a compute node");
    absl::StrAppend(&message, "; its compute nodes (FusedConv, Gemm, MatMulBias, Add) are ");
    constexpr size_t kShown = 8;
    if (compute.empty()) absl::StrAppend(&message, "none");
    for (size_t i = 0; i < std::min(compute.size(), kShown); ++i) absl::StrAppend(&message, i ? ", " : "", compute[i]);
    if (compute.size() > kShown) absl::StrAppend(&message, " and ", compute.size() - kShown, " more");
    return absl::InvalidArgumentError(message);
  }
  return absl::OkStatus();
}

absl::StatusOr<QuantizeInt8Summary> QuantizeGraphInt8(Graph& graph, const QuantTable& table,
                                                      const QuantizeInt8Options& options, PassContext* ctx) {
  Rewriter rewriter(graph, table, options, ctx);
  absl::Status s = rewriter.Run();
  if (!s.ok()) return s;
  return std::move(rewriter.summary());
}

PassInfo QuantizeInt8PassInfo() {
  PassInfo info;
  info.name = "quantize-int8";
  info.summary = "lower a calibrated f32 CNN to int8 operators (QConv, QGemm, QAdd, quantized pooling)";
  info.options = {{"table", "calibration table file ('TENSOR SCALE ZERO_POINT u8|i8' lines)", ""},
                  {"keep-fp32", "compute nodes that stay f32", ""},
                  {"weight-bits", "8, or 7 for weights in [-64, 64] (x86 without VNNI multiplies them as bytes)", "8"}};
  info.create = [info](const PassOptions& options) -> absl::StatusOr<std::unique_ptr<Pass>> {
    absl::Status s = CheckOptionNames(info, options);
    if (!s.ok()) return s;
    const std::vector<std::string> table_path = options.GetList("table", {});
    if (table_path.size() != 1 || table_path[0].empty()) {
      return absl::InvalidArgumentError("quantize-int8 needs table=FILE (a calibration table from tessel compile "
                                        "--quantize=int8 or quant/int8)");
    }
    std::ifstream f(table_path[0]);
    if (!f) return absl::NotFoundError(absl::StrCat("quantize-int8: cannot open calibration table ", table_path[0]));
    std::stringstream text;
    text << f.rdbuf();
    absl::StatusOr<QuantTable> table = ParseQuantTable(text.str(), table_path[0]);
    if (!table.ok()) return table.status();
    QuantizeInt8Options o;
    for (const std::string& name : options.GetList("keep-fp32", {})) o.keep_fp32.insert(name);
    absl::StatusOr<int64_t> bits = options.GetInt("weight-bits", 8);
    if (!bits.ok()) return bits.status();
    if (*bits != 7 && *bits != 8) {
      return absl::InvalidArgumentError(absl::StrCat("quantize-int8: weight-bits=", *bits, " (7 or 8)"));
    }
    o.weight_max = *bits == 7 ? 64 : 127;
    return std::unique_ptr<Pass>(new QuantizeInt8Pass(std::move(*table), std::move(o)));
  };
  return info;
}

TESSEL_REGISTER_PASS(quantize_int8, QuantizeInt8PassInfo());

}  // namespace tessel
