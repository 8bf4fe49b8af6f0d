// Neural-network operators: type inference on symbolic shapes, attribute and shape errors, and the
// reference kernels on small inputs checked against hand computations (exact, or 1e-6 where a
// square root or exponential is involved). Random-input coverage against PyTorch is in op_test.
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "graph/graph.h"
#include "graph/op_registry.h"
#include "gtest/gtest.h"
#include "kernels/reference/reference.h"

namespace tessel {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;

Tensor F32(std::vector<int64_t> shape, std::vector<float> v) { return Tensor::FromVector<float>(shape, v); }
Tensor I64(std::vector<int64_t> shape, std::vector<int64_t> v) { return Tensor::FromVector<int64_t>(shape, v); }

// An input of a one-node graph: a graph input of some (possibly symbolic) type, or a constant.
struct In {
  TensorType type;
  std::optional<Tensor> constant;
  static In Type(TensorType t) { return In{std::move(t), std::nullopt}; }
  static In Const(Tensor t) { return In{t.type(), t}; }
};

// One node; std::nullopt leaves an optional input out.
class OneNode {
 public:
  OneNode(const std::string& op, std::vector<std::optional<In>> inputs, int num_outputs = 1) {
    std::vector<Value*> values;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const std::string name = "in" + std::to_string(i);
      if (!inputs[i]) {
        values.push_back(nullptr);
      } else if (inputs[i]->constant) {
        values.push_back(graph_.AddConstant(name, *inputs[i]->constant));
      } else {
        values.push_back(graph_.AddInput(name, inputs[i]->type));
      }
    }
    node_ = graph_.AddNode(op, values, num_outputs, "n");
  }
  OneNode& Attr(const std::string& k, Attribute a) {
    node_->SetAttr(k, std::move(a));
    return *this;
  }
  // Compile-time inference: constants known, graph inputs not.
  absl::StatusOr<TensorType> Infer() {
    absl::Status s = InferShapes(graph_);
    if (!s.ok()) return s;
    return node_->output(0)->type();
  }
  // Runs with concrete values for every input (constants keep theirs).
  absl::StatusOr<Tensor> Run(std::vector<std::optional<Tensor>> values) {
    std::vector<const Tensor*> ptrs;
    for (size_t i = 0; i < values.size(); ++i) {
      const Value* v = node_->input(i);
      ptrs.push_back(v && v->is_constant() ? v->constant().get() : (values[i] ? &*values[i] : nullptr));
    }
    std::vector<Tensor> outs;
    absl::Status s = RunReferenceNode(*node_, ptrs, &outs);
    if (!s.ok()) return s;
    return outs[0];
  }
  const Node* node() const { return node_; }

 private:
  Graph graph_;
  Node* node_;
};

TensorType Sym(std::vector<Dim> dims) { return TensorType(DType::kF32, std::move(dims)); }
TensorType Static(std::vector<int64_t> shape) { return TensorType::Static(DType::kF32, shape); }
bool IsUnknown(const Dim& d) { return !d.is_static() && d.symbol()[0] == '?'; }

// Runs one node on graph inputs holding `values`, with `attrs`.
absl::StatusOr<Tensor> RunOp(const std::string& op, std::vector<std::optional<Tensor>> values,
                             std::vector<std::pair<std::string, Attribute>> attrs = {}) {
  std::vector<std::optional<In>> inputs;
  for (const auto& v : values) {
    if (v) {
      inputs.push_back(In::Type(v->type()));
    } else {
      inputs.push_back(std::nullopt);
    }
  }
  OneNode n(op, inputs);
  for (auto& [k, a] : attrs) n.Attr(k, a);
  return n.Run(values);
}

std::vector<float> Values(const absl::StatusOr<Tensor>& t) {
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? t->ToFloatVector() : std::vector<float>();
}

// ---- Type inference ----

TEST(NnInferTest, ConvKeepsSymbolicBatch) {
  OneNode n("Conv", {In::Type(Sym({Dim::Symbol("N"), 3, 224, 224})), In::Const(Tensor(DType::kF32, {64, 3, 7, 7}))});
  n.Attr("strides", Attribute::Ints({2, 2})).Attr("pads", Attribute::Ints({3, 3, 3, 3}));
  absl::StatusOr<TensorType> t = n.Infer();
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->ToString(), "f32[N,64,112,112]");
}

TEST(NnInferTest, ConvSymbolicSpatialDims) {
  // SAME padding at stride 1 keeps H; stride 2 along W makes it unknown.
  OneNode n("Conv",
            {In::Type(Sym({1, 8, Dim::Symbol("H"), Dim::Symbol("W")})), In::Const(Tensor(DType::kF32, {8, 8, 3, 3}))});
  n.Attr("auto_pad", Attribute::String("SAME_UPPER")).Attr("strides", Attribute::Ints({1, 2}));
  absl::StatusOr<TensorType> t = n.Infer();
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->dims[2], Dim::Symbol("H"));
  EXPECT_TRUE(IsUnknown(t->dims[3]));
}

TEST(NnInferTest, ConvChannelMismatch) {
  OneNode n("Conv", {In::Type(Static({1, 3, 8, 8})), In::Const(Tensor(DType::kF32, {2, 4, 3, 3}))});
  absl::StatusOr<TensorType> t = n.Infer();
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(t.status().message(),
              HasSubstr("weight has 4 input channels per group but input has 3 channels and group=1"));
}

