// NonMaxSuppression's attributes and its greedy box selection, shared by type inference (which counts
// the selected boxes when the inputs are known: the output's extent depends on their values) and the
// reference kernel (which writes them).
#ifndef TESSEL_GRAPH_OPS_NMS_H_
#define TESSEL_GRAPH_OPS_NMS_H_

#include <array>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "graph/tensor.h"

namespace tessel {

struct NmsParams {
  int64_t max_per_class = 0;  // 0 (the default) selects nothing
  float iou_threshold = 0;
  bool has_score_threshold = false;
  float score_threshold = 0;
  bool center_point_box = false;  // boxes as [x_center, y_center, width, height], else two corners
};

// Reads center_point_box and the optional scalar inputs max_output_boxes_per_class (int64),
// iou_threshold and score_threshold (f32), each nullptr when omitted.
absl::StatusOr<NmsParams> ResolveNmsParams(const Node& node, const Tensor* max_per_class, const Tensor* iou,
                                           const Tensor* score);

// The selected boxes as (batch, class, box) triples, ordered by batch, then class, then descending
// score (ties: lower box index first). boxes f32 [B, S, 4], scores f32 [B, C, S]. A candidate needs a
// score above score_threshold (when given) and is dropped when its IoU with a box already selected in
// its (batch, class) exceeds iou_threshold; a box of zero area suppresses nothing.
std::vector<std::array<int64_t, 3>> SelectNmsBoxes(const Tensor& boxes, const Tensor& scores, const NmsParams& p);

}  // namespace tessel

#endif  // TESSEL_GRAPH_OPS_NMS_H_
