// Every registered operator-level kernel against the reference kernels (the oracle) on random,
// awkward cases: odd sizes, strides, asymmetric pads, dilation, groups and depthwise, every fused
// clamp activation, with and without bias and residual, 1 and 3 threads. Float results must agree to
// a normalized error (max |got - want| / max |want|) of 2e-5: only the summation order differs
// (Winograd F(4x4, 3x3) excepted, see ToleranceFor).
// A kernel whose ISA this CPU lacks is skipped visibly; one that no generated case reaches fails.
#include "kernels/op_kernels.h"
#include "kernels/registry/lab_costs.h"
#include "kernels/xnnpack/xnn_init.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/graph.h"
#include "gtest/gtest.h"
#include "kernels/reference/reference.h"
#include "pthreadpool.h"

namespace tessel {
namespace {

constexpr double kTolerance = 2e-5;

// Winograd F(4x4, 3x3) rounds more than a plain reduction (transform coefficients up to 8): about
// 1e-5 normalized error measured here with points 0, +-1, +-2 (4.5e-6 with 0, +-1, 1/2, -2 on C = 256),
// up to 2.5e-5 where a clip activation shrinks max |want|.
double ToleranceFor(const std::string& kernel) {
  return kernel == "tessel_f32_conv2d_3x3s1_nhwc__winograd_f4x4" ? 1e-4 : kTolerance;
}

// One generated node: a graph holding it, and the input tensors (weights are the graph's constants).
struct Case {
  std::unique_ptr<Graph> graph = std::make_unique<Graph>();
  Node* node = nullptr;
  std::vector<Value*> values;  // node inputs (nullptr for omitted optional inputs)
  std::vector<Tensor> data;    // per input (undefined for omitted ones)
  std::string label;

  // The kernel-facing views of the inputs: tensors (nullptr where omitted) and their operand infos.
  std::vector<const Tensor*> Inputs() const {
    std::vector<const Tensor*> inputs;
    for (size_t i = 0; i < values.size(); ++i) inputs.push_back(values[i] ? &data[i] : nullptr);
    return inputs;
  }
  std::vector<OperandInfo> Infos() const {
    std::vector<OperandInfo> info;
    for (size_t i = 0; i < values.size(); ++i) {
      info.push_back(values[i] ? OperandInfo{true, values[i]->is_constant(), data[i].type()} : OperandInfo{});
    }
    return info;
  }
};

class CaseBuilder {
 public:
  CaseBuilder(std::mt19937* rng, Case* c) : rng_(rng), c_(c) {}

  Tensor Random(std::vector<int64_t> shape) {
    Tensor t(DType::kF32, std::move(shape));
    std::uniform_real_distribution<float> u(-1, 1);
    for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = u(*rng_);
    return t;
  }
  void Activation(std::vector<int64_t> shape) { AddOperand(Random(std::move(shape)), false); }
  void Weight(std::vector<int64_t> shape) { AddOperand(Random(std::move(shape)), true); }
  void WeightTensor(Tensor t) { AddOperand(std::move(t), true); }
  void Omitted() {
    c_->values.push_back(nullptr);
    c_->data.emplace_back();
  }
  Node* Finish(const std::string& op, const std::string& domain) {
    c_->node = c_->graph->AddNode(op, c_->values, 1, "n");
    c_->node->set_domain(domain);
    return c_->node;
  }

 private:
  void AddOperand(Tensor t, bool constant) {
    const std::string name = absl::StrCat("v", c_->values.size());
    c_->values.push_back(constant ? c_->graph->AddConstant(name, t) : c_->graph->AddInput(name, t.type()));
    c_->data.push_back(std::move(t));
  }
  std::mt19937* rng_;
  Case* c_;
};

int64_t Pick(std::mt19937& rng, std::vector<int64_t> options) {
  return options[std::uniform_int_distribution<size_t>(0, options.size() - 1)(rng)];
}

void SetActivation(std::mt19937& rng, Node* n, const std::string& prefix, std::string* label) {
  const int64_t kind = Pick(rng, {0, 1, 2});
  const char* names[] = {"none", "relu", "clip"};
  n->SetAttr(prefix + "activation", Attribute::String(names[kind]));
  if (kind == 2) {
    n->SetAttr(prefix + "clip_min", Attribute::Float(-0.5f));
    n->SetAttr(prefix + "clip_max", Attribute::Float(0.75f));
  }
  absl::StrAppend(label, " ", prefix, names[kind]);
}

int64_t OutExtent(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe) {
  const int64_t span = in + pb + pe - d * (k - 1) - 1;
  return span < 0 ? 0 : span / s + 1;
}

// tessel.FusedConv (nhwc). A third of the cases are plain 1x1 convolutions (the direct GEMM path)
// and a third dense 3x3 stride-1 ones (Winograd's), with any padding.
bool MakeFusedConv(std::mt19937& rng, Case* c) {
  CaseBuilder b(&rng, c);
  const int64_t shape_class = Pick(rng, {0, 1, 2});
  const bool one_by_one = shape_class == 1, three_by_three = shape_class == 2;
  const bool fixed = one_by_one || three_by_three;
  const int64_t n = Pick(rng, {1, 2});
  // 37: rows longer than the direct stem kernel's 6-16 pixel chunks, with a remainder.
  const int64_t h = Pick(rng, {1, 5, 7, 12}), w = Pick(rng, {1, 6, 11, 37});
  const int64_t groups = fixed ? 1 : Pick(rng, {1, 1, 2, 3, 0});  // 0: depthwise
  const int64_t cg = groups == 0 ? 1 : Pick(rng, {1, 3, 8, 17});
  const int64_t g = groups == 0 ? Pick(rng, {4, 13}) : groups;
  const int64_t mg = Pick(rng, {1, 5, 16, 33, 64});
  const int64_t kh = one_by_one ? 1 : three_by_three ? 3 : Pick(rng, {1, 3, 5});
  const int64_t kw = one_by_one ? 1 : three_by_three ? 3 : Pick(rng, {1, 2, 3});
  // sw 2 with 3 channels: the direct stem kernel's constant-offset taps (sw * c == 6).
  const int64_t sh = fixed ? 1 : Pick(rng, {1, 2}), sw = fixed ? 1 : Pick(rng, {1, 2, 3});
  const int64_t dh = fixed ? 1 : Pick(rng, {1, 2}), dw = fixed ? 1 : Pick(rng, {1, 1, 2});
  std::vector<int64_t> pads = {0, 0, 0, 0};
  if (!one_by_one) {
    for (int64_t& p : pads) p = Pick(rng, {0, 1, 2});
  }
  const int64_t oh = OutExtent(h, kh, sh, dh, pads[0], pads[2]), ow = OutExtent(w, kw, sw, dw, pads[1], pads[3]);
  if (oh < 1 || ow < 1) return false;
  const bool bias = Pick(rng, {0, 1}), residual = Pick(rng, {0, 1});
  b.Activation({n, h, w, g * cg});
  b.Weight({g * mg, kh, kw, cg});
  if (bias) {
    b.Weight({g * mg});
  } else if (residual) {
    b.Omitted();
  }
  if (residual) b.Activation({n, oh, ow, g * mg});
  Node* node = b.Finish("FusedConv", "tessel");
  node->SetAttr("layout", Attribute::String("nhwc"));
  node->SetAttr("group", Attribute::Int(g));
  node->SetAttr("strides", Attribute::Ints({sh, sw}));
  node->SetAttr("dilations", Attribute::Ints({dh, dw}));
  node->SetAttr("pads", Attribute::Ints(pads));
  c->label = absl::StrCat("x[", n, ",", h, ",", w, ",", g * cg, "] w[", g * mg, ",", kh, ",", kw, ",", cg, "] group ",
                          g, " strides ", sh, ",", sw, " dilations ", dh, ",", dw, " pads ", pads[0], ",", pads[1], ",",
                          pads[2], ",", pads[3], bias ? " bias" : "", residual ? " residual" : "");
  SetActivation(rng, node, "", &c->label);
  // A quarter of the cases with an activation that is no clamp (MobileNetV3's hardswish, EfficientNet's
  // SiLU), which only the GEMM kernels take.
  if (node->GetString("activation", "none") != "clip" && Pick(rng, {0, 0, 0, 1})) {
    const char* kinds[] = {"hardswish", "sigmoid", "silu"};
    const char* kind = kinds[Pick(rng, {0, 1, 2})];
    node->SetAttr("activation", Attribute::String(kind));
    absl::StrAppend(&c->label, " then ", kind);
  }
  return true;
}

// A depthwise channels-last tessel.FusedConv (group == C, multiplier 1). kDwWindow3x3: strides 1 or 2, no
// dilation, padding up to 2 per side, for the kernels that serve only that form; kDwWindowLarge: 26 to 81 taps
// (the "_dwconv2d_kxk_nhwc__" kernels), any stride, dilation and padding.
enum DwWindow { kDwWindow3x3, kDwWindowLarge };

bool MakeDepthwiseConv(std::mt19937& rng, Case* c, DwWindow window) {
  const bool large = window == kDwWindowLarge;
  CaseBuilder b(&rng, c);
  const int64_t n = Pick(rng, {1, 2});
  const int64_t h = large ? Pick(rng, {1, 3, 7, 12}) : Pick(rng, {1, 2, 3, 5, 8});
  const int64_t w = large ? Pick(rng, {1, 2, 6, 9, 16}) : Pick(rng, {1, 2, 3, 4, 7, 12});
  const int64_t ch = large ? Pick(rng, {1, 3, 16, 21, 40}) : Pick(rng, {1, 3, 4, 8, 13, 16, 21, 40});
  const int64_t kh = large ? Pick(rng, {6, 7, 9}) : 3, kw = large ? Pick(rng, {5, 7}) : 3;
  const int64_t sh = Pick(rng, {1, 2}), sw = Pick(rng, {1, 2});
  const int64_t dh = large ? Pick(rng, {1, 1, 2}) : 1, dw = large ? Pick(rng, {1, 2}) : 1;
  std::vector<int64_t> pads = {0, 0, 0, 0};
  for (int64_t& p : pads) p = large ? Pick(rng, {0, 1, 3, 4}) : Pick(rng, {0, 1, 1, 2});
  const int64_t oh = OutExtent(h, kh, sh, dh, pads[0], pads[2]), ow = OutExtent(w, kw, sw, dw, pads[1], pads[3]);
  if (oh < 1 || ow < 1) return false;
  const bool bias = Pick(rng, {0, 1}), residual = Pick(rng, {0, 1});
  b.Activation({n, h, w, ch});
  b.Weight({ch, kh, kw, 1});
  if (bias) {
    b.Weight({ch});
  } else if (residual) {
    b.Omitted();
  }
  if (residual) b.Activation({n, oh, ow, ch});
  Node* node = b.Finish("FusedConv", "tessel");
  node->SetAttr("layout", Attribute::String("nhwc"));
  node->SetAttr("group", Attribute::Int(ch));
  node->SetAttr("kernel_shape", Attribute::Ints({kh, kw}));
  node->SetAttr("strides", Attribute::Ints({sh, sw}));
  node->SetAttr("dilations", Attribute::Ints({dh, dw}));
  node->SetAttr("pads", Attribute::Ints(pads));
  c->label = absl::StrCat("depthwise x[", n, ",", h, ",", w, ",", ch, "] ", kh, "x", kw, " strides ", sh, ",", sw,
                          " dilations ", dh, ",", dw, " pads ", absl::StrJoin(pads, ","), bias ? " bias" : "",
                          residual ? " residual" : "");
  SetActivation(rng, node, "", &c->label);
  return true;
}

bool MakeDwPwConv(std::mt19937& rng, Case* c) {
  CaseBuilder b(&rng, c);
  const int64_t n = Pick(rng, {1, 2}), h = Pick(rng, {3, 8, 13}), w = Pick(rng, {1, 2, 4, 9, 17});
  const int64_t ch = Pick(rng, {1, 7, 16, 24}), m = Pick(rng, {3, 16, 40});
  const int64_t s = Pick(rng, {1, 2, 3}), k = Pick(rng, {3, 5});
  // Symmetric "same" padding, or asymmetric (TF-style SAME on even sizes).
  const bool asymmetric = Pick(rng, {0, 1});
  const int64_t pt = asymmetric ? 0 : k / 2, pl = asymmetric ? 0 : k / 2, pb = k / 2, pr = k / 2;
  const int64_t oh = OutExtent(h, k, s, 1, pt, pb), ow = OutExtent(w, k, s, 1, pl, pr);
  if (oh < 1 || ow < 1) return false;
  const bool b_dw = Pick(rng, {0, 1}), b_pw = Pick(rng, {0, 1}), residual = Pick(rng, {0, 1});
  // Half the cases start with a 1x1 expansion from c_in channels (inputs 6 and 7).
  const bool exp = Pick(rng, {0, 1}), b_exp = Pick(rng, {0, 1});
  // Below 24 input channels the expansion runs on XNNPACK, from 24 on the direct-A GEMM (dwpw.cc).
  const int64_t c_in = Pick(rng, {1, 3, 8, 16, 24, 40});
  b.Activation({n, h, w, exp ? c_in : ch});
  b.Weight({ch, k, k, 1});
  b_dw ? b.Weight({ch}) : b.Omitted();
  b.Weight({m, 1, 1, ch});
  if (b_pw) {
    b.Weight({m});
  } else if (residual || exp) {
    b.Omitted();
  }
  if (residual) {
    b.Activation({n, oh, ow, m});
  } else if (exp) {
    b.Omitted();
  }
  if (exp) {
    b.Weight({ch, 1, 1, c_in});
    if (b_exp) b.Weight({ch});
  }
  Node* node = b.Finish("DwPwConv", "tessel");
  node->SetAttr("layout", Attribute::String("nhwc"));
  node->SetAttr("group", Attribute::Int(ch));
  node->SetAttr("strides", Attribute::Ints({s, s}));
  node->SetAttr("pads", Attribute::Ints({pt, pl, pb, pr}));
  c->label = absl::StrCat("x[", n, ",", h, ",", w, ",", ch, "] k", k, " s", s, " pads ", pt, ",", pl, ",", pb, ",", pr,
                          " -> ", m, b_dw ? " b_dw" : "",
                          b_pw ? " b_pw" : "", residual ? " residual" : "",
                          exp ? absl::StrCat(" expanded from ", c_in, b_exp ? " with bias" : "") : "");
  SetActivation(rng, node, "dw_", &c->label);
  SetActivation(rng, node, "pw_", &c->label);
  if (exp) SetActivation(rng, node, "exp_", &c->label);
  // Some depthwise and pointwise activations that are no clamp (DeepLabV3-MobileNetV3's hardswish), which
  // the XNNPACK kernel appends as operators of their own.
  for (const char* prefix : {"dw_", "pw_"}) {
    if (node->GetString(absl::StrCat(prefix, "activation"), "none") == "clip" || Pick(rng, {0, 0, 0, 1}) == 0) continue;
    const char* kinds[] = {"hardswish", "sigmoid", "silu"};
    const char* kind = kinds[Pick(rng, {0, 1, 2})];
    node->SetAttr(absl::StrCat(prefix, "activation"), Attribute::String(kind));
    absl::StrAppend(&c->label, " then ", prefix, kind);
  }
  return true;
}

bool MakePool(std::mt19937& rng, Case* c, const std::string& op) {
  CaseBuilder b(&rng, c);
  const int64_t n = Pick(rng, {1, 2}), h = Pick(rng, {4, 7, 12}), w = Pick(rng, {5, 9}), ch = Pick(rng, {1, 3, 16, 20});
  b.Activation({n, h, w, ch});
  Node* node = b.Finish(op, "tessel");
  node->SetAttr("layout", Attribute::String("nhwc"));
  c->label = absl::StrCat(op, " x[", n, ",", h, ",", w, ",", ch, "]");
  if (op == "GlobalAveragePool") return true;
  const int64_t k = Pick(rng, {2, 3}), s = Pick(rng, {1, 2}), p = Pick(rng, {0, 1});
  const int64_t d = op == "MaxPool" ? Pick(rng, {1, 2}) : 1;
  node->SetAttr("kernel_shape", Attribute::Ints({k, k}));
  node->SetAttr("strides", Attribute::Ints({s, s}));
  node->SetAttr("pads", Attribute::Ints({p, p, p, p}));
  if (op == "MaxPool") node->SetAttr("dilations", Attribute::Ints({d, d}));
  absl::StrAppend(&c->label, " k", k, " s", s, " p", p, " d", d);
  return OutExtent(h, k, s, d, p, p) >= 1 && OutExtent(w, k, s, d, p, p) >= 1 && p < k;
}

bool MakeFullyConnected(std::mt19937& rng, Case* c, const std::string& op) {
  CaseBuilder b(&rng, c);
  const int64_t m = Pick(rng, {1, 3, 17}), k = Pick(rng, {1, 7, 64, 129}), n = Pick(rng, {1, 10, 33, 100});
  const bool trans_b = op == "Gemm" && Pick(rng, {0, 1});
  const bool fused = op == "MatMulBias" || op == "MatMulBiasGelu";
  const bool bias = fused || (op == "Gemm" && Pick(rng, {0, 1}));
  if (op == "MatMul" && Pick(rng, {0, 1})) {
    b.Activation({2, m, k});
  } else {
    b.Activation({m, k});
  }
  b.Weight(trans_b ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n});
  if (bias) b.Weight(Pick(rng, {0, 1}) && op == "Gemm" ? std::vector<int64_t>{1, n} : std::vector<int64_t>{n});
  Node* node = b.Finish(op, fused ? "tessel" : "");
  if (trans_b) node->SetAttr("transB", Attribute::Int(1));
  const bool tanh = op == "MatMulBiasGelu" && Pick(rng, {0, 1});
  if (tanh) node->SetAttr("approximate", Attribute::String("tanh"));
  c->label = absl::StrCat(op, " m", m, " k", k, " n", n, trans_b ? " transB" : "", bias ? " bias" : "",
                          tanh ? " tanh" : "");
  return true;
}

bool MakeAdd(std::mt19937& rng, Case* c) {
  CaseBuilder b(&rng, c);
  const int64_t a = Pick(rng, {1, 3}), h = Pick(rng, {1, 5}), w = Pick(rng, {7, 16});
  b.Activation({a, h, w});
  const int64_t form = Pick(rng, {0, 1, 2});
  b.Activation(form == 0   ? std::vector<int64_t>{a, h, w}
               : form == 1 ? std::vector<int64_t>{w}
                           : std::vector<int64_t>{h, 1});
  b.Finish("Add", "");
  c->label = absl::StrCat("Add [", a, ",", h, ",", w, "] form ", form);
  return true;
}

// Mul, Sub and Div: same shape, trailing vector, column, scalar, and the broadcast operand first (Div's
// divisors kept away from zero).
bool MakeBinary(std::mt19937& rng, Case* c, const std::string& op) {
  CaseBuilder b(&rng, c);
  const int64_t a = Pick(rng, {1, 2, 3}), h = Pick(rng, {1, 5, 9}), w = Pick(rng, {1, 7, 16, 33});
  const int64_t form = Pick(rng, {0, 1, 2, 3, 4});
  // Same shape, trailing vector, column, scalar, and the broadcast operand first.
  const std::vector<int64_t> other = form == 0   ? std::vector<int64_t>{a, h, w}
                                     : form == 1 ? std::vector<int64_t>{w}
                                     : form == 2 ? std::vector<int64_t>{h, 1}
                                     : form == 3 ? std::vector<int64_t>{}
                                                 : std::vector<int64_t>{a, 1, w};
  const std::vector<int64_t> full = {a, h, w};
  const std::vector<int64_t>& first = form == 4 ? other : full;
  const std::vector<int64_t>& second = form == 4 ? full : other;
  b.Activation(first);
  if (op == "Div") {
    Tensor d = b.Random(second);
    for (int64_t i = 0; i < d.num_elements(); ++i) d.data<float>()[i] += d.data<float>()[i] < 0 ? -0.5f : 0.5f;
    b.WeightTensor(std::move(d));
  } else {
    b.Activation(second);
  }
  b.Finish(op, "");
  c->label = absl::StrCat(op, " [", a, ",", h, ",", w, "] form ", form);
  return true;
}

// Random shape of rank 1-4 with awkward extents.
std::vector<int64_t> RandomShape(std::mt19937& rng) {
  const int64_t rank = Pick(rng, {1, 2, 3, 4});
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) shape.push_back(Pick(rng, {1, 2, 3, 5, 7, 16, 17}));
  if (rank == 1) shape[0] = Pick(rng, {1, 3, 33, 1000});
  return shape;
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) absl::StrAppend(&s, i ? "," : "", shape[i]);
  return s + "]";
}

