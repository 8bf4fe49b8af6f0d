// Resize over the last two axes as row kernels. The reference (kernels/reference/nn.cc) interpolates
// axis by axis in double through whole-tensor temporaries; here the source rows, columns and weights
// are mapped once at creation by the same coordinate rules (kernels/reference/resize_coords.h) and each output row
// is one pass of a vectorized row kernel.
#include "kernels/resize/resize_op_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/ops/nn_params.h"
#include "kernels/reference/resize_coords.h"
#include "kernels/resize/internal/resize_rows.h"

namespace tessel {
namespace {

using resize_internal::ResizeRowFns;

// An empty scales tensor (opset 11 writes one beside sizes) counts as absent, as in the reference.
bool HasValues(const OpQuery& q, int i) { return q.has_input(i) && q.input(i).NumElements() > 0; }

// Why `p` over input `x` and output `y` is not a resize of the last two axes ("" when it is).
const char* Unsupported(const ResizeParams& p, const TensorType& x, const TensorType& y) {
  const int rank = x.rank();
  if (p.mode == ResizeParams::Mode::kCubic) return "cubic mode (the reference kernel's)";
  if (p.coordinate_mode == ResizeParams::CoordinateMode::kTfCropAndResize) {
    return "tf_crop_and_resize (the reference kernel's)";
  }
  if (rank < 2 || y.rank() != rank || !x.is_static() || !y.is_static()) return "not a static tensor of rank >= 2";
  for (int a = 0; a < rank; ++a) {
    if (!p.output[a].is_static() || p.output[a].value() != y.dims[a].value()) return "output shape differs";
  }
  for (int a = 0; a < rank - 2; ++a) {
    if (p.scales[a] != 1.0 || x.dims[a].value() != y.dims[a].value()) return "resizes a leading axis";
  }
  for (int a = rank - 2; a < rank; ++a) {
    if (x.dims[a].value() < 1 || x.dims[a].value() > INT32_MAX) return "empty or over 2^31 input extent";
  }
  return "";
}

// A constant operand's data. OperandInfo says only whether an operand is constant, but the node's own
// input Values carry the data wherever selection runs: the compiler's graph and the runtime's decode of
// the plan (artifact/plan_graph.h: weight tensors become constants). nullptr where it is not known.
const Tensor* ConstantData(const OpQuery& q, int i) {
  if (!q.has_input(i) || !q.inputs[i].constant || i >= q.node.num_inputs() || q.node.input(i) == nullptr) {
    return nullptr;
  }
  return q.node.input(i)->constant().get();
}

bool Legal(const OpQuery& q) {
  if (!q.has_input(0) || q.outputs.size() != 1) return false;
  if (q.input(0).dtype != DType::kF32 || q.output(0).dtype != DType::kF32) return false;
  const bool has_scales = HasValues(q, 2), has_sizes = HasValues(q, 3);
  const int given = has_scales ? 2 : 3;
  const Tensor* values = ConstantData(q, given);
  if (values == nullptr) return false;
  absl::StatusOr<ResizeParams> p = ResolveResizeParams(q.node, q.input(0).dims, has_scales, values, has_sizes, values);
  return p.ok() && *Unsupported(*p, q.input(0), q.output(0)) == '\0';
}

// About 1 ns per output element of a linear resize (four indexed reads; DeepLabV3's 21x96x96 output in
// 0.18 ms, Zen 5), a third of that for nearest (one read), plus one pass over input and output.
double Cost(const OpQuery& q) {
  const double in = static_cast<double>(q.input(0).NumElements()), out = static_cast<double>(q.output(0).NumElements());
  const bool linear = q.node.GetString("mode", "nearest") == "linear";
  return out * 1e-9 * (linear ? 1.0 : 1.0 / 3) + (in + out) * 4 / 20e9;
}

class ResizeKernel : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelArgs& args, ResizeRowFns rows) {
    const Tensor& x = *args.inputs[0];
    const Tensor& y = args.outputs[0];
    auto in = [&](int i) { return i < static_cast<int>(args.inputs.size()) ? args.inputs[i] : nullptr; };
    const bool has_scales = in(2) != nullptr && in(2)->num_elements() > 0;
    const bool has_sizes = in(3) != nullptr && in(3)->num_elements() > 0;
    absl::StatusOr<ResizeParams> p = ResolveResizeParams(args.node, x.type().dims, has_scales, in(2), has_sizes, in(3));
    if (!p.ok()) return p.status();
    if (const char* why = Unsupported(*p, x.type(), y.type()); *why != '\0') {
      return absl::InvalidArgumentError(absl::StrCat("node '", args.node.name(), "': Resize ", why));
    }
    const int rank = x.rank();
    auto k = std::unique_ptr<ResizeKernel>(new ResizeKernel);
    k->rows_ = rows;
    k->linear_ = p->mode == ResizeParams::Mode::kLinear;
    k->h_ = x.dim(rank - 2);
    k->w_ = x.dim(rank - 1);
    k->planes_ = x.num_elements() / (k->h_ * k->w_);
    const int64_t oh = y.dim(rank - 2), ow = y.dim(rank - 1);
    // Per output index along one axis: the two source indices and the far one's weight (linear), or the
    // source index (nearest, in i0), exactly as the reference maps them.
    auto map = [&](int axis, int64_t n_in, int64_t n_out, std::vector<int32_t>* i0, std::vector<int32_t>* i1,
                   std::vector<float>* w1) {
      for (int64_t o = 0; o < n_out; ++o) {
        const double src = ResizeSourceCoordinate(*p, axis, o, n_in, n_out);
        if (!k->linear_) {
          i0->push_back(static_cast<int32_t>(ResizeNearestIndex(p->nearest_mode, src, n_in)));
          continue;
        }
        const double c = std::clamp(src, 0.0, static_cast<double>(n_in - 1));
        const int64_t lo = static_cast<int64_t>(std::floor(c));
        i0->push_back(static_cast<int32_t>(lo));
        i1->push_back(static_cast<int32_t>(std::min(lo + 1, n_in - 1)));
        w1->push_back(static_cast<float>(c - lo));
      }
    };
    map(rank - 2, k->h_, oh, &k->y0_, &k->y1_, &k->wy_);
    map(rank - 1, k->w_, ow, &k->x0_, &k->x1_, &k->wx_);
    k->x_ = x.data<float>();
    k->y_ = args.outputs[0].data<float>();
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Run() override {
    const int64_t oh = static_cast<int64_t>(y0_.size()), ow = static_cast<int64_t>(x0_.size());
    float* y = y_;
    for (int64_t plane = 0; plane < planes_; ++plane) {
      const float* x = x_ + plane * h_ * w_;
      for (int64_t r = 0; r < oh; ++r, y += ow) {
        if (linear_) {
          rows_.linear(ow, x + y0_[r] * w_, x + y1_[r] * w_, wy_[r], x0_.data(), x1_.data(), wx_.data(), y);
        } else {
          rows_.nearest(ow, x + y0_[r] * w_, x0_.data(), y);
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  ResizeRowFns rows_{};
  bool linear_ = false;
  int64_t planes_ = 0, h_ = 0, w_ = 0;
  std::vector<int32_t> y0_, y1_, x0_, x1_;  // source rows and columns (nearest: y0_ and x0_ only)
  std::vector<float> wy_, wx_;              // the weight of y1_ / x1_ (linear)
  const float* x_ = nullptr;
  float* y_ = nullptr;
};

template <ResizeRowFns (*kRows)()>
absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelArgs& args) {
  return ResizeKernel::Create(args, kRows());
}

}  // namespace

void RegisterResizeOpKernels(OpKernelRegistry& r) {
  r.Register(MakeOpKernelEntry("tessel_f32_resize2d_nchw__autovec", "Resize", "f32", "any", Isa::kPortable,
                               "portable", Legal, Cost, Create<resize_internal::ResizeRowsAutovec>));
}

}  // namespace tessel
