// GridSample, RoiAlign and NonMaxSuppression: type inference (NonMaxSuppression's count known only from
// values), attribute errors that name the attribute, and the reference kernels on inputs small enough
// to compute by hand (exact, or 1e-6). Random-input coverage against PyTorch and torchvision is in
// op_test (testdata/gen_detection_cases.py).
#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <random>
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
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;

Tensor F32(std::vector<int64_t> shape, std::vector<float> v) { return Tensor::FromVector<float>(shape, v); }
Tensor I64(std::vector<int64_t> shape, std::vector<int64_t> v) { return Tensor::FromVector<int64_t>(shape, v); }

using Attrs = std::vector<std::pair<std::string, Attribute>>;

// One node over graph inputs (or constants, with `constant`), inferred and run on the reference kernels.
class OneNode {
 public:
  OneNode(const std::string& op, const std::vector<Tensor>& values, const Attrs& attrs, bool constant = false)
      : values_(values) {
    std::vector<Value*> ins;
    for (size_t i = 0; i < values.size(); ++i) {
      const std::string name = "in" + std::to_string(i);
      ins.push_back(constant ? graph_.AddConstant(name, values[i]) : graph_.AddInput(name, values[i].type()));
    }
    node_ = graph_.AddNode(op, ins, 1, "n");
    for (const auto& [k, a] : attrs) node_->SetAttr(k, a);
  }
  absl::StatusOr<TensorType> Infer() {
    absl::Status s = InferShapes(graph_);
    if (!s.ok()) return s;
    return node_->output(0)->type();
  }
  absl::StatusOr<Tensor> Run() {
    std::vector<const Tensor*> ptrs;
    for (const Tensor& t : values_) ptrs.push_back(&t);
    std::vector<Tensor> outs;
    absl::Status s = RunReferenceNode(*node_, ptrs, &outs);
    if (!s.ok()) return s;
    return outs[0];
  }

 private:
  std::vector<Tensor> values_;
  Graph graph_;
  Node* node_;
};

auto Near(std::vector<float> want) { return Pointwise(FloatNear(1e-6), want); }

std::vector<float> Values(const absl::StatusOr<Tensor>& t) {
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? t->ToFloatVector() : std::vector<float>();
}

// X = [[1, 2], [3, 4]] sampled at `points` ((x, y) pairs in [-1, 1] and beyond).
absl::StatusOr<Tensor> Sample(std::vector<float> points, const std::string& mode, const std::string& padding,
                              int align) {
  const int64_t n = static_cast<int64_t>(points.size() / 2);
  return OneNode("GridSample", {F32({1, 1, 2, 2}, {1, 2, 3, 4}), F32({1, 1, n, 2}, points)},
                 {{"mode", Attribute::String(mode)},
                  {"padding_mode", Attribute::String(padding)},
                  {"align_corners", Attribute::Int(align)}})
      .Run();
}

TEST(GridSampleTest, HandComputedPoints) {
  // align_corners: -1 and 1 are the corner pixels' centres. The centre averages all four; (1, -1) is X[0][1].
  EXPECT_THAT(Values(Sample({0, 0, 1, -1}, "bilinear", "zeros", 1)), Near({2.5f, 2.0f}));
  // Without align_corners -1 and 1 are the outer edges: (-0.5, -0.5) is X[0][0]'s centre; (-1, -1) is a
  // quarter inside it, the rest zeros (0.25) or, with border padding, the edge value.
  EXPECT_THAT(Values(Sample({-0.5, -0.5, -1, -1}, "bilinear", "zeros", 0)), Near({1, 0.25f}));
  EXPECT_THAT(Values(Sample({-1, -1, -3, -3}, "bilinear", "border", 0)), Near({1, 1}));
  // Reflection (align_corners) folds x = 1.5 back to 0.5: (2, -1) is halfway between 1 and 2.
  EXPECT_THAT(Values(Sample({2, -1}, "bilinear", "reflection", 1)), Near({1.5f}));
  // Nearest: (-0.6, 0.6) with align_corners is pixel (0.2, 0.8), which rounds to X[1][0]; far outside is 0.
  EXPECT_THAT(Values(Sample({-0.6f, 0.6f, -3, -3}, "nearest", "zeros", 1)), ElementsAre(3, 0));
  // Bicubic on a pixel centre is that pixel.
  EXPECT_THAT(Values(Sample({1, 1, -1, 1}, "bicubic", "border", 1)), Near({4, 3}));
}

