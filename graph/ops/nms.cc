// NonMaxSuppression's greedy selection (the ONNX definition, as ONNX Runtime implements it).
#include "graph/ops/nms.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"

namespace tessel {
namespace {

// [y1, x1, y2, x2] with each pair ordered (ONNX allows flipped corners).
std::array<float, 4> Corners(const float* b, bool center_point_box) {
  if (center_point_box) {
    const float xc = b[0], yc = b[1], w = b[2], h = b[3];
    return {yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2};
  }
  return {std::min(b[0], b[2]), std::min(b[1], b[3]), std::max(b[0], b[2]), std::max(b[1], b[3])};
}

bool Suppresses(const std::array<float, 4>& a, const std::array<float, 4>& b, float iou_threshold) {
  const float ih = std::min(a[2], b[2]) - std::max(a[0], b[0]);
  const float iw = std::min(a[3], b[3]) - std::max(a[1], b[1]);
  if (ih <= 0 || iw <= 0) return false;
  const float inter = ih * iw;
  const float area_a = (a[2] - a[0]) * (a[3] - a[1]);
  const float area_b = (b[2] - b[0]) * (b[3] - b[1]);
  const float uni = area_a + area_b - inter;
  if (area_a <= 0 || area_b <= 0 || uni <= 0) return false;
  return inter / uni > iou_threshold;
}

absl::StatusOr<double> ScalarInput(const Tensor* t, const char* name) {
  if (t->num_elements() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("input '", name, "' must hold one value; it has shape ", t->type().ToString()));
  }
  return t->GetAsDouble(0);
}

}  // namespace

absl::StatusOr<NmsParams> ResolveNmsParams(const Node& node, const Tensor* max_per_class, const Tensor* iou,
                                           const Tensor* score) {
  NmsParams p;
  const int64_t cpb = node.GetInt("center_point_box", 0);
  if (cpb != 0 && cpb != 1) {
    return absl::InvalidArgumentError(absl::StrCat("attribute 'center_point_box' is ", cpb, "; expected 0 or 1"));
  }
  p.center_point_box = cpb == 1;
  if (max_per_class != nullptr) {
    absl::StatusOr<double> v = ScalarInput(max_per_class, "max_output_boxes_per_class");
    if (!v.ok()) return v.status();
    p.max_per_class = std::max<int64_t>(0, max_per_class->GetAsInt64(0));
  }
  if (iou != nullptr) {
    absl::StatusOr<double> v = ScalarInput(iou, "iou_threshold");
    if (!v.ok()) return v.status();
    p.iou_threshold = static_cast<float>(*v);
  }
  if (score != nullptr) {
    absl::StatusOr<double> v = ScalarInput(score, "score_threshold");
    if (!v.ok()) return v.status();
    p.has_score_threshold = true;
    p.score_threshold = static_cast<float>(*v);
  }
  return p;
}

std::vector<std::array<int64_t, 3>> SelectNmsBoxes(const Tensor& boxes, const Tensor& scores, const NmsParams& p) {
  std::vector<std::array<int64_t, 3>> selected;
  const int64_t batches = scores.dim(0), classes = scores.dim(1), spatial = scores.dim(2);
  std::vector<int64_t> order;
  std::vector<std::array<float, 4>> kept;
  for (int64_t b = 0; b < batches; ++b) {
    const float* bx = boxes.data<float>() + b * spatial * 4;
    for (int64_t c = 0; c < classes; ++c) {
      const float* sc = scores.data<float>() + (b * classes + c) * spatial;
      order.clear();
      for (int64_t i = 0; i < spatial; ++i) {
        if (!p.has_score_threshold || sc[i] > p.score_threshold) order.push_back(i);
      }
      std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) { return sc[i] > sc[j]; });
      kept.clear();
      for (int64_t i : order) {
        if (static_cast<int64_t>(kept.size()) >= p.max_per_class) break;
        const std::array<float, 4> box = Corners(bx + i * 4, p.center_point_box);
        bool suppressed = false;
        for (const auto& k : kept) suppressed = suppressed || Suppresses(k, box, p.iou_threshold);
        if (suppressed) continue;
        kept.push_back(box);
        selected.push_back({b, c, i});
      }
    }
  }
  return selected;
}

}  // namespace tessel
