// Reference kernels for the operators of detection and optical-flow models: GridSample, RoiAlign and
// NonMaxSuppression. GridSample and RoiAlign follow PyTorch's grid_sample and torchvision's roi_align
// (and ONNX Runtime's max mode), which the ONNX definitions transcribe.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/ops/nms.h"
#include "kernels/reference/reference.h"
#include "kernels/reference/roi_sample.h"

namespace tessel {
namespace {

using Inputs = absl::Span<const Tensor* const>;
using Outputs = absl::Span<Tensor>;

enum class Padding { kZeros, kBorder, kReflection };

// Reflects x into [low, high] (twice_low and twice_high given doubled, as PyTorch does).
double Reflect(double x, int64_t twice_low, int64_t twice_high) {
  if (twice_low == twice_high) return 0;
  const double lo = twice_low / 2.0, span = (twice_high - twice_low) / 2.0;
  x = std::fabs(x - lo);
  const double extra = std::fmod(x, span);
  const int64_t flips = static_cast<int64_t>(std::floor(x / span));
  return flips % 2 == 0 ? extra + lo : span - extra + lo;
}

// A coordinate moved inside [0, size - 1] by border or reflection padding; zeros padding leaves it.
double PadCoordinate(double x, int64_t size, Padding padding, bool align) {
  if (padding == Padding::kZeros) return x;
  if (padding == Padding::kReflection) x = align ? Reflect(x, 0, 2 * (size - 1)) : Reflect(x, -1, 2 * size - 1);
  return std::min(static_cast<double>(size - 1), std::max(0.0, x));
}

// One plane [h, w] of X read at integer (y, x); zero outside.
double At(const float* plane, int64_t h, int64_t w, int64_t y, int64_t x) {
  return y < 0 || y >= h || x < 0 || x >= w ? 0.0 : plane[y * w + x];
}

// Cubic convolution weights (A = -0.75, as PyTorch) for the taps at -1, 0, 1, 2 from floor(x), t = x - floor(x).
void CubicWeights(double t, double w[4]) {
  constexpr double A = -0.75;
  auto near = [](double d) { return ((A + 2) * d - (A + 3)) * d * d + 1; };
  auto far = [](double d) { return ((A * d - 5 * A) * d + 8 * A) * d - 4 * A; };
  w[0] = far(t + 1);
  w[1] = near(t);
  w[2] = near(1 - t);
  w[3] = far(2 - t);
}

absl::Status GridSample(const Node& node, Inputs in, Outputs out) {
  const Tensor& x = *in[0];
  const Tensor& grid = *in[1];
  Tensor& y = out[0];
  // Opset 16 names the modes bilinear and bicubic; opset 20 linear and cubic.
  const std::string mode_name = node.GetString("mode", "bilinear");
  enum class Mode { kLinear, kNearest, kCubic };
  const Mode mode = mode_name == "nearest"                          ? Mode::kNearest
                    : mode_name == "bicubic" || mode_name == "cubic" ? Mode::kCubic
                                                                     : Mode::kLinear;
  const std::string pad = node.GetString("padding_mode", "zeros");
  const Padding padding = pad == "border" ? Padding::kBorder : pad == "reflection" ? Padding::kReflection
                                                                                   : Padding::kZeros;
  const bool align = node.GetInt("align_corners", 0) == 1;
  const int64_t n_batch = x.dim(0), channels = x.dim(1), h = x.dim(2), w = x.dim(3);
  const int64_t ho = grid.dim(1), wo = grid.dim(2);
  // Grid value g in [-1, 1] to a pixel coordinate.
  auto unnormalize = [align](double g, int64_t size) {
    return align ? (g + 1) / 2 * (size - 1) : ((g + 1) * size - 1) / 2;
  };
  for (int64_t n = 0; n < n_batch; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      const float* plane = x.data<float>() + (n * channels + c) * h * w;
      float* dst = y.data<float>() + (n * channels + c) * ho * wo;
      for (int64_t i = 0; i < ho * wo; ++i) {
        const float* g = grid.data<float>() + (n * ho * wo + i) * 2;
        double gx = unnormalize(g[0], w), gy = unnormalize(g[1], h);
        double v = 0;
        if (mode == Mode::kNearest) {
          gx = PadCoordinate(gx, w, padding, align);
          gy = PadCoordinate(gy, h, padding, align);
          v = At(plane, h, w, static_cast<int64_t>(std::nearbyint(gy)), static_cast<int64_t>(std::nearbyint(gx)));
        } else if (mode == Mode::kLinear) {
          gx = PadCoordinate(gx, w, padding, align);
          gy = PadCoordinate(gy, h, padding, align);
          const double x0 = std::floor(gx), y0 = std::floor(gy);
          const double tx = gx - x0, ty = gy - y0;
          const int64_t ix = static_cast<int64_t>(x0), iy = static_cast<int64_t>(y0);
          v = At(plane, h, w, iy, ix) * (1 - tx) * (1 - ty) + At(plane, h, w, iy, ix + 1) * tx * (1 - ty) +
              At(plane, h, w, iy + 1, ix) * (1 - tx) * ty + At(plane, h, w, iy + 1, ix + 1) * tx * ty;
        } else {
          // Bicubic pads each of the 4x4 taps, not the sampling point.
          const double x0 = std::floor(gx), y0 = std::floor(gy);
          double wx[4], wy[4];
          CubicWeights(gx - x0, wx);
          CubicWeights(gy - y0, wy);
          for (int j = 0; j < 4; ++j) {
            const double ty = PadCoordinate(y0 - 1 + j, h, padding, align);
            for (int k = 0; k < 4; ++k) {
              const double tx = PadCoordinate(x0 - 1 + k, w, padding, align);
              v += wy[j] * wx[k] * At(plane, h, w, static_cast<int64_t>(ty), static_cast<int64_t>(tx));
            }
          }
        }
        dst[i] = static_cast<float>(v);
      }
    }
  }
  return absl::OkStatus();
}

// X's plane read bilinearly at (y, x) as torchvision's roi_align does: zero beyond one pixel outside,
// clamped to the edge within it. With `max`, the largest weighted corner (ONNX Runtime's max mode).
double RoiSample(const float* plane, int64_t h, int64_t w, double y, double x, bool max) {
  RoiTap t;
  if (!RoiBilinearTap(h, w, y, x, &t)) return 0;
  double v[4];
  for (int k = 0; k < 4; ++k) v[k] = t.weight[k] * plane[t.index[k]];
  return max ? std::max(std::max(v[0], v[1]), std::max(v[2], v[3])) : v[0] + v[1] + v[2] + v[3];
}

absl::Status RoiAlign(const Node& node, Inputs in, Outputs out) {
  const Tensor& x = *in[0];
  const Tensor& rois = *in[1];
  const Tensor& idx = *in[2];
  Tensor& y = out[0];
  const bool max = node.GetString("mode", "avg") == "max";
  const double offset = node.GetString("coordinate_transformation_mode", "half_pixel") == "half_pixel" ? 0.5 : 0;
  const double scale = node.GetFloat("spatial_scale", 1.0f);
  const int64_t ratio = node.GetInt("sampling_ratio", 0);
  const int64_t n_batch = x.dim(0), channels = x.dim(1), h = x.dim(2), w = x.dim(3);
  const int64_t oh = y.dim(2), ow = y.dim(3);
  for (int64_t r = 0; r < rois.dim(0); ++r) {
    const int64_t b = idx.GetAsInt64(r);
    if (b < 0 || b >= n_batch) {
      return absl::InvalidArgumentError(
          absl::StrCat("batch_indices[", r, "] = ", b, " is outside the batch of X (", n_batch, " images)"));
    }
    const RoiRegion region = ResolveRoiRegion(rois.data<float>() + r * 4, scale, offset, oh, ow, ratio);
    const double count = static_cast<double>(region.count());
    for (int64_t c = 0; c < channels; ++c) {
      const float* plane = x.data<float>() + (b * channels + c) * h * w;
      float* dst = y.data<float>() + (r * channels + c) * oh * ow;
      for (int64_t ph = 0; ph < oh; ++ph) {
        for (int64_t pw = 0; pw < ow; ++pw) {
          double acc = 0;
          bool first = true;
          for (int64_t iy = 0; iy < region.grid_h; ++iy) {
            const double sy = region.SampleY(ph, iy);
            for (int64_t ix = 0; ix < region.grid_w; ++ix) {
              const double v = RoiSample(plane, h, w, sy, region.SampleX(pw, ix), max);
              acc = max ? (first ? v : std::max(acc, v)) : acc + v;
              first = false;
            }
          }
          dst[ph * ow + pw] = static_cast<float>(max ? acc : acc / count);
        }
      }
    }
  }
  return absl::OkStatus();
}

absl::Status NonMaxSuppression(const Node& node, Inputs in, Outputs out) {
  const Tensor* p[3];
  for (int i = 2; i < 5; ++i) p[i - 2] = i < static_cast<int>(in.size()) ? in[i] : nullptr;
  absl::StatusOr<NmsParams> params = ResolveNmsParams(node, p[0], p[1], p[2]);
  if (!params.ok()) return params.status();
  const std::vector<std::array<int64_t, 3>> selected = SelectNmsBoxes(*in[0], *in[1], *params);
  Tensor& y = out[0];
  // Inference counted the same selection; the check guards the output bounds.
  if (static_cast<int64_t>(selected.size()) != y.dim(0)) {
    return absl::InternalError(absl::StrCat("selected ", selected.size(), " boxes, but the output holds ", y.dim(0)));
  }
  int64_t* dst = y.data<int64_t>();
  for (const auto& s : selected) dst = std::copy(s.begin(), s.end(), dst);
  return absl::OkStatus();
}

}  // namespace

