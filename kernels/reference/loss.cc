// Reference kernels for NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (opsets 12-13), computed in
// double and stored in the input's type (f32 or f64). Inputs are viewed as [N, C, D] (D the product of
// d1..dk) and targets as [N, D]. An element whose target equals ignore_index has loss 0 and weight 0;
// "mean" divides the sum of the weighted losses by the sum of the weights taken (ONNX's definition: the
// element count when there are neither weights nor ignored targets).
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "kernels/reference/reference.h"

namespace tessel {
namespace {

using Inputs = absl::Span<const Tensor* const>;

// The loss of log-probabilities lp ([N, C, D], row-major) against `target`, into `loss`.
absl::Status NllLoss(const Node& node, const std::vector<double>& lp, int64_t n, int64_t c, int64_t d,
                     const Tensor& target, const Tensor* weight, Tensor& loss) {
  std::optional<int64_t> ignore;
  if (node.HasAttr("ignore_index")) ignore = node.GetInt("ignore_index", 0);
  const std::string reduction = node.GetString("reduction", "mean");
  double sum = 0, weight_sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < d; ++j) {
      const int64_t at = i * d + j;
      const int64_t t = target.GetAsInt64(at);
      double l = 0, w = 0;
      if (!ignore || t != *ignore) {
        if (t < 0 || t >= c) {
          return absl::OutOfRangeError(absl::StrCat(node.op_type(), " '", node.name(), "': target ", t, " at element ",
                                                    at, " is outside the ", c, " classes (and not ignore_index)"));
        }
        w = weight != nullptr ? weight->GetAsDouble(t) : 1.0;
        l = -lp[(i * c + t) * d + j] * w;
      }
      if (reduction == "none") loss.SetFromDouble(at, l);
      sum += l;
      weight_sum += w;
    }
  }
  if (reduction == "sum") loss.SetFromDouble(0, sum);
  // 0 / 0 when every target is ignored: NaN, as ONNX's reference gives.
  if (reduction == "mean") loss.SetFromDouble(0, sum / weight_sum);
  return absl::OkStatus();
}

absl::Status CheckTypes(const Node& node, Inputs inputs) {
  const DType t = inputs[0]->dtype();
  if ((t != DType::kF32 && t != DType::kF64) || (inputs.size() > 2 && inputs[2] && inputs[2]->dtype() != t) ||
      (inputs[1]->dtype() != DType::kI32 && inputs[1]->dtype() != DType::kI64)) {
    return absl::UnimplementedError(absl::StrCat(node.op_type(), " '", node.name(),
                                                 "': needs f32 or f64 scores (and weights) and i32 or i64 targets"));
  }
  return absl::OkStatus();
}

struct Extents {
  int64_t n, c, d;
};

Extents ExtentsOf(const Tensor& x) {
  int64_t d = 1;
  for (int i = 2; i < x.rank(); ++i) d *= x.dim(i);
  return {x.dim(0), x.dim(1), d};
}

const Tensor* Weight(Inputs inputs) { return inputs.size() > 2 ? inputs[2] : nullptr; }

absl::Status NllLossKernel(const Node& node, Inputs inputs, absl::Span<Tensor> outputs) {
  absl::Status s = CheckTypes(node, inputs);
  if (!s.ok()) return s;
  const Tensor& x = *inputs[0];
  const Extents e = ExtentsOf(x);
  std::vector<double> lp(static_cast<size_t>(x.num_elements()));
  for (int64_t i = 0; i < x.num_elements(); ++i) lp[i] = x.GetAsDouble(i);
  return NllLoss(node, lp, e.n, e.c, e.d, *inputs[1], Weight(inputs), outputs[0]);
}

// LogSoftmax along axis 1 (max-subtracted), then NllLoss; log_prob written when it is an output.
absl::Status SoftmaxCrossEntropyLossKernel(const Node& node, Inputs inputs, absl::Span<Tensor> outputs) {
  absl::Status s = CheckTypes(node, inputs);
  if (!s.ok()) return s;
  const Tensor& x = *inputs[0];
  const Extents e = ExtentsOf(x);
  std::vector<double> lp(static_cast<size_t>(x.num_elements()));
  for (int64_t i = 0; i < e.n; ++i) {
    for (int64_t j = 0; j < e.d; ++j) {
      double max = -std::numeric_limits<double>::infinity();
      for (int64_t k = 0; k < e.c; ++k) max = std::max(max, x.GetAsDouble((i * e.c + k) * e.d + j));
      double sum = 0;
      for (int64_t k = 0; k < e.c; ++k) sum += std::exp(x.GetAsDouble((i * e.c + k) * e.d + j) - max);
      const double log_sum = std::log(sum);
      for (int64_t k = 0; k < e.c; ++k) {
        const int64_t at = (i * e.c + k) * e.d + j;
        lp[at] = x.GetAsDouble(at) - max - log_sum;
      }
    }
  }
  if (outputs.size() > 1 && outputs[1].buffer() != nullptr) {
    for (int64_t i = 0; i < x.num_elements(); ++i) outputs[1].SetFromDouble(i, lp[i]);
  }
  return NllLoss(node, lp, e.n, e.c, e.d, *inputs[1], Weight(inputs), outputs[0]);
}

}  // namespace

void RegisterLossReferenceKernels(ReferenceKernelRegistry& r) {
  r.Register("", "NegativeLogLikelihoodLoss", NllLossKernel);
  r.Register("", "SoftmaxCrossEntropyLoss", SoftmaxCrossEntropyLossKernel);
}

}  // namespace tessel