TEST(GridSampleTest, Opset20ModeNamesMatchOpset16s) {
  const std::vector<float> points = {0.3f, -0.7f, 1.2f, 0.1f, -0.9f, -1.4f};
  for (const auto& [new_name, old_name] : {std::pair<std::string, std::string>{"linear", "bilinear"},
                                           {"cubic", "bicubic"}}) {
    const std::vector<float> want = Values(Sample(points, old_name, "reflection", 0));
    EXPECT_EQ(Values(Sample(points, new_name, "reflection", 0)), want) << new_name;
  }
}

TEST(GridSampleTest, ShapesAndErrors) {
  absl::StatusOr<TensorType> t =
      OneNode("GridSample", {F32({2, 3, 5, 7}, std::vector<float>(210)), F32({2, 4, 6, 2}, std::vector<float>(96))},
              {})
          .Infer();
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(*t, TensorType::Static(DType::kF32, {2, 3, 4, 6}));
  const Tensor x = F32({1, 1, 2, 2}, {1, 2, 3, 4});
  const Tensor g = F32({1, 1, 1, 2}, {0, 0});
  absl::StatusOr<Tensor> y = OneNode("GridSample", {x, g}, {{"mode", Attribute::String("area")}}).Run();
  EXPECT_EQ(y.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(y.status().message(), HasSubstr("node GridSample 'n': attribute mode 'area' is not supported"));
  y = OneNode("GridSample", {x, g}, {{"padding_mode", Attribute::String("wrap")}}).Run();
  EXPECT_THAT(y.status().message(), HasSubstr("attribute padding_mode 'wrap' is not supported"));
  y = OneNode("GridSample", {x, g}, {{"align_corners", Attribute::Int(2)}}).Run();
  EXPECT_THAT(y.status().message(), HasSubstr("attribute align_corners is 2; expected 0 or 1"));
  y = OneNode("GridSample", {F32({1, 1, 1, 2, 2}, {1, 2, 3, 4}), F32({1, 1, 1, 1, 3}, {0, 0, 0})}, {}).Run();
  EXPECT_EQ(y.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(y.status().message(), HasSubstr("only 4-D input [N, C, H, W] (two spatial dimensions)"));
  y = OneNode("GridSample", {x, F32({1, 1, 1, 3}, {0, 0, 0})}, {}).Run();
  EXPECT_THAT(y.status().message(), HasSubstr("expected [N, H_out, W_out, 2]"));
}

// X [1, 1, 4, 4] holds f(x, y) = x + 4y, which bilinear sampling reproduces exactly.
Tensor Ramp() {
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i) v[i] = static_cast<float>(i);
  return F32({1, 1, 4, 4}, v);
}

absl::StatusOr<Tensor> Roi(const std::string& coords, const std::string& mode, int ratio, int64_t batch = 0) {
  return OneNode("RoiAlign", {Ramp(), F32({1, 4}, {0, 0, 2, 2}), I64({1}, {batch})},
                 {{"coordinate_transformation_mode", Attribute::String(coords)},
                  {"mode", Attribute::String(mode)},
                  {"sampling_ratio", Attribute::Int(ratio)}})
      .Run();
}

TEST(RoiAlignTest, HandComputedBins) {
  // Region (0, 0)-(2, 2), one bin, 2x2 samples. half_pixel shifts it by -0.5: samples at 0 and 1 in each
  // axis, mean f = 0.5 + 4 * 0.5 = 2.5; output_half_pixel samples at 0.5 and 1.5: mean f(1, 1) = 5.
  EXPECT_THAT(Values(Roi("half_pixel", "avg", 2)), Near({2.5f}));
  EXPECT_THAT(Values(Roi("output_half_pixel", "avg", 2)), Near({5}));
  // Max mode (ONNX Runtime's): the largest weighted corner. One sample at (0.5, 0.5): corners 0, 1, 4, 5
  // each weighted 0.25, so 1.25, not f(0.5, 0.5) = 2.5.
  EXPECT_THAT(Values(Roi("half_pixel", "max", 1)), Near({1.25f}));
}

TEST(RoiAlignTest, ShapesAndErrors) {
  absl::StatusOr<TensorType> t =
      OneNode("RoiAlign", {Ramp(), F32({3, 4}, std::vector<float>(12)), I64({3}, {0, 0, 0})},
              {{"output_height", Attribute::Int(7)}, {"output_width", Attribute::Int(5)}})
          .Infer();
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(*t, TensorType::Static(DType::kF32, {3, 1, 7, 5}));
  absl::StatusOr<Tensor> y = Roi("half_pixel", "min", 0);
  EXPECT_THAT(y.status().message(), HasSubstr("node RoiAlign 'n': attribute mode 'min' is not supported"));
  y = Roi("align_corners", "avg", 0);
  EXPECT_THAT(y.status().message(), HasSubstr("attribute coordinate_transformation_mode 'align_corners' is not"));
  y = Roi("half_pixel", "avg", 0, 1);
  EXPECT_EQ(y.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(y.status().message(), HasSubstr("batch_indices[0] = 1 is outside the batch of X (1 images)"));
  y = OneNode("RoiAlign", {Ramp(), F32({1, 4}, {0, 0, 2, 2}), I64({2}, {0, 0})}, {}).Run();
  EXPECT_THAT(y.status().message(), HasSubstr("have different lengths"));
}

// The ONNX specification's suppress-by-IoU example: boxes as [y1, x1, y2, x2]; 3 kept of 6.
std::vector<Tensor> NmsInputs() {
  return {F32({1, 6, 4}, {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, -0.1f, 1, 0.9f, 0, 10, 1, 11, 0, 10.1f, 1, 11.1f, 0, 100,
                          1, 101}),
          F32({1, 1, 6}, {0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f}), I64({1}, {3}), F32({1}, {0.5f})};
}

TEST(NonMaxSuppressionTest, SelectsByScoreAndIou) {
  // Box 3 (0.95) first, then 0 (0.9); 1 and 2 overlap 0 by IoU > 0.5, 4 overlaps 3; then 5.
  absl::StatusOr<Tensor> y = OneNode("NonMaxSuppression", NmsInputs(), {}).Run();
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->shape(), std::vector<int64_t>({3, 3}));
  EXPECT_THAT(y->ToInt64Vector(), ElementsAre(0, 0, 3, 0, 0, 0, 0, 0, 5));
  // A score threshold of 0.4 drops box 5; max_output_boxes_per_class 1 keeps box 3 only.
  std::vector<Tensor> in = NmsInputs();
  in.push_back(F32({1}, {0.4f}));
  EXPECT_THAT(OneNode("NonMaxSuppression", in, {}).Run()->ToInt64Vector(), ElementsAre(0, 0, 3, 0, 0, 0));
  in = NmsInputs();
  in[2] = I64({1}, {1});
  EXPECT_THAT(OneNode("NonMaxSuppression", in, {}).Run()->ToInt64Vector(), ElementsAre(0, 0, 3));
}

TEST(NonMaxSuppressionTest, CountIsKnownOnlyFromValues) {
  absl::StatusOr<TensorType> t = OneNode("NonMaxSuppression", NmsInputs(), {}).Infer();
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->rank(), 2);
  EXPECT_FALSE(t->dims[0].is_static());
  EXPECT_EQ(t->dims[1], Dim(3));
  t = OneNode("NonMaxSuppression", NmsInputs(), {}, /*constant=*/true).Infer();
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(*t, TensorType::Static(DType::kI64, {3, 3}));
}

