// Shape helpers shared by operator type inference and the reference kernels: multidirectional
// broadcasting of (possibly symbolic) dimensions, axis normalization and reading small integer inputs.
#ifndef TESSEL_GRAPH_OPS_SHAPE_UTIL_H_
#define TESSEL_GRAPH_OPS_SHAPE_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "graph/op_registry.h"
#include "graph/tensor.h"

namespace tessel {

// Wraps an inference function so that it first checks that inputs 0..count-1 are present (an
// omitted optional input in the middle can leave a required one missing).
InferFn RequireInputs(int count, InferFn fn);

// "[N,3,224]".
std::string DimsToString(absl::Span<const Dim> dims);

// Numpy-style (ONNX multidirectional) broadcast of two dimension lists, right-aligned. Static
// extents must be equal or 1. A symbol broadcast against 1 or against the same symbol stays; a symbol
// against a static extent n > 1 gives n (the symbol must be 1 or n at run time); two different
// symbols give UnknownDim(). `op` names the operator in the error message.
absl::StatusOr<std::vector<Dim>> BroadcastDims(absl::Span<const Dim> a, absl::Span<const Dim> b,
                                               absl::string_view op);

// The same for concrete shapes.
absl::StatusOr<std::vector<int64_t>> BroadcastShapes(absl::Span<const int64_t> a, absl::Span<const int64_t> b,
                                                     absl::string_view op);

// Maps axis in [-rank, rank) to [0, rank); `op` names the operator in the error message.
absl::StatusOr<int> NormalizeAxis(int64_t axis, int rank, absl::string_view op);

// The elements of a rank-0 or rank-1 int32/int64 tensor (shape, axes, starts, ...). `what` names the
// input in the error message ("Reshape input 'shape'").
absl::StatusOr<std::vector<int64_t>> ReadIntValues(const Tensor& t, absl::string_view what);

// The number of elements of a 1-D input whose value is unknown, when its type says so; -1 otherwise.
int64_t StaticLength1D(const TensorType& t);

// ONNX Slice inputs resolved for every dimension of a tensor: a dimension not named in axes keeps
// start 0, end INT64_MAX, step 1. Rejects mismatched lengths, bad or repeated axes and zero steps.
struct SliceSpec {
  std::vector<int64_t> starts;
  std::vector<int64_t> ends;
  std::vector<int64_t> steps;
  std::vector<bool> sliced;
};
// `axes` and `steps` are nullptr when the optional input is omitted.
absl::StatusOr<SliceSpec> ResolveSliceInputs(int rank, absl::Span<const int64_t> starts,
                                             absl::Span<const int64_t> ends, const std::vector<int64_t>* axes,
                                             const std::vector<int64_t>* steps);

// The first index and element count that Slice takes from a dimension of extent `dim` (step != 0):
// negative start/end count from the end, then both are clamped to the dimension.
struct SliceRange {
  int64_t start;
  int64_t length;
};
SliceRange ClampSlice(int64_t dim, int64_t start, int64_t end, int64_t step);

// Walks a row-major output shape and tracks, for each of up to kMaxInputs inputs broadcast to it,
// the element offset into that input. Inputs have rank <= output rank and are right-aligned.
class BroadcastIndexer {
 public:
  static constexpr int kMaxInputs = 3;
  BroadcastIndexer(absl::Span<const int64_t> out_shape, std::vector<std::vector<int64_t>> in_shapes);

  int64_t offset(int input) const { return offsets_[input]; }
  // Advances to the next output element (row-major).
  void Next();

 private:
  std::vector<int64_t> out_shape_;
  std::vector<int64_t> index_;
  // strides_[k][d]: the step in input k for one step along output dimension d (0 when broadcast).
  std::vector<std::vector<int64_t>> strides_;
  int64_t offsets_[kMaxInputs] = {0, 0, 0};
};

}  // namespace tessel

#endif  // TESSEL_GRAPH_OPS_SHAPE_UTIL_H_
