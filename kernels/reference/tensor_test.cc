// Tensor-manipulation reference kernels and their type inference, checked against hand-computed
// index arithmetic (all comparisons exact: these kernels only move elements).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "graph/graph.h"
#include "graph/op_registry.h"
#include "kernels/reference/reference.h"

namespace tessel {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

// One node fed by graph inputs; std::nullopt leaves an optional input out.
class OneNode {
 public:
  OneNode(const std::string& op, std::vector<std::optional<Tensor>> inputs, int num_outputs = 1)
      : inputs_(std::move(inputs)) {
    std::vector<Value*> values;
    for (size_t i = 0; i < inputs_.size(); ++i) {
      values.push_back(inputs_[i] ? graph_.AddInput("in" + std::to_string(i), inputs_[i]->type()) : nullptr);
    }
    node_ = graph_.AddNode(op, values, num_outputs, "n");
  }
  Node& node() { return *node_; }
  absl::StatusOr<std::vector<Tensor>> Run() {
    std::vector<const Tensor*> ptrs;
    for (const auto& t : inputs_) ptrs.push_back(t ? &*t : nullptr);
    std::vector<Tensor> outs;
    absl::Status s = RunReferenceNode(*node_, ptrs, &outs);
    if (!s.ok()) return s;
    return outs;
  }

 private:
  Graph graph_;
  Node* node_;
  std::vector<std::optional<Tensor>> inputs_;
};

Tensor I64(std::vector<int64_t> shape, std::vector<int64_t> v) { return Tensor::FromVector<int64_t>(shape, v); }
Tensor I64s(std::vector<int64_t> v) { return I64({static_cast<int64_t>(v.size())}, v); }

// 0, 1, 2, ... as f32 in the given shape.
Tensor Iota(std::vector<int64_t> shape) {
  Tensor t(DType::kF32, shape);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = static_cast<float>(i);
  return t;
}

// Runs a one-output node and returns its values as floats (with the shape checked).
std::vector<float> RunTo(OneNode& n, const std::vector<int64_t>& want_shape) {
  absl::StatusOr<std::vector<Tensor>> out = n.Run();
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  EXPECT_EQ((*out)[0].shape(), want_shape);
  return (*out)[0].ToFloatVector();
}

TEST(TensorTest, FlattenAxes) {
  OneNode a("Flatten", {Iota({2, 3, 4})});
  EXPECT_EQ(RunTo(a, {2, 12}).size(), 24u);
  OneNode b("Flatten", {Iota({2, 3, 4})});
  b.node().SetAttr("axis", Attribute::Int(0));
  RunTo(b, {1, 24});
  OneNode c("Flatten", {Iota({2, 3, 4})});
  c.node().SetAttr("axis", Attribute::Int(-1));
  EXPECT_THAT(RunTo(c, {6, 4}), ElementsAreArray(Iota({24}).ToFloatVector()));
}

TEST(TensorTest, ReshapeZeroAndMinusOne) {
  OneNode a("Reshape", {Iota({2, 3, 4}), I64s({0, -1})});
  EXPECT_THAT(RunTo(a, {2, 12}), ElementsAreArray(Iota({24}).ToFloatVector()));
  OneNode b("Reshape", {Iota({2, 3, 4}), I64s({-1, 0, 2})});
  RunTo(b, {4, 3, 2});
  OneNode c("Reshape", {Iota({0, 3}), I64s({0, 3})});
  c.node().SetAttr("allowzero", Attribute::Int(1));
  RunTo(c, {0, 3});
}

TEST(TensorTest, ReshapeMismatchNamesBothShapes) {
  OneNode n("Reshape", {Iota({1, 3, 4}), I64s({5, -1})});
  absl::StatusOr<std::vector<Tensor>> out = n.Run();
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("cannot reshape [1,3,4] (12 elements) to [5,-1]"));
  OneNode two("Reshape", {Iota({4}), I64s({-1, -1})});
  EXPECT_THAT(two.Run().status().message(), HasSubstr("more than one -1"));
}

