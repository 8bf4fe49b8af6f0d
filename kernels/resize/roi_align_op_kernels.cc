// RoiAlign with each region's sampling taps resolved once and shared by every channel.
#include "kernels/resize/roi_align_op_kernels.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/reference/roi_sample.h"

namespace tessel {
namespace {

bool Legal(const OpQuery& q) {
  if (!q.has_input(0) || !q.has_input(1) || !q.has_input(2) || q.outputs.size() != 1) return false;
  const TensorType& x = q.input(0);
  const TensorType& rois = q.input(1);
  const TensorType& idx = q.input(2);
  if (x.dtype != DType::kF32 || rois.dtype != DType::kF32 || q.output(0).dtype != DType::kF32) return false;
  if (idx.dtype != DType::kI64 && idx.dtype != DType::kI32) return false;
  if (!x.is_static() || !rois.is_static() || !idx.is_static() || !q.output(0).is_static()) return false;
  // Tap offsets are 32-bit.
  return x.rank() == 4 && rois.rank() == 2 && q.node.GetString("mode", "avg") == "avg" &&
         x.dims[2].value() * x.dims[3].value() < (int64_t{1} << 31);
}

// Per output element, its samples' four multiply-adds (about 1 ns each); the taps once per region.
double Cost(const OpQuery& q) {
  const std::vector<int64_t> y = q.output(0).StaticShape();
  const int64_t ratio = q.node.GetInt("sampling_ratio", 0);
  const double samples = ratio > 0 ? static_cast<double>(ratio * ratio) : 4.0;
  return static_cast<double>(y[0]) * y[1] * y[2] * y[3] * samples * 1e-9;
}

class RoiAlignKernel : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelArgs& args) {
    auto k = std::make_unique<RoiAlignKernel>();
    const Tensor& x = *args.inputs[0];
    k->n_ = x.dim(0), k->c_ = x.dim(1), k->h_ = x.dim(2), k->w_ = x.dim(3);
    k->oh_ = args.outputs[0].dim(2), k->ow_ = args.outputs[0].dim(3);
    k->offset_ = args.node.GetString("coordinate_transformation_mode", "half_pixel") == "half_pixel" ? 0.5 : 0;
    k->scale_ = args.node.GetFloat("spatial_scale", 1.0f);
    k->ratio_ = args.node.GetInt("sampling_ratio", 0);
    k->x_ = x.data<float>();
    k->rois_ = args.inputs[1];
    k->idx_ = args.inputs[2];
    k->y_ = &args.outputs[0];
    const int64_t per_bin = k->ratio_ > 0 ? k->ratio_ * k->ratio_ : 4;
    k->taps_.reserve(static_cast<size_t>(args.outputs[0].dim(0) * k->oh_ * k->ow_ * per_bin));
    k->bin_start_.reserve(static_cast<size_t>(args.outputs[0].dim(0) * k->oh_ * k->ow_ + 1));
    k->pool_ = args.threadpool;
    k->flags_ = ParallelFlags(args);
    k->threads_ = args.num_threads;
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  // The run's region count is the rois operand's leading extent (within the bound the kernel was
  // created for).
  absl::Status Run() override {
    const int64_t regions = rois_->dim(0);
    if (idx_->num_elements() != regions || y_->dim(0) != regions) {
      return absl::InvalidArgumentError(absl::StrCat("RoiAlign: ", regions, " regions, ", idx_->num_elements(),
                                                     " batch indices, ", y_->dim(0), " output rows"));
    }
    taps_.clear();
    bin_start_.clear();
    batch_.resize(static_cast<size_t>(regions));
    counts_.resize(static_cast<size_t>(regions));
    for (int64_t r = 0; r < regions; ++r) {
      const int64_t b = idx_->GetAsInt64(r);
      if (b < 0 || b >= n_) {
        return absl::InvalidArgumentError(
            absl::StrCat("batch_indices[", r, "] = ", b, " is outside the batch of X (", n_, " images)"));
      }
      batch_[r] = b;
      ResolveTaps(rois_->data<float>() + r * 4, r);
    }
    bin_start_.push_back(static_cast<int64_t>(taps_.size()));
    regions_ = regions;
    const double work = static_cast<double>(taps_.size()) * c_ * 4;
    pthreadpool_t pool = PoolForWork(pool_, work);
    tasks_ = pool != nullptr ? std::max<int64_t>(1, std::min<int64_t>(regions * c_, threads_)) : 1;
    RunTasks(pool, this, tasks_, flags_);
    return absl::OkStatus();
  }