// Relu, Sigmoid, HardSwish and Clip. Inputs are scaled to [-8, 8] so that HardSwish's and Sigmoid's
// saturated regions are reached; Clip takes constant bounds (either may be omitted), sometimes a
// non-constant or reversed bound, which the XNNPACK kernel must refuse.
// PRelu on [a, h, w]: a constant slope per innermost channel ([w], [1, w], [1, 1, w]) or one ([1]), which the
// fast kernel serves, or a slope along another axis ([h, 1]) or a non-constant one, which it must refuse.
bool MakePRelu(std::mt19937& rng, Case* c) {
  CaseBuilder b(&rng, c);
  const int64_t a = Pick(rng, {1, 2, 3}), h = Pick(rng, {1, 5, 9}), w = Pick(rng, {1, 7, 16, 33});
  const int64_t form = Pick(rng, {0, 1, 2, 3, 4, 5});
  const std::vector<int64_t> slope = form == 0   ? std::vector<int64_t>{w}
                                     : form == 1 ? std::vector<int64_t>{1, w}
                                     : form == 2 ? std::vector<int64_t>{1, 1, w}
                                     : form == 3 ? std::vector<int64_t>{1}
                                                 : std::vector<int64_t>{h, 1};
  b.Activation({a, h, w});
  if (form == 5) {
    b.Activation({w});
  } else {
    b.WeightTensor(b.Random(slope));
  }
  b.Finish("PRelu", "");
  c->label = absl::StrCat("PRelu [", a, ",", h, ",", w, "] form ", form);
  return true;
}

bool MakeUnary(std::mt19937& rng, Case* c, const std::string& op) {
  CaseBuilder b(&rng, c);
  const std::vector<int64_t> shape = RandomShape(rng);
  Tensor x = b.Random(shape);
  for (int64_t i = 0; i < x.num_elements(); ++i) x.data<float>()[i] *= 8.0f;
  c->values.push_back(c->graph->AddInput("v0", x.type()));
  c->data.push_back(std::move(x));
  c->label = absl::StrCat(op, " ", ShapeString(shape));
  if (op == "Clip") {
    const int64_t form = Pick(rng, {0, 1, 2, 3, 4, 5});
    const float lo = form == 5 ? 0.5f : -0.5f, hi = form == 5 ? -0.5f : 0.75f;
    if (form == 0 || form == 2 || form == 5) b.WeightTensor(Tensor::Scalar(lo));
    if (form == 1) b.Omitted();
    if (form == 3) b.Activation({});  // a non-constant min
    if (form == 4) b.WeightTensor(Tensor::FromVector<float>({1}, {lo}));
    if (form <= 1 || form >= 3) b.WeightTensor(Tensor::Scalar(hi));
    absl::StrAppend(&c->label, " form ", form);
  }
  Node* node = b.Finish(op, "");
  if (op == "Gelu" && Pick(rng, {0, 1})) {
    node->SetAttr("approximate", Attribute::String("tanh"));
    absl::StrAppend(&c->label, " approximate tanh");
  }
  if (op == "LeakyRelu" && Pick(rng, {0, 1})) {  // the default 0.01, or YOLO's 0.1
    node->SetAttr("alpha", Attribute::Float(0.1f));
    absl::StrAppend(&c->label, " alpha 0.1");
  }
  if (op == "HardSigmoid" && Pick(rng, {0, 1})) {  // the default 0.2, 0.5, or MobileNetV3's 1/6, 0.5
    node->SetAttr("alpha", Attribute::Float(1.0f / 6));
    node->SetAttr("beta", Attribute::Float(0.5f));
    absl::StrAppend(&c->label, " alpha 1/6");
  }
  return true;
}

