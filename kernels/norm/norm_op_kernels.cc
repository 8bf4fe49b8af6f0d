// LayerNormalization, InstanceNormalization and GroupNormalization on the row kernels of
// internal/norm_rows.h. The three differ only in what a block is and where its scale and bias come
// from, which NormShape records once at creation.
#include "kernels/norm/norm_op_kernels.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/norm/internal/norm_rows.h"
#include "kernels/registry/bound_operands.h"
#include "pthreadpool.h"

namespace tessel {
namespace {

using norm_internal::NormRowKernels;

enum class NormKind { kLayer, kInstance, kGroup };

// x as `blocks` blocks of `block` contiguous elements, each normalized on its own. Instance and group
// blocks are `block / plane` planes of one channel each; plane p of block b is channel
// (b % groups) * (block / plane) + p, and takes scale[channel] (per_channel) or scale[b % groups].
struct NormShape {
  int64_t blocks = 0, block = 0, plane = 0, groups = 1;
  bool per_channel = true;
};

bool IsF32Static(const TensorType& t) { return t.dtype == DType::kF32 && t.is_static(); }

bool ResolveShape(const OpQuery& q, NormKind kind, NormShape* s) {
  if (!q.has_input(0) || !q.has_input(1)) return false;
  for (int i = 0; i < static_cast<int>(q.inputs.size()); ++i) {
    if (q.has_input(i) && !IsF32Static(q.input(i))) return false;
  }
  for (const OperandInfo& o : q.outputs) {
    if (!IsF32Static(o.type)) return false;
  }
  const TensorType& x = q.input(0);
  const int64_t rank = x.rank();
  const int64_t total = x.NumElements();
  // One output: LayerNormalization's Mean and InvStdDev outputs are left to the reference kernel.
  if (total < 1 || q.outputs.size() != 1 || q.output(0).NumElements() != total) return false;
  const int64_t scale = q.input(1).NumElements(), bias = q.has_input(2) ? q.input(2).NumElements() : -1;
  if (kind == NormKind::kLayer) {
    int64_t axis = q.node.GetInt("axis", -1);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return false;
    s->block = 1;
    for (int64_t d = axis; d < rank; ++d) s->block *= x.dims[d].value();
    s->blocks = total / s->block;
    s->plane = s->block;
    return scale == s->block && (bias == -1 || bias == s->block);
  }
  if (rank < 3 || bias != scale) return false;
  const int64_t channels = x.dims[1].value();
  s->plane = total / (x.dims[0].value() * channels);
  if (kind == NormKind::kInstance) {
    if (scale != channels) return false;
    s->groups = channels;
  } else {
    s->groups = q.node.GetInt("num_groups", 0);
    if (s->groups < 1 || channels % s->groups != 0 || (scale != channels && scale != s->groups)) return false;
    s->per_channel = scale == channels;
  }
  s->block = channels / s->groups * s->plane;
  s->blocks = total / s->block;
  return true;
}

class NormKernel : public OpKernel {
 public:
  static constexpr int64_t kTileElements = 16384;

  NormKernel(NormKind kind, const NormShape& s, NormRowKernels k, const OpKernelArgs& args)
      : kind_(kind),
        s_(s),
        k_(k),
        pool_(PoolForWork(args.threadpool, static_cast<double>(s.blocks * s.block))),
        flags_(ParallelFlags(args)),
        x_(args.inputs[0]->data<float>()),
        scale_(args.inputs[1]->data<float>()),
        bias_(args.inputs.size() > 2 && args.inputs[2] ? args.inputs[2]->data<float>() : nullptr),
        eps_(args.node.GetFloat("epsilon", 1e-5f)),
        y_(args.outputs[0].data<float>()) {
    // LayerNormalization without a bias adds zeros, so that the row kernel has one form.
    if (bias_ == nullptr) {
      zeros_.assign(static_cast<size_t>(s.block), 0.0f);
      bias_ = zeros_.data();
    }
  }

  absl::Status Run() override {
    const int64_t tile = std::max<int64_t>(1, kTileElements / s_.block);
    if (pool_ == nullptr || s_.blocks <= tile) {
      RunBlocks(0, s_.blocks);
    } else {
      pthreadpool_parallelize_1d_tile_1d(pool_, &NormKernel::Task, this, static_cast<size_t>(s_.blocks),
                                         static_cast<size_t>(tile), flags_.get());
    }
    return absl::OkStatus();
  }

