// Bilinear GridSample with the taps resolved once per output point.
#include "kernels/resize/grid_sample_op_kernels.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

namespace tessel {
namespace {

bool Legal(const OpQuery& q) {
  if (!q.has_input(0) || !q.has_input(1) || q.outputs.size() != 1) return false;
  const TensorType& x = q.input(0);
  const TensorType& grid = q.input(1);
  if (x.dtype != DType::kF32 || grid.dtype != DType::kF32 || !x.is_static() || !grid.is_static()) return false;
  if (x.rank() != 4 || grid.rank() != 4 || grid.dims[3].value() != 2) return false;
  if (q.output(0).dtype != DType::kF32 || !q.output(0).is_static()) return false;
  const std::string mode = q.node.GetString("mode", "bilinear");
  const std::string padding = q.node.GetString("padding_mode", "zeros");
  return (mode == "bilinear" || mode == "linear") && (padding == "zeros" || padding == "border");
}

// Four multiply-adds per output element, gathered: about 1 ns each; the taps once per point.
double Cost(const OpQuery& q) {
  const std::vector<int64_t> y = q.output(0).StaticShape();
  const double points = static_cast<double>(y[0]) * y[2] * y[3];
  return points * y[1] * 1e-9 + points * 5e-9;
}

class GridSampleKernel : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelArgs& args) {
    auto k = std::make_unique<GridSampleKernel>();
    const Tensor& x = *args.inputs[0];
    const Tensor& grid = *args.inputs[1];
    k->n_ = x.dim(0), k->c_ = x.dim(1), k->h_ = x.dim(2), k->w_ = x.dim(3);
    k->points_ = grid.dim(1) * grid.dim(2);
    k->align_ = args.node.GetInt("align_corners", 0) == 1;
    k->border_ = args.node.GetString("padding_mode", "zeros") == "border";
    k->x_ = x.data<float>(), k->grid_ = grid.data<float>(), k->y_ = args.outputs[0].data<float>();
    k->taps_.resize(static_cast<size_t>(k->points_));
    k->pool_ = PoolForWork(args.threadpool, 4.0 * static_cast<double>(k->n_ * k->c_ * k->points_));
    k->flags_ = ParallelFlags(args);
    k->tasks_ = k->pool_ != nullptr ? std::max<int64_t>(1, std::min<int64_t>(k->c_, args.num_threads)) : 1;
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Run() override {
    for (batch_ = 0; batch_ < n_; ++batch_) {
      ResolveTaps(grid_ + batch_ * points_ * 2);
      RunTasks(pool_, this, tasks_, flags_);
    }
    return absl::OkStatus();
  }

  // Channels [begin, end) of the current batch element.
  void RunTask(int t) {
    const TaskRange r = SplitForTask(c_, tasks_, t);
    for (int64_t c = r.begin; c < r.end; ++c) {
      const float* plane = x_ + (batch_ * c_ + c) * h_ * w_;
      float* dst = y_ + (batch_ * c_ + c) * points_;
      for (int64_t i = 0; i < points_; ++i) {
        const Taps& p = taps_[i];
        dst[i] = p.w[0] * plane[p.offset[0]] + p.w[1] * plane[p.offset[1]] + p.w[2] * plane[p.offset[2]] +
                 p.w[3] * plane[p.offset[3]];
      }
    }
  }

 private:
  struct Taps {
    int64_t offset[4];  // (y0, x0), (y0, x1), (y1, x0), (y1, x1); clamped inside the plane
    float w[4];         // 0 for a tap outside it
  };

  // As the reference: the grid value to a pixel coordinate, border padding clamps the point, and zeros
  // padding drops the taps outside the image.
  void ResolveTaps(const float* grid) {
    for (int64_t i = 0; i < points_; ++i) {
      double gx = Unnormalize(grid[2 * i], w_), gy = Unnormalize(grid[2 * i + 1], h_);
      if (border_) {
        gx = std::min(static_cast<double>(w_ - 1), std::max(0.0, gx));
        gy = std::min(static_cast<double>(h_ - 1), std::max(0.0, gy));
      }
      const double x0 = std::floor(gx), y0 = std::floor(gy);
      const double tx = gx - x0, ty = gy - y0;
      const int64_t xs[2] = {static_cast<int64_t>(x0), static_cast<int64_t>(x0) + 1};
      const int64_t ys[2] = {static_cast<int64_t>(y0), static_cast<int64_t>(y0) + 1};
      const double wx[2] = {1 - tx, tx}, wy[2] = {1 - ty, ty};
      Taps& p = taps_[i];
      for (int a = 0; a < 2; ++a) {
        for (int b = 0; b < 2; ++b) {
          const bool inside = ys[a] >= 0 && ys[a] < h_ && xs[b] >= 0 && xs[b] < w_;
          p.w[2 * a + b] = inside ? static_cast<float>(wy[a] * wx[b]) : 0.0f;
          p.offset[2 * a + b] = inside ? ys[a] * w_ + xs[b] : 0;
        }
      }
    }
  }

  double Unnormalize(double g, int64_t size) const {
    return align_ ? (g + 1) / 2 * (size - 1) : ((g + 1) * size - 1) / 2;
  }

  int64_t n_ = 0, c_ = 0, h_ = 0, w_ = 0, points_ = 0, batch_ = 0;
  bool align_ = false, border_ = false;
  const float* x_ = nullptr;
  const float* grid_ = nullptr;
  float* y_ = nullptr;
  std::vector<Taps> taps_;
  pthreadpool_t pool_ = nullptr;
  PoolFlags flags_;
  int64_t tasks_ = 1;
};

}  // namespace

void RegisterGridSampleOpKernels(OpKernelRegistry& r) {
  r.Register(MakeOpKernelEntry("tessel_f32_grid_sample_bilinear__portable", "GridSample", "f32", "any",
                               Isa::kPortable, "portable", Legal, Cost, GridSampleKernel::Create));
}

}  // namespace tessel