TEST(NonMaxSuppressionTest, Errors) {
  absl::StatusOr<Tensor> y =
      OneNode("NonMaxSuppression", NmsInputs(), {{"center_point_box", Attribute::Int(2)}}).Run();
  EXPECT_THAT(y.status().message(),
              HasSubstr("node NonMaxSuppression 'n': attribute 'center_point_box' is 2; expected 0 or 1"));
  std::vector<Tensor> in = NmsInputs();
  in[1] = F32({1, 1, 5}, {1, 2, 3, 4, 5});
  y = OneNode("NonMaxSuppression", in, {}).Run();
  EXPECT_THAT(y.status().message(), HasSubstr("disagree on the box count"));
  in = NmsInputs();
  in[3] = F32({2}, {0.5f, 0.5f});
  y = OneNode("NonMaxSuppression", in, {}).Run();
  EXPECT_THAT(y.status().message(), HasSubstr("input 'iou_threshold' must hold one value"));
}

// The selection tests a candidate only against kept boxes that share a grid cell with it; the plain
// quadratic loop of the ONNX definition, written here, must select the same boxes: random boxes in
// clusters (as torchvision's batched NMS offsets each class), large boxes, degenerate and non-finite ones.
std::vector<int64_t> QuadraticNms(const Tensor& boxes, const Tensor& scores, int64_t max_per_class, float iou) {
  std::vector<int64_t> out;
  const int64_t classes = scores.dim(1), n = scores.dim(2);
  for (int64_t c = 0; c < classes; ++c) {
    const float* sc = scores.data<float>() + c * n;
    std::vector<int64_t> order(n);
    for (int64_t i = 0; i < n; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) { return sc[i] > sc[j]; });
    std::vector<std::array<float, 4>> kept;
    for (int64_t i : order) {
      if (static_cast<int64_t>(kept.size()) >= max_per_class) break;
      const float* b = boxes.data<float>() + i * 4;
      const std::array<float, 4> box = {std::min(b[0], b[2]), std::min(b[1], b[3]), std::max(b[0], b[2]),
                                        std::max(b[1], b[3])};
      bool suppressed = false;
      for (const auto& k : kept) {
        const float ih = std::min(k[2], box[2]) - std::max(k[0], box[0]);
        const float iw = std::min(k[3], box[3]) - std::max(k[1], box[1]);
        if (ih <= 0 || iw <= 0) continue;
        const float inter = ih * iw, area_a = (k[2] - k[0]) * (k[3] - k[1]), area_b = (box[2] - box[0]) * (box[3] - box[1]);
        const float uni = area_a + area_b - inter;
        if (area_a <= 0 || area_b <= 0 || uni <= 0) continue;
        suppressed = suppressed || inter / uni > iou;
      }
      if (suppressed) continue;
      kept.push_back(box);
      out.insert(out.end(), {0, c, i});
    }
  }
  return out;
}