TEST(NnInferTest, ConvMissingWeightIsAnError) {
  OneNode n("Conv", {In::Type(Static({1, 3, 8, 8})), std::nullopt, In::Const(Tensor(DType::kF32, {2}))});
  EXPECT_EQ(n.Infer().status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(NnInferTest, ConvWindowLargerThanInput) {
  OneNode n("Conv", {In::Type(Static({1, 1, 2, 2})), In::Const(Tensor(DType::kF32, {1, 1, 3, 3}))});
  absl::StatusOr<TensorType> t = n.Infer();
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(t.status().message(), HasSubstr("does not fit"));
}

TEST(NnInferTest, BatchNormTrainingOutputsRejected) {
  std::vector<std::optional<In>> in = {In::Type(Static({1, 2, 3, 3}))};
  for (int i = 0; i < 4; ++i) in.push_back(In::Const(Tensor(DType::kF32, {2})));
  OneNode n("BatchNormalization", in, 3);
  absl::StatusOr<TensorType> t = n.Infer();
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(t.status().message(), HasSubstr("training mode not supported"));
}

// MaxPool's Indices output has Y's extents (values: op_test's maxpool2d_indices cases); AveragePool has one
// output.
// The losses: a scalar unless reduction is "none"; targets must be integers of the scores' extents
// without axis 1; an unknown reduction and a target outside [0, C) (not ignore_index) are errors.
TEST(NnInferTest, LossTypesAndBadInputs) {
  OneNode mean("NegativeLogLikelihoodLoss",
               {In::Type(Static({2, 3, 4})), In::Type(TensorType::Static(DType::kI64, {2, 4}))});
  ASSERT_TRUE(mean.Infer().ok()) << mean.Infer().status();
  EXPECT_EQ(*mean.Infer(), TensorType::Static(DType::kF32, {}));
  OneNode none("SoftmaxCrossEntropyLoss",
               {In::Type(Static({2, 3, 4})), In::Type(TensorType::Static(DType::kI32, {2, 4}))}, 2);
  none.Attr("reduction", Attribute::String("none"));
  ASSERT_TRUE(none.Infer().ok()) << none.Infer().status();
  EXPECT_EQ(*none.Infer(), TensorType::Static(DType::kF32, {2, 4}));
  EXPECT_EQ(none.node()->output(1)->type(), TensorType::Static(DType::kF32, {2, 3, 4}));

  OneNode float_target("NegativeLogLikelihoodLoss", {In::Type(Static({2, 3})), In::Type(Static({2}))});
  EXPECT_THAT(float_target.Infer().status().message(), HasSubstr("expected i32 or i64"));
  OneNode wrong_extent("NegativeLogLikelihoodLoss",
                       {In::Type(Static({2, 3, 4})), In::Type(TensorType::Static(DType::kI64, {2, 5}))});
  EXPECT_THAT(wrong_extent.Infer().status().message(), HasSubstr("does not match input"));
  OneNode bad_reduction("NegativeLogLikelihoodLoss",
                        {In::Type(Static({2, 3})), In::Type(TensorType::Static(DType::kI64, {2}))});
  bad_reduction.Attr("reduction", Attribute::String("average"));
  EXPECT_THAT(bad_reduction.Infer().status().message(), HasSubstr("reduction 'average'"));

  OneNode run("NegativeLogLikelihoodLoss",
              {In::Type(Static({2, 3})), In::Type(TensorType::Static(DType::kI64, {2}))});
  run.Attr("ignore_index", Attribute::Int(-1));
  ASSERT_TRUE(run.Infer().ok());
  const Tensor x = F32({2, 3}, {-1, -2, -3, -4, -5, -6});
  absl::StatusOr<Tensor> ok = run.Run({x, I64({2}, {2, -1})});
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_FLOAT_EQ(ok->data<float>()[0], 3.0f);  // -x[0, 2], the ignored element neither adds nor counts
  absl::StatusOr<Tensor> bad = run.Run({x, I64({2}, {3, 0})});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(bad.status().message(), HasSubstr("target 3 at element 0"));
}

TEST(NnInferTest, MaxPoolIndicesAreInt64OfYsShape) {
  OneNode n("MaxPool", {In::Type(Static({1, 1, 4, 4}))}, 2);
  n.Attr("kernel_shape", Attribute::Ints({2, 2}));
  ASSERT_TRUE(n.Infer().ok()) << n.Infer().status();
  EXPECT_EQ(n.node()->output(1)->type(), TensorType::Static(DType::kI64, {1, 1, 3, 3}));
  OneNode avg("AveragePool", {In::Type(Static({1, 1, 4, 4}))}, 2);
  avg.Attr("kernel_shape", Attribute::Ints({2, 2}));
  EXPECT_EQ(avg.Infer().status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(NnInferTest, PoolCeilModeDropsWindowStartingInPadding) {
  // ceil((9 + 2 - 2) / 2) + 1 = 6, but the 6th window would start at padded position 10 > 9.
  OneNode n("MaxPool", {In::Type(Sym({Dim::Symbol("N"), 1, 9, 9}))});
  n.Attr("kernel_shape", Attribute::Ints({2, 2}))
      .Attr("strides", Attribute::Ints({2, 2}))
      .Attr("pads", Attribute::Ints({1, 1, 1, 1}))
      .Attr("ceil_mode", Attribute::Int(1));
  absl::StatusOr<TensorType> t = n.Infer();
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->ToString(), "f32[N,1,5,5]");
}

TEST(NnInferTest, MatMulBroadcastsSymbolicBatch) {
  OneNode n("MatMul", {In::Type(Sym({Dim::Symbol("B"), 1, 3, 4})), In::Type(Static({5, 4, 6}))});
  absl::StatusOr<TensorType> t = n.Infer();
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->ToString(), "f32[B,5,3,6]");
}

TEST(NnInferTest, MatMulVectorOperandsDropTheirDimension) {
  OneNode n("MatMul", {In::Type(Static({4})), In::Type(Static({2, 4, 3}))});
  absl::StatusOr<TensorType> t = n.Infer();
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->ToString(), "f32[2,3]");
}

TEST(NnInferTest, MatMulContractedMismatch) {
  OneNode n("MatMul", {In::Type(Static({2, 3})), In::Type(Static({4, 5}))});
  EXPECT_THAT(n.Infer().status().message(), HasSubstr("contracted dimension (3 vs 4)"));
}

TEST(NnInferTest, GemmRejectsNonBroadcastableC) {
  OneNode n("Gemm", {In::Type(Static({3, 4})), In::Type(Static({4, 5})), In::Type(Static({3}))});
  absl::StatusOr<TensorType> t = n.Infer();
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(t.status().message(), HasSubstr("does not broadcast to f32[3,5]"));
}

TEST(NnInferTest, SoftmaxAxisOutOfRange) {
  OneNode n("Softmax", {In::Type(Static({2, 3}))});
  n.Attr("axis", Attribute::Int(2));
  EXPECT_EQ(n.Infer().status().code(), absl::StatusCode::kInvalidArgument);
}

// The Mean and InvStdDev outputs are computed (op_test: layernorm_mean_invstddev) in f32, the one
// stash_type ONNX defines; another stash_type is refused.
TEST(NnInferTest, LayerNormStatsOutputsOnlyInFloat) {
  OneNode n("LayerNormalization", {In::Type(Static({2, 3})), In::Const(Tensor(DType::kF32, {3}))}, 2);
  EXPECT_TRUE(n.Infer().ok());
  OneNode other("LayerNormalization", {In::Type(Static({2, 3})), In::Const(Tensor(DType::kF32, {3}))}, 2);
  other.Attr("stash_type", Attribute::Int(10));
  EXPECT_EQ(other.Infer().status().code(), absl::StatusCode::kUnimplemented);
}

TEST(NnInferTest, ReduceWithRuntimeAxes) {
  OneNode keep("ReduceMean", {In::Type(Sym({Dim::Symbol("N"), 1, 4})), In::Type(TensorType::Static(DType::kI64, {1}))});
  absl::StatusOr<TensorType> t = keep.Infer();
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(IsUnknown(t->dims[0]));
  EXPECT_EQ(t->dims[1], Dim(1));
  EXPECT_TRUE(IsUnknown(t->dims[2]));
  // keepdims=0: one axis listed, so rank 1, its extent known only with the values.
  OneNode drop("ReduceMean", {In::Type(Static({2, 3})), In::Type(TensorType::Static(DType::kI64, {1}))});
  drop.Attr("keepdims", Attribute::Int(0));
  t = drop.Infer();
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->rank(), 1);
  EXPECT_TRUE(IsUnknown(t->dims[0]));
  absl::StatusOr<Tensor> y = drop.Run({F32({2, 3}, {1, 2, 3, 4, 5, 6}), I64({1}, {0})});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->ToFloatVector(), (std::vector<float>{2.5f, 3.5f, 4.5f}));
  // An axes list of unknown length leaves the rank unknown: an error.
  OneNode unknown("ReduceMean", {In::Type(Static({2, 3})), In::Type(TensorType(DType::kI64, {Dim::Symbol("K")}))});
  unknown.Attr("keepdims", Attribute::Int(0));
  EXPECT_EQ(unknown.Infer().status().code(), absl::StatusCode::kUnimplemented);
}

