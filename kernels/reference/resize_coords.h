// Where Resize reads its input: the coordinate rules shared by the reference kernel (nn.cc) and the fast
// ones (kernels/resize), so that both map every output index to the same source.
#ifndef TESSEL_KERNELS_REFERENCE_RESIZE_COORDS_H_
#define TESSEL_KERNELS_REFERENCE_RESIZE_COORDS_H_

#include <cstdint>

#include "graph/ops/nn_params.h"

namespace tessel {

// The input coordinate output index `o` maps to along one axis of extent `in` -> `out` (ONNX
// coordinate_transformation_mode; `scale` is the axis's ResizeParams::scales entry).
double ResizeSourceCoordinate(const ResizeParams& p, int64_t o, int64_t in, int64_t out, double scale);

// The input index nearest mode picks for coordinate `x`, clamped into [0, in).
int64_t ResizeNearestIndex(ResizeParams::NearestMode mode, double x, int64_t in);

}  // namespace tessel

#endif  // TESSEL_KERNELS_REFERENCE_RESIZE_COORDS_H_
