// Slice as a strided copy. The reference kernel recomputes an index per element; here the outer axes
// advance an odometer of input offsets and the last axis is one memcpy (step 1) or a strided loop.
#include "kernels/slice/slice_op_kernels.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/ops/shape_util.h"

namespace tessel {
namespace {

bool IsIndexType(const TensorType& t) { return t.is_static() && (t.dtype == DType::kI32 || t.dtype == DType::kI64); }

bool Legal(const OpQuery& q) {
  if (!q.has_input(0) || !q.has_input(1) || !q.has_input(2) || q.outputs.size() != 1) return false;
  const TensorType& x = q.input(0);
  if (x.dtype != DType::kF32 || !x.is_static() || x.rank() < 1) return false;
  if (q.output(0).dtype != DType::kF32 || !q.output(0).is_static()) return false;
  for (int i = 1; i < static_cast<int>(q.inputs.size()); ++i) {
    if (q.has_input(i) && (!q.inputs[i].constant || !IsIndexType(q.input(i)))) return false;
  }
  return true;
}

// One pass over the output: about a nanosecond per row and a byte copy per element.
double Cost(const OpQuery& q) {
  const TensorType& y = q.output(0);
  const double elements = static_cast<double>(y.NumElements());
  const double rows = y.rank() > 0 && y.dims.back().value() > 0 ? elements / y.dims.back().value() : 0;
  return rows * 1e-9 + elements * 4 / 20e9;
}

class SliceKernel : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelArgs& args) {
    const Tensor& x = *args.inputs[0];
    std::vector<std::vector<int64_t>> v(5);
    for (int i = 1; i < 5; ++i) {
      if (i >= static_cast<int>(args.inputs.size()) || args.inputs[i] == nullptr) continue;
      absl::StatusOr<std::vector<int64_t>> values = ReadIntValues(*args.inputs[i], "Slice input");
      if (!values.ok()) return values.status();
      v[i] = *std::move(values);
    }
    const bool has_axes = args.inputs.size() > 3 && args.inputs[3] != nullptr;
    const bool has_steps = args.inputs.size() > 4 && args.inputs[4] != nullptr;
    absl::StatusOr<SliceSpec> spec =
        ResolveSliceInputs(x.rank(), v[1], v[2], has_axes ? &v[3] : nullptr, has_steps ? &v[4] : nullptr);
    if (!spec.ok()) return spec.status();
    auto k = std::make_unique<SliceKernel>();
    const int rank = x.rank();
    k->out_.resize(rank);
    k->strides_.resize(rank);
    int64_t stride = 1, count = 1;
    for (int d = rank - 1; d >= 0; --d) {
      const SliceRange r = ClampSlice(x.dim(d), spec->starts[d], spec->ends[d], spec->steps[d]);
      k->out_[d] = r.length;
      k->base_ += r.start * stride;
      k->strides_[d] = spec->steps[d] * stride;
      stride *= x.dim(d);
      count *= r.length;
    }
    if (count != args.outputs[0].num_elements()) {
      return absl::InvalidArgumentError(absl::StrCat("node '", args.node.name(), "': Slice gives ", count,
                                                     " elements, but the output holds ",
                                                     args.outputs[0].num_elements()));
    }
    k->x_ = x.data<float>();
    k->y_ = args.outputs[0].data<float>();
    k->index_.assign(rank, 0);
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Run() override {
    const int rank = static_cast<int>(out_.size());
    const int64_t n = out_[rank - 1], step = strides_[rank - 1];
    int64_t rows = 1;
    for (int d = 0; d < rank - 1; ++d) rows *= out_[d];
    if (n == 0 || rows == 0) return absl::OkStatus();
    std::fill(index_.begin(), index_.end(), 0);
    int64_t offset = base_;
    float* y = y_;
    for (int64_t row = 0; row < rows; ++row, y += n) {
      const float* x = x_ + offset;
      if (step == 1) {
        std::memcpy(y, x, static_cast<size_t>(n) * sizeof(float));
      } else {
        for (int64_t i = 0; i < n; ++i) y[i] = x[i * step];
      }
      // Advance the odometer of the outer axes, carrying into the axes before.
      for (int d = rank - 2; d >= 0; --d) {
        offset += strides_[d];
        if (++index_[d] < out_[d]) break;
        offset -= strides_[d] * out_[d];
        index_[d] = 0;
      }
    }
    return absl::OkStatus();
  }

 private:
  std::vector<int64_t> out_;      // output extents
  std::vector<int64_t> strides_;  // input elements per output step, per axis (negative for negative steps)
  int64_t base_ = 0;              // input offset of output element 0
  std::vector<int64_t> index_;    // the odometer, sized at creation
  const float* x_ = nullptr;
  float* y_ = nullptr;
};

}  // namespace

void RegisterSliceOpKernels(OpKernelRegistry& r) {
  r.Register(MakeOpKernelEntry("tessel_x32_slice__portable", "Slice", "f32", "any", Isa::kPortable, "portable", Legal,
                               Cost, SliceKernel::Create));
}

}  // namespace tessel