TEST(NnInferTest, ReduceConstantAxes) {
  OneNode n("ReduceSum", {In::Type(Sym({Dim::Symbol("N"), 3, 4})), In::Const(I64({1}, {-1}))});
  n.Attr("keepdims", Attribute::Int(0));
  absl::StatusOr<TensorType> t = n.Infer();
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->ToString(), "f32[N,3]");
}

TEST(NnInferTest, PadWithRuntimePadsAndSymbolicDims) {
  OneNode runtime("Pad", {In::Type(Static({2, 3})), In::Type(TensorType::Static(DType::kI64, {4}))});
  absl::StatusOr<TensorType> t = runtime.Infer();
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(IsUnknown(t->dims[0]) && IsUnknown(t->dims[1]));
  // Zero pads keep a symbol; the padded axis is computed.
  OneNode known("Pad", {In::Type(Sym({Dim::Symbol("N"), 3})), In::Const(I64({4}, {0, 1, 0, 2}))});
  t = known.Infer();
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->ToString(), "f32[N,6]");
}

TEST(NnInferTest, PadCropBelowZero) {
  OneNode n("Pad", {In::Type(Static({2, 3})), In::Const(I64({4}, {0, -2, 0, -2}))});
  EXPECT_THAT(n.Infer().status().message(), HasSubstr("below zero"));
}

