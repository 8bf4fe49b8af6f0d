// Attribute decoding for the neural-network operators (Conv, pooling, reductions, Pad, Resize), shared by
// type inference (graph/ops/nn_ops.cc) and the kernels so that both read ONNX attributes the same way.
#ifndef TESSEL_GRAPH_OPS_NN_PARAMS_H_
#define TESSEL_GRAPH_OPS_NN_PARAMS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "graph/graph.h"
#include "graph/tensor.h"

namespace tessel {

// Dims of a static shape.
std::vector<Dim> DimsOf(absl::Span<const int64_t> shape);

// An axis attribute (Softmax, LayerNormalization) normalized into [0, rank).
absl::StatusOr<int> ResolveAxisAttr(const Node& node, const std::string& name, int64_t def, int rank);

// Sliding-window geometry over the spatial dimensions (every dimension after N and C).
struct WindowParams {
  std::vector<int64_t> kernel;
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  // Padding with auto_pad applied. SAME_* padding depends on the input extent, so it is only meaningful
  // where that extent is static (always the case at run time).
  std::vector<int64_t> pads_begin;
  std::vector<int64_t> pads_end;
  // Output extents: the input's symbol where the window maps the extent to itself, UnknownDim() where
  // it cannot be computed from a symbolic input extent.
  std::vector<Dim> output;

  int num_spatial() const { return static_cast<int>(kernel.size()); }
};

struct ConvParams : WindowParams {
  int64_t group = 1;
};

struct ConvTransposeParams : WindowParams {
  int64_t group = 1;
  std::vector<int64_t> output_padding;
};

struct PoolParams : WindowParams {
  bool ceil_mode = false;
  bool count_include_pad = false;
};

// Conv geometry from its attributes (kernel_shape, strides, dilations, pads, auto_pad, group), the input
// dims [N, C, spatial...] and the weight dims [M, C/group, kernel...]. Checks that they agree.
absl::StatusOr<ConvParams> ResolveConvParams(const Node& node, absl::Span<const Dim> x_dims,
                                             absl::Span<const Dim> w_dims);

// ConvTranspose geometry from its attributes (kernel_shape, strides, dilations, pads, auto_pad, group,
// output_padding, output_shape), the input dims [N, C, spatial...] and the weight dims [C, M/group, kernel...].
// pads_begin / pads_end are what is cropped from the full transposed output; `output` its extents.
absl::StatusOr<ConvTransposeParams> ResolveConvTransposeParams(const Node& node, absl::Span<const Dim> x_dims,
                                                               absl::Span<const Dim> w_dims);

// MaxPool / AveragePool geometry (kernel_shape, strides, dilations, pads, auto_pad, ceil_mode,
// count_include_pad) for input dims [N, C, spatial...].
absl::StatusOr<PoolParams> ResolvePoolParams(const Node& node, absl::Span<const Dim> x_dims);

// ReduceMean / ReduceSum in their opset-18 form: axes as an optional int64 input, keepdims,
// noop_with_empty_axes.
struct ReduceParams {
  bool keepdims = true;
  // Per input axis: whether it is reduced. All false with `noop` (the output is the input).
  std::vector<bool> reduced;
  bool noop = false;
};

// `axes` is the value of the axes input, nullptr when the input is omitted.
absl::StatusOr<ReduceParams> ResolveReduceParams(const Node& node, int rank, const Tensor* axes);

enum class PadMode { kConstant, kReflect, kEdge };

struct PadParams {
  PadMode mode = PadMode::kConstant;
  // Per input axis; negative values crop.
  std::vector<int64_t> begin;
  std::vector<int64_t> end;
};

absl::StatusOr<PadMode> ResolvePadMode(const Node& node);
// The axes the pads apply to (the opset-18 `axes` input, nullptr when omitted: every axis), normalized.
absl::StatusOr<std::vector<int>> ResolvePadAxes(int rank, const Tensor* axes);
absl::StatusOr<PadParams> ResolvePadParams(const Node& node, int rank, const Tensor& pads, const Tensor* axes);
// The input coordinate that output coordinate `o` of an axis of extent `in` (padded by `begin` before
// it) reads, or -1 for the constant fill value; edge clamps and reflect mirrors without repeating the
// edge, as numpy's "reflect".
int64_t PadSourceIndex(PadMode mode, int64_t o, int64_t begin, int64_t in);

struct ResizeParams {
  enum class Mode { kNearest, kLinear, kCubic };
  enum class CoordinateMode { kHalfPixel, kPytorchHalfPixel, kAlignCorners, kAsymmetric, kTfCropAndResize };
  enum class NearestMode { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };

  Mode mode = Mode::kNearest;
  CoordinateMode coordinate_mode = CoordinateMode::kHalfPixel;
  NearestMode nearest_mode = NearestMode::kRoundPreferFloor;
  // Cubic mode: the kernel's coefficient a (cubic_coeff_a) and whether taps outside the input get weight 0
  // (exclude_outside; the others renormalized) instead of the edge's value.
  double cubic_coeff_a = -0.75;
  bool exclude_outside = false;
  // Output dims (UnknownDim() where the scales or sizes, or a needed input extent, are unknown).
  std::vector<Dim> output;
  // Per axis, the output/input scale the coordinate transform divides by.
  std::vector<double> scales;
  // tf_crop_and_resize: per axis the crop's normalized start and end (roi), and the value of outputs whose
  // source lies outside the input.
  std::vector<double> roi_start, roi_end;
  double extrapolation_value = 0.0;
};

// Resize (opset-18 attributes: mode, coordinate_transformation_mode, nearest_mode, axes,
// keep_aspect_ratio_policy, antialias). `has_scales` / `has_sizes` say which of the two inputs the node
// provides (an empty scales tensor, as opset 11 writes it beside sizes, counts as absent); `scales` /
// `sizes` are their values, nullptr when unknown. `roi` ([starts, ends] over the resized axes) is read by
// tf_crop_and_resize only; nullptr when absent or unknown.
absl::StatusOr<ResizeParams> ResolveResizeParams(const Node& node, absl::Span<const Dim> x_dims, bool has_scales,
                                                 const Tensor* scales, bool has_sizes, const Tensor* sizes,
                                                 const Tensor* roi = nullptr);

// LSTM, GRU and RNN attributes (hidden_size, direction, activations, clip, layout, linear_before_reset,
// input_forget), checked against X [seq, batch, input] (layout 0) or [batch, seq, input] (layout 1),
// W [directions, gates * hidden, input] and R [directions, gates * hidden, hidden].
enum class RnnActivation { kSigmoid, kTanh, kRelu };

struct RnnParams {
  int gates = 1;  // RNN 1, GRU 3, LSTM 4
  Dim hidden;
  int directions = 1;
  bool reverse = false;  // direction "reverse" (with one direction)
  bool batch_first = false;  // layout 1
  float clip = 0;  // 0: none
  bool linear_before_reset = false;
  // Per direction, the op's activations in ONNX order (RNN: f; GRU: f, g; LSTM: f, g, h).
  std::vector<std::vector<RnnActivation>> activations;
};

absl::StatusOr<RnnParams> ResolveRnnParams(const Node& node, absl::Span<const Dim> x_dims,
                                           absl::Span<const Dim> w_dims, absl::Span<const Dim> r_dims);

}  // namespace tessel

#endif  // TESSEL_GRAPH_OPS_NN_PARAMS_H_