TEST(NonMaxSuppressionTest, GridSelectionMatchesQuadraticLoop) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (int trial = 0; trial < 6; ++trial) {
    const int64_t n = 300 + 250 * trial, classes = trial % 2 ? 3 : 1;
    std::vector<float> b(n * 4), sc(classes * n);
    for (int64_t i = 0; i < n; ++i) {
      const float offset = 1000.0f * static_cast<float>(i % 20);  // 20 clusters far apart
      const float y = offset + 100 * u(rng), x = offset + 100 * u(rng);
      const bool large = i % 50 < 2;  // spans many cells; each such pair overlaps with IoU ~0.99
      const float h = large ? 5000 : 40 * u(rng), w = large ? 5000 : i % 37 == 0 ? 0 : 40 * u(rng);
      b[i * 4 + 0] = i % 50 == 1 ? b[(i - 1) * 4 + 0] + 10 : y;
      b[i * 4 + 1] = i % 50 == 1 ? b[(i - 1) * 4 + 1] : x;
      b[i * 4 + 2] = b[i * 4 + 0] + (i % 3 ? h : -h);  // some corners flipped
      b[i * 4 + 3] = b[i * 4 + 1] + w;
      if (i == 11) b[i * 4 + 2] = INFINITY;
      if (i == 23) b[i * 4 + 1] = NAN;
    }
    for (float& v : sc) v = u(rng);
    const Tensor boxes = F32({1, n, 4}, b), scores = F32({1, classes, n}, sc);
    for (float iou : {0.3f, 0.55f}) {
      const int64_t max_per_class = trial == 5 ? 40 : n;
      absl::StatusOr<Tensor> y =
          OneNode("NonMaxSuppression", {boxes, scores, I64({1}, {max_per_class}), F32({1}, {iou})}, {}).Run();
      ASSERT_TRUE(y.ok()) << y.status();
      const std::vector<int64_t> want = QuadraticNms(boxes, scores, max_per_class, iou);
      EXPECT_EQ(y->ToInt64Vector(), want) << "trial " << trial << ", iou " << iou;
      EXPECT_GT(want.size(), 30u);
    }
  }
}

}  // namespace
}  // namespace tessel
