// Resize's coordinate rules (resize_coords.h).
#include "kernels/reference/resize_coords.h"

#include <algorithm>
#include <cmath>

namespace tessel {

double ResizeSourceCoordinate(const ResizeParams& p, int axis, int64_t o, int64_t in, int64_t out) {
  const double scale = p.scales[axis];
  switch (p.coordinate_mode) {
    case ResizeParams::CoordinateMode::kHalfPixel:
      return (o + 0.5) / scale - 0.5;
    case ResizeParams::CoordinateMode::kPytorchHalfPixel:
      return out > 1 ? (o + 0.5) / scale - 0.5 : 0.0;
    case ResizeParams::CoordinateMode::kAlignCorners:
      return out == 1 ? 0.0 : static_cast<double>(o * (in - 1)) / (out - 1);
    case ResizeParams::CoordinateMode::kAsymmetric:
      return o / scale;
    case ResizeParams::CoordinateMode::kTfCropAndResize: {
      const double start = p.roi_start[axis], end = p.roi_end[axis];
      const double x = out > 1 ? o * (end - start) * (in - 1) / (out - 1) : (end - start) * (in - 1) / 2;
      return x + start * (in - 1);
    }
  }
  return 0.0;
}

bool ResizeOutside(const ResizeParams& p, double x, int64_t in) {
  return p.coordinate_mode == ResizeParams::CoordinateMode::kTfCropAndResize && (x < 0 || x > in - 1);
}

int64_t ResizeNearestIndex(ResizeParams::NearestMode mode, double x, int64_t in) {
  const double f = std::floor(x);
  double r = f;
  switch (mode) {
    case ResizeParams::NearestMode::kRoundPreferFloor:
      r = x - f <= 0.5 ? f : f + 1;
      break;
    case ResizeParams::NearestMode::kRoundPreferCeil:
      r = x - f < 0.5 ? f : f + 1;
      break;
    case ResizeParams::NearestMode::kFloor:
      r = f;
      break;
    case ResizeParams::NearestMode::kCeil:
      r = std::ceil(x);
      break;
  }
  return std::clamp<int64_t>(static_cast<int64_t>(r), 0, in - 1);
}

}  // namespace tessel
