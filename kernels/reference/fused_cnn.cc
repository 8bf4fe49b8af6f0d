// Reference kernels for the fused CNN operators (graph/ops/fused_cnn_ops.cc). Each one runs the unfused
// reference kernels' steps in the operator's stated order (the plain convolution with its bias, then
// the residual, then the activation); channels-last tensors are transposed to channels-first around
// that, so the fused kernels are as obviously right as their parts.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/ops/nn_params.h"
#include "kernels/reference/reference.h"

namespace tessel {
namespace {

using Inputs = absl::Span<const Tensor* const>;
using Outputs = absl::Span<Tensor>;

const Tensor* In(Inputs inputs, int i) { return i < static_cast<int>(inputs.size()) ? inputs[i] : nullptr; }

absl::Status RequireF32(const Node& node, Inputs inputs) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i] == nullptr || inputs[i]->dtype() == DType::kF32) continue;
    return absl::UnimplementedError(absl::StrCat("the reference ", node.op_type(), " kernel supports f32 only; input ",
                                                 i, " is ", DTypeName(inputs[i]->dtype())));
  }
  return absl::OkStatus();
}

// The registered kernel of a standard ONNX operator, which the fused kernels reuse step by step.
absl::Status RunStandard(const char* op, const Node& node, std::vector<const Tensor*> inputs, Tensor& output) {
  ReferenceKernel k = ReferenceKernelRegistry::Global().Find("", op);
  if (k == nullptr) return absl::InternalError(absl::StrCat("no reference kernel for ", op));
  return k(node, inputs, absl::Span<Tensor>(&output, 1));
}

