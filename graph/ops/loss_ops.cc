// Schemas and type inference for the loss operators of opsets 12-13: NegativeLogLikelihoodLoss and
// SoftmaxCrossEntropyLoss. Both take [N, C, d1..dk] scores or log-probabilities, [N, d1..dk] integer class
// indices and an optional [C] weight, and give one loss per element ("none") or its sum or weighted mean.
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/ops/shape_util.h"

namespace tessel {
namespace {

using InferResult = absl::StatusOr<std::vector<TensorType>>;

bool SameExtent(const Dim& a, const Dim& b) { return !a.is_static() || !b.is_static() || a.value() == b.value(); }

// The loss's type: the input's element type, scalar unless the reduction is "none" (then the target's
// extents). The second output, when present, is SoftmaxCrossEntropyLoss's log_prob (the scores' type).
InferResult InferLoss(const InferenceContext& ctx) {
  const std::string op = ctx.node.op_type();
  const TensorType& x = ctx.type(0);
  const TensorType& target = ctx.type(1);
  if (x.dtype != DType::kF32 && x.dtype != DType::kF64) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": input 0 has dtype ", DTypeName(x.dtype), "; expected f32 or f64"));
  }
  if (target.dtype != DType::kI32 && target.dtype != DType::kI64) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": the target (input 1) has dtype ", DTypeName(target.dtype), "; expected i32 or i64"));
  }
  if (x.rank() < 2 || target.rank() != x.rank() - 1) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": input ", x.ToString(), " and target ", target.ToString(),
                                                   " must be [N, C, d1..dk] and [N, d1..dk]"));
  }
  for (int d = 0; d < target.rank(); ++d) {
    if (!SameExtent(target.dims[d], x.dims[d == 0 ? 0 : d + 1])) {
      return absl::InvalidArgumentError(absl::StrCat(op, ": target ", target.ToString(), " does not match input ",
                                                     x.ToString(), " (expected its extents without axis 1)"));
    }
  }
  if (ctx.has_input(2)) {
    const TensorType& w = ctx.type(2);
    if (w.dtype != x.dtype || w.rank() != 1 || !SameExtent(w.dims[0], x.dims[1])) {
      return absl::InvalidArgumentError(
          absl::StrCat(op, ": weight ", w.ToString(), " must be a vector of the input's C = ",
                       x.dims[1].is_static() ? absl::StrCat(x.dims[1].value()) : std::string("C"), " ",
                       DTypeName(x.dtype), " values"));
    }
  }
  const std::string reduction = ctx.node.GetString("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean") {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": reduction '", reduction, "' is not one of 'none', 'sum' and 'mean'"));
  }
  std::vector<TensorType> out = {reduction == "none" ? TensorType(x.dtype, target.dims) : TensorType(x.dtype, {})};
  if (ctx.node.num_outputs() > 1) out.push_back(x);
  return out;
}

}  // namespace

void RegisterLossOps(OpRegistry& r) {
  r.Register({"NegativeLogLikelihoodLoss", "", 2, 3, 1, 1, RequireInputs(2, InferLoss),
              "-input[n, target[n, d...], d...] x weight[target], reduced by 'none', 'sum' or the weighted "
              "'mean'; ignore_index targets count zero"});
  r.Register({"SoftmaxCrossEntropyLoss", "", 2, 3, 1, 2, RequireInputs(2, InferLoss),
              "NegativeLogLikelihoodLoss of LogSoftmax(scores) along axis 1, with that log_prob as an "
              "optional second output"});
}

}  // namespace tessel
