// Attention row by row: per query, the scores of every visible key (a dot product over the head size,
// contiguous in Q and K), the additive mask through strides resolved at creation, a float softmax and
// the weighted sum of value rows. The (batch, head) pairs split over the session's threads. The loops
// over the head size are plain and contiguous, for the compiler's vectorizer.
#include "kernels/attention/attention_op_kernels.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"

namespace tessel {
namespace {

bool Legal(const OpQuery& q) {
  if (!q.has_input(0) || !q.has_input(1) || !q.has_input(2) || q.outputs.size() != 1) return false;
  for (int i = 0; i < 3; ++i) {
    if (q.input(i).dtype != DType::kF32 || !q.input(i).is_static() || q.input(i).rank() != 4) return false;
  }
  if (q.has_input(3) && (q.input(3).dtype != DType::kF32 || !q.input(3).is_static() || q.input(3).rank() > 4)) {
    return false;
  }
  return q.output(0).dtype == DType::kF32 && q.output(0).is_static();
}

// Two multiply-adds per (query, key, head element) at about 4 GFLOP/s of plain vectorized loops, plus
// an exponential per score.
double Cost(const OpQuery& q) {
  const std::vector<int64_t> qs = q.input(0).StaticShape(), ks = q.input(1).StaticShape(),
                             vs = q.input(2).StaticShape();
  const double scores = static_cast<double>(qs[0]) * qs[1] * qs[2] * ks[2];
  return scores * (qs[3] + vs[3]) / 4e9 + scores * 5e-9;
}

class AttentionKernel : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelArgs& args) {
    auto k = std::make_unique<AttentionKernel>();
    const Tensor& q = *args.inputs[0];
    const Tensor& key = *args.inputs[1];
    const Tensor& v = *args.inputs[2];
    k->batch_ = q.dim(0), k->hq_ = q.dim(1), k->sq_ = q.dim(2), k->d_ = q.dim(3);
    k->hkv_ = key.dim(1), k->sk_ = key.dim(2), k->dv_ = v.dim(3);
    if (k->hkv_ == 0 || k->hq_ % k->hkv_ != 0 || key.dim(3) != k->d_ || v.dim(2) != k->sk_) {
      return absl::InvalidArgumentError(absl::StrCat("node '", args.node.name(), "': inconsistent Q, K, V shapes"));
    }
    k->scale_ = args.node.GetFloat("scale", static_cast<float>(1.0 / std::sqrt(static_cast<double>(k->d_))));
    k->causal_ = args.node.GetInt("causal", 0) != 0;
    const Tensor* mask = args.inputs.size() > 3 ? args.inputs[3] : nullptr;
    if (mask != nullptr) {
      // Right-aligned broadcast to [B, Hq, Sq, Sk]: a stride of 0 along extents of 1.
      const int64_t full[4] = {k->batch_, k->hq_, k->sq_, k->sk_};
      int64_t stride = 1;
      for (int d = 3, m = mask->rank() - 1; d >= 0; --d, --m) {
        if (m < 0) continue;
        if (mask->dim(m) != 1 && mask->dim(m) != full[d]) {
          return absl::InvalidArgumentError(absl::StrCat("node '", args.node.name(), "': mask ",
                                                         mask->type().ToString(), " does not broadcast"));
        }
        k->mask_strides_[d] = mask->dim(m) == 1 ? 0 : stride;
        stride *= mask->dim(m);
      }
      k->mask_ = mask->data<float>();
    }
    k->q_ = q.data<float>(), k->k_ = key.data<float>(), k->v_ = v.data<float>();
    k->y_ = args.outputs[0].data<float>();
    const int64_t pairs = k->batch_ * k->hq_;
    const double macs = static_cast<double>(pairs) * k->sq_ * k->sk_ * (k->d_ + k->dv_);
    k->pool_ = PoolForWork(args.threadpool, macs);
    k->flags_ = ParallelFlags(args);
    k->tasks_ = k->pool_ != nullptr ? std::max<int64_t>(1, std::min<int64_t>(pairs, args.num_threads)) : 1;
    k->scores_.assign(static_cast<size_t>(k->tasks_) * k->sk_, 0.0);
    k->accumulators_.assign(static_cast<size_t>(k->tasks_) * k->dv_, 0.0f);
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Run() override {
    RunTasks(pool_, this, tasks_, flags_);
    return absl::OkStatus();
  }

