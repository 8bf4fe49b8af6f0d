// Reference Einsum: one loop over every label of the equation (output labels outer, summed labels
// inner), multiplying the inputs' elements and accumulating in double (int64 for integer inputs).
// Diagonals and broadcasting fall out of the strides: a label repeated in one input adds its strides,
// and an extent of 1 stretched to the label's extent gets stride 0.
#include <map>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/ops/einsum_spec.h"
#include "kernels/reference/reference.h"

namespace tessel {
namespace {

using Inputs = absl::Span<const Tensor* const>;

template <typename T, typename Acc>
void EinsumLoop(Inputs in, const std::vector<int64_t>& extents, const std::vector<std::vector<int64_t>>& strides,
                int64_t out_count, int64_t sum_count, T* y) {
  const int labels = static_cast<int>(extents.size());
  const int n = static_cast<int>(in.size());
  std::vector<const T*> data(n);
  for (int i = 0; i < n; ++i) data[i] = in[i]->data<T>();
  std::vector<int64_t> index(labels, 0);
  std::vector<int64_t> offset(n, 0);
  for (int64_t o = 0; o < out_count; ++o) {
    Acc acc = 0;
    for (int64_t s = 0; s < sum_count; ++s) {
      Acc p = 1;
      for (int i = 0; i < n; ++i) p *= static_cast<Acc>(data[i][offset[i]]);
      acc += p;
      // Odometer over all labels, the last (innermost summed) fastest; offsets follow incrementally.
      for (int l = labels - 1; l >= 0; --l) {
        ++index[l];
        for (int i = 0; i < n; ++i) offset[i] += strides[i][l];
        if (index[l] < extents[l]) break;
        for (int i = 0; i < n; ++i) offset[i] -= strides[i][l] * extents[l];
        index[l] = 0;
      }
    }
    y[o] = static_cast<T>(acc);
  }
}

absl::Status EinsumKernel(const Node& node, Inputs in, absl::Span<Tensor> out) {
  std::vector<int> ranks;
  for (const Tensor* t : in) ranks.push_back(t->rank());
  absl::StatusOr<EinsumSpec> spec = ParseEinsum(node.GetString("equation", ""), ranks);
  if (!spec.ok()) return spec.status();
  // Loop order: output labels, then summed labels.
  std::vector<int> order = spec->output;
  order.insert(order.end(), spec->summed.begin(), spec->summed.end());
  std::map<int, int> position;
  for (size_t k = 0; k < order.size(); ++k) position[order[k]] = static_cast<int>(k);
  std::vector<int64_t> extents(order.size(), 1);
  for (size_t i = 0; i < in.size(); ++i) {
    for (size_t d = 0; d < spec->inputs[i].size(); ++d) {
      int64_t& e = extents[position.at(spec->inputs[i][d])];
      if (in[i]->dim(d) != 1) e = in[i]->dim(d);  // inference checked that the extents broadcast
    }
  }
  std::vector<std::vector<int64_t>> strides(in.size(), std::vector<int64_t>(order.size(), 0));
  for (size_t i = 0; i < in.size(); ++i) {
    const std::vector<int64_t> s = RowMajorStrides(in[i]->shape());
    for (size_t d = 0; d < spec->inputs[i].size(); ++d) {
      if (in[i]->dim(d) != 1) strides[i][position.at(spec->inputs[i][d])] += s[d];
    }
  }
  int64_t out_count = 1, sum_count = 1;
  for (size_t k = 0; k < order.size(); ++k) (k < spec->output.size() ? out_count : sum_count) *= extents[k];
  Tensor& y = out[0];
  if (out_count == 0) return absl::OkStatus();
  switch (y.dtype()) {
    case DType::kF32: EinsumLoop<float, double>(in, extents, strides, out_count, sum_count, y.data<float>()); break;
    case DType::kF64: EinsumLoop<double, double>(in, extents, strides, out_count, sum_count, y.data<double>()); break;
    // Integer products wrap as in numpy: computed unsigned so that overflow stays defined.
    case DType::kI32:
      EinsumLoop<int32_t, uint64_t>(in, extents, strides, out_count, sum_count, y.data<int32_t>());
      break;
    case DType::kI64:
      EinsumLoop<int64_t, uint64_t>(in, extents, strides, out_count, sum_count, y.data<int64_t>());
      break;
    default:
      return absl::UnimplementedError(absl::StrCat("Einsum equation '", node.GetString("equation", ""), "': dtype ",
                                                   DTypeName(y.dtype()), " is not supported (f32, f64, i32 or i64)"));
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterEinsumReferenceKernels(ReferenceKernelRegistry& r) { r.Register("", "Einsum", EinsumKernel); }

}  // namespace tessel
