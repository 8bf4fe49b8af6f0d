// Concat and Pad as run-length copies.
#include "kernels/slice/concat_pad_op_kernels.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/ops/nn_params.h"

namespace tessel {
namespace {

bool StaticF32(const TensorType& t) { return t.dtype == DType::kF32 && t.is_static(); }

// One pass over the output at memory speed, plus a few nanoseconds per run.
double CopyCost(const OpQuery& q) { return 8.0 * q.output(0).NumElements() / 20e9 + 1e-7; }

// ---- Concat -------------------------------------------------------------------------------------------

bool ConcatLegal(const OpQuery& q) {
  if (q.outputs.size() != 1 || !StaticF32(q.output(0)) || q.inputs.empty()) return false;
  for (size_t i = 0; i < q.inputs.size(); ++i) {
    if (!q.has_input(static_cast<int>(i)) || !StaticF32(q.input(static_cast<int>(i)))) return false;
  }
  return true;
}

class ConcatKernel : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelArgs& args) {
    const Tensor& y = args.outputs[0];
    int64_t axis = args.node.GetInt("axis", 0);
    if (axis < 0) axis += y.rank();
    if (axis < 0 || axis >= y.rank()) {
      return absl::InvalidArgumentError(absl::StrCat("node '", args.node.name(), "': Concat axis out of range"));
    }
    auto k = std::make_unique<ConcatKernel>();
    k->outer_ = 1;
    for (int64_t d = 0; d < axis; ++d) k->outer_ *= y.dim(d);
    int64_t inner = 1;
    for (int64_t d = axis + 1; d < y.rank(); ++d) inner *= y.dim(d);
    int64_t total = 0;
    for (const Tensor* x : args.inputs) {
      const int64_t size = x->dim(static_cast<int>(axis)) * inner;
      if (size > 0) k->inputs_.push_back({x->data<float>(), size});  // empty inputs add nothing
      total += size;
    }
    if (total * k->outer_ != y.num_elements()) {
      return absl::InvalidArgumentError(absl::StrCat("node '", args.node.name(), "': inputs do not fill the output"));
    }
    k->y_ = args.outputs[0].data<float>();
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Run() override {
    float* y = y_;
    for (int64_t o = 0; o < outer_; ++o) {
      for (const Block& b : inputs_) {
        std::memcpy(y, b.x + o * b.size, static_cast<size_t>(b.size) * sizeof(float));
        y += b.size;
      }
    }
    return absl::OkStatus();
  }

 private:
  struct Block {
    const float* x;
    int64_t size;  // elements per outer index
  };
  std::vector<Block> inputs_;
  int64_t outer_ = 1;
  float* y_ = nullptr;
};

// ---- Pad ----------------------------------------------------------------------------------------------

bool PadLegal(const OpQuery& q) {
  if (!q.has_input(0) || !q.has_input(1) || q.outputs.size() != 1) return false;
  if (!StaticF32(q.input(0)) || q.input(0).rank() < 1 || !StaticF32(q.output(0))) return false;
  if (!q.inputs[1].constant) return false;
  if (q.has_input(2) && (!q.inputs[2].constant || q.input(2).dtype != DType::kF32)) return false;
  if (q.has_input(3) && !q.inputs[3].constant) return false;
  return true;
}

class PadKernel : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelArgs& args) {
    const Tensor& x = *args.inputs[0];
    const Tensor& y = args.outputs[0];
    const Tensor* axes = args.inputs.size() > 3 ? args.inputs[3] : nullptr;
    absl::StatusOr<PadParams> p = ResolvePadParams(args.node, x.rank(), *args.inputs[1], axes);
    if (!p.ok()) return p.status();
    auto k = std::make_unique<PadKernel>();
    const int rank = x.rank();
    // Per axis, each output coordinate's input coordinate, or -1 for the fill value.
    k->maps_.resize(rank);
    for (int r = 0; r < rank; ++r) {
      for (int64_t o = 0; o < y.dim(r); ++o) k->maps_[r].push_back(PadSourceIndex(p->mode, o, p->begin[r], x.dim(r)));
    }
    // The last axis as runs: consecutive input elements, or the fill value.
    const std::vector<int64_t>& last = k->maps_[rank - 1];
    for (int64_t o = 0; o < static_cast<int64_t>(last.size());) {
      int64_t n = 1;
      if (last[o] < 0) {
        while (o + n < static_cast<int64_t>(last.size()) && last[o + n] < 0) ++n;
      } else {
        while (o + n < static_cast<int64_t>(last.size()) && last[o + n] == last[o] + n) ++n;
      }
      k->runs_.push_back({last[o], n});
      o += n;
    }
    k->strides_.assign(rank, 1);
    for (int r = rank - 2; r >= 0; --r) k->strides_[r] = k->strides_[r + 1] * x.dim(r + 1);
    k->rows_ = y.num_elements() / std::max<int64_t>(1, y.dim(rank - 1));
    k->width_ = y.dim(rank - 1);
    k->fill_ = args.inputs.size() > 2 && args.inputs[2] != nullptr && args.inputs[2]->num_elements() > 0
                   ? args.inputs[2]->data<float>()[0]
                   : 0.0f;
    k->x_ = x.data<float>();
    k->y_ = args.outputs[0].data<float>();
    k->index_.assign(rank, 0);
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Run() override {
    const int rank = static_cast<int>(maps_.size());
    std::fill(index_.begin(), index_.end(), 0);
    float* y = y_;
    for (int64_t row = 0; row < rows_ && width_ > 0; ++row, y += width_) {
      // The input row of this output row, or none (a padded row).
      int64_t base = 0;
      bool padded = false;
      for (int r = 0; r < rank - 1; ++r) {
        const int64_t src = maps_[r][index_[r]];
        padded |= src < 0;
        base += src * strides_[r];
      }
      if (padded) {
        std::fill(y, y + width_, fill_);
      } else {
        float* out = y;
        for (const Segment& run : runs_) {
          if (run.src < 0) {
            std::fill(out, out + run.length, fill_);
          } else {
            std::memcpy(out, x_ + base + run.src, static_cast<size_t>(run.length) * sizeof(float));
          }
          out += run.length;
        }
      }
      for (int r = rank - 2; r >= 0; --r) {
        if (++index_[r] < static_cast<int64_t>(maps_[r].size())) break;
        index_[r] = 0;
      }
    }
    return absl::OkStatus();
  }

 private:
  struct Segment {
    int64_t src;  // first input element on the last axis, or -1: the fill value
    int64_t length;
  };
  std::vector<std::vector<int64_t>> maps_;
  std::vector<Segment> runs_;
  std::vector<int64_t> strides_;  // input elements per step of each axis
  std::vector<int64_t> index_;    // the odometer over the output's outer axes
  int64_t rows_ = 0, width_ = 0;
  float fill_ = 0;
  const float* x_ = nullptr;
  float* y_ = nullptr;
};

}  // namespace

void RegisterConcatPadOpKernels(OpKernelRegistry& r) {
  r.Register(MakeOpKernelEntry("tessel_x32_concat__portable", "Concat", "f32", "any", Isa::kPortable, "portable",
                               ConcatLegal, CopyCost, ConcatKernel::Create));
  r.Register(MakeOpKernelEntry("tessel_x32_pad__portable", "Pad", "f32", "any", Isa::kPortable, "portable", PadLegal,
                               CopyCost, PadKernel::Create));
}

}  // namespace tessel