TEST(TensorTest, OneHot) {
  // indices {1, -1, 3} with depth 3: -1 is 2, 3 is out of range (a row of off); values {off 0, on 5}.
  const Tensor idx = I64({3}, {1, -1, 3});
  const Tensor depth = I64({}, {3});
  const Tensor values = Tensor::FromVector<float>({2}, {0, 5});
  OneNode last("OneHot", {idx, depth, values});
  EXPECT_THAT(RunTo(last, {3, 3}), ElementsAre(0, 5, 0, 0, 0, 5, 0, 0, 0));
  OneNode first("OneHot", {idx, depth, values});
  first.node().SetAttr("axis", Attribute::Int(0));
  EXPECT_THAT(RunTo(first, {3, 3}), ElementsAre(0, 0, 0, 5, 0, 0, 0, 5, 0));
}

TEST(TensorTest, DepthToSpaceAndBack) {
  // x = 0..7 as [1, 8, 1, 1], blocksize 2, two output channels. DCR: y[c][i][j] = x[(2i + j) * 2 + c];
  // CRD (PyTorch's PixelShuffle): y[c][i][j] = x[4c + 2i + j].
  OneNode dcr("DepthToSpace", {Iota({1, 8, 1, 1})});
  dcr.node().SetAttr("blocksize", Attribute::Int(2));
  EXPECT_THAT(RunTo(dcr, {1, 2, 2, 2}), ElementsAre(0, 2, 4, 6, 1, 3, 5, 7));
  OneNode crd("DepthToSpace", {Iota({1, 8, 1, 1})});
  crd.node().SetAttr("blocksize", Attribute::Int(2));
  crd.node().SetAttr("mode", Attribute::String("CRD"));
  EXPECT_THAT(RunTo(crd, {1, 2, 2, 2}), ElementsAre(0, 1, 2, 3, 4, 5, 6, 7));
  // SpaceToDepth undoes DCR: from [1, 2, 2, 2] = 0..7, channel (2i + j) * 2 + c takes (c, i, j).
  OneNode s2d("SpaceToDepth", {Iota({1, 2, 2, 2})});
  s2d.node().SetAttr("blocksize", Attribute::Int(2));
  EXPECT_THAT(RunTo(s2d, {1, 8, 1, 1}), ElementsAre(0, 4, 1, 5, 2, 6, 3, 7));
  // A spatial extent that blocksize does not divide is refused by inference, naming it.
  OneNode bad("SpaceToDepth", {Iota({1, 1, 3, 2})});
  bad.node().SetAttr("blocksize", Attribute::Int(2));
  std::vector<const TensorType*> types = {&bad.node().input(0)->type()};
  EXPECT_THAT(InferOutputTypes(bad.node(), types, {}).status().message(), HasSubstr("not a multiple of 2"));
}

TEST(TensorTest, TransposeDefaultAndExplicitPerm) {
  // Default perm reverses: out[k][j][i] = in[i][j][k], in = iota([2,3,4]).
  OneNode a("Transpose", {Iota({2, 3, 4})});
  std::vector<float> got = RunTo(a, {4, 3, 2});
  std::vector<float> want;
  for (int k = 0; k < 4; ++k)
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 2; ++i) want.push_back(i * 12 + j * 4 + k);
  EXPECT_THAT(got, ElementsAreArray(want));
  OneNode b("Transpose", {Iota({2, 3})});
  b.node().SetAttr("perm", Attribute::Ints({1, 0}));
  EXPECT_THAT(RunTo(b, {3, 2}), ElementsAre(0, 3, 1, 4, 2, 5));
  OneNode bad("Transpose", {Iota({2, 3})});
  bad.node().SetAttr("perm", Attribute::Ints({0, 0}));
  EXPECT_THAT(bad.Run().status().message(), HasSubstr("not a permutation"));
}

TEST(TensorTest, ConcatNegativeAxis) {
  OneNode n("Concat", {Iota({2, 1}), Iota({2, 2})});
  n.node().SetAttr("axis", Attribute::Int(-1));
  EXPECT_THAT(RunTo(n, {2, 3}), ElementsAre(0, 0, 1, 1, 2, 3));
}

