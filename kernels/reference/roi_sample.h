// Where RoiAlign reads its input: torchvision's roi_align regions, sample points and bilinear taps, shared
// by the reference kernel (detection.cc) and the fast one (kernels/resize), so that both read the same
// corners with the same weights.
#ifndef TESSEL_KERNELS_REFERENCE_ROI_SAMPLE_H_
#define TESSEL_KERNELS_REFERENCE_ROI_SAMPLE_H_

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace tessel {

// One region (box [x1, y1, x2, y2] in input coordinates x spatial_scale, less `offset`: 0.5 for
// half_pixel) split into oh x ow bins of grid_h x grid_w samples (sampling_ratio, or adaptive when 0).
struct RoiRegion {
  double x1, y1, bin_h, bin_w;
  int64_t grid_h, grid_w;
  double SampleY(int64_t ph, int64_t iy) const { return y1 + ph * bin_h + (iy + 0.5) * bin_h / grid_h; }
  double SampleX(int64_t pw, int64_t ix) const { return x1 + pw * bin_w + (ix + 0.5) * bin_w / grid_w; }
  // Samples per bin (the average's divisor).
  int64_t count() const { return std::max<int64_t>(grid_h * grid_w, 1); }
};

inline RoiRegion ResolveRoiRegion(const float* box, double scale, double offset, int64_t oh, int64_t ow,
                                  int64_t ratio) {
  const double x1 = box[0] * scale - offset, y1 = box[1] * scale - offset;
  double rw = box[2] * scale - offset - x1, rh = box[3] * scale - offset - y1;
  if (offset == 0) {  // output_half_pixel: regions at least one pixel wide
    rw = std::max(rw, 1.0);
    rh = std::max(rh, 1.0);
  }
  return {x1,
          y1,
          rh / oh,
          rw / ow,
          ratio > 0 ? ratio : static_cast<int64_t>(std::ceil(rh / oh)),
          ratio > 0 ? ratio : static_cast<int64_t>(std::ceil(rw / ow))};
}

// The four corners (flat indices into an h x w plane) and bilinear weights of the sample at (y, x).
struct RoiTap {
  int64_t index[4];
  double weight[4];
};

// False (the sample is zero) beyond one pixel outside the plane, or for a NaN coordinate; within it the
// coordinate is clamped to the edge.
inline bool RoiBilinearTap(int64_t h, int64_t w, double y, double x, RoiTap* tap) {
  if (!(y >= -1.0 && y <= h && x >= -1.0 && x <= w)) return false;
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  int64_t y0 = static_cast<int64_t>(y), x0 = static_cast<int64_t>(x), y1, x1;
  if (y0 >= h - 1) {
    y0 = y1 = h - 1;
    y = static_cast<double>(y0);
  } else {
    y1 = y0 + 1;
  }
  if (x0 >= w - 1) {
    x0 = x1 = w - 1;
    x = static_cast<double>(x0);
  } else {
    x1 = x0 + 1;
  }
  const double ly = y - y0, lx = x - x0, hy = 1 - ly, hx = 1 - lx;
  *tap = {{y0 * w + x0, y0 * w + x1, y1 * w + x0, y1 * w + x1}, {hy * hx, hy * lx, ly * hx, ly * lx}};
  return true;
}

}  // namespace tessel

#endif  // TESSEL_KERNELS_REFERENCE_ROI_SAMPLE_H_