// Softmax or LogSoftmax over the last axis (-1 or rank-1), and sometimes over another axis, which the
// row kernels must refuse.
bool MakeSoftmax(std::mt19937& rng, Case* c, const std::string& op) {
  CaseBuilder b(&rng, c);
  const std::vector<int64_t> shape = RandomShape(rng);
  const int64_t rank = static_cast<int64_t>(shape.size());
  const int64_t form = Pick(rng, {0, 1, 2, 3});
  b.Activation(shape);
  Node* node = b.Finish(op, "");
  const int64_t axis = form == 1 ? rank - 1 : form == 2 ? 0 : form == 3 ? -rank : -1;
  if (form != 0) node->SetAttr("axis", Attribute::Int(axis));
  c->label = absl::StrCat(op, " ", ShapeString(shape), " axis ", axis);
  return true;
}

// tessel.RMSNorm over the trailing axes from a random axis (given as positive, negative or by default),
// epsilon default or set, with no gain, a gain of the normalized shape, or one of the last axis only,
// which broadcasts within a row when more than one axis is normalized (the vector kernels refuse that).
bool MakeRmsNorm(std::mt19937& rng, Case* c) {
  CaseBuilder b(&rng, c);
  const std::vector<int64_t> shape = RandomShape(rng);
  const int64_t rank = static_cast<int64_t>(shape.size());
  const int64_t axis = std::uniform_int_distribution<int64_t>(0, rank - 1)(rng);
  const int64_t gain = Pick(rng, {0, 1, 2});
  b.Activation(shape);
  if (gain == 1) b.Weight(std::vector<int64_t>(shape.begin() + axis, shape.end()));
  if (gain == 2) b.Weight({shape.back()});
  Node* node = b.Finish("RMSNorm", "tessel");
  const int64_t axis_form = axis == rank - 1 ? Pick(rng, {0, 1, 2}) : Pick(rng, {1, 2});
  if (axis_form != 0) node->SetAttr("axis", Attribute::Int(axis_form == 1 ? axis : axis - rank));
  const int64_t eps_form = Pick(rng, {0, 1, 2});
  if (eps_form != 0) node->SetAttr("epsilon", Attribute::Float(eps_form == 1 ? 1e-6f : 0.5f));
  c->label = absl::StrCat("RMSNorm ", ShapeString(shape), " axis ", axis, " gain form ", gain, " eps form ", eps_form);
  return true;
}

// tessel.Attention: batch 1-2, grouped-query heads (1-3 query heads per K/V head), one query (decode)
// or a block, as many or more keys, head sizes with and without a vector remainder, Dv equal to D or
// not; no mask, a key-padding mask [Sk] or [B, 1, 1, Sk] with large negative entries (BERT's), or a full
// [B, Hq, Sq, Sk] one; causal or not; the default scale or a set one.
bool MakeAttention(std::mt19937& rng, Case* c) {
  CaseBuilder b(&rng, c);
  const int64_t batch = Pick(rng, {1, 2}), hkv = Pick(rng, {1, 2}), hq = hkv * Pick(rng, {1, 2, 3});
  const int64_t sq = Pick(rng, {1, 3, 16}), sk = sq + Pick(rng, {0, 5}), d = Pick(rng, {8, 32, 33});
  const int64_t dv = Pick(rng, {d, 16});
  b.Activation({batch, hq, sq, d});
  b.Activation({batch, hkv, sk, d});
  b.Activation({batch, hkv, sk, dv});
  const int64_t mask = Pick(rng, {0, 1, 2, 3});
  std::vector<int64_t> mask_shape;
  if (mask == 1) mask_shape = {sk};
  if (mask == 2) mask_shape = {batch, 1, 1, sk};
  if (mask == 3) mask_shape = {batch, hq, sq, sk};
  if (mask != 0) {
    Tensor m = b.Random(mask_shape);
    for (int64_t i = 0; i < m.num_elements(); ++i) {
      m.data<float>()[i] = m.data<float>()[i] < -0.6f ? -10000.0f : 3.0f * m.data<float>()[i];
    }
    b.WeightTensor(std::move(m));
  }
  Node* node = b.Finish("Attention", "tessel");
  const int64_t causal = Pick(rng, {0, 1});
  if (causal) node->SetAttr("causal", Attribute::Int(1));
  const int64_t scaled = Pick(rng, {0, 1});
  if (scaled) node->SetAttr("scale", Attribute::Float(0.3f));
  c->label = absl::StrCat("Attention B ", batch, " Hq ", hq, " Hkv ", hkv, " Sq ", sq, " Sk ", sk, " D ", d, " Dv ", dv,
                          " mask form ", mask, " causal ", causal, " scale set ", scaled);
  return true;
}

// tessel.InstanceNorm channels-last: [N, spatial..., C] of rank 3 to 5, one to 40 channels (vector
// remainders), inputs around 3 so that a one-pass variance would cancel.
bool MakeInstanceNormNhwc(std::mt19937& rng, Case* c) {
  CaseBuilder b(&rng, c);
  std::vector<int64_t> shape = {Pick(rng, {1, 2})};
  const int64_t spatial = Pick(rng, {1, 2, 3});
  for (int64_t d = 0; d < spatial; ++d) shape.push_back(Pick(rng, {1, 2, 5, 17}));
  const int64_t channels = Pick(rng, {1, 3, 8, 12, 40});
  shape.push_back(channels);
  Tensor x = b.Random(shape);
  for (int64_t i = 0; i < x.num_elements(); ++i) x.data<float>()[i] = 3.0f + 2.0f * x.data<float>()[i];
  c->values.push_back(c->graph->AddInput("v0", x.type()));
  c->data.push_back(std::move(x));
  b.Weight({channels});
  b.Weight({channels});
  Node* node = b.Finish("InstanceNorm", "tessel");
  node->SetAttr("layout", Attribute::String("nhwc"));
  if (Pick(rng, {0, 1})) node->SetAttr("epsilon", Attribute::Float(1e-3f));
  c->label = absl::StrCat("tessel.InstanceNorm nhwc ", ShapeString(shape));
  return true;
}

// LayerNormalization over the trailing axes from a random axis, with a scale (and sometimes a bias) of
// the normalized shape or, broadcasting within a row, of the last axis only (the fast kernels refuse
// that); InstanceNormalization and GroupNormalization on [N, C, spatial...] of rank 3 to 5, a group's
// scale per group or per channel. Inputs sit around 3 so that a one-pass variance would cancel.
bool MakeNorm(std::mt19937& rng, Case* c, const std::string& op) {
  CaseBuilder b(&rng, c);
  std::vector<int64_t> shape;
  if (op == "LayerNormalization") {
    shape = RandomShape(rng);
  } else {
    shape = {Pick(rng, {1, 2}), Pick(rng, {1, 3, 4, 12})};
    const int64_t spatial = Pick(rng, {1, 2, 3});
    for (int64_t d = 0; d < spatial; ++d) shape.push_back(Pick(rng, {1, 2, 5, 17, 40}));
  }
  const int64_t rank = static_cast<int64_t>(shape.size());
  Tensor x = b.Random(shape);
  for (int64_t i = 0; i < x.num_elements(); ++i) x.data<float>()[i] = 3.0f + 2.0f * x.data<float>()[i];
  c->values.push_back(c->graph->AddInput("v0", x.type()));
  c->data.push_back(std::move(x));
  c->label = absl::StrCat(op, " ", ShapeString(shape));
  if (op == "LayerNormalization") {
    const int64_t axis = std::uniform_int_distribution<int64_t>(0, rank - 1)(rng);
    const std::vector<int64_t> normalized(shape.begin() + axis, shape.end());
    const bool row_scale = Pick(rng, {0, 0, 0, 1}) == 1;
    const bool bias = Pick(rng, {0, 1}) == 1;
    b.Weight(row_scale ? std::vector<int64_t>{shape.back()} : normalized);
    if (bias) b.Weight(row_scale ? std::vector<int64_t>{shape.back()} : normalized);
    Node* node = b.Finish(op, "");
    node->SetAttr("axis", Attribute::Int(Pick(rng, {0, 1}) ? axis : axis - rank));
    absl::StrAppend(&c->label, " axis ", axis, row_scale ? " scale of the last axis" : "", bias ? " bias" : "");
    return true;
  }
  const int64_t channels = shape[1];
  int64_t groups = channels, params = channels;
  if (op == "GroupNormalization") {
    groups = Pick(rng, {1, channels, channels == 12 ? 4 : 1});
    params = Pick(rng, {0, 1}) ? groups : channels;
  }
  b.Weight({params});
  b.Weight({params});
  Node* node = b.Finish(op, "");
  if (op == "GroupNormalization") node->SetAttr("num_groups", Attribute::Int(groups));
  if (Pick(rng, {0, 1})) node->SetAttr("epsilon", Attribute::Float(1e-3f));
  absl::StrAppend(&c->label, " groups ", groups, " params ", params);
  return true;
}

// MatMul with batch axes: A [batch..., m, k] times B [batch..., k, n] with batch axes equal, 1 on either
// side (broadcast) or missing on one side; B an activation, or a constant when it has batch axes (a
// constant rank-2 B is the fully connected kernels' case, which the batched kernel must refuse).
bool MakeBatchedMatMul(std::mt19937& rng, Case* c) {
  CaseBuilder b(&rng, c);
  const int64_t m = Pick(rng, {1, 5, 16, 33}), k = Pick(rng, {1, 8, 17, 64}), n = Pick(rng, {1, 7, 16, 40});
  const int64_t form = Pick(rng, {0, 1, 2, 3, 4});
  std::vector<int64_t> a = {m, k}, w = {k, n};
  if (form == 1) {  // attention: [1, heads, m, k] x [1, heads, k, n]
    const int64_t heads = Pick(rng, {1, 3, 4});
    a = {1, heads, m, k};
    w = {1, heads, k, n};
  } else if (form == 2) {  // B broadcast over A's batch
    a = {2, 3, m, k};
    w = {Pick(rng, {1, 3}), k, n};
  } else if (form == 3) {  // A broadcast over B's batch
    a = {1, m, k};
    w = {2, 3, k, n};
  } else if (form == 4) {  // 2-D times batched
    w = {3, k, n};
  }
  const bool constant = w.size() > 2 && Pick(rng, {0, 1});
  b.Activation(a);
  if (constant) {
    b.Weight(w);
  } else {
    b.Activation(w);
  }
  b.Finish("MatMul", "");
  c->label = absl::StrCat("MatMul ", ShapeString(a), " x ", ShapeString(w), constant ? " constant B" : "");
  return true;
}

// Slice over a random subset of axes (listed in any order, some negative, or omitted: all leading
// axes), starts and ends from the front or the back and past either end, steps of 1, 2, 3, -1 and -2
// (or omitted), and sometimes int32 indices.
// Concat of 1-4 inputs along a random axis (given positive or negative), each with its own extent there
// (0 included); one input may be a constant.
bool MakeConcat(std::mt19937& rng, Case* c) {
  CaseBuilder b(&rng, c);
  const std::vector<int64_t> shape = RandomShape(rng);
  const int64_t rank = static_cast<int64_t>(shape.size());
  const int64_t axis = std::uniform_int_distribution<int64_t>(0, rank - 1)(rng);
  const int64_t count = Pick(rng, {1, 2, 3, 4});
  std::string extents;
  for (int64_t i = 0; i < count; ++i) {
    std::vector<int64_t> s = shape;
    s[axis] = Pick(rng, {0, 1, 3, 16});
    if (i == 0 && s[axis] == 0) s[axis] = 2;
    absl::StrAppend(&extents, i ? "," : "", s[axis]);
    if (Pick(rng, {0, 0, 1})) {
      b.Weight(s);
    } else {
      b.Activation(s);
    }
  }
  const int64_t listed = Pick(rng, {0, 1}) ? axis : axis - rank;
  b.Finish("Concat", "")->SetAttr("axis", Attribute::Int(listed));
  c->label = absl::StrCat("Concat ", ShapeString(shape), " axis ", listed, " extents ", extents);
  return true;
}

