// Schemas and type inference for the operators of detection and optical-flow models: GridSample
// (opset 16 and 20 names), RoiAlign (opset 16 form; the importer gives opset 10 models its coordinate
// mode) and NonMaxSuppression, whose output extent depends on input values.
#include <initializer_list>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/ops/nms.h"
#include "graph/ops/shape_util.h"

namespace tessel {
namespace {

using InferResult = absl::StatusOr<std::vector<TensorType>>;

// The leading inputs, named by `roles`, must be f32 (the only type the reference kernels read).
absl::Status RequireF32(const InferenceContext& ctx, std::initializer_list<const char*> roles) {
  int i = 0;
  for (const char* role : roles) {
    const DType t = ctx.type(i++).dtype;
    if (t != DType::kF32) {
      return absl::UnimplementedError(absl::StrCat("input ", role, " has dtype ", DTypeName(t),
                                                   "; only f32 is supported"));
    }
  }
  return absl::OkStatus();
}

// A string attribute that must be one of `allowed` (the first is the default).
absl::Status RequireOneOf(const Node& node, const char* attr, std::vector<std::string> allowed) {
  const std::string v = node.GetString(attr, allowed[0]);
  for (const std::string& a : allowed) {
    if (v == a) return absl::OkStatus();
  }
  std::string list;
  for (const std::string& a : allowed) absl::StrAppend(&list, list.empty() ? "" : ", ", "'", a, "'");
  return absl::UnimplementedError(absl::StrCat("attribute ", attr, " '", v, "' is not supported (supported: ", list,
                                               ")"));
}

// GridSample: X [N, C, H, W] sampled at grid [N, H_out, W_out, 2] of (x, y) in [-1, 1]; Y [N, C, H_out,
// W_out]. Opset 20's N-d form is refused beyond two spatial dimensions.
InferResult InferGridSample(const InferenceContext& ctx) {
  absl::Status f32 = RequireF32(ctx, {"X", "grid"});
  if (!f32.ok()) return f32;
  const TensorType& x = ctx.type(0);
  const TensorType& grid = ctx.type(1);
  if (x.rank() != 4) {
    return absl::UnimplementedError(absl::StrCat("input X has type ", x.ToString(),
                                                 "; only 4-D input [N, C, H, W] (two spatial dimensions) is "
                                                 "supported"));
  }
  if (grid.rank() != 4 || (grid.dims[3].is_static() && grid.dims[3].value() != 2)) {
    return absl::InvalidArgumentError(absl::StrCat("input grid has type ", grid.ToString(),
                                                   "; expected [N, H_out, W_out, 2] for a 4-D X"));
  }
  if (x.dims[0].is_static() && grid.dims[0].is_static() && x.dims[0].value() != grid.dims[0].value()) {
    return absl::InvalidArgumentError(absl::StrCat("batch sizes of X ", x.ToString(), " and grid ", grid.ToString(),
                                                   " differ"));
  }
  absl::Status s = RequireOneOf(ctx.node, "mode", {"bilinear", "linear", "nearest", "bicubic", "cubic"});
  if (s.ok()) s = RequireOneOf(ctx.node, "padding_mode", {"zeros", "border", "reflection"});
  if (!s.ok()) return s;
  const int64_t align = ctx.node.GetInt("align_corners", 0);
  if (align != 0 && align != 1) {
    return absl::InvalidArgumentError(absl::StrCat("attribute align_corners is ", align, "; expected 0 or 1"));
  }
  return std::vector<TensorType>{TensorType(x.dtype, {x.dims[0], x.dims[1], grid.dims[1], grid.dims[2]})};
}

// RoiAlign: X [N, C, H, W], rois [R, 4] as (x1, y1, x2, y2), batch_indices [R]; Y [R, C, oh, ow].
InferResult InferRoiAlign(const InferenceContext& ctx) {
  absl::Status f32 = RequireF32(ctx, {"X", "rois"});
  if (!f32.ok()) return f32;
  const TensorType& x = ctx.type(0);
  const TensorType& rois = ctx.type(1);
  const TensorType& idx = ctx.type(2);
  if (x.rank() != 4) {
    return absl::InvalidArgumentError(absl::StrCat("input X has type ", x.ToString(), "; expected [N, C, H, W]"));
  }
  if (rois.rank() != 2 || (rois.dims[1].is_static() && rois.dims[1].value() != 4)) {
    return absl::InvalidArgumentError(absl::StrCat("input rois has type ", rois.ToString(), "; expected [R, 4]"));
  }
  if ((idx.dtype != DType::kI64 && idx.dtype != DType::kI32) || idx.rank() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("input batch_indices has type ", idx.ToString(), "; expected i64 (or i32) [R]"));
  }
  if (rois.dims[0].is_static() && idx.dims[0].is_static() && rois.dims[0].value() != idx.dims[0].value()) {
    return absl::InvalidArgumentError(absl::StrCat("rois ", rois.ToString(), " and batch_indices ", idx.ToString(),
                                                   " have different lengths"));
  }
  absl::Status s = RequireOneOf(ctx.node, "mode", {"avg", "max"});
  if (s.ok()) s = RequireOneOf(ctx.node, "coordinate_transformation_mode", {"half_pixel", "output_half_pixel"});
  if (!s.ok()) return s;
  const int64_t oh = ctx.node.GetInt("output_height", 1), ow = ctx.node.GetInt("output_width", 1);
  if (oh < 1 || ow < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("attributes output_height ", oh, " and output_width ", ow, " must be positive"));
  }
  if (ctx.node.GetInt("sampling_ratio", 0) < 0) {
    return absl::InvalidArgumentError("attribute sampling_ratio must be non-negative (0: adaptive)");
  }
  return std::vector<TensorType>{TensorType(x.dtype, {rois.dims[0], x.dims[1], Dim(oh), Dim(ow)})};
}

