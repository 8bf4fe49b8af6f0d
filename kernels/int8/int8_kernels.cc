// Dispatch of quantized nodes to the VNNI GEMM, with im2col for convolutions.
#include "kernels/int8/int8_kernels.h"

#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/ops/nn_params.h"

namespace tessel {
namespace {

// Packed weights shared by every preparation of the same weight (and bias) tensors.
std::shared_ptr<const PackedQGemmWeights> Packed(const Node& node, const Tensor& w, const Tensor* bias, int64_t n,
                                                 int64_t k) {
  static std::mutex* mu = new std::mutex();
  static auto* cache = new std::map<std::pair<const void*, const void*>, std::shared_ptr<const PackedQGemmWeights>>();
  std::lock_guard<std::mutex> lock(*mu);
  std::shared_ptr<const PackedQGemmWeights>& slot = (*cache)[{w.raw_data(), bias ? bias->raw_data() : nullptr}];
  if (slot == nullptr) {
    slot = std::make_shared<const PackedQGemmWeights>(PackQGemmWeights(
        w.data<int8_t>(), n, k, bias ? bias->data<int32_t>() : nullptr, static_cast<int32_t>(node.GetInt("x_zero_point", 0)),
        node.GetInts("multiplier"), node.GetInts("shift")));
  }
  return slot;
}

QGemmOutputStage OutputStage(const Node& node, bool residual) {
  QGemmOutputStage s;
  s.y_zero_point = static_cast<int32_t>(node.GetInt("y_zero_point", 0));
  s.act_min = static_cast<int32_t>(node.GetInt("act_min", 0));
  s.act_max = static_cast<int32_t>(node.GetInt("act_max", 255));
  if (residual) {
    s.r_zero_point = static_cast<int32_t>(node.GetInt("r_zero_point", 0));
    s.r_multiplier = static_cast<int32_t>(node.GetInts("r_multiplier").at(0));
    s.r_shift = static_cast<int32_t>(node.GetInts("r_shift").at(0));
  }
  return s;
}

const Tensor* In(absl::Span<const Tensor* const> in, int i) { return i < static_cast<int>(in.size()) ? in[i] : nullptr; }

}  // namespace

bool Int8NodeSupported(const Node& node, DType input_dtype, int64_t input_rank) {
  if (node.domain() != kTesselDomain || !HasQGemmVnni() || input_dtype != DType::kU8) return false;
  if (node.op_type() == "QGemm") return input_rank == 2;
  return node.op_type() == "QConv" && node.GetString("layout", "nchw") == "nhwc" && node.GetInt("group", 1) == 1 &&
         input_rank == 4;
}

absl::StatusOr<std::unique_ptr<PreparedInt8Node>> PreparedInt8Node::Create(const Node& node,
                                                                          absl::Span<const Tensor* const> in,
                                                                          const Tensor& y) {
  if (in.size() < 2 || in[0] == nullptr || in[1] == nullptr || !Int8NodeSupported(node, in[0]->dtype(), in[0]->rank())) {
    return absl::InvalidArgumentError(absl::StrCat(node.DebugName(), ": not served by the int8 VNNI path"));
  }
  std::unique_ptr<PreparedInt8Node> p(new PreparedInt8Node);
  const Tensor& x = *in[0];
  const Tensor& wt = *in[1];
  p->x_zero_point_ = static_cast<uint8_t>(node.GetInt("x_zero_point", 0));
  p->stage_ = OutputStage(node, In(in, 3) != nullptr);
  int64_t k = 0;
  if (node.op_type() == "QGemm") {
    p->rows_ = x.dim(0);
    k = x.dim(1);
    p->n_ = wt.dim(0);
  } else {
    // Channels-last: x [N, H, W, C], w [M, KH, KW, C], y [N, OH, OW, M].
    p->conv_ = true;
    p->batch_ = x.dim(0), p->h_ = x.dim(1), p->w_ = x.dim(2), p->c_ = x.dim(3);
    p->n_ = wt.dim(0), p->kh_ = wt.dim(1), p->kw_ = wt.dim(2);
    p->oh_ = y.dim(1), p->ow_ = y.dim(2);
    absl::StatusOr<ConvParams> cp =
        ResolveConvParams(node, DimsOf({p->batch_, p->c_, p->h_, p->w_}), DimsOf({p->n_, p->c_, p->kh_, p->kw_}));
    if (!cp.ok()) return cp.status();
    for (int i = 0; i < 2; ++i) {
      p->stride_[i] = cp->strides[i];
      p->pad_[i] = cp->pads_begin[i];
      p->dilation_[i] = cp->dilations[i];
    }
    p->rows_ = p->batch_ * p->oh_ * p->ow_;
    k = p->kh_ * p->kw_ * p->c_;
  }
  p->weights_ = Packed(node, wt, In(in, 2), p->n_, k);
  const int64_t kp = p->weights_->kp;
  p->direct_ = k == kp && (!p->conv_ || (p->kh_ == 1 && p->kw_ == 1 && p->stride_[0] == 1 && p->stride_[1] == 1 &&
                                          p->pad_[0] == 0 && p->pad_[1] == 0));
  // The K padding reads as 0, which meets zero weights.
  if (!p->direct_) p->scratch_.assign(p->rows_ * kp, 0);
  return p;
}

void PreparedInt8Node::Run(absl::Span<const Tensor* const> in, Tensor& y) {
  const uint8_t* a = in[0]->data<uint8_t>();
  const int64_t kp = weights_->kp;
  if (!direct_ && !conv_) {
    const int64_t k = in[0]->dim(1);
    for (int64_t r = 0; r < rows_; ++r) std::memcpy(scratch_.data() + r * kp, a + r * k, k);
    a = scratch_.data();
  } else if (!direct_) {
    // Padding reads as the zero point (real 0).
    for (int64_t n = 0; n < batch_; ++n) {
      for (int64_t i = 0; i < oh_; ++i) {
        for (int64_t j = 0; j < ow_; ++j) {
          uint8_t* row = scratch_.data() + ((n * oh_ + i) * ow_ + j) * kp;
          for (int64_t u = 0; u < kh_; ++u) {
            const int64_t ih = i * stride_[0] - pad_[0] + u * dilation_[0];
            for (int64_t v = 0; v < kw_; ++v) {
              const int64_t iw = j * stride_[1] - pad_[1] + v * dilation_[1];
              uint8_t* dst = row + (u * kw_ + v) * c_;
              if (ih < 0 || ih >= h_ || iw < 0 || iw >= w_) {
                std::memset(dst, x_zero_point_, c_);
              } else {
                std::memcpy(dst, a + ((n * h_ + ih) * w_ + iw) * c_, c_);
              }
            }
          }
        }
      }
    }
    a = scratch_.data();
  }
  QGemmOutputStage stage = stage_;
  if (const Tensor* r = In(in, 3)) stage.residual = r->data<uint8_t>();
#if defined(__x86_64__)  // only reached when HasQGemmVnni()
  QGemmU8S8__avx512vnni(a, rows_, *weights_, stage, y.data<uint8_t>(), n_);
#else
  (void)a;
  (void)stage;
  (void)y;
#endif
}

absl::StatusOr<bool> RunInt8Node(const Node& node, absl::Span<const Tensor* const> inputs, absl::Span<Tensor> outputs) {
  if (inputs.empty() || inputs[0] == nullptr || !Int8NodeSupported(node, inputs[0]->dtype(), inputs[0]->rank())) {
    return false;
  }
  absl::StatusOr<std::unique_ptr<PreparedInt8Node>> p = PreparedInt8Node::Create(node, inputs, outputs[0]);
  if (!p.ok()) return p.status();
  (*p)->Run(inputs, outputs[0]);
  return true;
}

}  // namespace tessel