// Pad in each mode, pads of up to 3 on either side (negative: a crop) on every axis or on the listed
// axes, the fill value omitted or set.
bool MakePad(std::mt19937& rng, Case* c) {
  CaseBuilder b(&rng, c);
  const std::vector<int64_t> shape = RandomShape(rng);
  const int64_t rank = static_cast<int64_t>(shape.size());
  const int64_t mode = Pick(rng, {0, 0, 1, 2});
  b.Activation(shape);
  const bool listed_axes = Pick(rng, {0, 1}) == 1;
  std::vector<int64_t> axes;
  for (int64_t d = 0; d < rank; ++d) {
    if (!listed_axes || Pick(rng, {0, 1})) axes.push_back(d);
  }
  if (axes.empty()) axes.push_back(rank - 1);
  std::vector<int64_t> begins, ends;
  for (int64_t d : axes) {
    // Reflection needs pads below the extent; a crop keeps at least one element.
    const int64_t hi = mode == 2 ? std::min<int64_t>(3, shape[d] - 1) : 3;
    const int64_t lo = mode == 0 ? -std::min<int64_t>(1, (shape[d] - 1) / 2) : 0;
    begins.push_back(std::uniform_int_distribution<int64_t>(lo, hi)(rng));
    ends.push_back(std::uniform_int_distribution<int64_t>(lo, hi)(rng));
  }
  std::vector<int64_t> pads = begins;
  pads.insert(pads.end(), ends.begin(), ends.end());
  b.WeightTensor(Tensor::FromVector<int64_t>({static_cast<int64_t>(pads.size())}, pads));
  const bool fill = mode == 0 && Pick(rng, {0, 1});
  if (fill) {
    b.WeightTensor(Tensor::Scalar(-2.5f));
  } else if (listed_axes) {
    b.Omitted();
  }
  if (listed_axes) b.WeightTensor(Tensor::FromVector<int64_t>({static_cast<int64_t>(axes.size())}, axes));
  const char* modes[] = {"constant", "edge", "reflect"};
  Node* node = b.Finish("Pad", "");
  if (mode != 0 || Pick(rng, {0, 1})) node->SetAttr("mode", Attribute::String(modes[mode]));
  c->label = absl::StrCat("Pad ", ShapeString(shape), " ", modes[mode], " pads ", ShapeString(pads),
                          listed_axes ? " listed axes" : "", fill ? " fill -2.5" : "");
  return true;
}

// GridSample, bilinear (under either name), zeros or border padding, either align_corners; grid points
// up to 1.3 beyond [-1, 1], so that taps fall outside the image; 1-2 images, 1-5 channels.
bool MakeGridSample(std::mt19937& rng, Case* c) {
  CaseBuilder b(&rng, c);
  const int64_t n = Pick(rng, {1, 2}), ch = Pick(rng, {1, 3, 5}), h = Pick(rng, {1, 4, 9}), w = Pick(rng, {2, 7, 16});
  const int64_t ho = Pick(rng, {1, 3, 8}), wo = Pick(rng, {2, 5, 12});
  b.Activation({n, ch, h, w});
  Tensor grid = b.Random({n, ho, wo, 2});
  for (int64_t i = 0; i < grid.num_elements(); ++i) grid.data<float>()[i] *= 1.3f;
  if (Pick(rng, {0, 1})) {
    b.WeightTensor(std::move(grid));
  } else {
    const std::string name = absl::StrCat("v", c->values.size());
    c->values.push_back(c->graph->AddInput(name, grid.type()));
    c->data.push_back(std::move(grid));
  }
  Node* node = b.Finish("GridSample", "");
  const int64_t mode = Pick(rng, {0, 1, 2}), padding = Pick(rng, {0, 1, 2}), align = Pick(rng, {0, 1});
  if (mode != 0) node->SetAttr("mode", Attribute::String(mode == 1 ? "bilinear" : "linear"));
  if (padding != 0) node->SetAttr("padding_mode", Attribute::String(padding == 1 ? "zeros" : "border"));
  node->SetAttr("align_corners", Attribute::Int(align));
  c->label = absl::StrCat("GridSample x [", n, ",", ch, ",", h, ",", w, "] out ", ho, "x", wo, " mode form ", mode,
                          " padding form ", padding, " align ", align);
  return true;
}

// ConvTranspose 2-D, group 1: kernels 1-3, strides 1-2 (Mask R-CNN's 2x2 stride-2 upsampling among
// them), dilation 1-2, pads 0-1, output_padding where the stride allows it, with and without bias.
bool MakeConvTranspose(std::mt19937& rng, Case* c) {
  CaseBuilder b(&rng, c);
  const int64_t n = Pick(rng, {1, 2}), ch = Pick(rng, {1, 3, 8}), m = Pick(rng, {1, 4, 5});
  const int64_t h = Pick(rng, {1, 4, 7}), w = Pick(rng, {2, 5});
  const int64_t k = Pick(rng, {1, 2, 3}), stride = Pick(rng, {1, 2}), dilation = Pick(rng, {1, 2});
  const int64_t pad = k > 1 ? Pick(rng, {0, 1}) : 0;
  const int64_t out_pad = stride > 1 ? Pick(rng, {0, 1}) : 0;
  b.Activation({n, ch, h, w});
  b.Weight({ch, m, k, k});
  const bool bias = Pick(rng, {0, 1});
  if (bias) b.Weight({m});
  Node* node = b.Finish("ConvTranspose", "");
  node->SetAttr("kernel_shape", Attribute::Ints({k, k}));
  node->SetAttr("strides", Attribute::Ints({stride, stride}));
  node->SetAttr("dilations", Attribute::Ints({dilation, dilation}));
  node->SetAttr("pads", Attribute::Ints({pad, pad, pad, pad}));
  if (out_pad) node->SetAttr("output_padding", Attribute::Ints({out_pad, out_pad}));
  c->label = absl::StrCat("ConvTranspose x [", n, ",", ch, ",", h, ",", w, "] M ", m, " k ", k, " s ", stride, " d ",
                          dilation, " pad ", pad, " out_pad ", out_pad, bias ? " bias" : "");
  return true;
}

// RoiAlign, avg: regions inside, across and beyond the edges of 1-2 images (spatial_scale 1 or 0.5),
// sampling_ratio 2 or adaptive, both coordinate modes; the regions and batch indices as inputs, as a
// detection head's come out of NonMaxSuppression.
bool MakeRoiAlign(std::mt19937& rng, Case* c) {
  CaseBuilder b(&rng, c);
  const int64_t n = Pick(rng, {1, 2}), ch = Pick(rng, {1, 3, 8}), h = Pick(rng, {5, 12}), w = Pick(rng, {7, 16});
  const int64_t regions = Pick(rng, {1, 4, 9});
  const float scale = Pick(rng, {0, 1}) ? 0.5f : 1.0f;
  b.Activation({n, ch, h, w});
  std::uniform_real_distribution<float> u(-3.0f, 1.2f * static_cast<float>(std::max(h, w)) / scale);
  std::vector<float> boxes;
  std::vector<int64_t> batch;
  for (int64_t r = 0; r < regions; ++r) {
    const float x1 = u(rng), y1 = u(rng), x2 = u(rng), y2 = u(rng);
    boxes.insert(boxes.end(), {std::min(x1, x2), std::min(y1, y2), std::max(x1, x2), std::max(y1, y2)});
    batch.push_back(Pick(rng, {0, n - 1}));
  }
  for (Tensor t : {Tensor::FromVector<float>({regions, 4}, boxes), Tensor::FromVector<int64_t>({regions}, batch)}) {
    const std::string name = absl::StrCat("v", c->values.size());
    c->values.push_back(c->graph->AddInput(name, t.type()));
    c->data.push_back(std::move(t));
  }
  Node* node = b.Finish("RoiAlign", "");
  const int64_t oh = Pick(rng, {1, 3, 7}), ow = Pick(rng, {2, 7}), ratio = Pick(rng, {0, 2});
  const bool half = Pick(rng, {0, 1});
  node->SetAttr("output_height", Attribute::Int(oh));
  node->SetAttr("output_width", Attribute::Int(ow));
  node->SetAttr("sampling_ratio", Attribute::Int(ratio));
  node->SetAttr("spatial_scale", Attribute::Float(scale));
  node->SetAttr("coordinate_transformation_mode", Attribute::String(half ? "half_pixel" : "output_half_pixel"));
  c->label = absl::StrCat("RoiAlign x [", n, ",", ch, ",", h, ",", w, "] ", regions, " regions out ", oh, "x", ow,
                          " ratio ", ratio, " scale ", scale, half ? " half_pixel" : " output_half_pixel");
  return true;
}

bool MakeSlice(std::mt19937& rng, Case* c) {
  CaseBuilder b(&rng, c);
  const std::vector<int64_t> shape = RandomShape(rng);
  const int64_t rank = static_cast<int64_t>(shape.size());
  std::vector<int64_t> axes;
  for (int64_t d = 0; d < rank; ++d) {
    if (Pick(rng, {0, 1})) axes.push_back(d);
  }
  if (axes.empty()) axes.push_back(rank - 1);
  std::shuffle(axes.begin(), axes.end(), rng);
  const bool omit_axes = Pick(rng, {0, 0, 1}) == 1;
  if (omit_axes) {
    axes.clear();
    for (int64_t d = 0; d < Pick(rng, {1, rank}); ++d) axes.push_back(d);
  }
  const bool omit_steps = Pick(rng, {0, 1}) == 1;
  std::vector<int64_t> starts, ends, steps, listed;
  for (int64_t axis : axes) {
    const int64_t dim = shape[axis];
    const int64_t step = omit_steps ? 1 : Pick(rng, {1, 1, 2, 3, -1, -2});
    starts.push_back(Pick(rng, {0, 1, -1, dim, -dim - 5, 1000}));
    ends.push_back(Pick(rng, {dim, -1, 2, -dim - 5, 1000, -1000}));
    steps.push_back(step);
    listed.push_back(Pick(rng, {0, 1}) ? axis : axis - rank);
  }
  const bool i32 = Pick(rng, {0, 0, 1}) == 1;
  auto indices = [&](const std::vector<int64_t>& v) {
    const int64_t n = static_cast<int64_t>(v.size());
    if (!i32) return Tensor::FromVector<int64_t>({n}, v);
    return Tensor::FromVector<int32_t>({n}, std::vector<int32_t>(v.begin(), v.end()));
  };
  b.Activation(shape);
  b.WeightTensor(indices(starts));
  b.WeightTensor(indices(ends));
  if (!omit_axes || !omit_steps) {
    if (omit_axes) {
      b.Omitted();
    } else {
      b.WeightTensor(indices(listed));
    }
  }
  if (!omit_steps) b.WeightTensor(indices(steps));
  b.Finish("Slice", "");
  c->label = absl::StrCat("Slice ", ShapeString(shape), " starts ", ShapeString(starts), " ends ", ShapeString(ends),
                          omit_axes ? "" : absl::StrCat(" axes ", ShapeString(listed)),
                          omit_steps ? "" : absl::StrCat(" steps ", ShapeString(steps)), i32 ? " int32" : "");
  return true;
}

bool MakeTranspose(std::mt19937& rng, Case* c) {
  CaseBuilder b(&rng, c);
  const int rank = static_cast<int>(Pick(rng, {2, 3, 4, 5}));
  std::vector<int64_t> shape, perm;
  for (int d = 0; d < rank; ++d) {
    shape.push_back(Pick(rng, {1, 2, 3, 5}));
    perm.push_back(d);
  }
  std::shuffle(perm.begin(), perm.end(), rng);
  // A third of the cases: NCHW -> NHWC with 1 to 4 channels over rows long enough for the row loop.
  if (Pick(rng, {0, 1, 2}) == 0) {
    shape = {Pick(rng, {1, 2}), Pick(rng, {1, 2, 3, 4}), Pick(rng, {1, 3}), Pick(rng, {16, 17, 40})};
    perm = {0, 2, 3, 1};
  }
  b.Activation(shape);
  b.Finish("Transpose", "")->SetAttr("perm", Attribute::Ints(perm));
  c->label = absl::StrCat("Transpose [", absl::StrJoin(shape, ","), "] perm ", absl::StrJoin(perm, ","));
  return true;
}

