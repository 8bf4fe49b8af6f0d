// What the channels-last f32 FusedConv kernels (direct_conv, dwconv3x3 on Arm, dwconv_kxk) accept, and the
// depthwise kernels' memory term, shared so that they differ only in the geometries they take.
#ifndef TESSEL_KERNELS_CONV_INTERNAL_NHWC_LEGAL_H_
#define TESSEL_KERNELS_CONV_INTERNAL_NHWC_LEGAL_H_

#include "kernels/registry/conv_geometry.h"
#include "kernels/registry/op_kernel.h"

namespace tessel {
namespace conv_internal {

// An f32 "nhwc" tessel.FusedConv with constant weights (and bias), a static output, a clamp activation
// and a geometry that `predicate` accepts.
bool LegalF32FusedConvNhwc(const OpQuery& q, bool (*predicate)(const Conv2dGeometry& g));

// One pass over the input and the output in f32.
inline double DepthwiseNhwcBytes(const Conv2dGeometry& g) {
  return 4.0 * (g.n * g.h * g.w * g.c + g.n * g.oh * g.ow * g.m);
}

}  // namespace conv_internal
}  // namespace tessel

#endif  // TESSEL_KERNELS_CONV_INTERNAL_NHWC_LEGAL_H_