TEST(TensorTest, SplitBySizesEquallyAndByNumOutputs) {
  OneNode a("Split", {Iota({2, 5}), I64s({1, 4})}, 2);
  a.node().SetAttr("axis", Attribute::Int(1));
  absl::StatusOr<std::vector<Tensor>> out = a.Run();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].ToFloatVector(), ElementsAre(0, 5));
  EXPECT_THAT((*out)[1].ToFloatVector(), ElementsAre(1, 2, 3, 4, 6, 7, 8, 9));
  OneNode b("Split", {Iota({6})}, 3);
  out = b.Run();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[2].ToFloatVector(), ElementsAre(4, 5));
  // Opset 18: 7 into 3 gives chunks of ceil(7/3) = 3: [3, 3, 1].
  OneNode c("Split", {Iota({7})}, 3);
  c.node().SetAttr("num_outputs", Attribute::Int(3));
  out = c.Run();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[1].ToFloatVector(), ElementsAre(3, 4, 5));
  EXPECT_THAT((*out)[2].ToFloatVector(), ElementsAre(6));
  OneNode d("Split", {Iota({7})}, 3);
  EXPECT_THAT(d.Run().status().message(), HasSubstr("not divisible"));
  OneNode e("Split", {Iota({7}), I64s({3, 3})}, 2);
  EXPECT_THAT(e.Run().status().message(), HasSubstr("sums to 6"));
}

TEST(TensorTest, SliceNegativeStartsStepsAndClamping) {
  // in = iota([3,4]); rows 1.., columns reversed from the end with step -2: columns 3, 1.
  OneNode a("Slice", {Iota({3, 4}), I64s({1, -1}), I64s({100, -100}), I64s({0, 1}), I64s({1, -2})});
  EXPECT_THAT(RunTo(a, {2, 2}), ElementsAre(7, 5, 11, 9));
  // Axes subset (only axis 1, given as -1), default steps, end clamped.
  OneNode b("Slice", {Iota({2, 5}), I64s({-3}), I64s({INT64_MAX}), I64s({-1})});
  EXPECT_THAT(RunTo(b, {2, 3}), ElementsAre(2, 3, 4, 7, 8, 9));
  // Start past the end gives an empty slice.
  OneNode c("Slice", {Iota({4}), I64s({10}), I64s({20})});
  RunTo(c, {0});
  // Full reverse with INT64_MIN as end.
  OneNode d("Slice", {Iota({4}), I64s({-1}), I64s({INT64_MIN}), I64s({0}), I64s({-1})});
  EXPECT_THAT(RunTo(d, {4}), ElementsAre(3, 2, 1, 0));
  OneNode zero("Slice", {Iota({4}), I64s({0}), I64s({2}), I64s({0}), I64s({0})});
  EXPECT_THAT(zero.Run().status().message(), HasSubstr("step for axis 0 is 0"));
}

TEST(TensorTest, GatherAxesAndIndexShapes) {
  // data iota([3,2]); axis 0, indices [[2,-3],[1,1]] -> [2,2,2].
  OneNode a("Gather", {Iota({3, 2}), I64({2, 2}, {2, -3, 1, 1})});
  EXPECT_THAT(RunTo(a, {2, 2, 2}), ElementsAre(4, 5, 0, 1, 2, 3, 2, 3));
  // axis 1, indices [-1, 0] on iota([2,3]) -> [[2,0],[5,3]].
  OneNode b("Gather", {Iota({2, 3}), I64s({-1, 0})});
  b.node().SetAttr("axis", Attribute::Int(1));
  EXPECT_THAT(RunTo(b, {2, 2}), ElementsAre(2, 0, 5, 3));
  // Scalar index removes the axis.
  OneNode c("Gather", {Iota({3, 2}), I64({}, {1})});
  EXPECT_THAT(RunTo(c, {2}), ElementsAre(2, 3));
}

