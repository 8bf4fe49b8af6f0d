// Fused CNN operators against the unfused reference operators they stand for: tessel.FusedConv vs
// Conv -> Add(residual) -> activation, tessel.DwPwConv vs the two Convs with their activations,
// channels-last variants vs channels-first ones between Transposes, tessel pooling vs ONNX pooling,
// MatMulBias(Gelu) vs MatMul -> Add -> Gelu. The fused kernels perform the same float operations in
// the same order, so results must agree exactly (tolerance 0). Random inputs, fixed seeds.
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "graph/graph.h"
#include "graph/op_registry.h"
#include "gtest/gtest.h"
#include "kernels/reference/reference.h"

namespace tessel {
namespace {

using ::testing::HasSubstr;

Tensor Random(std::vector<int64_t> shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.5f, 1.5f);
  Tensor t(DType::kF32, std::move(shape));
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}

using Attrs = std::map<std::string, Attribute>;

// A small graph evaluated node by node with the reference kernels.
class Net {
 public:
  Value* Input(Tensor t) {
    Value* v = graph_.AddInput(absl::StrCat("in", data_.size()), t.type());
    data_[v] = std::move(t);
    return v;
  }
  Value* Const(Tensor t) { return graph_.AddConstant(absl::StrCat("c", graph_.values().size()), std::move(t)); }
  Value* Op(const std::string& op, std::vector<Value*> inputs, Attrs attrs = {}, const std::string& domain = "") {
    Node* n = graph_.AddNode(op, std::move(inputs), 1);
    n->set_domain(domain);
    for (auto& [k, a] : attrs) n->SetAttr(k, a);
    return n->output(0);
  }
  Value* Fused(const std::string& op, std::vector<Value*> inputs, Attrs attrs = {}) {
    return Op(op, std::move(inputs), std::move(attrs), kTesselDomain);
  }
  Value* Transpose(Value* v, std::vector<int64_t> perm) { return Op("Transpose", {v}, {{"perm", Attribute::Ints(perm)}}); }
  Value* ToNhwc(Value* v) { return Transpose(v, {0, 2, 3, 1}); }
  Value* ToNchw(Value* v) { return Transpose(v, {0, 3, 1, 2}); }

  absl::Status Infer() { return InferShapes(graph_); }

  // Runs every node (they were added in topological order) and returns the values asked for.
  absl::StatusOr<std::vector<Tensor>> Eval(std::vector<Value*> wanted) {
    absl::Status s = InferShapes(graph_);
    if (!s.ok()) return s;
    std::map<const Value*, Tensor> vals = data_;
    for (Value* c : graph_.Constants()) vals[c] = *c->constant();
    for (const auto& n : graph_.nodes()) {
      std::vector<const Tensor*> ins;
      for (Value* in : n->inputs()) ins.push_back(in ? &vals.at(in) : nullptr);
      std::vector<Tensor> outs;
      s = RunReferenceNode(*n, ins, &outs);
      if (!s.ok()) return s;
      vals[n->output(0)] = outs[0];
    }
    std::vector<Tensor> out;
    for (Value* v : wanted) out.push_back(vals.at(v));
    return out;
  }

 private:
  Graph graph_;
  std::map<const Value*, Tensor> data_;
};

void ExpectSame(const Tensor& want, const Tensor& got) {
  ASSERT_EQ(want.shape(), got.shape());
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    ASSERT_EQ(want.data<float>()[i], got.data<float>()[i]) << "element " << i;
  }
}

Attrs ConvAttrs() {
  return {{"group", Attribute::Int(2)},
          {"strides", Attribute::Ints({2, 1})},
          {"pads", Attribute::Ints({1, 0, 1, 2})},
          {"dilations", Attribute::Ints({1, 2})}};
}

// The unfused activation on `x` (one of the FusedConv activation names).
Value* Activate(Net& net, Value* x, const std::string& act) {
  if (act == "relu") return net.Op("Relu", {x});
  if (act == "clip") return net.Op("Clip", {x, net.Const(Tensor::Scalar(-0.5f)), net.Const(Tensor::Scalar(0.7f))});
  if (act == "hardswish") return net.Op("HardSwish", {x});
  if (act == "sigmoid") return net.Op("Sigmoid", {x});
  if (act == "silu") return net.Op("Mul", {x, net.Op("Sigmoid", {x})});
  return x;
}

void AddActivationAttrs(Attrs& a, const std::string& act, const std::string& prefix = "") {
  a[prefix + "activation"] = Attribute::String(act);
  if (act == "clip") {
    a[prefix + "clip_min"] = Attribute::Float(-0.5f);
    a[prefix + "clip_max"] = Attribute::Float(0.7f);
  }
}

class FusedConvTest : public ::testing::TestWithParam<std::string> {};