bool MakeCopy(std::mt19937& rng, Case* c, const std::string& op) {
  CaseBuilder b(&rng, c);
  if (op == "Squeeze") {
    b.Activation({1, 3, 1, 4});
    b.WeightTensor(Tensor::FromVector<int64_t>({2}, {0, 2}));
  } else if (op == "Unsqueeze") {
    b.Activation({3, 4});
    b.WeightTensor(Tensor::FromVector<int64_t>({1}, {1}));
  } else if (op == "Reshape") {
    b.Activation({2, 3, 4});
    b.WeightTensor(Tensor::FromVector<int64_t>({2}, {6, -1}));
  } else {
    b.Activation({2, 3, 4});
  }
  b.Finish(op, "");
  c->label = op;
  return true;
}

// ONNX Conv or tessel.FusedConv (nchw, with residual and every activation), channels first, over 1 to 3
// spatial dimensions: groups, strides, dilation, asymmetric pads, with and without bias; 16-channel groups over 3-D extents span several of the kernel's column
// blocks, with a partial last one.
bool MakeConvNd(std::mt19937& rng, Case* c, bool fused) {
  CaseBuilder b(&rng, c);
  const int64_t spatial = Pick(rng, {1, 2, 3});
  const int64_t n = Pick(rng, {1, 2}), groups = Pick(rng, {1, 1, 2, 3});
  const int64_t cg = Pick(rng, {1, 3, 16}), mg = Pick(rng, {1, 5, 33});
  std::vector<int64_t> x = {n, groups * cg}, w = {groups * mg, cg}, ks, ss, ds, pb, pe;
  for (int64_t d = 0; d < spatial; ++d) {
    const int64_t in = spatial == 3 ? Pick(rng, {1, 5, 13}) : Pick(rng, {1, 6, 17, 40});
    ks.push_back(Pick(rng, {1, 2, 3}));
    ss.push_back(Pick(rng, {1, 2}));
    ds.push_back(Pick(rng, {1, 1, 2}));
    pb.push_back(Pick(rng, {0, 1}));
    pe.push_back(Pick(rng, {0, 1, 2}));
    if (OutExtent(in, ks.back(), ss.back(), ds.back(), pb.back(), pe.back()) < 1) return false;
    x.push_back(in);
    w.push_back(ks.back());
  }
  const bool bias = Pick(rng, {0, 1}), residual = fused && Pick(rng, {0, 1});
  b.Activation(x);
  b.Weight(w);
  if (bias) b.Weight({groups * mg});
  if (residual) {
    if (!bias) b.Omitted();
    std::vector<int64_t> y = {n, groups * mg};
    for (int64_t d = 0; d < spatial; ++d) y.push_back(OutExtent(x[2 + d], ks[d], ss[d], ds[d], pb[d], pe[d]));
    b.Activation(y);
  }
  Node* node = b.Finish(fused ? "FusedConv" : "Conv", fused ? "tessel" : "");
  std::string act;
  if (fused) {
    const char* acts[] = {"none", "relu", "clip", "hardswish", "sigmoid", "silu"};
    act = acts[Pick(rng, {0, 1, 2, 3, 4, 5})];
    node->SetAttr("activation", Attribute::String(act));
    if (act == "clip") {
      node->SetAttr("clip_min", Attribute::Float(-0.5f));
      node->SetAttr("clip_max", Attribute::Float(0.75f));
    }
  }
  std::vector<int64_t> pads = pb;
  pads.insert(pads.end(), pe.begin(), pe.end());
  node->SetAttr("kernel_shape", Attribute::Ints(ks));
  node->SetAttr("strides", Attribute::Ints(ss));
  node->SetAttr("dilations", Attribute::Ints(ds));
  node->SetAttr("pads", Attribute::Ints(pads));
  node->SetAttr("group", Attribute::Int(groups));
  c->label = absl::StrCat("Conv x[", absl::StrJoin(x, ","), "] w[", absl::StrJoin(w, ","), "] s", absl::StrJoin(ss, ","),
                          " d", absl::StrJoin(ds, ","), " pads ", absl::StrJoin(pads, ","), bias ? " bias" : "",
                          residual ? " residual " : " ", act);
  return true;
}

// Resize of a [N, C, H, W] or [C, H, W] tensor: nearest (each nearest_mode) or linear, every supported
// coordinate_transformation_mode, by scales (up, down, fractional, 1) or by sizes beside an empty scales
// tensor as opset 11 writes them, sometimes over `axes` (opset 18), and now and then resizing a leading
// axis, which the channels-first kernels must refuse.
bool MakeResize(std::mt19937& rng, Case* c) {
  CaseBuilder b(&rng, c);
  std::vector<int64_t> shape = {Pick(rng, {1, 2, 3}), Pick(rng, {1, 4, 7}), Pick(rng, {1, 2, 5, 6}),
                                Pick(rng, {1, 3, 8, 13})};
  if (Pick(rng, {0, 0, 1})) shape.erase(shape.begin());
  const int64_t rank = static_cast<int64_t>(shape.size());
  const bool linear = Pick(rng, {0, 1}), by_sizes = Pick(rng, {0, 1}), over_axes = Pick(rng, {0, 0, 1});
  const bool leading = Pick(rng, {0, 0, 0, 0, 1});
  const std::vector<std::string> coords = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"};
  const std::vector<std::string> nearest = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  const std::string coord = coords[Pick(rng, {0, 1, 2, 3})], rounding = nearest[Pick(rng, {0, 1, 2, 3})];
  const int64_t first = over_axes ? rank - 2 : 0;
  std::vector<float> scales;
  std::vector<int64_t> sizes;
  for (int64_t a = first; a < rank; ++a) {
    const bool resized = a >= rank - 2 || (leading && a == rank - 3);
    const int64_t s = resized ? Pick(rng, {0, 1, 2, 3, 4, 5, 6}) : 2;  // index into the tables below
    scales.push_back(std::vector<float>{0.5f, 0.75f, 1.0f, 1.5f, 2.0f, 2.5f, 3.0f}[s]);
    sizes.push_back(std::max<int64_t>(1, resized ? shape[a] * std::vector<int64_t>{1, 1, 1, 3, 2, 5, 3}[s] /
                                                       std::vector<int64_t>{2, 3, 1, 2, 1, 2, 1}[s]
                                                 : shape[a]));
  }
  b.Activation(shape);
  if (Pick(rng, {0, 1})) {
    b.Omitted();
  } else {
    b.WeightTensor(Tensor::FromVector<float>({0}, {}));
  }
  const int64_t n = static_cast<int64_t>(scales.size());
  if (by_sizes) {
    b.WeightTensor(Tensor::FromVector<float>({0}, {}));
    b.WeightTensor(Tensor::FromVector<int64_t>({n}, sizes));
  } else {
    b.WeightTensor(Tensor::FromVector<float>({n}, scales));
  }
  Node* node = b.Finish("Resize", "");
  node->SetAttr("mode", Attribute::String(linear ? "linear" : "nearest"));
  node->SetAttr("coordinate_transformation_mode", Attribute::String(coord));
  node->SetAttr("nearest_mode", Attribute::String(rounding));
  if (over_axes) node->SetAttr("axes", Attribute::Ints({-2, -1}));
  c->label = absl::StrCat("Resize x[", absl::StrJoin(shape, ","), "] ", linear ? "linear " : "nearest ",
                          linear ? "" : rounding + " ", coord, by_sizes ? " sizes " : " scales ",
                          by_sizes ? absl::StrJoin(sizes, ",") : absl::StrJoin(scales, ","),
                          over_axes ? " axes -2,-1" : "");
  return true;
}

// The case generator a kernel draws from: its operator's, the depthwise 3x3 form for the kernels that
// serve only that, or the channels-first N-d convolution form for Conv and the "_ncx__" kernels.
std::string GeneratorName(const OpKernelEntry& e) {
  if (e.name.find("_dwconv2d_3x3_nhwc__") != std::string::npos) return "depthwise 3x3";
  if (e.name.find("_dwconv2d_kxk_nhwc__") != std::string::npos) return "depthwise kxk";
  if (e.op == "Conv") return "conv nd";
  if (e.name.find("_ncx__") != std::string::npos) return "fused conv nd";
  if (e.name.find("_batched_matmul__") != std::string::npos) return "batched matmul";
  return e.op;
}

bool MakeCase(const OpKernelEntry& e, std::mt19937& rng, Case* c) {
  const std::string generator = GeneratorName(e);
  if (generator == "depthwise 3x3") return MakeDepthwiseConv(rng, c, kDwWindow3x3);
  if (generator == "depthwise kxk") return MakeDepthwiseConv(rng, c, kDwWindowLarge);
  if (generator == "conv nd" || generator == "fused conv nd") return MakeConvNd(rng, c, generator == "fused conv nd");
  if (generator == "batched matmul") return MakeBatchedMatMul(rng, c);
  if (e.op == "tessel.FusedConv") return MakeFusedConv(rng, c);
  if (e.op == "tessel.DwPwConv") return MakeDwPwConv(rng, c);
  if (e.op == "tessel.MaxPool") return MakePool(rng, c, "MaxPool");
  if (e.op == "tessel.AveragePool") return MakePool(rng, c, "AveragePool");
  if (e.op == "tessel.GlobalAveragePool") return MakePool(rng, c, "GlobalAveragePool");
  if (e.op == "Gemm" || e.op == "MatMul") return MakeFullyConnected(rng, c, e.op);
  if (e.op == "tessel.MatMulBias") return MakeFullyConnected(rng, c, "MatMulBias");
  if (e.op == "tessel.MatMulBiasGelu") return MakeFullyConnected(rng, c, "MatMulBiasGelu");
  if (e.op == "Add") return MakeAdd(rng, c);
  if (e.op == "Mul" || e.op == "Sub" || e.op == "Div") return MakeBinary(rng, c, e.op);
  if (e.op == "Relu" || e.op == "Clip" || e.op == "Sigmoid" || e.op == "HardSwish" || e.op == "Tanh" ||
      e.op == "Erf" || e.op == "Gelu" || e.op == "HardSigmoid" || e.op == "LeakyRelu") {
    return MakeUnary(rng, c, e.op);
  }
  if (e.op == "PRelu") return MakePRelu(rng, c);
  if (e.op == "Softmax" || e.op == "LogSoftmax") return MakeSoftmax(rng, c, e.op);
  if (e.op == "tessel.RMSNorm") return MakeRmsNorm(rng, c);
  if (e.op == "tessel.Attention") return MakeAttention(rng, c);
  if (e.op == "LayerNormalization" || e.op == "InstanceNormalization" || e.op == "GroupNormalization") {
    return MakeNorm(rng, c, e.op);
  }
  if (e.op == "tessel.InstanceNorm") return MakeInstanceNormNhwc(rng, c);
  if (e.op == "Slice") return MakeSlice(rng, c);
  if (e.op == "Concat") return MakeConcat(rng, c);
  if (e.op == "Pad") return MakePad(rng, c);
  if (e.op == "GridSample") return MakeGridSample(rng, c);
  if (e.op == "RoiAlign") return MakeRoiAlign(rng, c);
  if (e.op == "ConvTranspose") return MakeConvTranspose(rng, c);
  if (e.op == "Resize") return MakeResize(rng, c);
  if (e.op == "Transpose") return MakeTranspose(rng, c);
  if (e.op == "Flatten" || e.op == "Reshape" || e.op == "Squeeze" || e.op == "Unsqueeze" || e.op == "Identity") {
    return MakeCopy(rng, c, e.op);
  }
  // A new operator needs its own case generator: feeding it a copy's operands would test nothing.
  ADD_FAILURE() << e.name << ": no case generator for " << e.op;
  return false;
}