TEST(TensorTest, GatherOutOfRangeNamesTheIndex) {
  OneNode n("Gather", {Iota({3, 2}), I64s({0, 3})});
  absl::StatusOr<std::vector<Tensor>> out = n.Run();
  EXPECT_EQ(out.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(out.status().message(), HasSubstr("index 3"));
  EXPECT_THAT(out.status().message(), HasSubstr("size 3"));
}

TEST(TensorTest, SqueezeAndUnsqueeze) {
  OneNode a("Squeeze", {Iota({1, 3, 1, 2})});
  RunTo(a, {3, 2});
  OneNode b("Squeeze", {Iota({1, 3, 1, 2}), I64s({-2})});
  RunTo(b, {1, 3, 2});
  OneNode bad("Squeeze", {Iota({1, 3}), I64s({1})});
  EXPECT_THAT(bad.Run().status().message(), HasSubstr("cannot squeeze axis 1"));
  OneNode c("Unsqueeze", {Iota({3, 2}), I64s({0, -1})});
  EXPECT_THAT(RunTo(c, {1, 3, 2, 1}), ElementsAre(0, 1, 2, 3, 4, 5));
}

TEST(TensorTest, ExpandIsBidirectional) {
  // [3,1] expanded with [2,1,4] -> [2,3,4] (the 1 in the shape keeps the input's 3).
  OneNode n("Expand", {Iota({3, 1}), I64s({2, 1, 4})});
  std::vector<float> got = RunTo(n, {2, 3, 4});
  std::vector<float> want;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) want.push_back(j);
  EXPECT_THAT(got, ElementsAreArray(want));
}

TEST(TensorTest, ShapeStartEnd) {
  OneNode a("Shape", {Iota({2, 3, 4, 5})});
  absl::StatusOr<std::vector<Tensor>> out = a.Run();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), DType::kI64);
  EXPECT_THAT((*out)[0].ToInt64Vector(), ElementsAre(2, 3, 4, 5));
  OneNode b("Shape", {Iota({2, 3, 4, 5})});
  b.node().SetAttr("start", Attribute::Int(1));
  b.node().SetAttr("end", Attribute::Int(-1));
  out = b.Run();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].ToInt64Vector(), ElementsAre(3, 4));
  OneNode c("Shape", {Iota({2, 3})});
  c.node().SetAttr("start", Attribute::Int(-10));
  c.node().SetAttr("end", Attribute::Int(10));
  out = c.Run();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].ToInt64Vector(), ElementsAre(2, 3));
}

TEST(TensorTest, ConstantOfShape) {
  OneNode a("ConstantOfShape", {I64s({2, 3})});
  absl::StatusOr<std::vector<Tensor>> out = a.Run();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), DType::kF32);
  EXPECT_THAT((*out)[0].ToFloatVector(), ElementsAre(0, 0, 0, 0, 0, 0));
  OneNode b("ConstantOfShape", {I64s({2})});
  b.node().SetAttr("value", Attribute::TensorValue(I64({1}, {7})));
  out = b.Run();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), DType::kI64);
  EXPECT_THAT((*out)[0].ToInt64Vector(), ElementsAre(7, 7));
}

TEST(TensorTest, RangeFloatAndInt) {
  OneNode a("Range", {Tensor::Scalar(1), Tensor::Scalar(2.2f), Tensor::Scalar(0.5f)});
  EXPECT_THAT(RunTo(a, {3}), ElementsAre(1, 1.5f, 2));  // ceil(1.2 / 0.5) = 3
  OneNode b("Range", {I64({}, {10}), I64({}, {1}), I64({}, {-3})});
  absl::StatusOr<std::vector<Tensor>> out = b.Run();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].ToInt64Vector(), ElementsAre(10, 7, 4));  // ceil(-9 / -3) = 3
  OneNode c("Range", {I64({}, {0}), I64({}, {5}), I64({}, {-1})});
  out = c.Run();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].num_elements(), 0);
  OneNode d("Range", {I64({}, {0}), I64({}, {5}), I64({}, {0})});
  EXPECT_THAT(d.Run().status().message(), HasSubstr("delta is 0"));
}