// NonMaxSuppression: boxes [B, S, 4], scores [B, C, S]; int64 selected_indices [count, 3]. The count
// depends on the values: known only when boxes, scores and the thresholds are.
InferResult InferNms(const InferenceContext& ctx) {
  absl::Status f32 = RequireF32(ctx, {"boxes", "scores"});
  if (!f32.ok()) return f32;
  const TensorType& boxes = ctx.type(0);
  const TensorType& scores = ctx.type(1);
  if (boxes.rank() != 3 || (boxes.dims[2].is_static() && boxes.dims[2].value() != 4)) {
    return absl::InvalidArgumentError(absl::StrCat("input boxes has type ", boxes.ToString(), "; expected [B, S, 4]"));
  }
  if (scores.rank() != 3) {
    return absl::InvalidArgumentError(absl::StrCat("input scores has type ", scores.ToString(),
                                                   "; expected [B, C, S]"));
  }
  for (int d : {0, 2}) {
    const Dim& a = boxes.dims[d == 0 ? 0 : 1];
    const Dim& b = scores.dims[d];
    if (a.is_static() && b.is_static() && a.value() != b.value()) {
      return absl::InvalidArgumentError(absl::StrCat("boxes ", boxes.ToString(), " and scores ", scores.ToString(),
                                                     " disagree on the ", d == 0 ? "batch size" : "box count"));
    }
  }
  const char* roles[] = {"max_output_boxes_per_class", "iou_threshold", "score_threshold"};
  for (int i = 2; i < 5; ++i) {
    if (!ctx.has_input(i)) continue;
    const DType want = i == 2 ? DType::kI64 : DType::kF32;
    if (ctx.type(i).dtype != want || ctx.type(i).rank() > 1) {
      return absl::InvalidArgumentError(absl::StrCat("input ", roles[i - 2], " has type ", ctx.type(i).ToString(),
                                                     "; expected a ", DTypeName(want), " scalar or 1-element vector"));
    }
  }
  bool known = ctx.value(0) != nullptr && ctx.value(1) != nullptr;
  for (int i = 2; i < 5; ++i) known = known && (!ctx.has_input(i) || ctx.value(i) != nullptr);
  const Tensor* params[3] = {nullptr, nullptr, nullptr};
  for (int i = 2; i < 5; ++i) params[i - 2] = ctx.has_input(i) ? ctx.value(i) : nullptr;
  absl::StatusOr<NmsParams> p = ResolveNmsParams(ctx.node, params[0], params[1], params[2]);
  if (!p.ok()) return p.status();
  Dim count = UnknownDim();
  if (known) count = Dim(static_cast<int64_t>(SelectNmsBoxes(*ctx.value(0), *ctx.value(1), *p).size()));
  return std::vector<TensorType>{TensorType(DType::kI64, {count, Dim(3)})};
}

}  // namespace

void RegisterDetectionOps(OpRegistry& r) {
  r.Register({"GridSample", "", 2, 2, 1, 1, RequireInputs(2, InferGridSample),
              "sample X at normalized grid points: bilinear, nearest or bicubic; zeros, border or reflection "
              "padding; align_corners (4-D)"});
  r.Register({"RoiAlign", "", 3, 3, 1, 1, RequireInputs(3, InferRoiAlign),
              "average or max of bilinear samples over each region's bins (half_pixel or output_half_pixel)"});
  r.Register({"NonMaxSuppression", "", 2, 5, 1, 1, RequireInputs(2, InferNms),
              "greedy per-class box selection by IoU and score thresholds (a data-dependent count)"});
}

}  // namespace tessel