TEST(NnInferTest, ResizeShapes) {
  const Tensor scales = F32({4}, {1, 1, 2, 1.5f});
  OneNode with_scales("Resize", {In::Type(Sym({Dim::Symbol("N"), 3, 4, 4})), std::nullopt, In::Const(scales)});
  absl::StatusOr<TensorType> t = with_scales.Infer();
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->ToString(), "f32[N,3,8,6]");

  OneNode runtime_sizes("Resize", {In::Type(Static({1, 3, 4, 4})), std::nullopt, std::nullopt,
                                   In::Type(TensorType::Static(DType::kI64, {4}))});
  t = runtime_sizes.Infer();
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(IsUnknown(t->dims[2]));
  absl::StatusOr<Tensor> y = runtime_sizes.Run(
      {F32({1, 3, 4, 4}, std::vector<float>(48, 1.0f)), std::nullopt, std::nullopt, I64({4}, {1, 3, 2, 5})});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->shape(), ElementsAre(1, 3, 2, 5));
}

TEST(NnInferTest, ResizeUnsupportedAndInvalid) {
  const Tensor scales = F32({2}, {2, 2});
  OneNode antialias("Resize", {In::Type(Static({2, 2})), std::nullopt, In::Const(scales)});
  antialias.Attr("antialias", Attribute::Int(1));
  EXPECT_EQ(antialias.Infer().status().code(), absl::StatusCode::kUnimplemented);
  OneNode unknown("Resize", {In::Type(Static({2, 2})), std::nullopt, In::Const(scales)});
  unknown.Attr("mode", Attribute::String("quintic"));
  EXPECT_THAT(unknown.Infer().status().message(), HasSubstr("nearest, linear or cubic"));
  OneNode both("Resize", {In::Type(Static({2, 2})), std::nullopt, In::Const(scales), In::Const(I64({2}, {4, 4}))});
  EXPECT_THAT(both.Infer().status().message(), HasSubstr("both scales and sizes"));
  OneNode neither("Resize", {In::Type(Static({2, 2}))});
  EXPECT_EQ(neither.Infer().status().code(), absl::StatusCode::kInvalidArgument);
}

// ---- Kernels against hand computations ----

