// ConvTranspose as a GEMM and a col2im pass.
#include "kernels/conv/conv_transpose.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "graph/ops/nn_params.h"
#include "kernels/gemm/gemm.h"

namespace tessel {
namespace {

std::vector<Dim> DimsOf(const TensorType& t) { return t.dims; }

bool Legal(const OpQuery& q) {
  if (!q.has_input(0) || !q.has_input(1) || q.outputs.size() != 1) return false;
  const TensorType& x = q.input(0);
  const TensorType& w = q.input(1);
  if (x.dtype != DType::kF32 || w.dtype != DType::kF32 || q.output(0).dtype != DType::kF32) return false;
  if (!x.is_static() || !w.is_static() || !q.output(0).is_static() || x.rank() != 4 || w.rank() != 4) return false;
  if (!q.inputs[1].constant || (q.has_input(2) && (!q.inputs[2].constant || q.input(2).dtype != DType::kF32))) {
    return false;
  }
  if (q.node.GetInt("group", 1) != 1) return false;
  return ResolveConvTransposeParams(q.node, x.dims, w.dims).ok();
}

// The GEMM's multiply-adds at about 60 GFLOP/s, and the col2im pass over the columns.
double Cost(const OpQuery& q) {
  const std::vector<int64_t> x = q.input(0).StaticShape(), w = q.input(1).StaticShape();
  const double pixels = static_cast<double>(x[0]) * x[2] * x[3];
  const double cols = static_cast<double>(w[1]) * w[2] * w[3];
  return 2 * pixels * x[1] * cols / 60e9 + pixels * cols * 0.5e-9;
}

class ConvTransposeKernel : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelArgs& args) {
    auto k = std::make_unique<ConvTransposeKernel>();
    const Tensor& x = *args.inputs[0];
    const Tensor& w = *args.inputs[1];
    absl::StatusOr<ConvTransposeParams> p =
        ResolveConvTransposeParams(args.node, DimsOf(x.type()), DimsOf(w.type()));
    if (!p.ok()) return p.status();
    k->x_ = args.inputs[0];
    k->y_ = &args.outputs[0];
    k->c_ = x.dim(1), k->h_ = x.dim(2), k->w_ = x.dim(3);
    k->m_ = w.dim(1), k->kh_ = w.dim(2), k->kw_ = w.dim(3);
    k->oh_ = args.outputs[0].dim(2), k->ow_ = args.outputs[0].dim(3);
    k->sh_ = p->strides[0], k->sw_ = p->strides[1], k->dh_ = p->dilations[0], k->dw_ = p->dilations[1];
    k->ph_ = p->pads_begin[0], k->pw_ = p->pads_begin[1];
    k->bias_ = args.inputs.size() > 2 && args.inputs[2] != nullptr ? args.inputs[2]->data<float>() : nullptr;
    const int64_t cols = k->m_ * k->kh_ * k->kw_;
    absl::StatusOr<PackedGemmF32> gemm = PackedGemmF32::Create(cols, k->c_, w.data<float>(), cols, k->h_ * k->w_);
    if (!gemm.ok()) return gemm.status();
    k->gemm_ = std::move(*gemm);
    k->pool_ = args.threadpool;
    k->flags_ = ParallelFlags(args);
    k->tasks_ = std::max(1, args.num_threads);
    const int64_t pixels = k->h_ * k->w_;
    k->per_task_ = static_cast<size_t>(pixels * k->c_ + pixels * cols) * sizeof(float) + k->gemm_.workspace_bytes();
    k->scratch_.Bind(args, k->tasks_, k->per_task_);
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  // The batch is the run's leading extent of X (within the bound the kernel was created for).
  absl::Status Run() override {
    batch_ = x_->dim(0);
    const double macs = static_cast<double>(batch_) * h_ * w_ * c_ * m_ * kh_ * kw_;
    pthreadpool_t pool = PoolForWork(pool_, macs);
    run_tasks_ = pool != nullptr ? static_cast<int>(std::min<int64_t>(tasks_, batch_)) : 1;
    if (batch_ > 0) RunTasks(pool, this, run_tasks_, flags_);
    return absl::OkStatus();
  }

  // Images [begin, end) of the batch.
  void RunTask(int t) {
    const TaskRange r = SplitForTask(batch_, run_tasks_, t);
    const int64_t pixels = h_ * w_, cols = m_ * kh_ * kw_;
    float* xt = static_cast<float*>(scratch_.Get(t));
    float* col = xt + pixels * c_;
    void* workspace = col + pixels * cols;
    for (int64_t n = r.begin; n < r.end; ++n) {
      const float* x = x_->data<float>() + n * c_ * pixels;
      for (int64_t ci = 0; ci < c_; ++ci) {
        for (int64_t p = 0; p < pixels; ++p) xt[p * c_ + ci] = x[ci * pixels + p];
      }
      gemm_.Run(pixels, xt, c_, col, cols, GemmEpilogue{}, 0, cols, workspace);
      float* y = y_->data<float>() + n * m_ * oh_ * ow_;
      for (int64_t m = 0; m < m_; ++m) std::fill_n(y + m * oh_ * ow_, oh_ * ow_, bias_ ? bias_[m] : 0.0f);
      for (int64_t iy = 0; iy < h_; ++iy) {
        for (int64_t ix = 0; ix < w_; ++ix) {
          const float* c = col + (iy * w_ + ix) * cols;
          for (int64_t ky = 0; ky < kh_; ++ky) {
            const int64_t oy = iy * sh_ - ph_ + ky * dh_;
            if (oy < 0 || oy >= oh_) continue;
            for (int64_t kx = 0; kx < kw_; ++kx) {
              const int64_t ox = ix * sw_ - pw_ + kx * dw_;
              if (ox < 0 || ox >= ow_) continue;
              float* dst = y + oy * ow_ + ox;
              const float* src = c + ky * kw_ + kx;
              for (int64_t m = 0; m < m_; ++m) dst[m * oh_ * ow_] += src[m * kh_ * kw_];
            }
          }
        }
      }
    }
  }

 private:
  const Tensor* x_ = nullptr;
  Tensor* y_ = nullptr;
  const float* bias_ = nullptr;
  int64_t c_ = 0, h_ = 0, w_ = 0, m_ = 0, kh_ = 0, kw_ = 0, oh_ = 0, ow_ = 0;
  int64_t sh_ = 1, sw_ = 1, dh_ = 1, dw_ = 1, ph_ = 0, pw_ = 0, batch_ = 0;
  PackedGemmF32 gemm_;
  KernelScratch scratch_;
  size_t per_task_ = 0;
  pthreadpool_t pool_ = nullptr;
  PoolFlags flags_;
  int tasks_ = 1, run_tasks_ = 1;
};

}  // namespace

void RegisterConvTransposeOpKernels(OpKernelRegistry& r) {
  r.Register(MakeOpKernelEntry("tessel_f32_conv_transpose2d_nchw__gemm", "ConvTranspose", "f32", "nchw",
                               Isa::kPortable, "gemm", Legal, Cost, ConvTransposeKernel::Create));
}

}  // namespace tessel
