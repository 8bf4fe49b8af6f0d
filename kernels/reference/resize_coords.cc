// Resize's coordinate rules (resize_coords.h).
#include "kernels/reference/resize_coords.h"

#include <algorithm>
#include <cmath>

namespace tessel {

double ResizeSourceCoordinate(const ResizeParams& p, int64_t o, int64_t in, int64_t out, double scale) {
  switch (p.coordinate_mode) {
    case ResizeParams::CoordinateMode::kHalfPixel:
      return (o + 0.5) / scale - 0.5;
    case ResizeParams::CoordinateMode::kPytorchHalfPixel:
      return out > 1 ? (o + 0.5) / scale - 0.5 : 0.0;
    case ResizeParams::CoordinateMode::kAlignCorners:
      return out == 1 ? 0.0 : static_cast<double>(o * (in - 1)) / (out - 1);
    case ResizeParams::CoordinateMode::kAsymmetric:
      return o / scale;
  }
  return 0.0;
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