TEST_P(FusedConvTest, MatchesConvAddActivation) {
  const std::string act = GetParam();
  for (bool with_bias : {false, true}) {
    for (bool with_residual : {false, true}) {
      SCOPED_TRACE(absl::StrCat(act, " bias=", with_bias, " residual=", with_residual));
      Net net;
      Value* x = net.Input(Random({2, 4, 7, 6}, 1));
      Value* w = net.Const(Random({6, 2, 3, 3}, 2));
      Value* b = with_bias ? net.Const(Random({6}, 3)) : nullptr;
      // Output: [2, 6, (7+2-3)/2+1 = 4, (6+2-5)/1+1 = 4].
      Value* r = with_residual ? net.Input(Random({2, 6, 4, 4}, 4)) : nullptr;
      Value* y = net.Op("Conv", {x, w, b}, ConvAttrs());
      if (r) y = net.Op("Add", {y, r});
      y = Activate(net, y, act);
      Attrs a = ConvAttrs();
      AddActivationAttrs(a, act);
      Value* f = net.Fused("FusedConv", {x, w, b, r}, a);
      auto out = net.Eval({y, f});
      ASSERT_TRUE(out.ok()) << out.status();
      ExpectSame((*out)[0], (*out)[1]);
    }
  }
}

TEST_P(FusedConvTest, ChannelsLastMatchesChannelsFirst) {
  const std::string act = GetParam();
  Net net;
  Value* x = net.Input(Random({1, 3, 6, 5}, 5));
  Value* w = net.Const(Random({4, 3, 3, 2}, 6));
  Value* b = net.Const(Random({4}, 7));
  Value* r = net.Input(Random({1, 4, 4, 4}, 8));
  Attrs a = {{"strides", Attribute::Ints({1, 1})}};
  AddActivationAttrs(a, act);
  Value* want = net.Fused("FusedConv", {x, w, b, r}, a);
  Attrs nhwc = a;
  nhwc["layout"] = Attribute::String("nhwc");
  // Weights in [M, kH, kW, C/group].
  Value* w_ohwi = net.Transpose(w, {0, 2, 3, 1});
  Value* got = net.ToNchw(net.Fused("FusedConv", {net.ToNhwc(x), w_ohwi, b, net.ToNhwc(r)}, nhwc));
  auto out = net.Eval({want, got});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectSame((*out)[0], (*out)[1]);
}

INSTANTIATE_TEST_SUITE_P(Activations, FusedConvTest,
                         ::testing::Values("none", "relu", "clip", "hardswish", "sigmoid", "silu"));

TEST(DwPwConvTest, MatchesTwoConvsWithActivations) {
  for (bool channels_last : {false, true}) {
    for (bool with_residual : {false, true}) {
      SCOPED_TRACE(absl::StrCat("nhwc=", channels_last, " residual=", with_residual));
      Net net;
      Value* x = net.Input(Random({2, 5, 6, 7}, 11));
      Value* w_dw = net.Const(Random({5, 1, 3, 3}, 12));
      Value* b_dw = net.Const(Random({5}, 13));
      Value* w_pw = net.Const(Random({3, 5, 1, 1}, 14));
      Value* b_pw = with_residual ? nullptr : net.Const(Random({3}, 15));
      Value* r = with_residual ? net.Input(Random({2, 3, 3, 4}, 16)) : nullptr;
      Attrs dw = {{"group", Attribute::Int(5)}, {"strides", Attribute::Ints({2, 2})}, {"pads", Attribute::Ints({1, 1, 1, 1})}};
      Value* t = Activate(net, net.Op("Conv", {x, w_dw, b_dw}, dw), "clip");
      Value* want = net.Op("Conv", {t, w_pw, b_pw});
      if (r) want = net.Op("Add", {want, r});
      want = Activate(net, want, "hardswish");
      Attrs a = dw;
      AddActivationAttrs(a, "clip", "dw_");
      AddActivationAttrs(a, "hardswish", "pw_");
      Value* got;
      if (channels_last) {
        a["layout"] = Attribute::String("nhwc");
        got = net.ToNchw(net.Fused("DwPwConv", {net.ToNhwc(x), net.Transpose(w_dw, {0, 2, 3, 1}), b_dw,
                                                net.Transpose(w_pw, {0, 2, 3, 1}), b_pw, r ? net.ToNhwc(r) : nullptr},
                                   a));
      } else {
        got = net.Fused("DwPwConv", {x, w_dw, b_dw, w_pw, b_pw, r}, a);
      }
      auto out = net.Eval({want, got});
      ASSERT_TRUE(out.ok()) << out.status();
      ExpectSame((*out)[0], (*out)[1]);
    }
  }
}

TEST(FusedPoolTest, ChannelsLastMatchesOnnxPooling) {
  const Attrs window = {{"kernel_shape", Attribute::Ints({3, 2})},
                        {"strides", Attribute::Ints({2, 1})},
                        {"pads", Attribute::Ints({1, 0, 1, 1})},
                        {"ceil_mode", Attribute::Int(1)}};
  for (const char* op : {"MaxPool", "AveragePool", "GlobalAveragePool"}) {
    SCOPED_TRACE(op);
    Net net;
    Value* x = net.Input(Random({2, 3, 7, 5}, 21));
    const bool global = std::string(op) == "GlobalAveragePool";
    Attrs a = global ? Attrs{} : window;
    Value* want = net.Op(op, {x}, a);
    Value* same = net.Fused(op, {x}, a);
    a["layout"] = Attribute::String("nhwc");
    Value* got = net.ToNchw(net.Fused(op, {net.ToNhwc(x)}, a));
    auto out = net.Eval({want, same, got});
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectSame((*out)[0], (*out)[1]);
    ExpectSame((*out)[0], (*out)[2]);
  }
}

