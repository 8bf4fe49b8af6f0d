// The output stage of tessel.FusedConv kernels that take every activation the op allows, not only the
// clamps (none, relu, clip) that XNNPACK-style epilogues fuse: y = act(y + bias + residual) over one
// row, in the reference's order (kernels/reference/fused_cnn.cc), with tsl_sigmoidf's exponential.
#ifndef TESSEL_KERNELS_CONV_INTERNAL_ACTIVATION_H_
#define TESSEL_KERNELS_CONV_INTERNAL_ACTIVATION_H_

#include <cstdint>
#include <limits>
#include <string>

#include "graph/graph.h"
#include "kernels/portable/tessel_portable.h"
#include "kernels/registry/conv_geometry.h"

namespace tessel {
namespace conv_internal {

enum class Act { kClamp, kHardSwish, kSigmoid, kSiLU };

// y[j] = act(y[j] + bias + r[j]) for j < n; r may be null; lo / hi bound the clamp.
using ActivateRowFn = void (*)(int64_t n, float bias, const float* r, float lo, float hi, float* y);

template <Act kAct>
void ActivateRow(int64_t n, float bias, const float* __restrict r, float lo, float hi, float* __restrict y) {
  for (int64_t j = 0; j < n; ++j) {
    float v = y[j] + bias + (r ? r[j] : 0.0f);
    if constexpr (kAct == Act::kClamp) {
      v = v < lo ? lo : v;
      v = v > hi ? hi : v;
    } else if constexpr (kAct == Act::kHardSwish) {
      float t = v + 3.0f;
      t = t < 0.0f ? 0.0f : t;
      t = t > 6.0f ? 6.0f : t;
      v = v * t * (1.0f / 6.0f);
    } else if constexpr (kAct == Act::kSigmoid) {
      v = tsl_sigmoidf(v);
    } else {
      v = v * tsl_sigmoidf(v);
    }
    y[j] = v;
  }
}

// The node's `activation` (a clamp with its bounds in lo / hi, or hardswish, sigmoid, silu with
// unbounded lo / hi) and the row function that applies it.
inline ActivateRowFn ReadActivation(const Node& node, Act* act, float* lo, float* hi) {
  const ClampActivation clamp = ReadClampActivation(node, "");
  *lo = clamp.lo;
  *hi = clamp.hi;
  const std::string kind = node.GetString("activation", "none");
  *act = clamp.is_clamp ? Act::kClamp : kind == "hardswish" ? Act::kHardSwish : kind == "sigmoid" ? Act::kSigmoid
                                                                                                  : Act::kSiLU;
  if (!clamp.is_clamp) {
    *lo = -std::numeric_limits<float>::infinity();
    *hi = std::numeric_limits<float>::infinity();
  }
  switch (*act) {
    case Act::kHardSwish:
      return ActivateRow<Act::kHardSwish>;
    case Act::kSigmoid:
      return ActivateRow<Act::kSigmoid>;
    case Act::kSiLU:
      return ActivateRow<Act::kSiLU>;
    default:
      return ActivateRow<Act::kClamp>;
  }
}

}  // namespace conv_internal
}  // namespace tessel

#endif  // TESSEL_KERNELS_CONV_INTERNAL_ACTIVATION_H_