  void RunTask(int t) {
    const TaskRange r = SplitForTask(batch_ * hq_, tasks_, t);
    double* scores = scores_.data() + static_cast<size_t>(t) * sk_;
    float* acc = accumulators_.data() + static_cast<size_t>(t) * dv_;
    const int64_t group = hq_ / hkv_;
    for (int64_t pair = r.begin; pair < r.end; ++pair) {
      const int64_t b = pair / hq_, h = pair % hq_;
      const float* kp = k_ + (b * hkv_ + h / group) * sk_ * d_;
      const float* vp = v_ + (b * hkv_ + h / group) * sk_ * dv_;
      for (int64_t i = 0; i < sq_; ++i) {
        const float* qp = q_ + (pair * sq_ + i) * d_;
        // Keys past i + Sk - Sq are hidden under causal masking.
        const int64_t visible = causal_ ? std::max<int64_t>(0, std::min(sk_, i + sk_ - sq_ + 1)) : sk_;
        const float* mp = mask_ != nullptr ? mask_ + b * mask_strides_[0] + h * mask_strides_[1] + i * mask_strides_[2]
                                           : nullptr;
        // Scores in double: a key-padding mask of -10000 would leave a float score 1e-3 of resolution,
        // and a row whose keys are all masked is decided by those low digits.
        double mx = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < visible; ++j) {
          const float* kj = kp + j * d_;
          float dot = 0;
#pragma omp simd reduction(+ : dot)
          for (int64_t c = 0; c < d_; ++c) dot += qp[c] * kj[c];
          double s = static_cast<double>(dot) * scale_;
          if (mp != nullptr) s += mp[j * mask_strides_[3]];
          scores[j] = s;
          mx = std::max(mx, s);
        }
        float sum = 0;
        for (int64_t j = 0; j < visible; ++j) {
          scores[j] = std::exp(static_cast<float>(scores[j] - mx));
          sum += static_cast<float>(scores[j]);
        }
        // A row with no visible key, or every score -inf, gives NaN, as the reference and Softmax do.
        const float inv = visible > 0 ? 1.0f / sum : std::numeric_limits<float>::quiet_NaN();
        std::fill(acc, acc + dv_, 0.0f);
        for (int64_t j = 0; j < visible; ++j) {
          const float p = static_cast<float>(scores[j]);
          const float* vj = vp + j * dv_;
          for (int64_t c = 0; c < dv_; ++c) acc[c] += p * vj[c];
        }
        float* yp = y_ + (pair * sq_ + i) * dv_;
        for (int64_t c = 0; c < dv_; ++c) yp[c] = acc[c] * inv;
      }
    }
  }

 private:
  int64_t batch_ = 0, hq_ = 0, sq_ = 0, d_ = 0, hkv_ = 0, sk_ = 0, dv_ = 0;
  float scale_ = 1;
  bool causal_ = false;
  const float* q_ = nullptr;
  const float* k_ = nullptr;
  const float* v_ = nullptr;
  const float* mask_ = nullptr;
  int64_t mask_strides_[4] = {0, 0, 0, 0};
  float* y_ = nullptr;
  pthreadpool_t pool_ = nullptr;
  PoolFlags flags_;
  int64_t tasks_ = 1;
  std::vector<double> scores_;       // per task, Sk
  std::vector<float> accumulators_;  // per task, Dv
};

}  // namespace

void RegisterAttentionOpKernels(OpKernelRegistry& r) {
  r.Register(MakeOpKernelEntry("tessel_f32_attention__portable", "tessel.Attention", "f32", "any", Isa::kPortable,
                               "portable", Legal, Cost, AttentionKernel::Create));
}

}  // namespace tessel