// Channels-last [N, S..., C] (also weights [M, K..., C/g]) to channels-first [N, C, S...], or back.
Tensor MoveChannels(const Tensor& t, bool to_last) {
  const std::vector<int64_t>& in = t.shape();
  const int rank = t.rank();
  // perm[d]: the input axis that output axis d reads.
  std::vector<int> perm(rank);
  perm[0] = 0;
  for (int d = 1; d < rank; ++d) perm[d] = to_last ? (d == rank - 1 ? 1 : d + 1) : (d == 1 ? rank - 1 : d - 1);
  std::vector<int64_t> out_shape(rank);
  for (int d = 0; d < rank; ++d) out_shape[d] = in[perm[d]];
  Tensor out(DType::kF32, out_shape);
  const std::vector<int64_t> in_strides = RowMajorStrides(in);
  std::vector<int64_t> index(rank, 0);
  const float* src = t.data<float>();
  float* dst = out.data<float>();
  for (int64_t i = 0, n = out.num_elements(); i < n; ++i) {
    int64_t offset = 0;
    for (int d = 0; d < rank; ++d) offset += index[d] * in_strides[perm[d]];
    dst[i] = src[offset];
    for (int d = rank - 1; d >= 0; --d) {
      if (++index[d] < out_shape[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

std::vector<int64_t> ChannelsFirstShape(const std::vector<int64_t>& s) {
  std::vector<int64_t> out = {s[0], s.back()};
  out.insert(out.end(), s.begin() + 1, s.end() - 1);
  return out;
}

bool IsChannelsLast(const Node& node) { return node.GetString("layout", "nchw") == "nhwc"; }

// The activation named by `<prefix>activation` (validated by type inference), parsed once per node.
struct Activation {
  enum class Kind { kNone, kRelu, kClip, kHardSwish, kSigmoid, kSilu };
  explicit Activation(const Node& node, const std::string& prefix = "")
      : kind(Parse(node.GetString(prefix + "activation", "none"))),
        lo(node.GetFloat(prefix + "clip_min", 0.0f)),
        hi(node.GetFloat(prefix + "clip_max", 0.0f)) {}

  static Kind Parse(const std::string& k) {
    return k == "relu" ? Kind::kRelu : k == "clip" ? Kind::kClip : k == "hardswish" ? Kind::kHardSwish
         : k == "sigmoid" ? Kind::kSigmoid : k == "silu" ? Kind::kSilu : Kind::kNone;
  }
  static float Sigmoid(float x) { return static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(x)))); }

  // As the Relu, Clip, HardSwish and Sigmoid reference kernels compute it; silu is x * sigmoid(x).
  float operator()(float x) const {
    switch (kind) {
      case Kind::kRelu: return x < 0.0f ? 0.0f : x;
      case Kind::kClip: {
        const float v = x < lo ? lo : x;
        return v > hi ? hi : v;
      }
      case Kind::kHardSwish: return static_cast<float>(x * std::fmax(0.0, std::fmin(1.0, x / 6.0 + 0.5)));
      case Kind::kSigmoid: return Sigmoid(x);
      case Kind::kSilu: return x * Sigmoid(x);
      case Kind::kNone: break;
    }
    return x;
  }
  Kind kind;
  float lo, hi;
};

// y += residual, then y = act(y), elementwise over same-shaped tensors.
void AddResidualAndActivate(const Tensor* residual, const Activation& act, Tensor& y) {
  float* yd = y.data<float>();
  for (int64_t i = 0, n = y.num_elements(); i < n; ++i) {
    float v = yd[i];
    if (residual != nullptr) v += residual->data<float>()[i];
    yd[i] = act(v);
  }
}

// FusedConv on channels-first tensors: the reference Conv (bias included), then residual, activation.
absl::Status FusedConvNchw(const Node& node, const Tensor& x, const Tensor& w, const Tensor* b, const Tensor* r,
                           Tensor& y) {
  absl::Status s = RunStandard("Conv", node, {&x, &w, b}, y);
  if (!s.ok()) return s;
  AddResidualAndActivate(r, Activation(node), y);
  return absl::OkStatus();
}

absl::Status FusedConvKernel(const Node& node, Inputs in, Outputs out) {
  absl::Status s = RequireF32(node, in);
  if (!s.ok()) return s;
  const Tensor* b = In(in, 2);
  if (!IsChannelsLast(node)) return FusedConvNchw(node, *in[0], *in[1], b, In(in, 3), out[0]);
  const Tensor x = MoveChannels(*in[0], false);
  const Tensor w = MoveChannels(*in[1], false);
  const Tensor* r = In(in, 3);
  Tensor r_first;
  if (r != nullptr) r_first = MoveChannels(*r, false);
  Tensor y(DType::kF32, ChannelsFirstShape(out[0].shape()));
  s = FusedConvNchw(node, x, w, b, r ? &r_first : nullptr, y);
  if (!s.ok()) return s;
  const Tensor y_last = MoveChannels(y, true);
  std::memcpy(out[0].raw_data(), y_last.raw_data(), y_last.byte_size());
  return absl::OkStatus();
}

// y = conv1x1(t, w) + b on channels-first tensors, written out in double (bias first, channels in
// order: what the reference Conv computes for a 1x1 kernel). t [N, C, ...], w [M, C, 1, 1], y [N, M, ...].
void Pointwise(const Tensor& t, const Tensor& w, const Tensor* b, Tensor& y) {
  const int64_t n_batch = t.dim(0);
  const int64_t c = w.dim(1);
  const int64_t m = w.dim(0);
  const int64_t plane = t.num_elements() / (n_batch * c);
  const float* tv = t.data<float>();
  const float* wv = w.data<float>();
  std::vector<double> acc(plane);
  for (int64_t n = 0; n < n_batch; ++n) {
    for (int64_t oc = 0; oc < m; ++oc) {
      std::fill(acc.begin(), acc.end(), b ? static_cast<double>(b->data<float>()[oc]) : 0.0);
      for (int64_t ic = 0; ic < c; ++ic) {
        const double wk = wv[oc * c + ic];
        const float* tp = tv + (n * c + ic) * plane;
        for (int64_t i = 0; i < plane; ++i) acc[i] += wk * tp[i];
      }
      float* yp = y.data<float>() + (n * m + oc) * plane;
      for (int64_t i = 0; i < plane; ++i) yp[i] = static_cast<float>(acc[i]);
    }
  }
}

// DwPwConv on channels-first tensors: the expansion (when W_exp is given) and its activation, the
// reference Conv for the depthwise step and its activation, then the 1x1 convolution, residual and
// activation.
absl::Status DwPwConvNchw(const Node& node, const Tensor& x_in, const Tensor& w_dw, const Tensor* b_dw,
                          const Tensor& w_pw, const Tensor* b_pw, const Tensor* r, const Tensor* w_exp,
                          const Tensor* b_exp, Tensor& y) {
  Tensor expanded;
  if (w_exp != nullptr) {
    std::vector<int64_t> shape = x_in.shape();
    shape[1] = w_exp->dim(0);
    expanded = Tensor(DType::kF32, shape);
    Pointwise(x_in, *w_exp, b_exp, expanded);
    AddResidualAndActivate(nullptr, Activation(node, "exp_"), expanded);
  }
  const Tensor& x = w_exp != nullptr ? expanded : x_in;
  absl::StatusOr<ConvParams> p = ResolveConvParams(node, DimsOf(x.shape()), DimsOf(w_dw.shape()));
  if (!p.ok()) return p.status();
  std::vector<int64_t> mid_shape = {x.dim(0), w_dw.dim(0)};
  for (const Dim& d : p->output) mid_shape.push_back(d.value());
  Tensor mid(DType::kF32, mid_shape);
  absl::Status s = RunStandard("Conv", node, {&x, &w_dw, b_dw}, mid);
  if (!s.ok()) return s;
  AddResidualAndActivate(nullptr, Activation(node, "dw_"), mid);
  Pointwise(mid, w_pw, b_pw, y);
  AddResidualAndActivate(r, Activation(node, "pw_"), y);
  return absl::OkStatus();
}

absl::Status DwPwConvKernel(const Node& node, Inputs in, Outputs out) {
  absl::Status s = RequireF32(node, in);
  if (!s.ok()) return s;
  const Tensor* b_dw = In(in, 2);
  const Tensor* b_pw = In(in, 4);
  const Tensor* r = In(in, 5);
  const Tensor* w_exp = In(in, 6);
  const Tensor* b_exp = In(in, 7);
  if (!IsChannelsLast(node)) {
    return DwPwConvNchw(node, *in[0], *in[1], b_dw, *in[3], b_pw, r, w_exp, b_exp, out[0]);
  }
  const Tensor x = MoveChannels(*in[0], false);
  const Tensor w_dw = MoveChannels(*in[1], false);
  const Tensor w_pw = MoveChannels(*in[3], false);
  Tensor w_exp_first;
  if (w_exp != nullptr) w_exp_first = MoveChannels(*w_exp, false);
  Tensor r_first;
  if (r != nullptr) r_first = MoveChannels(*r, false);
  Tensor y(DType::kF32, ChannelsFirstShape(out[0].shape()));
  s = DwPwConvNchw(node, x, w_dw, b_dw, w_pw, b_pw, r ? &r_first : nullptr, w_exp ? &w_exp_first : nullptr, b_exp,
                   y);
  if (!s.ok()) return s;
  const Tensor y_last = MoveChannels(y, true);
  std::memcpy(out[0].raw_data(), y_last.raw_data(), y_last.byte_size());
  return absl::OkStatus();
}

// The ONNX kernel `op` on inputs `in` (X first, the others per channel), with X and Y transposed around
// it when the node is channels-last.
absl::Status RunStandardOnLayout(const char* op, const Node& node, Inputs in, Outputs out) {
  absl::Status s = RequireF32(node, in);
  if (!s.ok()) return s;
  std::vector<const Tensor*> inputs(in.begin(), in.end());
  if (!IsChannelsLast(node)) return RunStandard(op, node, inputs, out[0]);
  const Tensor x = MoveChannels(*in[0], false);
  inputs[0] = &x;
  Tensor y(DType::kF32, ChannelsFirstShape(out[0].shape()));
  s = RunStandard(op, node, inputs, y);
  if (!s.ok()) return s;
  const Tensor y_last = MoveChannels(y, true);
  std::memcpy(out[0].raw_data(), y_last.raw_data(), y_last.byte_size());
  return absl::OkStatus();
}

// tessel.MaxPool / AveragePool / GlobalAveragePool: the ONNX kernel of the same name.
absl::Status PoolKernel(const Node& node, Inputs in, Outputs out) {
  const char* op = node.op_type() == "MaxPool" ? "MaxPool" : node.op_type() == "AveragePool" ? "AveragePool"
                                                                                              : "GlobalAveragePool";
  return RunStandardOnLayout(op, node, in.subspan(0, 1), out);
}

// tessel.InstanceNorm: ONNX InstanceNormalization.
absl::Status InstanceNormKernel(const Node& node, Inputs in, Outputs out) {
  return RunStandardOnLayout("InstanceNormalization", node, in.subspan(0, 3), out);
}

// MatMulBias / MatMulBiasGelu: the reference MatMul, then the bias over the last dimension, then GELU
// as the Gelu reference kernel computes it.
absl::Status MatMulBiasKernel(const Node& node, Inputs in, Outputs out) {
  absl::Status s = RequireF32(node, in);
  if (!s.ok()) return s;
  s = RunStandard("MatMul", node, {in[0], in[1]}, out[0]);
  if (!s.ok()) return s;
  const bool gelu = node.op_type() == "MatMulBiasGelu";
  const bool tanh_approx = node.GetString("approximate", "none") == "tanh";
  const float* bias = in[2]->data<float>();
  const int64_t n = in[2]->num_elements();
  float* y = out[0].data<float>();
  for (int64_t i = 0, total = out[0].num_elements(); i < total; ++i) {
    const float v = y[i] + bias[i % n];
    if (!gelu) {
      y[i] = v;
    } else if (tanh_approx) {
      constexpr double kSqrt2OverPi = 0.79788456080286535588;
      const double x = v;
      y[i] = static_cast<float>(0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x))));
    } else {
      const double x = v;
      y[i] = static_cast<float>(0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))));
    }
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterFusedCnnReferenceKernels(ReferenceKernelRegistry& r) {
  r.Register(kTesselDomain, "FusedConv", FusedConvKernel);
  r.Register(kTesselDomain, "DwPwConv", DwPwConvKernel);
  r.Register(kTesselDomain, "MaxPool", PoolKernel);
  r.Register(kTesselDomain, "AveragePool", PoolKernel);
  r.Register(kTesselDomain, "GlobalAveragePool", PoolKernel);
  r.Register(kTesselDomain, "InstanceNorm", InstanceNormKernel);
  r.Register(kTesselDomain, "MatMulBias", MatMulBiasKernel);
  r.Register(kTesselDomain, "MatMulBiasGelu", MatMulBiasKernel);
}

}  // namespace tessel