absl::Status RunNonMaxSuppression(const Node& node, absl::Span<const Tensor* const> in, std::vector<Tensor>* outputs) {
  if (in.size() < 2 || in[0] == nullptr || in[1] == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("node ", node.DebugName(), ": boxes and scores are required"));
  }
  // The inputs' types as inference checks them (ranks, box count, the scalar parameters).
  std::vector<TensorType> types(in.size());
  std::vector<const TensorType*> type_ptrs(in.size(), nullptr);
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == nullptr) continue;
    types[i] = in[i]->type();
    type_ptrs[i] = &types[i];
  }
  absl::StatusOr<std::vector<TensorType>> checked = InferOutputTypes(node, type_ptrs, {});
  if (!checked.ok()) return checked.status();
  const Tensor* p[3];
  for (int i = 2; i < 5; ++i) p[i - 2] = i < static_cast<int>(in.size()) ? in[i] : nullptr;
  absl::StatusOr<NmsParams> params = ResolveNmsParams(node, p[0], p[1], p[2]);
  if (!params.ok()) return absl::Status(params.status().code(), absl::StrCat("node ", node.DebugName(), ": ",
                                                                           params.status().message()));
  const std::vector<std::array<int64_t, 3>> selected = SelectNmsBoxes(*in[0], *in[1], *params);
  outputs->clear();
  outputs->emplace_back(DType::kI64, std::vector<int64_t>{static_cast<int64_t>(selected.size()), 3});
  int64_t* dst = outputs->back().data<int64_t>();
  for (const auto& s : selected) dst = std::copy(s.begin(), s.end(), dst);
  return absl::OkStatus();
}

void RegisterDetectionReferenceKernels(ReferenceKernelRegistry& r) {
  r.Register("", "GridSample", GridSample);
  r.Register("", "RoiAlign", RoiAlign);
  r.Register("", "NonMaxSuppression", NonMaxSuppression);
}

}  // namespace tessel