double NormalizedError(const Tensor& got, const Tensor& want) {
  double max_ref = 1e-6, max_err = 0;
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    max_ref = std::max(max_ref, std::abs(want.GetAsDouble(i)));
    const double err = std::abs(got.GetAsDouble(i) - want.GetAsDouble(i));
    // std::max would drop a NaN: an element the kernel never wrote (outputs start as NaN) must fail.
    if (std::isnan(err)) return std::numeric_limits<double>::infinity();
    max_err = std::max(max_err, err);
  }
  return max_err / max_ref;
}

// Puts a pool's workers to sleep now: a no-op parallel region with PTHREADPOOL_FLAG_YIELD_WORKERS.
void ParkWorkers(pthreadpool_t pool) {
  pthreadpool_parallelize_1d(pool, [](void*, size_t) {}, nullptr, 1, PTHREADPOOL_FLAG_YIELD_WORKERS);
}

// Creates `e` on the node's operands, runs it once into an output that starts as NaN (an element it
// never writes fails) and returns its normalized error against `want`; infinity, with a test failure,
// when the kernel cannot be created or run.
double RunKernelError(const OpKernelEntry& e, const Node& node, const std::vector<const Tensor*>& inputs,
                      const Tensor& want, pthreadpool_t pool, int threads, const std::string& label) {
  Tensor got(DType::kF32, want.shape());
  for (int64_t i = 0; i < got.num_elements(); ++i) got.data<float>()[i] = NAN;
  absl::StatusOr<std::unique_ptr<OpKernel>> k =
      e.create(OpKernelArgs{node, inputs, absl::MakeSpan(&got, 1), pool, threads, false});
  if (!k.ok()) {
    ADD_FAILURE() << label << ": " << k.status();
    return std::numeric_limits<double>::infinity();
  }
  const absl::Status run = (*k)->Run();
  if (!run.ok()) {
    ADD_FAILURE() << label << ": " << run;
    return std::numeric_limits<double>::infinity();
  }
  return NormalizedError(got, want);
}

// The reference outputs of the generated cases, shared by every kernel that draws its cases from the same
// generator: each kernel starts the generator from the same seed, so its i-th attempt is the same case as
// every other such kernel's, and under emulation the reference was the costly part of the sweep.
// Keyed by the generator, the attempt and the case's label (a check that the case is the same one).
const std::vector<Tensor>* SharedReference(const std::string& key, const Case& c) {
  static auto* cache = new std::map<std::string, std::vector<Tensor>>();  // test process lifetime
  auto it = cache->find(key);
  if (it != cache->end()) return &it->second;
  std::vector<Tensor> want;
  absl::Status s = RunReferenceNode(*c.node, c.Inputs(), &want);
  if (!s.ok()) {
    ADD_FAILURE() << c.label << ": " << s;
    return nullptr;
  }
  return &cache->emplace(key, std::move(want)).first->second;
}

class OpKernelTest : public ::testing::TestWithParam<std::string> {};

TEST_P(OpKernelTest, MatchesReference) {
  const OpKernelEntry* e = OpKernels().FindByName(GetParam());
  ASSERT_NE(e, nullptr);
  if (!CpuSupports(e->isa)) GTEST_SKIP() << e->name << " needs " << IsaName(e->isa) << ", which this CPU lacks";
  std::mt19937 rng(1234);
  int legal = 0, refused = 0;
  double worst = 0;
  // One pool for every case: a new pool's workers spin before their first task, which under emulation
  // costs more than the case.
  std::unique_ptr<pthreadpool, decltype(&pthreadpool_destroy)> pool3(pthreadpool_create(3), pthreadpool_destroy);
  for (int attempt = 0; attempt < 500 && legal < 40; ++attempt) {
    Case c;
    if (!MakeCase(*e, rng, &c)) continue;
    const std::vector<const Tensor*> inputs = c.Inputs();
    const std::vector<OperandInfo> info = c.Infos();
    const std::vector<Tensor>* shared = SharedReference(absl::StrCat(GeneratorName(*e), " ", attempt, " ", c.label), c);
    ASSERT_NE(shared, nullptr);
    const std::vector<Tensor>& want = *shared;
    std::vector<OperandInfo> out_info = {{true, false, want[0].type()}};
    if (e->legal && !e->legal(OpQuery{*c.node, info, out_info})) {
      ++refused;
      continue;
    }
    ++legal;
    for (int threads : {1, 3}) {
      // Outputs start as NaN so that an element the kernel never writes shows.
      Tensor got(DType::kF32, want[0].shape());
      for (int64_t i = 0; i < got.num_elements(); ++i) got.data<float>()[i] = NAN;
      if (want[0].dtype() != DType::kF32) got = Tensor(want[0].dtype(), want[0].shape());
      pthreadpool_t pool = threads > 1 ? pool3.get() : nullptr;
      {
        absl::StatusOr<std::unique_ptr<OpKernel>> k =
            // Multi-threaded cases alternate between sleeping and spinning pool workers.
            e->create(OpKernelArgs{*c.node, inputs, absl::MakeSpan(&got, 1), pool, threads, legal % 2 == 1});
        ASSERT_TRUE(k.ok()) << c.label << ": " << k.status();
        ASSERT_TRUE((*k)->Run().ok()) << c.label;
        // A second run must give the same result (no state carried between runs).
        ASSERT_TRUE((*k)->Run().ok()) << c.label;
      }
      if (pool) ParkWorkers(pool);
      const double err = NormalizedError(got, want[0]);
      worst = std::max(worst, err);
      EXPECT_LE(err, ToleranceFor(e->name))
          << e->name << " on " << c.label << ", " << threads << " threads";
    }
  }
  std::printf("%s: %d legal cases checked (%d refused), worst normalized error %.2e\n", e->name.c_str(), legal,
              refused, worst);
  EXPECT_GE(legal, 5) << e->name << ": too few generated cases are legal for it, so it is barely tested";
}

std::vector<std::string> EntryNames() {
  std::vector<std::string> names;
  // Integer kernels are checked bit for bit elsewhere: kernels/int8:int8_kernels_test (QConv/QGemm over
  // awkward shapes, QuantizeLinear from f32 element for element) and quant/int8:compiled_int8_test (a
  // whole int8 network, pooling included). LSTM and GRU, whose three outputs, sequence lengths and
  // initial states this sweep's one-output cases would miss, by kernels/rnn:rnn_op_kernels_test.
  for (const OpKernelEntry& e : OpKernels().entries()) {
    if (e.op == "LSTM" || e.op == "GRU") continue;
    if (e.dtypes == "f32" && e.backend != "int8") names.push_back(e.name);
  }
  return names;
}