 private:
  static void Task(void* self, size_t begin, size_t count) {
    static_cast<const NormKernel*>(self)->RunBlocks(static_cast<int64_t>(begin), static_cast<int64_t>(begin + count));
  }

  void RunBlocks(int64_t begin, int64_t end) const {
    const int64_t planes = s_.block / s_.plane;
    for (int64_t b = begin; b < end; ++b) {
      const float* x = x_ + b * s_.block;
      float* y = y_ + b * s_.block;
      float mean, rstd;
      k_.moments(s_.block, x, eps_, &mean, &rstd);
      if (kind_ == NormKind::kLayer) {
        k_.affine_row(s_.block, x, mean, rstd, scale_, bias_, y);
        continue;
      }
      const int64_t group = b % s_.groups;
      for (int64_t p = 0; p < planes; ++p) {
        const int64_t c = s_.per_channel ? group * planes + p : group;
        k_.affine_plane(s_.plane, x + p * s_.plane, mean, rstd * scale_[c], bias_[c], y + p * s_.plane);
      }
    }
  }

  const NormKind kind_;
  const NormShape s_;
  const NormRowKernels k_;
  pthreadpool_t pool_;
  PoolFlags flags_;
  const float* x_;
  const float* scale_;
  const float* bias_;
  float eps_;
  float* y_;
  std::vector<float> zeros_;
};

template <NormKind kKind>
bool Legal(const OpQuery& q) {
  NormShape s;
  return ResolveShape(q, kKind, &s);
}

// Three passes over each block (two reads for the moments, a read and a write for the output) at an
// estimated `kElementsPerNs` elements per nanosecond per pass: ranks these entries among themselves.
template <NormKind kKind, int kElementsPerNs>
double Cost(const OpQuery& q) {
  NormShape s;
  if (!ResolveShape(q, kKind, &s)) return 1e9;
  return 3.0 * static_cast<double>(s.blocks * s.block) / (kElementsPerNs * 1e9) + s.blocks * 5e-9;
}

template <NormKind kKind, NormRowKernels (*kRows)()>
absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelArgs& args) {
  NormShape s;
  if (!ResolveShape(BoundOperands(args).query(), kKind, &s)) {
    return absl::InvalidArgumentError(absl::StrCat("node '", args.node.name(), "': the fast ", args.node.op_type(),
                                                   " kernel does not serve it (it needs f32, static shapes and a "
                                                   "scale and bias of the normalized elements or channels)"));
  }
  return std::unique_ptr<OpKernel>(std::make_unique<NormKernel>(kKind, s, kRows(), args));
}

template <NormKind kKind, NormRowKernels (*kRows)(), int kElementsPerNs>
OpKernelEntry Entry(const char* isa_name, Isa isa, const char* backend) {
  const char* op = kKind == NormKind::kLayer      ? "LayerNormalization"
                   : kKind == NormKind::kInstance ? "InstanceNormalization"
                                                  : "GroupNormalization";
  const char* short_name = kKind == NormKind::kLayer ? "layernorm" : kKind == NormKind::kInstance ? "instancenorm" : "groupnorm";
  return MakeOpKernelEntry(absl::StrCat("tessel_f32_", short_name, "__", isa_name), op, "f32", "any", isa, backend,
                           Legal<kKind>, Cost<kKind, kElementsPerNs>, Create<kKind, kRows>);
}

// tessel.InstanceNorm in channels-last layout ([N, spatial..., C], the layout pass's form of an
// InstanceNormalization between channels-last convolutions): per image, every channel's moments side by
// side over the pixels, then the affine stage; images split over the threads.
class InstanceNormNhwcKernel : public OpKernel {
 public:
  InstanceNormNhwcKernel(NormRowKernels k, const OpKernelArgs& args)
      : k_(k),
        x_(args.inputs[0]->data<float>()),
        scale_(args.inputs[1]->data<float>()),
        bias_(args.inputs[2]->data<float>()),
        eps_(args.node.GetFloat("epsilon", 1e-5f)),
        y_(args.outputs[0].data<float>()) {
    const Tensor& x = *args.inputs[0];
    images_ = x.dim(0);
    channels_ = x.dim(x.rank() - 1);
    pixels_ = x.num_elements() / (images_ * channels_);
    pool_ = PoolForWork(args.threadpool, static_cast<double>(x.num_elements()));
    flags_ = ParallelFlags(args);
    scratch_.resize(static_cast<size_t>(images_ * 3 * channels_));
  }

