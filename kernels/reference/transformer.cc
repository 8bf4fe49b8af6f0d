// Reference kernels for Tessel's fused transformer operators (RMSNorm, Rope, Attention): the plainest
// loops that compute what the decomposed ONNX graphs compute, in double precision. Attention
// materializes every score row, applies the mask, takes the softmax and sums the values.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/ops/shape_util.h"
#include "kernels/reference/reference.h"

namespace tessel {
namespace {

using Inputs = absl::Span<const Tensor* const>;

absl::Status RequireF32(const Node& node, Inputs inputs) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i] == nullptr || inputs[i]->dtype() == DType::kF32) continue;
    return absl::UnimplementedError(absl::StrCat("the reference tessel.", node.op_type(),
                                                 " kernel supports f32 only; input ", i, " is ",
                                                 DTypeName(inputs[i]->dtype())));
  }
  return absl::OkStatus();
}

int64_t Product(const std::vector<int64_t>& v, size_t from, size_t to) {
  int64_t n = 1;
  for (size_t i = from; i < to; ++i) n *= v[i];
  return n;
}

// For every element of `to` (row-major), its offset in a tensor of shape `from` broadcast to `to`.
std::vector<int64_t> BroadcastOffsets(const std::vector<int64_t>& to, const std::vector<int64_t>& from) {
  std::vector<int64_t> offsets(Product(to, 0, to.size()));
  BroadcastIndexer idx(to, {from});
  for (int64_t& o : offsets) {
    o = idx.offset(0);
    idx.Next();
  }
  return offsets;
}

absl::Status RMSNormKernel(const Node& node, Inputs inputs, absl::Span<Tensor> outputs) {
  absl::Status s = RequireF32(node, inputs);
  if (!s.ok()) return s;
  const Tensor& x = *inputs[0];
  const Tensor* gain = inputs.size() > 1 ? inputs[1] : nullptr;
  absl::StatusOr<int> axis = NormalizeAxis(node.GetInt("axis", -1), x.rank(), "tessel.RMSNorm");
  if (!axis.ok()) return axis.status();
  const double eps = node.GetFloat("epsilon", 1e-5f);
  const std::vector<int64_t> normalized(x.shape().begin() + *axis, x.shape().end());
  const int64_t outer = Product(x.shape(), 0, *axis);
  const int64_t inner = Product(normalized, 0, normalized.size());
  const std::vector<int64_t> gain_off = gain ? BroadcastOffsets(normalized, gain->shape()) : std::vector<int64_t>();
  for (int64_t o = 0; o < outer; ++o) {
    const float* xp = x.data<float>() + o * inner;
    float* yp = outputs[0].data<float>() + o * inner;
    double sum_sq = 0;
    for (int64_t i = 0; i < inner; ++i) sum_sq += static_cast<double>(xp[i]) * xp[i];
    const double inv_rms = 1.0 / std::sqrt(sum_sq / inner + eps);
    for (int64_t i = 0; i < inner; ++i) {
      double v = xp[i] * inv_rms;
      if (gain) v *= gain->data<float>()[gain_off[i]];
      yp[i] = static_cast<float>(v);
    }
  }
  return absl::OkStatus();
}

absl::Status RopeKernel(const Node& node, Inputs inputs, absl::Span<Tensor> outputs) {
  absl::Status s = RequireF32(node, inputs);
  if (!s.ok()) return s;
  const Tensor& x = *inputs[0];
  const Tensor& cos = *inputs[1];
  const Tensor& sin = *inputs[2];
  const bool interleaved = node.GetString("style", "half") == "interleaved";
  const int64_t d = x.dim(x.rank() - 1);
  const int64_t half = d / 2;
  BroadcastIndexer idx(x.shape(), {cos.shape(), sin.shape()});
  const float* xp = x.data<float>();
  float* yp = outputs[0].data<float>();
  for (int64_t i = 0; i < x.num_elements(); ++i, idx.Next()) {
    const int64_t c = i % d;
    const int64_t row = i - c;
    double rotated;
    if (interleaved) {
      rotated = c % 2 == 0 ? -static_cast<double>(xp[row + c + 1]) : xp[row + c - 1];
    } else {
      rotated = c < half ? -static_cast<double>(xp[row + c + half]) : xp[row + c - half];
    }
    yp[i] = static_cast<float>(xp[i] * static_cast<double>(cos.data<float>()[idx.offset(0)]) +
                               rotated * sin.data<float>()[idx.offset(1)]);
  }
  return absl::OkStatus();
}

absl::Status AttentionKernel(const Node& node, Inputs inputs, absl::Span<Tensor> outputs) {
  absl::Status s = RequireF32(node, inputs);
  if (!s.ok()) return s;
  const Tensor& q = *inputs[0];
  const Tensor& k = *inputs[1];
  const Tensor& v = *inputs[2];
  const Tensor* mask = inputs.size() > 3 ? inputs[3] : nullptr;
  const int64_t batch = q.dim(0), hq = q.dim(1), sq = q.dim(2), dk = q.dim(3);
  const int64_t hkv = k.dim(1), sk = k.dim(2), dv = v.dim(3);
  // Inference has checked the shapes agree; the head count of K and V is nonzero when Q has heads.
  const int64_t group = hkv == 0 ? 1 : hq / hkv;
  const double scale = node.GetFloat("scale", static_cast<float>(1.0 / std::sqrt(static_cast<double>(dk))));
  const bool causal = node.GetInt("causal", 0) != 0;
  const std::vector<int64_t> scores_shape = {batch, hq, sq, sk};
  const std::vector<int64_t> mask_off = mask ? BroadcastOffsets(scores_shape, mask->shape()) : std::vector<int64_t>();
  const double neg_inf = -std::numeric_limits<double>::infinity();
  std::vector<double> scores(sk);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < hq; ++h) {
      const int64_t kv_head = h / group;
      const float* kp = k.data<float>() + (b * hkv + kv_head) * sk * dk;
      const float* vp = v.data<float>() + (b * hkv + kv_head) * sk * dv;
      for (int64_t i = 0; i < sq; ++i) {
        const float* qp = q.data<float>() + ((b * hq + h) * sq + i) * dk;
        const int64_t row = ((b * hq + h) * sq + i) * sk;
        double mx = neg_inf;
        for (int64_t j = 0; j < sk; ++j) {
          double dot = 0;
          for (int64_t c = 0; c < dk; ++c) dot += static_cast<double>(qp[c]) * kp[j * dk + c];
          double score = dot * scale;
          if (mask) score += mask->data<float>()[mask_off[row + j]];
          if (causal && j > i + sk - sq) score = neg_inf;
          scores[j] = score;
          mx = std::max(mx, score);
        }
        // Softmax as the Softmax kernel computes it: a fully masked row gives NaN there too.
        double sum = 0;
        for (int64_t j = 0; j < sk; ++j) {
          scores[j] = std::exp(scores[j] - mx);
          sum += scores[j];
        }
        float* yp = outputs[0].data<float>() + ((b * hq + h) * sq + i) * dv;
        for (int64_t c = 0; c < dv; ++c) {
          double acc = 0;
          for (int64_t j = 0; j < sk; ++j) acc += scores[j] / sum * vp[j * dv + c];
          yp[c] = static_cast<float>(acc);
        }
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterTransformerReferenceKernels(ReferenceKernelRegistry& r) {
  r.Register(kTesselDomain, "RMSNorm", RMSNormKernel);
  r.Register(kTesselDomain, "Rope", RopeKernel);
  r.Register(kTesselDomain, "Attention", AttentionKernel);
}

}  // namespace tessel