  // Planes [begin, end) of the regions x channels output planes.
  void RunTask(int t) {
    const TaskRange range = SplitForTask(regions_ * c_, tasks_, t);
    const int64_t bins = oh_ * ow_;
    for (int64_t p = range.begin; p < range.end; ++p) {
      const int64_t r = p / c_, c = p % c_;
      const float* plane = x_ + (batch_[r] * c_ + c) * h_ * w_;
      float* dst = y_->data<float>() + p * bins;
      const float inv = 1.0f / counts_[r];
      for (int64_t bin = 0; bin < bins; ++bin) {
        float acc = 0;
        for (int64_t s = bin_start_[r * bins + bin], e = bin_start_[r * bins + bin + 1]; s < e; ++s) {
          const Taps& tap = taps_[s];
          acc += tap.w[0] * plane[tap.offset[0]] + tap.w[1] * plane[tap.offset[1]] + tap.w[2] * plane[tap.offset[2]] +
                 tap.w[3] * plane[tap.offset[3]];
        }
        dst[bin] = acc * inv;
      }
    }
  }

 private:
  struct Taps {
    int32_t offset[4];  // (y0, x0), (y0, x1), (y1, x0), (y1, x1) in the plane
    float w[4];
  };

  // Region r's samples, bin by bin, with the reference's taps (roi_sample.h): zero beyond one pixel
  // outside the image (no taps), clamped to the edge within it.
  void ResolveTaps(const float* box, int64_t r) {
    const RoiRegion region = ResolveRoiRegion(box, scale_, offset_, oh_, ow_, ratio_);
    counts_[r] = static_cast<float>(region.count());
    for (int64_t ph = 0; ph < oh_; ++ph) {
      for (int64_t pw = 0; pw < ow_; ++pw) {
        bin_start_.push_back(static_cast<int64_t>(taps_.size()));
        for (int64_t iy = 0; iy < region.grid_h; ++iy) {
          const double y = region.SampleY(ph, iy);
          for (int64_t ix = 0; ix < region.grid_w; ++ix) {
            RoiTap t;
            if (!RoiBilinearTap(h_, w_, y, region.SampleX(pw, ix), &t)) continue;  // outside (or NaN): no taps
            Taps& s = taps_.emplace_back();
            for (int k = 0; k < 4; ++k) {
              s.offset[k] = static_cast<int32_t>(t.index[k]);
              s.w[k] = static_cast<float>(t.weight[k]);
            }
          }
        }
      }
    }
  }

  int64_t n_ = 0, c_ = 0, h_ = 0, w_ = 0, oh_ = 0, ow_ = 0, ratio_ = 0, regions_ = 0, tasks_ = 1;
  double offset_ = 0.5, scale_ = 1.0;
  const float* x_ = nullptr;
  const Tensor* rois_ = nullptr;
  const Tensor* idx_ = nullptr;
  Tensor* y_ = nullptr;
  std::vector<Taps> taps_;
  std::vector<int64_t> bin_start_;  // per (region, bin), its first tap; one past the last at the end
  std::vector<int64_t> batch_;
  std::vector<float> counts_;
  pthreadpool_t pool_ = nullptr;
  PoolFlags flags_;
  int threads_ = 1;
};

}  // namespace

void RegisterRoiAlignOpKernels(OpKernelRegistry& r) {
  OpKernelEntry e = MakeOpKernelEntry("tessel_f32_roi_align_avg__portable", "RoiAlign", "f32", "any", Isa::kPortable,
                                      "portable", Legal, Cost, RoiAlignKernel::Create);
  e.any_extent = true;
  r.Register(std::move(e));
}

}  // namespace tessel