TEST(TensorTest, HugeShapesAreRejectedBeforeAllocation) {
  OneNode a("Expand", {Iota({1}), I64s({1LL << 40, 1LL << 40})});
  EXPECT_EQ(a.Run().status().code(), absl::StatusCode::kResourceExhausted);
  OneNode b("ConstantOfShape", {I64s({INT64_MAX, INT64_MAX})});
  EXPECT_EQ(b.Run().status().code(), absl::StatusCode::kResourceExhausted);
  OneNode c("Reshape", {Iota({4}), I64s({1LL << 62, 1LL << 62, -1})});
  EXPECT_THAT(c.Run().status().message(), HasSubstr("overflows"));
}

// ---- Inference with values unknown at compile time -------------------------------------------

struct InferInput {
  TensorType type;
  std::optional<Tensor> value;
};

absl::StatusOr<std::vector<TensorType>> Infer(const std::string& op, const std::vector<InferInput>& inputs,
                                              std::vector<std::pair<std::string, Attribute>> attrs = {},
                                              int num_outputs = 1) {
  Graph g;
  std::vector<Value*> ins;
  std::vector<const TensorType*> types;
  std::vector<const Tensor*> values;
  for (size_t i = 0; i < inputs.size(); ++i) {
    ins.push_back(g.AddInput("in" + std::to_string(i), inputs[i].type));
    types.push_back(&inputs[i].type);
    values.push_back(inputs[i].value ? &*inputs[i].value : nullptr);
  }
  Node* n = g.AddNode(op, ins, num_outputs, "n");
  for (auto& [k, a] : attrs) n->SetAttr(k, a);
  return InferOutputTypes(*n, types, values);
}

InferInput Known(Tensor t) { return {t.type(), t}; }
InferInput Unknown(TensorType t) { return {std::move(t), std::nullopt}; }

bool IsUnknown(const Dim& d) { return !d.is_static() && d.symbol()[0] == '?'; }

const Dim kN = Dim::Symbol("N");

TEST(TensorInferenceTest, ReshapeWithSymbols) {
  // [N,3,4] -> [0,-1] gives [N,12]; [N,12] -> [-1,3,4] gives [N,3,4].
  absl::StatusOr<std::vector<TensorType>> t =
      Infer("Reshape", {Unknown(TensorType(DType::kF32, {kN, 3, 4})), Known(I64s({0, -1}))});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)[0], TensorType(DType::kF32, {kN, 12}));
  t = Infer("Reshape", {Unknown(TensorType(DType::kF32, {kN, 12})), Known(I64s({-1, 3, 4}))});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)[0], TensorType(DType::kF32, {kN, 3, 4}));
  // Unknown shape value with a static length: rank 3, unknown extents.
  t = Infer("Reshape", {Unknown(TensorType(DType::kF32, {kN, 12})), Unknown(TensorType(DType::kI64, {3}))});
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ((*t)[0].rank(), 3);
  for (const Dim& d : (*t)[0].dims) EXPECT_TRUE(IsUnknown(d));
  // Unknown length: the rank is unknowable.
  t = Infer("Reshape", {Unknown(TensorType(DType::kF32, {kN})), Unknown(TensorType(DType::kI64, {kN}))});
  EXPECT_EQ(t.status().code(), absl::StatusCode::kUnimplemented);
}

TEST(TensorInferenceTest, SliceKeepsUntouchedAndFullRangeSymbols) {
  absl::StatusOr<std::vector<TensorType>> t =
      Infer("Slice", {Unknown(TensorType(DType::kF32, {kN, 8})), Known(I64s({0, 2})), Known(I64s({INT64_MAX, 6}))});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)[0], TensorType(DType::kF32, {kN, 4}));
  // Unknown starts with known axes: only axis 1 becomes unknown.
  t = Infer("Slice", {Unknown(TensorType(DType::kF32, {kN, 8})), Unknown(TensorType(DType::kI64, {1})),
                      Known(I64s({6})), Known(I64s({1}))});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)[0].dims[0], kN);
  EXPECT_TRUE(IsUnknown((*t)[0].dims[1]));
}