TEST(NnKernelTest, ConvSumsWindows) {
  // x = 1..9 in a 3x3 plane; a 2x2 kernel of ones with bias 10 sums each 2x2 window.
  absl::StatusOr<Tensor> y =
      RunOp("Conv", {F32({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), F32({1, 1, 2, 2}, {1, 1, 1, 1}), F32({1}, {10})});
  EXPECT_THAT(Values(y), ElementsAre(22, 26, 34, 38));
}

TEST(NnKernelTest, ConvAsymmetricPadsStrideAndDilation) {
  // 1-D: x = [1, 2, 3, 4, 5], kernel [1, -1] dilated by 2, pads (1, 0), stride 2:
  // padded [0, 1, 2, 3, 4, 5]; outputs at 0, 2: 0 - 2 = -2, 2 - 4 = -2 (position 4 would need index 6).
  absl::StatusOr<Tensor> y = RunOp(
      "Conv", {F32({1, 1, 5}, {1, 2, 3, 4, 5}), F32({1, 1, 2}, {1, -1})},
      {{"pads", Attribute::Ints({1, 0})}, {"strides", Attribute::Ints({2})}, {"dilations", Attribute::Ints({2})}});
  EXPECT_THAT(Values(y), ElementsAre(-2, -2));
}

TEST(NnKernelTest, ConvDepthwise) {
  // Two channels, group 2: channel 0 scaled by 2, channel 1 by -1.
  absl::StatusOr<Tensor> y =
      RunOp("Conv", {F32({1, 2, 1, 2}, {1, 2, 3, 4}), F32({2, 1, 1, 1}, {2, -1})}, {{"group", Attribute::Int(2)}});
  EXPECT_THAT(Values(y), ElementsAre(2, 4, -3, -4));
}

TEST(NnKernelTest, ConvRejectsNonF32) {
  Tensor x(DType::kF16, {1, 1, 2, 2});
  Tensor w(DType::kF16, {1, 1, 1, 1});
  absl::StatusOr<Tensor> y = RunOp("Conv", {x, w});
  EXPECT_EQ(y.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(y.status().message(), HasSubstr("supports f32 only"));
}

TEST(NnKernelTest, AveragePoolCountIncludePad) {
  // 2x2 input, 2x2 window, stride 1, pads 1 on every side -> 3x3 output. Corner windows hold one real
  // element: include_pad divides by 4, exclude_pad by 1.
  const Tensor x = F32({1, 1, 2, 2}, {4, 8, 12, 16});
  std::vector<std::pair<std::string, Attribute>> attrs = {{"kernel_shape", Attribute::Ints({2, 2})},
                                                          {"pads", Attribute::Ints({1, 1, 1, 1})}};
  EXPECT_THAT(Values(RunOp("AveragePool", {x}, attrs)), ElementsAre(4, 6, 8, 8, 10, 12, 12, 14, 16));
  attrs.push_back({"count_include_pad", Attribute::Int(1)});
  EXPECT_THAT(Values(RunOp("AveragePool", {x}, attrs)), ElementsAre(1, 3, 2, 4, 10, 6, 3, 7, 4));
}

TEST(NnKernelTest, MaxPoolSameLowerPadsAtTheBeginning) {
  // Extent 4, kernel 2, stride 1: one pad element, at the beginning for SAME_LOWER.
  const Tensor x = F32({1, 1, 4}, {3, -1, 5, 2});
  EXPECT_THAT(Values(RunOp("MaxPool", {x},
                           {{"kernel_shape", Attribute::Ints({2})}, {"auto_pad", Attribute::String("SAME_LOWER")}})),
              ElementsAre(3, 3, 5, 5));
  EXPECT_THAT(Values(RunOp("MaxPool", {x},
                           {{"kernel_shape", Attribute::Ints({2})}, {"auto_pad", Attribute::String("SAME_UPPER")}})),
              ElementsAre(3, 5, 5, 2));
}

TEST(NnKernelTest, MaxPoolOnEightBitIntegers) {
  // Opset 12's u8 / i8 MaxPool: exact maxima in the input's type, padding never wins.
  const std::vector<std::pair<std::string, Attribute>> attrs = {{"kernel_shape", Attribute::Ints({2, 2})},
                                                                {"pads", Attribute::Ints({0, 0, 1, 1})}};
  absl::StatusOr<Tensor> u = RunOp("MaxPool", {Tensor::FromVector<uint8_t>({1, 1, 2, 2}, {0, 255, 7, 3})}, attrs);
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ(u->dtype(), DType::kU8);
  EXPECT_THAT(u->ToInt64Vector(), ElementsAre(255, 255, 7, 3));
  absl::StatusOr<Tensor> i = RunOp("MaxPool", {Tensor::FromVector<int8_t>({1, 1, 2, 2}, {-128, -5, -7, -128})}, attrs);
  ASSERT_TRUE(i.ok()) << i.status();
  EXPECT_EQ(i->dtype(), DType::kI8);
  EXPECT_THAT(i->ToInt64Vector(), ElementsAre(-5, -5, -7, -128));
}

TEST(NnKernelTest, GlobalAveragePoolAndBatchNorm) {
  EXPECT_THAT(Values(RunOp("GlobalAveragePool", {F32({1, 2, 2}, {1, 3, 10, 20})})), ElementsAre(2, 15));
  // y = scale * (x - mean) / sqrt(var + eps) + bias with var + eps = 4.
  absl::StatusOr<Tensor> y = RunOp(
      "BatchNormalization", {F32({1, 1, 2}, {5, 9}), F32({1}, {2}), F32({1}, {1}), F32({1}, {1}), F32({1}, {4 - 0.5f})},
      {{"epsilon", Attribute::Float(0.5f)}});
  EXPECT_THAT(Values(y), Pointwise(FloatNear(1e-6), std::vector<float>{5, 9}));
}

TEST(NnKernelTest, MatMulShapes) {
  EXPECT_THAT(Values(RunOp("MatMul", {F32({3}, {1, 2, 3}), F32({3}, {4, 5, 6})})), ElementsAre(32));
  // [2,1,2] x [2,2]: each batch row times B.
  EXPECT_THAT(Values(RunOp("MatMul", {F32({2, 1, 2}, {1, 0, 0, 1}), F32({2, 2}, {1, 2, 3, 4})})),
              ElementsAre(1, 2, 3, 4));
  // B broadcast over A's batch, vector A: [2] x [2,2,1].
  EXPECT_THAT(Values(RunOp("MatMul", {F32({2}, {1, 1}), F32({2, 2, 1}, {1, 2, 3, 4})})), ElementsAre(3, 7));
}

TEST(NnKernelTest, GemmTransposesAndBroadcastsC) {
  // A^T = [[1, 2], [3, 4]] (A stored transposed), B^T = identity; y = 2 * A^T + 0.5 * C with C [2, 1].
  absl::StatusOr<Tensor> y =
      RunOp("Gemm", {F32({2, 2}, {1, 3, 2, 4}), F32({2, 2}, {1, 0, 0, 1}), F32({2, 1}, {10, 20})},
            {{"transA", Attribute::Int(1)},
             {"transB", Attribute::Int(1)},
             {"alpha", Attribute::Float(2)},
             {"beta", Attribute::Float(0.5f)}});
  EXPECT_THAT(Values(y), ElementsAre(7, 9, 16, 18));
}

TEST(NnKernelTest, SoftmaxAlongAxis) {
  // Along axis 0 of [[0, 0], [ln 3, 0]]: column 0 is [1/4, 3/4], column 1 [1/2, 1/2].
  absl::StatusOr<Tensor> y = RunOp("Softmax", {F32({2, 2}, {0, 0, std::log(3.0f), 0})}, {{"axis", Attribute::Int(0)}});
  EXPECT_THAT(Values(y), Pointwise(FloatNear(1e-6), std::vector<float>{0.25f, 0.5f, 0.75f, 0.5f}));
  // Large logits must not overflow.
  y = RunOp("Softmax", {F32({2}, {1000, 1000})});
  EXPECT_THAT(Values(y), Pointwise(FloatNear(1e-6), std::vector<float>{0.5f, 0.5f}));
}

TEST(NnKernelTest, LayerNormalization) {
  // Rows [1, 3] and [2, 6] normalize (eps 0) to [-1, 1]; then scale [2, 3] and bias [1, 1] give [-1, 4].
  absl::StatusOr<Tensor> y =
      RunOp("LayerNormalization", {F32({2, 2}, {1, 3, 2, 6}), F32({2}, {2, 3}), F32({2}, {1, 1})},
            {{"epsilon", Attribute::Float(0)}});
  EXPECT_THAT(Values(y), Pointwise(FloatNear(1e-6), std::vector<float>{-1, 4, -1, 4}));
}

TEST(NnKernelTest, InstanceNormalization) {
  // Planes [1, 3] and [0, 4] normalize (eps 0) to [-1, 1]; scale [1, 2] and bias [0, 1] give [-1, 1, -1, 3].
  absl::StatusOr<Tensor> y = RunOp("InstanceNormalization", {F32({1, 2, 2}, {1, 3, 0, 4}), F32({2}, {1, 2}),
                                                             F32({2}, {0, 1})},
                                   {{"epsilon", Attribute::Float(0)}});
  EXPECT_THAT(Values(y), Pointwise(FloatNear(1e-6), std::vector<float>{-1, 1, -1, 3}));
}

TEST(NnKernelTest, GroupNormalizationPerGroupAndPerChannel) {
  // Two groups of two channels: {1, 3, 1, 3} (mean 2, variance 1) and {0, 4, 4, 0} (mean 2, variance 4)
  // both normalize (eps 0) to +-1.
  const Tensor x = F32({1, 4, 2}, {1, 3, 1, 3, 0, 4, 4, 0});
  const std::vector<std::pair<std::string, Attribute>> attrs = {{"num_groups", Attribute::Int(2)},
                                                                {"epsilon", Attribute::Float(0)}};
  // Opset 18: scale [2, 3], bias [1, 0], one per group.
  absl::StatusOr<Tensor> y = RunOp("GroupNormalization", {x, F32({2}, {2, 3}), F32({2}, {1, 0})}, attrs);
  EXPECT_THAT(Values(y), Pointwise(FloatNear(1e-6), std::vector<float>{-1, 3, -1, 3, -3, 3, 3, -3}));
  // Opset 21: scale [1, 2, 3, 4], bias [0, 0, 0, 10], one per channel.
  y = RunOp("GroupNormalization", {x, F32({4}, {1, 2, 3, 4}), F32({4}, {0, 0, 0, 10})}, attrs);
  EXPECT_THAT(Values(y), Pointwise(FloatNear(1e-6), std::vector<float>{-1, 1, -2, 2, -3, 3, 14, 6}));
}

TEST(NnKernelTest, NormalizationErrorsNameTheNode) {
  const Tensor x = F32({1, 4, 2}, {1, 3, 1, 3, 0, 4, 4, 0});
  absl::StatusOr<Tensor> y = RunOp("GroupNormalization", {x, F32({3}, {1, 1, 1}), F32({3}, {0, 0, 0})},
                                   {{"num_groups", Attribute::Int(2)}});
  EXPECT_EQ(y.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(y.status().message(), HasSubstr("GroupNormalization 'n': input scale ('in1') has 3 elements; expected "
                                              "num_groups (2, opset 18) or the channel count (4, opset 21)"));
  y = RunOp("GroupNormalization", {x, F32({2}, {1, 1}), F32({2}, {0, 0})}, {{"num_groups", Attribute::Int(3)}});
  EXPECT_THAT(y.status().message(), HasSubstr("4 channels of X f32[1,4,2] do not split into num_groups 3"));
  y = RunOp("GroupNormalization", {x, F32({2}, {1, 1}), F32({2}, {0, 0})});
  EXPECT_THAT(y.status().message(), HasSubstr("needs a positive integer attribute 'num_groups'"));
  y = RunOp("InstanceNormalization", {x, F32({2}, {1, 1}), F32({4}, {0, 0, 0, 0})});
  EXPECT_THAT(y.status().message(),
              HasSubstr("InstanceNormalization 'n': input scale ('in1') has 2 elements, expected 4"));
  y = RunOp("InstanceNormalization", {x, F32({4}, {1, 1, 1, 1}), F32({4}, {0, 0, 0, 0})},
            {{"epsilon", Attribute::Float(-1)}});
  EXPECT_THAT(y.status().message(), HasSubstr("epsilon -1 must be non-negative"));
}

TEST(NnKernelTest, EinsumHandComputed) {
  // [[1, 2], [3, 4]] @ [5, 6] = [17, 39]; its trace is 5; "ij->ji" transposes; "i,j" is the outer product.
  const Tensor a = F32({2, 2}, {1, 2, 3, 4});
  EXPECT_THAT(Values(RunOp("Einsum", {a, F32({2}, {5, 6})}, {{"equation", Attribute::String("ij,j->i")}})),
              ElementsAre(17, 39));
  EXPECT_THAT(Values(RunOp("Einsum", {a}, {{"equation", Attribute::String("ii")}})), ElementsAre(5));
  EXPECT_THAT(Values(RunOp("Einsum", {a}, {{"equation", Attribute::String("ij->ji")}})), ElementsAre(1, 3, 2, 4));
  EXPECT_THAT(Values(RunOp("Einsum", {F32({2}, {1, 2}), F32({3}, {1, 10, 100})},
                           {{"equation", Attribute::String("i,j")}})),
              ElementsAre(1, 10, 100, 2, 20, 200));
}

TEST(NnInferTest, EinsumShapesAndErrorsNameTheEquation) {
  const Dim b = Dim::Symbol("B");
  OneNode bmm("Einsum", {In::Type(Sym({b, 3, 5})), In::Type(Sym({b, 5, 7}))});
  bmm.Attr("equation", Attribute::String("bij,bjk->bik"));
  absl::StatusOr<TensorType> t = bmm.Infer();
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(*t, Sym({b, 3, 7}));
  OneNode ell("Einsum", {In::Type(Static({2, 1, 3, 4})), In::Type(Static({5, 4, 6}))});
  ell.Attr("equation", Attribute::String("...ij,...jk"));
  t = ell.Infer();
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(*t, Static({2, 5, 3, 6}));
  struct Bad {
    std::vector<std::vector<int64_t>> shapes;
    const char* equation;
    const char* message;
  };
  const Bad bad[] = {
      {{{2, 3}}, "ij,jk->ik", "Einsum equation 'ij,jk->ik' has 2 input term(s) but the node has 1 input(s)"},
      {{{2, 3}}, "i-j->i", "input term 0 'i-j' has '-'; subscripts are letters a-z, A-Z and '...'"},
      {{{2, 3, 4}}, "ij->i", "input term 0 'ij' has 2 subscript(s) but input 0 has rank 3"},
      {{{2, 3}}, "ij->k", "output subscript 'k' is in no input term"},
      {{{2, 3}}, "ij->ii", "output subscript 'i' is repeated"},
      {{{2, 3}, {4, 5}}, "ij,jk->ik", "dimension 0 of input 1 f32[4,5] (a subscript shared with an earlier "
                                      "dimension): extents 3 and 4 do not broadcast"},
      {{{2, 3}}, "...j->j", "the inputs' '...' stands for 1 dimension(s) but the output has no '...'"},
      {{{2, 3}}, "i...j...->ij", "has more than one ellipsis"},
      {{{2, 3}}, "ij->i->j", "has more than one '->'"},
  };
  for (const Bad& c : bad) {
    std::vector<std::optional<In>> inputs;
    for (const auto& s : c.shapes) inputs.push_back(In::Type(Static(s)));
    OneNode n("Einsum", inputs);
    n.Attr("equation", Attribute::String(c.equation));
    absl::StatusOr<TensorType> r = n.Infer();
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << c.equation;
    EXPECT_THAT(r.status().message(), HasSubstr("Einsum 'n'")) << c.equation;
    EXPECT_THAT(r.status().message(), HasSubstr(c.message)) << c.equation;
  }
  OneNode none("Einsum", {In::Type(Static({2}))});
  EXPECT_THAT(none.Infer().status().message(), HasSubstr("needs a string attribute 'equation'"));
  OneNode f16("Einsum", {In::Type(TensorType::Static(DType::kF16, {2}))});
  f16.Attr("equation", Attribute::String("i->"));
  EXPECT_EQ(f16.Infer().status().code(), absl::StatusCode::kUnimplemented);
}

TEST(NnKernelTest, Reductions) {
  const Tensor x = F32({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_THAT(Values(RunOp("ReduceSum", {x, I64({1}, {0})})), ElementsAre(5, 7, 9));
  EXPECT_THAT(Values(RunOp("ReduceMean", {x, I64({1}, {-1})}, {{"keepdims", Attribute::Int(0)}})), ElementsAre(2, 5));
  EXPECT_THAT(Values(RunOp("ReduceMean", {x})), ElementsAre(3.5f));
  EXPECT_THAT(Values(RunOp("ReduceSum", {x}, {{"noop_with_empty_axes", Attribute::Int(1)}})),
              ElementsAre(1, 2, 3, 4, 5, 6));
}

TEST(NnKernelTest, PadModes) {
  const Tensor x = F32({3}, {1, 2, 3});
  const Tensor pads = I64({2}, {2, 2});
  EXPECT_THAT(Values(RunOp("Pad", {x, pads, F32({}, {9})})), ElementsAre(9, 9, 1, 2, 3, 9, 9));
  EXPECT_THAT(Values(RunOp("Pad", {x, pads}, {{"mode", Attribute::String("reflect")}})),
              ElementsAre(3, 2, 1, 2, 3, 2, 1));
  EXPECT_THAT(Values(RunOp("Pad", {x, pads}, {{"mode", Attribute::String("edge")}})), ElementsAre(1, 1, 1, 2, 3, 3, 3));
  EXPECT_THAT(Values(RunOp("Pad", {x, I64({2}, {-1, 1})})), ElementsAre(2, 3, 0));
  // Opset-18 axes input: pad only axis -1 of a [2, 1] tensor.
  EXPECT_THAT(Values(RunOp("Pad", {F32({2, 1}, {1, 2}), I64({2}, {1, 0}), std::nullopt, I64({1}, {-1})})),
              ElementsAre(0, 1, 0, 2));
}

TEST(NnKernelTest, ResizeModes) {
  const Tensor x = F32({2}, {1, 2});
  // Linear, align_corners, to 3: [1, 1.5, 2].
  EXPECT_THAT(Values(RunOp("Resize", {x, std::nullopt, std::nullopt, I64({1}, {3})},
                           {{"mode", Attribute::String("linear")},
                            {"coordinate_transformation_mode", Attribute::String("align_corners")}})),
              ElementsAre(1, 1.5f, 2));
  // Linear, half_pixel, x2: sources -0.25 (clamped), 0.25, 0.75, 1.25 (clamped).
  EXPECT_THAT(Values(RunOp("Resize", {x, std::nullopt, F32({1}, {2})}, {{"mode", Attribute::String("linear")}})),
              ElementsAre(1, 1.25f, 1.75f, 2));
  // Nearest, asymmetric, 3 elements x1.5 to 4: sources 0, 2/3, 4/3, 2 -> round_prefer_floor 0, 1, 1, 2;
  // floor 0, 0, 1, 2.
  const Tensor three = F32({3}, {10, 20, 30});
  std::vector<std::pair<std::string, Attribute>> attrs = {
      {"coordinate_transformation_mode", Attribute::String("asymmetric")}};
  EXPECT_THAT(Values(RunOp("Resize", {three, std::nullopt, F32({1}, {1.5f})}, attrs)), ElementsAre(10, 20, 20, 30));
  attrs.push_back({"nearest_mode", Attribute::String("floor")});
  EXPECT_THAT(Values(RunOp("Resize", {three, std::nullopt, F32({1}, {1.5f})}, attrs)), ElementsAre(10, 10, 20, 30));
}

TEST(NnKernelTest, GlobalMaxPool) {
  // Two planes of 2x2; a NaN in the second wins its maximum.
  const Tensor x = F32({1, 2, 2, 2}, {1, -5, 7, 3, -1, NAN, -2, 9});
  const std::vector<float> y = Values(RunOp("GlobalMaxPool", {x}));
  ASSERT_EQ(y.size(), 2u);
  EXPECT_EQ(y[0], 7);
  EXPECT_TRUE(std::isnan(y[1]));
  EXPECT_THAT(Values(RunOp("GlobalMaxPool", {F32({1, 3, 1}, {-4, 0, 2})})), ElementsAre(-4, 0, 2));
}

TEST(NnKernelTest, LrnAcrossChannels) {
  // x = [1, 2, 3] over channels, size 2 (window [c, c + 1]), alpha / size = 0.5, beta 1, bias 1:
  // 1 / (1 + 0.5 * 5), 2 / (1 + 0.5 * 13), 3 / (1 + 0.5 * 9).
  const std::vector<float> y =
      Values(RunOp("LRN", {F32({1, 3, 1, 1}, {1, 2, 3})}, {{"size", Attribute::Int(2)}, {"alpha", Attribute::Float(1)},
                                                          {"beta", Attribute::Float(1)}}));
  ASSERT_EQ(y.size(), 3u);
  EXPECT_NEAR(y[0], 1 / 3.5, 1e-6);
  EXPECT_NEAR(y[1], 2 / 7.5, 1e-6);
  EXPECT_NEAR(y[2], 3 / 5.5, 1e-6);
}

TEST(NnKernelTest, ResizeCubic) {
  // Keys' cubic convolution with a = -0.5 reproduces quadratics: x = i^2, asymmetric x2 (source o / 2),
  // so every output whose four taps lie inside the input is (o / 2)^2.
  const Tensor sq = F32({7}, {0, 1, 4, 9, 16, 25, 36});
  std::vector<std::pair<std::string, Attribute>> attrs = {
      {"mode", Attribute::String("cubic")},
      {"cubic_coeff_a", Attribute::Float(-0.5f)},
      {"coordinate_transformation_mode", Attribute::String("asymmetric")}};
  const std::vector<float> y = Values(RunOp("Resize", {sq, std::nullopt, F32({1}, {2})}, attrs));
  ASSERT_EQ(y.size(), 14u);
  for (int o = 2; o <= 8; ++o) EXPECT_NEAR(y[o], (o / 2.0) * (o / 2.0), 1e-5) << o;
  // At source 0.5 the taps are -1 (the edge value 0), 0, 1, 2 with weights W(1.5), W(0.5), W(0.5),
  // W(1.5) = -0.0625, 0.5625, 0.5625, -0.0625: 0.5625 - 0.25 = 0.3125. With exclude_outside tap -1 is
  // dropped and the rest divided by their sum 1.0625: 0.3125 / 1.0625.
  EXPECT_NEAR(y[1], 0.3125, 1e-6);
  attrs.push_back({"exclude_outside", Attribute::Int(1)});
  EXPECT_NEAR(Values(RunOp("Resize", {sq, std::nullopt, F32({1}, {2})}, attrs))[1], 0.3125 / 1.0625, 1e-6);
  // The default a = -0.75 interpolates: integer sources return the input (half_pixel, scale 1 on 2-D).
  const Tensor grid = F32({2, 3}, {1, -2, 5, 7, 0, 3});
  EXPECT_THAT(Values(RunOp("Resize", {grid, std::nullopt, F32({2}, {1, 1})}, {{"mode", Attribute::String("cubic")}})),
              ElementsAre(1, -2, 5, 7, 0, 3));
}

}  // namespace
}  // namespace tessel
