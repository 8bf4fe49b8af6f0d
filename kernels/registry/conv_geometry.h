// The geometry of a channels-last 2-D convolution or pooling node and its fused activation, decoded
// once from the node (ONNX attributes via graph/ops/nn_params.h) for every optimized backend.
#ifndef TESSEL_KERNELS_REGISTRY_CONV_GEOMETRY_H_
#define TESSEL_KERNELS_REGISTRY_CONV_GEOMETRY_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "graph/tensor.h"

namespace tessel {

struct Conv2dGeometry {
  int64_t n = 0, h = 0, w = 0, c = 0;  // input [N, H, W, C]
  int64_t oh = 0, ow = 0, m = 0;       // output [N, OH, OW, M]
  int64_t kh = 1, kw = 1;              // window (weights [M, KH, KW, C/groups])
  int64_t sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int64_t groups = 1;

  int64_t group_in() const { return c / groups; }
  int64_t group_out() const { return m / groups; }
  double flops() const { return 2.0 * n * oh * ow * m * kh * kw * group_in(); }
  bool is_1x1_direct() const {
    return kh == 1 && kw == 1 && sh == 1 && sw == 1 && pad_top == 0 && pad_left == 0 && pad_bottom == 0 &&
           pad_right == 0 && groups == 1;
  }
};

// A fused activation that is a clamp (none, relu, clip); `is_clamp` is false for the others
// (hardswish, sigmoid, silu), which clamp-only kernels must refuse.
struct ClampActivation {
  bool is_clamp = true;
  float lo = 0, hi = 0;
};
ClampActivation ReadClampActivation(const Node& node, const std::string& prefix);

// Convolution geometry of a node with layout "nhwc" over input type `x` and weight type `w` (both
// channels-last); InvalidArgument for other layouts or ranks.
absl::StatusOr<Conv2dGeometry> ResolveConv2dNhwc(const Node& node, const TensorType& x, const TensorType& w);

// Pooling geometry (MaxPool / AveragePool, ceil_mode refused) of an "nhwc" node; m == c.
absl::StatusOr<Conv2dGeometry> ResolvePool2dNhwc(const Node& node, const TensorType& x);

}  // namespace tessel

#endif  // TESSEL_KERNELS_REGISTRY_CONV_GEOMETRY_H_