TEST(MatMulBiasTest, MatchesMatMulAddGelu) {
  for (const char* approximate : {"", "none", "tanh"}) {
    SCOPED_TRACE(approximate);
    Net net;
    Value* a = net.Input(Random({2, 3, 5}, 31));
    Value* w = net.Const(Random({5, 4}, 32));
    Value* b = net.Const(Random({4}, 33));
    Value* mm = net.Op("Add", {net.Op("MatMul", {a, w}), b});
    const bool gelu = approximate[0] != '\0';
    Attrs attrs = gelu ? Attrs{{"approximate", Attribute::String(approximate)}} : Attrs{};
    Value* want = gelu ? net.Op("Gelu", {mm}, attrs) : mm;
    Value* got = net.Fused(gelu ? "MatMulBiasGelu" : "MatMulBias", {a, w, b}, attrs);
    auto out = net.Eval({want, got});
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectSame((*out)[0], (*out)[1]);
  }
}

TEST(FusedCnnInferenceTest, ShapesAndLayouts) {
  Net net;
  Value* x = net.Input(Tensor(DType::kF32, {1, 9, 8, 3}));
  Value* w = net.Const(Tensor(DType::kF32, {16, 3, 3, 3}));
  Value* f = net.Fused("FusedConv", {x, w},
                       {{"layout", Attribute::String("nhwc")}, {"strides", Attribute::Ints({2, 2})},
                        {"pads", Attribute::Ints({1, 1, 1, 1})}});
  ASSERT_TRUE(net.Infer().ok());
  EXPECT_EQ(f->type(), TensorType(DType::kF32, {1, 5, 4, 16}, Layout::kNHWC));
}

// Each case: one malformed node and a fragment of the error it must give.
TEST(FusedCnnInferenceTest, RejectsMalformedNodes) {
  struct Case {
    std::string what;
    std::function<void(Net&)> build;
    std::string error;
  };
  auto conv = [](Attrs a, std::vector<int64_t> residual = {}) {
    return [a, residual](Net& net) {
      Value* x = net.Input(Tensor(DType::kF32, {1, 4, 5, 5}));
      Value* w = net.Const(Tensor(DType::kF32, {2, 4, 3, 3}));
      Value* r = residual.empty() ? nullptr : net.Input(Tensor(DType::kF32, residual));
      net.Fused("FusedConv", {x, w, nullptr, r}, a);
    };
  };
  const std::vector<Case> cases = {
      {"unknown activation", conv({{"activation", Attribute::String("tanh")}}), "expected none, relu"},
      {"clip without bounds", conv({{"activation", Attribute::String("clip")}}), "needs a float attribute clip_min"},
      {"bounds without clip", conv({{"clip_max", Attribute::Float(6)}}), "only allowed with activation 'clip'"},
      {"bad layout", conv({{"layout", Attribute::String("chwn")}}), "expected \"nchw\" or \"nhwc\""},
      {"residual shape", conv({}, {1, 2, 3, 4}), "no broadcasting"},
      {"not depthwise",
       [](Net& net) {
         Value* x = net.Input(Tensor(DType::kF32, {1, 4, 5, 5}));
         net.Fused("DwPwConv", {x, net.Const(Tensor(DType::kF32, {4, 2, 3, 3})), nullptr,
                                net.Const(Tensor(DType::kF32, {8, 4, 1, 1}))},
                   {{"group", Attribute::Int(2)}});
       },
       "must be depthwise"},
      {"pointwise kernel not 1x1",
       [](Net& net) {
         Value* x = net.Input(Tensor(DType::kF32, {1, 4, 5, 5}));
         net.Fused("DwPwConv", {x, net.Const(Tensor(DType::kF32, {4, 1, 3, 3})), nullptr,
                                net.Const(Tensor(DType::kF32, {8, 4, 3, 3}))},
                   {{"group", Attribute::Int(4)}});
       },
       "expected a 1x1 kernel"},
      {"matmul bias length",
       [](Net& net) {
         net.Fused("MatMulBias", {net.Input(Tensor(DType::kF32, {2, 5})), net.Const(Tensor(DType::kF32, {5, 4})),
                                  net.Const(Tensor(DType::kF32, {3}))});
       },
       "has 3 elements, expected 4"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    Net net;
    c.build(net);
    absl::Status s = net.Infer();
    EXPECT_FALSE(s.ok());
    EXPECT_THAT(std::string(s.message()), HasSubstr(c.error));
  }
}

}  // namespace
}  // namespace tessel