TEST(TensorInferenceTest, UnknownShapeInputsGiveUnknownExtents) {
  const TensorType len2(DType::kI64, {2});
  absl::StatusOr<std::vector<TensorType>> t = Infer("ConstantOfShape", {Unknown(len2)});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)[0].rank(), 2);
  t = Infer("Unsqueeze", {Unknown(TensorType(DType::kF32, {kN})), Unknown(len2)});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)[0].rank(), 3);
  t = Infer("Squeeze", {Unknown(TensorType(DType::kF32, {1, kN, 1})), Unknown(len2)});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)[0].rank(), 1);
  // Expand to an unknown [?, ?, ?]: the static 4 survives broadcasting.
  t = Infer("Expand", {Unknown(TensorType(DType::kF32, {1, 4})), Unknown(TensorType(DType::kI64, {3}))});
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ((*t)[0].rank(), 3);
  EXPECT_EQ((*t)[0].dims[2], Dim(4));
  EXPECT_TRUE(IsUnknown((*t)[0].dims[1]));
  t = Infer("Range", {Unknown(TensorType(DType::kI64, {})), Known(I64({}, {5})), Known(I64({}, {1}))});
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ((*t)[0].rank(), 1);
  EXPECT_TRUE(IsUnknown((*t)[0].dims[0]));
  t = Infer("Split", {Unknown(TensorType(DType::kF32, {kN, 6})), Unknown(len2)}, {{"axis", Attribute::Int(1)}}, 2);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)[1].dims[0], kN);
  EXPECT_TRUE(IsUnknown((*t)[1].dims[1]));
}

TEST(TensorInferenceTest, SymbolicFlattenGatherConcat) {
  absl::StatusOr<std::vector<TensorType>> t = Infer("Flatten", {Unknown(TensorType(DType::kF32, {kN, 1, 3, 4}))});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)[0], TensorType(DType::kF32, {kN, 12}));
  t = Infer("Gather", {Unknown(TensorType(DType::kF32, {100, 64})), Unknown(TensorType(DType::kI64, {kN, 7}))});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)[0], TensorType(DType::kF32, {kN, 7, 64}));
  t = Infer("Concat",
            {Unknown(TensorType(DType::kF32, {kN, 2})), Unknown(TensorType(DType::kF32, {kN, 3}))},
            {{"axis", Attribute::Int(1)}});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)[0], TensorType(DType::kF32, {kN, 5}));
  t = Infer("Concat", {Unknown(TensorType(DType::kF32, {2, 2})), Unknown(TensorType(DType::kF32, {3, 3}))},
            {{"axis", Attribute::Int(0)}});
  EXPECT_THAT(t.status().message(), HasSubstr("dimension 1"));
}

TEST(TensorTest, TileRejectsBadRepeatsNamingTheNode) {
  OneNode short_repeats("Tile", {Iota({2, 3}), I64s({2})});
  absl::StatusOr<std::vector<Tensor>> out = short_repeats.Run();
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("Tile 'n': Tile: repeats [2] has 1 entries but the input f32[2,3]"));
  OneNode negative("Tile", {Iota({2, 3}), I64s({1, -2})});
  EXPECT_THAT(negative.Run().status().message(), HasSubstr("negative entry -2 for dimension 1"));
  OneNode matrix("Tile", {Iota({2, 3}), I64({1, 2}, {1, 2})});
  EXPECT_THAT(matrix.Run().status().message(), HasSubstr("input 'repeats' must be 1-D"));
}

TEST(TensorTest, TileHandComputed) {
  // [[0,1],[2,3]] tiled [2,3]: rows repeat 3 times across, the block twice down.
  OneNode n("Tile", {Iota({2, 2}), I64s({2, 3})});
  EXPECT_THAT(RunTo(n, {4, 6}), ElementsAre(0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3, 0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3));
  OneNode scalar("Tile", {Iota({}), Tensor(DType::kI64, {0})});
  EXPECT_THAT(RunTo(scalar, {}), ElementsAre(0));
}