  static bool Resolve(const OpQuery& q) {
    if (q.node.GetString("layout", "nchw") != "nhwc" || !q.has_input(2) || q.outputs.size() != 1) return false;
    for (int i = 0; i < 3; ++i) {
      if (!IsF32Static(q.input(i))) return false;
    }
    const TensorType& x = q.input(0);
    if (x.rank() < 3 || x.NumElements() < 1) return false;
    const int64_t c = x.dims.back().value();
    return q.input(1).NumElements() == c && q.input(2).NumElements() == c;
  }

  absl::Status Run() override {
    if (pool_ == nullptr || images_ == 1) {
      for (int64_t n = 0; n < images_; ++n) Image(n);
    } else {
      pthreadpool_parallelize_1d(pool_, &InstanceNormNhwcKernel::Task, this, static_cast<size_t>(images_),
                                 flags_.get());
    }
    return absl::OkStatus();
  }

 private:
  static void Task(void* self, size_t n) { static_cast<InstanceNormNhwcKernel*>(self)->Image(static_cast<int64_t>(n)); }

  void Image(int64_t n) {
    float* mean = scratch_.data() + n * 3 * channels_;
    float* rstd = mean + channels_;
    float* a = rstd + channels_;
    const int64_t offset = n * pixels_ * channels_;
    k_.channel_moments(pixels_, channels_, x_ + offset, eps_, mean, rstd);
    for (int64_t c = 0; c < channels_; ++c) a[c] = rstd[c] * scale_[c];
    k_.channel_affine(pixels_, channels_, x_ + offset, mean, a, bias_, y_ + offset);
  }

  const NormRowKernels k_;
  const float* x_;
  const float* scale_;
  const float* bias_;
  float eps_;
  float* y_;
  int64_t images_ = 0, channels_ = 0, pixels_ = 0;
  pthreadpool_t pool_ = nullptr;
  PoolFlags flags_;
  std::vector<float> scratch_;  // per image: mean, rstd, rstd x scale
};

bool InstanceNormNhwcLegal(const OpQuery& q) { return InstanceNormNhwcKernel::Resolve(q); }

template <int kElementsPerNs>
double InstanceNormNhwcCost(const OpQuery& q) {
  if (!InstanceNormNhwcKernel::Resolve(q)) return 1e9;
  return 3.0 * static_cast<double>(q.input(0).NumElements()) / (kElementsPerNs * 1e9) + 1e-7;
}

template <NormRowKernels (*kRows)()>
absl::StatusOr<std::unique_ptr<OpKernel>> CreateInstanceNormNhwc(const OpKernelArgs& args) {
  if (!InstanceNormNhwcKernel::Resolve(BoundOperands(args).query())) {
    return absl::InvalidArgumentError(absl::StrCat("node '", args.node.name(),
                                                   "': the channels-last instance norm kernel needs f32, static "
                                                   "shapes, layout nhwc and a scale and bias per channel"));
  }
  return std::unique_ptr<OpKernel>(std::make_unique<InstanceNormNhwcKernel>(kRows(), args));
}

template <NormRowKernels (*kRows)(), int kElementsPerNs>
void RegisterIsa(OpKernelRegistry& r, const char* isa_name, Isa isa, const char* backend) {
  r.Register(Entry<NormKind::kLayer, kRows, kElementsPerNs>(isa_name, isa, backend));
  r.Register(Entry<NormKind::kInstance, kRows, kElementsPerNs>(isa_name, isa, backend));
  r.Register(Entry<NormKind::kGroup, kRows, kElementsPerNs>(isa_name, isa, backend));
  r.Register(MakeOpKernelEntry(absl::StrCat("tessel_f32_instancenorm_nhwc__", isa_name), "tessel.InstanceNorm", "f32",
                               "nhwc", isa, backend, InstanceNormNhwcLegal, InstanceNormNhwcCost<kElementsPerNs>,
                               CreateInstanceNormNhwc<kRows>));
}

}  // namespace

void RegisterNormOpKernels(OpKernelRegistry& r) {
  RegisterIsa<norm_internal::NormRowsAutovec, 2>(r, "autovec", Isa::kPortable, "portable");
#if defined(__x86_64__)
  RegisterIsa<norm_internal::NormRowsAvx2, 4>(r, "avx2", Isa::kAvx2, "x86");
  RegisterIsa<norm_internal::NormRowsAvx512, 6>(r, "avx512", Isa::kAvx512, "x86");
#endif
}

}  // namespace tessel