INSTANTIATE_TEST_SUITE_P(AllKernels, OpKernelTest, ::testing::ValuesIn(EntryNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// The direct stem kernels on network stems: RGB at stride 2 (their constant-offset taps), MobileNetV2's
// 3x3 (pad 1, 32 channels) and ResNet-18's 7x7 (pad 3, 64 channels), plus 24 and 48 output channels
// (a masked last vector; with AVX2, channel groups of 16 and a partial last one), over rows with full
// chunks and a remainder.
class DirectStemTest : public ::testing::TestWithParam<std::string> {};

TEST_P(DirectStemTest, RgbStride2MatchesReference) {
  const OpKernelEntry* e = OpKernels().FindByName(GetParam());
  if (e == nullptr) GTEST_SKIP() << "the direct stem kernels are x86-64 only";
  if (!CpuSupports(e->isa)) GTEST_SKIP() << e->name << " needs " << IsaName(e->isa) << ", which this CPU lacks";
  std::mt19937 rng(11);
  struct Stem {
    int64_t k, pad, m;
  };
  double worst = 0;
  int checked = 0;
  for (const Stem& st : {Stem{3, 1, 32}, Stem{7, 3, 64}, Stem{3, 1, 24}, Stem{7, 3, 48}}) {
    for (int64_t w : {37, 64}) {
      const int64_t n = 1, h = 9, c = 3;
      const int64_t oh = OutExtent(h, st.k, 2, 1, st.pad, st.pad), ow = OutExtent(w, st.k, 2, 1, st.pad, st.pad);
      Case cs;
      CaseBuilder b(&rng, &cs);
      b.Activation({n, h, w, c});
      b.Weight({st.m, st.k, st.k, c});
      b.Weight({st.m});
      Node* node = b.Finish("FusedConv", "tessel");
      node->SetAttr("layout", Attribute::String("nhwc"));
      node->SetAttr("strides", Attribute::Ints({2, 2}));
      node->SetAttr("pads", Attribute::Ints({st.pad, st.pad, st.pad, st.pad}));
      node->SetAttr("activation", Attribute::String("relu"));
      const std::string label = absl::StrCat(st.k, "x", st.k, " stem, ", st.m, " channels, width ", w);
      const std::vector<const Tensor*> inputs = cs.Inputs();
      const std::vector<OperandInfo> info = cs.Infos();
      std::vector<Tensor> want;
      ASSERT_TRUE(RunReferenceNode(*node, inputs, &want).ok()) << label;
      ASSERT_EQ(want[0].shape(), (std::vector<int64_t>{n, oh, ow, st.m})) << label;
      std::vector<OperandInfo> out_info = {{true, false, want[0].type()}};
      if (!e->legal(OpQuery{*node, info, out_info})) continue;
      const double err = RunKernelError(*e, *node, inputs, want[0], nullptr, 1, label);
      EXPECT_LE(err, 1e-5) << label;
      worst = std::max(worst, err);
      ++checked;
    }
  }
  ASSERT_GT(checked, 0) << "the kernel refused every stem case";
  std::printf("%s, %d RGB stride-2 cases: worst normalized error %.2e\n", e->name.c_str(), checked, worst);
}

INSTANTIATE_TEST_SUITE_P(Isas, DirectStemTest,
                         ::testing::Values("tessel_f32_conv2d_nhwc__direct_avx512",
                                           "tessel_f32_conv2d_nhwc__direct_avx2"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// The transpose kernel's tiled path (the output's innermost axis strided in X against a unit-stride
// axis, both at least 8 long): NCHW -> NHWC and back with many channels and extents that leave partial
// tiles, a 3-D swap and a 5-D permutation, each exactly equal to the reference.
TEST(TransposeTest, TiledPermutationsMatchReference) {
  const OpKernelEntry* e = OpKernels().FindByName("tessel_x32_transpose__portable");
  ASSERT_NE(e, nullptr);
  std::mt19937 rng(13);
  struct Perm {
    std::vector<int64_t> shape, perm;
  };
  const Perm perms[] = {{{2, 20, 9, 11}, {0, 2, 3, 1}}, {{2, 9, 11, 20}, {0, 3, 1, 2}},
                        {{3, 40, 33}, {0, 2, 1}},       {{17, 12}, {1, 0}},
                        {{2, 3, 10, 9, 12}, {0, 4, 2, 3, 1}}};
  for (const Perm& pm : perms) {
    Case cs;
    CaseBuilder b(&rng, &cs);
    b.Activation(pm.shape);
    Node* node = b.Finish("Transpose", "");
    node->SetAttr("perm", Attribute::Ints(pm.perm));
    const std::string label = absl::StrCat("transpose of ", pm.shape.size(), "-D [", absl::StrJoin(pm.shape, ","),
                                           "] by [", absl::StrJoin(pm.perm, ","), "]");
    const std::vector<const Tensor*> inputs = cs.Inputs();
    std::vector<Tensor> want;
    ASSERT_TRUE(RunReferenceNode(*node, inputs, &want).ok()) << label;
    std::vector<OperandInfo> out_info = {{true, false, want[0].type()}};
    ASSERT_TRUE(e->legal(OpQuery{*node, cs.Infos(), out_info})) << label;
    EXPECT_EQ(RunKernelError(*e, *node, inputs, want[0], nullptr, 1, label), 0.0) << label;
  }
}

// The fused kernel with an expansion on images wide enough that it works in several bands of rows
// (each band's expanded input rows fit ~384 KiB; rows shared by consecutive bands stay in a ring of
// row slots, not expanded again, and the expansion wraps around the ring): MobileNetV2's 112x112
// block at 40 rows, strides 1 and 2, 1 and 2 threads, and a batch of 2 (bands never cross images); 16
// input channels (XNNPACK's expansion) and 32 (the direct-A GEMM's).
// One case per test (c_in, batch, stride), so that Bazel's shards share the eight: under emulation each
// costs about a second.
struct DwPwExpansionCase {
  int64_t c_in, n, s;
};

class DwPwExpansionTest : public ::testing::TestWithParam<DwPwExpansionCase> {};

TEST_P(DwPwExpansionTest, BandsMatchReference) {
  const OpKernelEntry* e = OpKernels().FindByName("tessel_f32_dwconv2d_3x3_pwconv2d_nhwc__fused");
  ASSERT_NE(e, nullptr);
  const int64_t c_in = GetParam().c_in, n = GetParam().n, s = GetParam().s;
  std::mt19937 rng(static_cast<uint32_t>(7 + 100 * c_in + 10 * n + s));
  const int64_t h = 40, w = 112, ch = 96, m = 24;
  const int64_t oh = (h + 2 - 3) / s + 1, ow = (w + 2 - 3) / s + 1;
  Case c;
  CaseBuilder b(&rng, &c);
  b.Activation({n, h, w, c_in});
  b.Weight({ch, 3, 3, 1});
  b.Weight({ch});
  b.Weight({m, 1, 1, ch});
  b.Weight({m});
  b.Omitted();
  b.Weight({ch, 1, 1, c_in});
  b.Weight({ch});
  Node* node = b.Finish("DwPwConv", "tessel");
  node->SetAttr("layout", Attribute::String("nhwc"));
  node->SetAttr("group", Attribute::Int(ch));
  node->SetAttr("strides", Attribute::Ints({s, s}));
  node->SetAttr("pads", Attribute::Ints({1, 1, 1, 1}));
  for (const char* prefix : {"exp_", "dw_"}) {
    node->SetAttr(absl::StrCat(prefix, "activation"), Attribute::String("clip"));
    node->SetAttr(absl::StrCat(prefix, "clip_min"), Attribute::Float(0.0f));
    node->SetAttr(absl::StrCat(prefix, "clip_max"), Attribute::Float(0.5f));
  }
  const std::string label = absl::StrCat("c_in ", c_in, " n ", n, " stride ", s);
  const std::vector<const Tensor*> inputs = c.Inputs();
  const std::vector<OperandInfo> info = c.Infos();
  // One reference per case (the costly part under emulation), checked on 1 and 2 threads.
  std::vector<Tensor> want;
  ASSERT_TRUE(RunReferenceNode(*node, inputs, &want).ok()) << label;
  ASSERT_EQ(want[0].shape(), (std::vector<int64_t>{n, oh, ow, m})) << label;
  std::vector<OperandInfo> out_info = {{true, false, want[0].type()}};
  ASSERT_TRUE(e->legal(OpQuery{*node, info, out_info})) << label;
  for (int threads : {1, 2}) {
    pthreadpool_t pool = threads > 1 ? pthreadpool_create(threads) : nullptr;
    const double err = RunKernelError(*e, *node, inputs, want[0], pool, threads, label);
    if (pool) pthreadpool_destroy(pool);
    EXPECT_LE(err, 1e-5) << label << ", " << threads << " threads";
    std::printf("fused depthwise+pointwise with expansion, %s, %d threads: normalized error %.2e\n",
                label.c_str(), threads, err);
  }
}

INSTANTIATE_TEST_SUITE_P(Banded, DwPwExpansionTest,
                         ::testing::Values(DwPwExpansionCase{16, 1, 1}, DwPwExpansionCase{16, 1, 2},
                                           DwPwExpansionCase{16, 2, 1}, DwPwExpansionCase{16, 2, 2},
                                           DwPwExpansionCase{32, 1, 1}, DwPwExpansionCase{32, 1, 2},
                                           DwPwExpansionCase{32, 2, 1}, DwPwExpansionCase{32, 2, 2}),
                         [](const ::testing::TestParamInfo<DwPwExpansionCase>& info) {
                           return absl::StrCat("c_in", info.param.c_in, "_n", info.param.n, "_s", info.param.s);
                         });

// The Winograd kernels over a fixed grid of awkward 3x3 stride-1 shapes: extents that are not
// multiples of either tile (1..3 pixel images included), channel counts 1, 3, 17 and 64, padding 0
// and 1, with bias, residual and relu, each kernel at its own tolerance (see ToleranceFor).
TEST(WinogradTest, AwkwardShapesMatchReference) {
  const std::string kernels[] = {"tessel_f32_conv2d_3x3s1_nhwc__winograd_f2x2",
                                 "tessel_f32_conv2d_3x3s1_nhwc__winograd_f4x4"};
  std::mt19937 rng(99);
  for (const std::string& kernel : kernels) {
    const OpKernelEntry* e = OpKernels().FindByName(kernel);
    ASSERT_NE(e, nullptr) << kernel;
    const double tolerance = ToleranceFor(kernel);
    double worst = 0;
    int checked = 0;
    for (int64_t h : {1, 2, 3, 6, 9}) {
      for (int64_t w : {1, 3, 5, 10}) {
        for (int64_t ch : {1, 3, 17, 64}) {
          for (int64_t pad : {0, 1}) {
            const int64_t oh = h + 2 * pad - 2, ow = w + 2 * pad - 2;
            if (oh < 1 || ow < 1) continue;
            const int64_t m = ch == 64 ? 64 : Pick(rng, {1, 5, 17});
            const bool bias = (h + w + ch) % 2 == 0, residual = (h * w + ch) % 3 != 0;
            Case c;
            CaseBuilder b(&rng, &c);
            b.Activation({1, h, w, ch});
            b.Weight({m, 3, 3, ch});
            if (bias) {
              b.Weight({m});
            } else if (residual) {
              b.Omitted();
            }
            if (residual) b.Activation({1, oh, ow, m});
            Node* node = b.Finish("FusedConv", "tessel");
            node->SetAttr("layout", Attribute::String("nhwc"));
            node->SetAttr("pads", Attribute::Ints({pad, pad, pad, pad}));
            node->SetAttr("activation", Attribute::String((h + w) % 2 ? "relu" : "none"));
            const std::string label = absl::StrCat(kernel, " x[1,", h, ",", w, ",", ch, "] m ", m, " pad ", pad,
                                                   bias ? " bias" : "", residual ? " residual" : "");
            const std::vector<const Tensor*> inputs = c.Inputs();
            const std::vector<OperandInfo> info = c.Infos();
            std::vector<Tensor> want;
            ASSERT_TRUE(RunReferenceNode(*node, inputs, &want).ok()) << label;
            std::vector<OperandInfo> out_info = {{true, false, want[0].type()}};
            ASSERT_TRUE(e->legal(OpQuery{*node, info, out_info})) << label;
            const double err = RunKernelError(*e, *node, inputs, want[0], nullptr, 1, label);
            EXPECT_LE(err, tolerance) << label;
            worst = std::max(worst, err);
            ++checked;
          }
        }
      }
    }
    std::printf("%s: %d shapes, worst normalized error %.2e (tolerance %.0e)\n", kernel.c_str(), checked, worst,
                tolerance);
  }
}

// A map of few tiles splits the output channels over the threads (ResNet-18's 7x7 layers): every
// thread count gives the reference's result, with bias, residual and clamp, for channel counts that do
// and do not divide into runs of 8 per thread.
TEST(WinogradTest, FewTilesSplitTheOutputChannels) {
  for (const char* name : {"tessel_f32_conv2d_3x3s1_nhwc__winograd_f2x2", "tessel_f32_conv2d_3x3s1_nhwc__winograd_f4x4"}) {
    const OpKernelEntry* e = OpKernels().FindByName(name);
    ASSERT_NE(e, nullptr);
    for (const int64_t m : {96, 100}) {
      std::mt19937 rng(7);
      Case c;
      CaseBuilder b(&rng, &c);
      b.Activation({1, 7, 7, 48});
      b.Weight({m, 3, 3, 48});
      b.Weight({m});
      b.Activation({1, 7, 7, m});
      Node* node = b.Finish("FusedConv", "tessel");
      node->SetAttr("layout", Attribute::String("nhwc"));
      node->SetAttr("pads", Attribute::Ints({1, 1, 1, 1}));
      node->SetAttr("activation", Attribute::String("relu"));
      std::vector<const Tensor*> inputs = {&c.data[0], &c.data[1], &c.data[2], &c.data[3]};
      std::vector<Tensor> want;
      ASSERT_TRUE(RunReferenceNode(*node, inputs, &want).ok());
      for (const int threads : {1, 2, 3}) {
        std::unique_ptr<pthreadpool, decltype(&pthreadpool_destroy)> pool(
            threads > 1 ? pthreadpool_create(threads) : nullptr, pthreadpool_destroy);
        const double err = RunKernelError(*e, *node, inputs, want[0], pool.get(), threads,
                                          absl::StrCat(name, " M ", m, " ", threads, " threads"));
        EXPECT_LE(err, ToleranceFor(name)) << name << " M " << m << " " << threads << " threads";
      }
    }
  }
}

// F(4x4)'s error must stay within its tolerance at ResNet widths too (C = 256 here).
TEST(WinogradTest, WideChannelsF4x4) {
  const OpKernelEntry* e = OpKernels().FindByName("tessel_f32_conv2d_3x3s1_nhwc__winograd_f4x4");
  ASSERT_NE(e, nullptr);
  std::mt19937 rng(5);
  Case c;
  CaseBuilder b(&rng, &c);
  b.Activation({1, 13, 11, 256});
  b.Weight({32, 3, 3, 256});
  Node* node = b.Finish("FusedConv", "tessel");
  node->SetAttr("layout", Attribute::String("nhwc"));
  node->SetAttr("pads", Attribute::Ints({1, 1, 1, 1}));
  std::vector<const Tensor*> inputs = {&c.data[0], &c.data[1]};
  std::vector<Tensor> want;
  ASSERT_TRUE(RunReferenceNode(*node, inputs, &want).ok());
  Tensor got(DType::kF32, want[0].shape());
  absl::StatusOr<std::unique_ptr<OpKernel>> k =
      e->create(OpKernelArgs{*node, inputs, absl::MakeSpan(&got, 1), nullptr, 1, false});
  ASSERT_TRUE(k.ok()) << k.status();
  ASSERT_TRUE((*k)->Run().ok());
  const double err = NormalizedError(got, want[0]);
  std::printf("f4x4 on C=256: normalized error %.2e\n", err);
  EXPECT_LE(err, ToleranceFor(e->name));
}

// The depthwise 3x3 kernels (NEON, SVE; aarch64 only) over a fixed grid: channels below, at and past
// their register tiles (4 and 8 lanes for NEON, one vector for SVE), images narrower and shorter than the
// kernel, strides 1 and 2, no, symmetric and asymmetric padding, with and without bias and residual (also
// in place of the output), every clamp, on 1 and 3 threads. Only the summation order differs from the
// reference: normalized error within 1e-5.
class DepthwiseConv3x3Test : public ::testing::TestWithParam<std::string> {};

TEST_P(DepthwiseConv3x3Test, AwkwardShapesMatchReference) {
  const OpKernelEntry* e = OpKernels().FindByName(GetParam());
  if (e == nullptr) GTEST_SKIP() << GetParam() << " is not built for this target (aarch64 only)";
  if (!CpuSupports(e->isa)) GTEST_SKIP() << e->name << " needs " << IsaName(e->isa) << ", which this CPU lacks";
  constexpr double kDepthwiseTolerance = 1e-5;
  struct Pads {
    int64_t top, left, bottom, right;
  };
  // Asymmetric: TF-style SAME, more on the left, and none on the left with 2 on the right (narrow images
  // whose only windows start inside and end past the image).
  const Pads all_pads[] = {{0, 0, 0, 0}, {1, 1, 1, 1}, {0, 0, 1, 1}, {1, 2, 0, 1}, {1, 0, 1, 2}};
  const int64_t sizes[][2] = {{1, 1}, {1, 2}, {2, 1}, {3, 3}, {7, 7}, {8, 9}, {14, 14}};
  const char* activations[] = {"none", "relu", "relu6", "clip"};
  std::mt19937 rng(21);
  // One pool for the whole grid: creating threads per case dominates the run time under qemu.
  std::unique_ptr<pthreadpool, decltype(&pthreadpool_destroy)> pool3(pthreadpool_create(3), pthreadpool_destroy);
  int checked = 0, index = 0;
  double worst = 0;
  for (int64_t ch : {1, 3, 4, 5, 8, 15, 16, 17, 33, 64}) {
    for (const auto& size : sizes) {
      for (int64_t s : {1, 2}) {
        for (const Pads& p : all_pads) {
          const int64_t h = size[0], w = size[1];
          const int64_t oh = OutExtent(h, 3, s, 1, p.top, p.bottom), ow = OutExtent(w, 3, s, 1, p.left, p.right);
          if (oh < 1 || ow < 1) continue;
          for (int variant = 0; variant < 4; ++variant, ++index) {
            const bool bias = variant & 1, residual = variant & 2;
            const bool in_place = residual && index % 3 == 0;
            const int64_t n = index % 5 == 0 ? 2 : 1;
            const std::string act = activations[index % 4];
            Case c;
            CaseBuilder b(&rng, &c);
            b.Activation({n, h, w, ch});
            b.Weight({ch, 3, 3, 1});
            if (bias) {
              b.Weight({ch});
            } else if (residual) {
              b.Omitted();
            }
            if (residual) b.Activation({n, oh, ow, ch});
            Node* node = b.Finish("FusedConv", "tessel");
            node->SetAttr("layout", Attribute::String("nhwc"));
            node->SetAttr("group", Attribute::Int(ch));
            node->SetAttr("strides", Attribute::Ints({s, s}));
            node->SetAttr("pads", Attribute::Ints({p.top, p.left, p.bottom, p.right}));
            node->SetAttr("activation", Attribute::String(act == "relu6" ? "clip" : act));
            if (act == "relu6" || act == "clip") {
              node->SetAttr("clip_min", Attribute::Float(act == "relu6" ? 0.0f : -0.5f));
              node->SetAttr("clip_max", Attribute::Float(act == "relu6" ? 6.0f : 0.75f));
            }
            const std::string label =
                absl::StrCat(e->name, " x[", n, ",", h, ",", w, ",", ch, "] stride ", s, " pads ", p.top, ",", p.left,
                             ",", p.bottom, ",", p.right, bias ? " bias" : "",
                             residual ? (in_place ? " residual in place" : " residual") : "", " ", act);
            const std::vector<const Tensor*> inputs = c.Inputs();
            const std::vector<OperandInfo> info = c.Infos();
            std::vector<Tensor> want;
            ASSERT_TRUE(RunReferenceNode(*node, inputs, &want).ok()) << label;
            std::vector<OperandInfo> out_info = {{true, false, want[0].type()}};
            ASSERT_TRUE(e->legal(OpQuery{*node, info, out_info})) << label;
            for (int threads : {1, 3}) {
              Tensor got(DType::kF32, want[0].shape());
              for (int64_t i = 0; i < got.num_elements(); ++i) {
                got.data<float>()[i] = in_place ? c.data[3].data<float>()[i] : NAN;
              }
              std::vector<const Tensor*> bound = inputs;
              if (in_place) bound[3] = &got;
              absl::StatusOr<std::unique_ptr<OpKernel>> k = e->create(OpKernelArgs{
                  *node, bound, absl::MakeSpan(&got, 1), threads > 1 ? pool3.get() : nullptr, threads, index % 2 == 1});
              ASSERT_TRUE(k.ok()) << label << ": " << k.status();
              ASSERT_TRUE((*k)->Run().ok()) << label;
              // Run again (nothing carried between runs), except in place, where the residual is now gone.
              if (!in_place) {
                ASSERT_TRUE((*k)->Run().ok()) << label;
              }
              // Spinning workers would spin through the next case's reference, which under emulation
              // costs more than the case itself: send them to sleep.
              if (threads > 1) ParkWorkers(pool3.get());
              const double err = NormalizedError(got, want[0]);
              EXPECT_LE(err, kDepthwiseTolerance) << label << ", " << threads << " threads";
              worst = std::max(worst, err);
              ++checked;
            }
          }
        }
      }
    }
  }
  std::printf("%s: %d runs, worst normalized error %.2e (tolerance %.0e)\n", e->name.c_str(), checked, worst,
              kDepthwiseTolerance);
}

INSTANTIATE_TEST_SUITE_P(Kernels, DepthwiseConv3x3Test,
                         ::testing::Values("tessel_f32_dwconv2d_3x3_nhwc__neon", "tessel_f32_dwconv2d_3x3_nhwc__sve"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// Whether `kernel` accepts the case's node (its output typed like its first input).
bool LegalFor(const std::string& kernel, const Case& c) {
  const std::vector<OperandInfo> info = c.Infos();
  std::vector<OperandInfo> out = {{true, false, c.data[0].type()}};
  const OpKernelEntry* e = OpKernels().FindByName(kernel);
  EXPECT_NE(e, nullptr) << kernel;
  return e != nullptr && e->legal(OpQuery{*c.node, info, out});
}

// What the XNNPACK Softmax and Clip kernels must refuse (and so leave to the reference kernel): a
// softmax over an axis other than the last, Clip bounds that are not constants, reversed bounds.
TEST(XnnpackElementwiseTest, RefusesWhatItCannotServe) {
  std::mt19937 rng(11);
  for (int64_t axis : {-3, -2, -1, 0, 1, 2}) {
    Case c;
    CaseBuilder b(&rng, &c);
    b.Activation({2, 3, 5});
    b.Finish("Softmax", "")->SetAttr("axis", Attribute::Int(axis));
    EXPECT_EQ(LegalFor("xnn_f32_softmax_nc__xnnpack", c), axis == -1 || axis == 2) << "axis " << axis;
  }
  struct ClipCase {
    float lo, hi;
    bool constant_min, legal;
  };
  for (const ClipCase& cc : {ClipCase{-1, 1, true, true}, ClipCase{-1, 1, false, false}, ClipCase{1, -1, true, false},
                             ClipCase{1, 1, true, false}, ClipCase{NAN, 1, true, false}}) {
    Case c;
    CaseBuilder b(&rng, &c);
    b.Activation({4, 7});
    cc.constant_min ? b.WeightTensor(Tensor::Scalar(cc.lo)) : b.Activation({});
    b.WeightTensor(Tensor::Scalar(cc.hi));
    b.Finish("Clip", "");
    EXPECT_EQ(LegalFor("xnn_f32_clamp_nc_clip__xnnpack", c), cc.legal)
        << "min " << cc.lo << (cc.constant_min ? "" : " (not constant)") << " max " << cc.hi;
  }
}

// What the vector kernels' Softmax and tessel.RMSNorm entries (every ISA) must refuse: a softmax over
// an axis other than the last, an RMSNorm gain that broadcasts within a row; and what they accept.
TEST(VectorOpKernelsTest, RefuseWhatTheyCannotServe) {
  std::mt19937 rng(13);
  int checked = 0;
  for (const OpKernelEntry& e : OpKernels().entries()) {
    if (e.name.rfind("tessel_f32_softmax_nc__", 0) == 0) {
      for (int64_t axis : {-3, -2, -1, 0, 1, 2}) {
        Case c;
        CaseBuilder b(&rng, &c);
        b.Activation({2, 3, 5});
        b.Finish("Softmax", "")->SetAttr("axis", Attribute::Int(axis));
        EXPECT_EQ(LegalFor(e.name, c), axis == -1 || axis == 2) << e.name << " axis " << axis;
      }
      ++checked;
    }
    if (e.name.rfind("tessel_f32_rmsnorm_nc__", 0) == 0) {
      struct GainCase {
        int64_t axis;
        std::vector<int64_t> gain;  // empty: no gain
        bool legal;
      };
      for (const GainCase& g : {GainCase{-1, {}, true}, GainCase{-1, {5}, true}, GainCase{1, {3, 5}, true},
                                GainCase{1, {5}, false}, GainCase{1, {1, 5}, false}, GainCase{0, {}, true}}) {
        Case c;
        CaseBuilder b(&rng, &c);
        b.Activation({2, 3, 5});
        if (!g.gain.empty()) b.Weight(g.gain);
        b.Finish("RMSNorm", "tessel")->SetAttr("axis", Attribute::Int(g.axis));
        EXPECT_EQ(LegalFor(e.name, c), g.legal) << e.name << " axis " << g.axis << " gain " << ShapeString(g.gain);
      }
      ++checked;
    }
  }
  EXPECT_GE(checked, 4) << "the portable Softmax and RMSNorm entries and at least one ISA's";
}

// Selection: the cheapest legal kernel wins, forcing restricts the backend, and nodes no kernel
// accepts (a non-clamp activation here) select nothing, which means the reference kernel.
TEST(OpKernelSelectionTest, ForceAndFallback) {
  std::mt19937 rng(7);
  Case c;
  CaseBuilder b(&rng, &c);
  b.Activation({1, 8, 8, 16});
  b.Weight({32, 3, 3, 16});
  Node* node = b.Finish("FusedConv", "tessel");
  node->SetAttr("layout", Attribute::String("nhwc"));
  node->SetAttr("pads", Attribute::Ints({1, 1, 1, 1}));
  std::vector<OperandInfo> in = {{true, false, c.data[0].type()}, {true, true, c.data[1].type()}};
  std::vector<OperandInfo> out = {{true, false, TensorType::Static(DType::kF32, {1, 8, 8, 32})}};
  const OpQuery q{*node, in, out};
  const OpKernelEntry* any = OpKernels().Select(q, "f32", "");
  ASSERT_NE(any, nullptr);
#if defined(__aarch64__)
  // On aarch64 the Arm lab's table ranks the dense convolutions (lab_costs.h): its lowest ratio among
  // the kernels legal here wins.
  const LabCost* best = nullptr;
  for (const OpKernelEntry& e : OpKernels().entries()) {
    if (e.op != "tessel.FusedConv" || !CpuSupports(e.isa) || (e.legal && !e.legal(q))) continue;
    const LabCost* row = FindLabCost("conv/dense", e.name);
    if (row && (!best || row->ratio < best->ratio)) best = row;
  }
  ASSERT_NE(best, nullptr) << "the table lists dense convolutions for " << LabCostCore();
  EXPECT_EQ(any->name, best->kernel);
#else
  // XNNPACK's convolution, unless its f32 GEMM is slow on this CPU: then one of Tessel's.
  if (XnnpackF32GemmIsSlow()) {
    EXPECT_NE(any->backend, "xnnpack");
  } else {
    EXPECT_EQ(any->backend, "xnnpack");
  }
#endif
  const OpKernelEntry* gemm = OpKernels().Select(q, "f32", "gemm");
  ASSERT_NE(gemm, nullptr);
  // The cheaper of the two GEMM convolutions: the direct-A one where it runs (AVX2 and AVX-512).
  EXPECT_EQ(gemm->name, CpuSupports(Isa::kAvx2) ? "tessel_f32_conv2d_nhwc__direct_gemm"
                                                : "tessel_f32_conv2d_nhwc__im2col_gemm");
  const OpKernelEntry* named = OpKernels().Select(q, "f32", "tessel_f32_conv2d_nhwc__im2col_gemm");
  ASSERT_NE(named, nullptr);
  EXPECT_EQ(named->name, "tessel_f32_conv2d_nhwc__im2col_gemm");
  EXPECT_EQ(OpKernels().Select(q, "f32", "reference"), nullptr);
  // An activation no epilogue fuses (sigmoid) is appended after the convolution: still a fast kernel.
  node->SetAttr("activation", Attribute::String("sigmoid"));
  EXPECT_NE(OpKernels().Select(q, "f32", ""), nullptr);
  // Weights computed at run time: every optimized convolution packs constant weights, so none applies
  // and selection says why (the caller falls back to the reference kernel).
  std::vector<OperandInfo> runtime_weights = {{true, false, c.data[0].type()}, {true, false, c.data[1].type()}};
  std::vector<std::string> why;
  EXPECT_EQ(OpKernels().Select(OpQuery{*node, runtime_weights, out}, "f32", "", &why), nullptr);
  EXPECT_FALSE(why.empty());
}

}  // namespace
}  // namespace tessel