TEST(TensorTest, GatherNDRejectsBadIndicesNamingTheNode) {
  OneNode too_long("GatherND", {Iota({2, 3}), I64({1, 3}, {0, 0, 0})});
  absl::StatusOr<std::vector<Tensor>> out = too_long.Run();
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("GatherND 'n': GatherND: indices i64[1,3] address 3 axes"));
  OneNode out_of_range("GatherND", {Iota({2, 3}), I64({2, 2}, {0, 1, 1, 3})});
  out = out_of_range.Run();
  EXPECT_EQ(out.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(out.status().message(), HasSubstr("index 3 (tuple 1 of indices [2,2]) is out of range for axis 1"));
  OneNode batch("GatherND", {Iota({2, 3}), I64({2, 1}, {0, 1})});
  batch.node().SetAttr("batch_dims", Attribute::Int(2));
  EXPECT_THAT(batch.Run().status().message(), HasSubstr("batch_dims 2 must be at least 0 and below the ranks"));
  OneNode mismatch("GatherND", {Iota({2, 3}), I64({3, 1}, {0, 1, 2})});
  mismatch.node().SetAttr("batch_dims", Attribute::Int(1));
  EXPECT_THAT(mismatch.Run().status().message(), HasSubstr("batch dimension 0 of data"));
}

TEST(TensorInferenceTest, TileAndGatherNDShapes) {
  absl::StatusOr<std::vector<TensorType>> t =
      Infer("Tile", {Unknown(TensorType(DType::kF32, {kN, 3})), Known(I64s({1, 4}))});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)[0], TensorType(DType::kF32, {kN, 12}));
  t = Infer("Tile", {Unknown(TensorType(DType::kF32, {kN, 3})), Unknown(TensorType(DType::kI64, {2}))});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(IsUnknown((*t)[0].dims[0]) && IsUnknown((*t)[0].dims[1]));
  t = Infer("Tile", {Unknown(TensorType(DType::kF32, {kN, 3})), Unknown(TensorType(DType::kI64, {3}))});
  EXPECT_THAT(t.status().message(), HasSubstr("has 3 entries but the input"));
  t = Infer("GatherND", {Unknown(TensorType(DType::kF32, {kN, 5, 6, 7})), Unknown(TensorType(DType::kI64, {kN, 9, 2}))},
            {{"batch_dims", Attribute::Int(1)}});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)[0], TensorType(DType::kF32, {kN, 9, 7}));
  t = Infer("GatherND", {Unknown(TensorType(DType::kF32, {4, 5})), Unknown(TensorType(DType::kI64, {3, kN}))});
  EXPECT_EQ(t.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(t.status().message(), HasSubstr("static last dimension"));
}

TEST(TensorInferenceTest, NonZeroShapeIsKnownOnlyFromValues) {
  absl::StatusOr<std::vector<TensorType>> t = Infer("NonZero", {Unknown(TensorType(DType::kF32, {kN, 3}))});
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ((*t)[0].rank(), 2);
  EXPECT_EQ((*t)[0].dtype, DType::kI64);
  EXPECT_EQ((*t)[0].dims[0], Dim(2));
  EXPECT_TRUE(IsUnknown((*t)[0].dims[1]));
  t = Infer("NonZero", {Known(I64({2, 2}, {0, 5, -1, 0}))});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)[0], TensorType(DType::kI64, {2, 2}));
  // A scalar counts as rank 1, as numpy's nonzero treats it: 7 -> [[0]].
  OneNode scalar("NonZero", {I64({}, {7})});
  absl::StatusOr<std::vector<Tensor>> out = scalar.Run();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), std::vector<int64_t>({1, 1}));
  EXPECT_EQ((*out)[0].data<int64_t>()[0], 0);
}

}  // namespace
}  // namespace tessel
