// Where Resize reads its input: the coordinate rules shared by the reference kernel (nn.cc) and the fast
// ones (kernels/resize), so that both map every output index to the same source.
#ifndef TESSEL_KERNELS_REFERENCE_RESIZE_COORDS_H_
#define TESSEL_KERNELS_REFERENCE_RESIZE_COORDS_H_

#include <cstdint>

#include "graph/ops/nn_params.h"

namespace tessel {

// The input coordinate output index `o` maps to along axis `axis` of extent `in` -> `out` (ONNX
// coordinate_transformation_mode, with the axis's ResizeParams::scales and roi entries).
double ResizeSourceCoordinate(const ResizeParams& p, int axis, int64_t o, int64_t in, int64_t out);

// Whether tf_crop_and_resize maps coordinate `x` outside an input of extent `in` (the output then takes
// ResizeParams::extrapolation_value); false in the other modes, which clamp.
bool ResizeOutside(const ResizeParams& p, double x, int64_t in);

// The input index nearest mode picks for coordinate `x`, clamped into [0, in).
int64_t ResizeNearestIndex(ResizeParams::NearestMode mode, double x, int64_t in);

}  // namespace tessel

#endif  // TESSEL_KERNELS_REFERENCE_RESIZE_COORDS_H_
