// layout: NCHW -> NHWC. Conv, FusedConv, DwPwConv, MaxPool, AveragePool and GlobalAveragePool on 4-D
// tensors become their channels-last tessel forms (layout = "nhwc", weights pre-transposed to
// [M, kH, kW, C/group]); elementwise operators between them pass NHWC through; Transposes appear only
// where NCHW data enters or leaves (graph inputs and outputs, Flatten, Reshape, ...), and Transpose
// pairs that cancel are removed. Converted values carry Layout::kNHWC.
#ifndef TESSEL_PASSES_LAYOUT_LAYOUT_H_
#define TESSEL_PASSES_LAYOUT_LAYOUT_H_

#include "passes/core/pass.h"

namespace tessel {

PassInfo LayoutPassInfo();

}  // namespace tessel

#endif  // TESSEL_PASSES_LAYOUT_LAYOUT_H_
