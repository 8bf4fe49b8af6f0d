// Reference kernels for the quantized operators (graph/ops/quant_ops.cc): plain integer loops whose
// output stage is the shared f32 requantization (kernels/int8/requantize.h). The optimized int8
// kernels must match these bit for bit.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/ops/nn_params.h"
#include "kernels/int8/requantize.h"
#include "kernels/reference/quantized.h"
#include "kernels/reference/reference.h"

namespace tessel {
namespace {

using Inputs = absl::Span<const Tensor* const>;
using Outputs = absl::Span<Tensor>;

const Tensor* In(Inputs inputs, int i) { return i < static_cast<int>(inputs.size()) ? inputs[i] : nullptr; }

template <typename T>
int32_t Lowest() {
  return std::is_same<T, uint8_t>::value ? 0 : -128;
}
template <typename T>
int32_t Highest() {
  return std::is_same<T, uint8_t>::value ? 255 : 127;
}

// The per-channel requantization and output clamp of a compute node (validated by inference).
struct OutputStage {
  explicit OutputStage(const Node& node, int32_t lowest, int32_t highest, const std::string& prefix = "")
      : zero_point(static_cast<int32_t>(node.GetInt("y_zero_point", 0))),
        lo(static_cast<int32_t>(node.GetInt("act_min", lowest))),
        hi(static_cast<int32_t>(node.GetInt("act_max", highest))) {
    const std::vector<int64_t>& multiplier = node.GetInts(prefix + "multiplier");
    const std::vector<int64_t>& shift = node.GetInts(prefix + "shift");
    for (size_t i = 0; i < multiplier.size(); ++i) {
      scale.push_back(RequantizeScale(static_cast<int32_t>(multiplier[i]), static_cast<int32_t>(shift[i])));
    }
  }
  int32_t Apply(int32_t acc, int64_t channel, int32_t residual_term) const {
    const size_t i = scale.size() == 1 ? 0 : static_cast<size_t>(channel);
    return RequantizeClamp(acc, scale[i], residual_term, zero_point, lo, hi);
  }
  std::vector<float> scale;
  int32_t zero_point, lo, hi;
};

// Channels-first [N, C, S...] view of a channels-last shape [N, S..., C].
std::vector<int64_t> FirstShape(const std::vector<int64_t>& s, bool channels_last) {
  if (!channels_last) return s;
  std::vector<int64_t> out = {s[0], s.back()};
  out.insert(out.end(), s.begin() + 1, s.end() - 1);
  return out;
}

// Element offset of (n, c, h, w) in a rank-4 tensor stored nchw or nhwc with channels-first extents.
struct Index4 {
  Index4(const std::vector<int64_t>& first, bool channels_last)
      : c(first[1]), h(first[2]), w(first[3]), last(channels_last) {}
  int64_t operator()(int64_t n, int64_t ci, int64_t hi, int64_t wi) const {
    return last ? ((n * h + hi) * w + wi) * c + ci : ((n * c + ci) * h + hi) * w + wi;
  }
  int64_t c, h, w;
  bool last;
};

absl::Status RequireRank4(const Node& node, const Tensor& x) {
  if (x.rank() == 4) return absl::OkStatus();
  return absl::UnimplementedError(absl::StrCat(node.DebugName(), ": the reference quantized kernel supports 2-D "
                                               "images (rank 4) only; got shape ",
                                               ShapeToString(x.shape())));
}

// sum of a[i] * b[i] over n terms (integer sums: any order the compiler picks is exact).
int32_t Dot(const int16_t* a, const int16_t* b, int64_t n) {
  int32_t sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<int32_t>(a[i]) * b[i];
  return sum;
}

template <typename T>
absl::Status QConvTyped(const Node& node, Inputs in, Tensor& out) {
  const bool last = node.GetString("layout", "nchw") == "nhwc";
  const Tensor& x = *in[0];
  const Tensor& w = *in[1];
  const Tensor* b = In(in, 2);
  const Tensor* r = In(in, 3);
  absl::Status s = RequireRank4(node, x);
  if (!s.ok()) return s;
  const std::vector<int64_t> xs = FirstShape(x.shape(), last), ws = FirstShape(w.shape(), last),
                             ys = FirstShape(out.shape(), last);
  absl::StatusOr<ConvParams> p = ResolveConvParams(node, DimsOf(xs), DimsOf(ws));
  if (!p.ok()) return p.status();
  const Index4 xi(xs, last), wi(ws, last), yi(ys, last);
  const int64_t m_per_group = ws[0] / p->group, cg = ws[1];
  const int32_t x_zp = static_cast<int32_t>(node.GetInt("x_zero_point", 0));
  const OutputStage stage(node, Lowest<T>(), Highest<T>());
  const OutputStage residual(node, Lowest<T>(), Highest<T>(), "r_");
  const int32_t r_zp = static_cast<int32_t>(node.GetInt("r_zero_point", 0));
  const T* xd = x.data<T>();
  const int8_t* wd = w.data<int8_t>();
  T* yd = out.data<T>();
  // Per output pixel, the window's (x - x_zp) terms in (kh, kw, c) order, 0 where it reads padding;
  // per output channel of the group, the weights in the same order. Each output is then one integer
  // dot product, which every summation order gives exactly.
  const int64_t kh_n = ws[2], kw_n = ws[3], taps = kh_n * kw_n * cg;
  std::vector<int16_t> window(taps), wpack(m_per_group * taps);  // |x - x_zp| <= 255
  for (int64_t n = 0; n < ys[0]; ++n) {
    for (int64_t grp = 0; grp < p->group; ++grp) {
      const int64_t c0 = grp * cg, m0 = grp * m_per_group;
      for (int64_t mm = 0; mm < m_per_group; ++mm) {
        for (int64_t kh = 0; kh < kh_n; ++kh) {
          for (int64_t kw = 0; kw < kw_n; ++kw) {
            for (int64_t c = 0; c < cg; ++c) wpack[mm * taps + (kh * kw_n + kw) * cg + c] = wd[wi(m0 + mm, c, kh, kw)];
          }
        }
      }
      for (int64_t oh = 0; oh < ys[2]; ++oh) {
        for (int64_t ow = 0; ow < ys[3]; ++ow) {
          for (int64_t kh = 0; kh < kh_n; ++kh) {
            const int64_t ih = oh * p->strides[0] - p->pads_begin[0] + kh * p->dilations[0];
            for (int64_t kw = 0; kw < kw_n; ++kw) {
              const int64_t iw = ow * p->strides[1] - p->pads_begin[1] + kw * p->dilations[1];
              int16_t* dst = window.data() + (kh * kw_n + kw) * cg;
              const bool inside = ih >= 0 && ih < xs[2] && iw >= 0 && iw < xs[3];
              for (int64_t c = 0; c < cg; ++c) {
                dst[c] = static_cast<int16_t>(inside ? static_cast<int32_t>(xd[xi(n, c0 + c, ih, iw)]) - x_zp : 0);
              }
            }
          }
          for (int64_t mm = 0; mm < m_per_group; ++mm) {
            const int64_t m = m0 + mm;
            const int32_t acc = (b != nullptr ? b->data<int32_t>()[m] : 0) + Dot(window.data(), &wpack[mm * taps], taps);
            const int64_t o = yi(n, m, oh, ow);
            int32_t res = 0;
            if (r != nullptr) {
              res = RequantizeF32(static_cast<int32_t>(r->data<T>()[o]) - r_zp, residual.scale[0]);
            }
            yd[o] = static_cast<T>(stage.Apply(acc, m, res));
          }
        }
      }
    }
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status QGemmTyped(const Node& node, Inputs in, Tensor& out) {
  const Tensor& a = *in[0];
  const Tensor& w = *in[1];
  const Tensor* b = In(in, 2);
  const int64_t rows = a.dim(0), k = a.dim(1), cols = w.dim(0);
  const int32_t x_zp = static_cast<int32_t>(node.GetInt("x_zero_point", 0));
  const OutputStage stage(node, Lowest<T>(), Highest<T>());
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      int32_t acc = b != nullptr ? b->data<int32_t>()[j] : 0;
      for (int64_t p = 0; p < k; ++p) {
        acc += (static_cast<int32_t>(a.data<T>()[i * k + p]) - x_zp) * w.data<int8_t>()[j * k + p];
      }
      out.data<T>()[i * cols + j] = static_cast<T>(stage.Apply(acc, j, 0));
    }
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status QAddTyped(const Node& node, Inputs in, Tensor& out) {
  const OutputStage b_stage(node, Lowest<T>(), Highest<T>(), "b_");
  const int32_t a_zp = static_cast<int32_t>(node.GetInt("a_zero_point", 0));
  const int32_t b_zp = static_cast<int32_t>(node.GetInt("b_zero_point", 0));
  const OutputStage stage(node, Lowest<T>(), Highest<T>(), "a_");
  for (int64_t i = 0, n = out.num_elements(); i < n; ++i) {
    const int32_t bt = RequantizeF32(static_cast<int32_t>(in[1]->data<T>()[i]) - b_zp, b_stage.scale[0]);
    out.data<T>()[i] = static_cast<T>(stage.Apply(static_cast<int32_t>(in[0]->data<T>()[i]) - a_zp, 0, bt));
  }
  return absl::OkStatus();
}

// Rounds sum / count to nearest, ties away from zero (count > 0).
int32_t RoundedDivide(int64_t sum, int64_t count) {
  return static_cast<int32_t>(sum >= 0 ? (sum + count / 2) / count : -((-sum + count / 2) / count));
}

template <typename T>
absl::Status QPoolTyped(const Node& node, Inputs in, Tensor& out) {
  const bool last = node.GetString("layout", "nchw") == "nhwc";
  const Tensor& x = *in[0];
  absl::Status s = RequireRank4(node, x);
  if (!s.ok()) return s;
  const std::vector<int64_t> xs = FirstShape(x.shape(), last), ys = FirstShape(out.shape(), last);
  const Index4 xi(xs, last), yi(ys, last);
  const std::string& op = node.op_type();
  PoolParams p;
  if (op == "QGlobalAvgPool") {
    p.kernel = {xs[2], xs[3]};
    p.strides = p.dilations = {1, 1};
    p.pads_begin = p.pads_end = {0, 0};
  } else {
    absl::StatusOr<PoolParams> resolved = ResolvePoolParams(node, DimsOf(xs));
    if (!resolved.ok()) return resolved.status();
    p = *resolved;
  }
  const int32_t zp = static_cast<int32_t>(node.GetInt("x_zero_point", 0));
  const T* xd = x.data<T>();
  for (int64_t n = 0; n < ys[0]; ++n) {
    for (int64_t c = 0; c < ys[1]; ++c) {
      for (int64_t oh = 0; oh < ys[2]; ++oh) {
        for (int64_t ow = 0; ow < ys[3]; ++ow) {
          int32_t best = Lowest<T>();
          int64_t sum = 0, valid = 0, padded = 0;
          for (int64_t kh = 0; kh < p.kernel[0]; ++kh) {
            const int64_t ih = oh * p.strides[0] - p.pads_begin[0] + kh * p.dilations[0];
            for (int64_t kw = 0; kw < p.kernel[1]; ++kw) {
              const int64_t iw = ow * p.strides[1] - p.pads_begin[1] + kw * p.dilations[1];
              const bool inside = ih >= 0 && ih < xs[2] && iw >= 0 && iw < xs[3];
              if (!inside) {
                // count_include_pad counts positions within the explicit padding, not beyond it.
                padded += ih >= -p.pads_begin[0] && ih < xs[2] + p.pads_end[0] && iw >= -p.pads_begin[1] &&
                          iw < xs[3] + p.pads_end[1];
                continue;
              }
              const int32_t v = xd[xi(n, c, ih, iw)];
              best = v > best ? v : best;
              sum += v - zp;
              ++valid;
            }
          }
          int32_t result = best;
          if (op != "QMaxPool") {
            const int64_t count = valid + (p.count_include_pad ? padded : 0);
            result = count == 0 ? zp : zp + RoundedDivide(sum, count);
            result = result < Lowest<T>() ? Lowest<T>() : result > Highest<T>() ? Highest<T>() : result;
          }
          out.data<T>()[yi(n, c, oh, ow)] = static_cast<T>(result);
        }
      }
    }
  }
  return absl::OkStatus();
}

// Where a QuantizeLinear / DequantizeLinear's scale and zero point apply: one pair for the tensor, or one
// per index along attribute `axis` (element i's index (i / inner) % channels).
struct QuantAxis {
  int64_t inner = 1, channels = 1;
  int64_t Of(int64_t i) const { return channels == 1 ? 0 : (i / inner) % channels; }
};

absl::StatusOr<QuantAxis> QuantAxisOf(const Node& node, const Tensor& x, Inputs in) {
  for (int i = 1; i <= 2; ++i) {
    const Tensor* p = In(in, i);
    if (p == nullptr || p->num_elements() == 1 || p->num_elements() == in[1]->num_elements()) continue;
    return absl::InvalidArgumentError(absl::StrCat(node.DebugName(), ": the zero point has ", p->num_elements(),
                                                   " entries and the scale ", in[1]->num_elements()));
  }
  QuantAxis q;
  if (in[1]->num_elements() == 1) return q;
  int64_t axis = node.GetInt("axis", 1);
  if (axis < 0) axis += x.rank();
  if (axis < 0 || axis >= x.rank() || x.dim(axis) != in[1]->num_elements()) {
    return absl::InvalidArgumentError(absl::StrCat(node.DebugName(), ": ", in[1]->num_elements(),
                                                   " scales do not match x ", ShapeToString(x.shape()), " along axis ",
                                                   node.GetInt("axis", 1)));
  }
  q.channels = x.dim(axis);
  for (int64_t d = axis + 1; d < x.rank(); ++d) q.inner *= x.dim(d);
  return q;
}

template <typename T>
int32_t ZeroPointAt(Inputs in, int64_t c) {
  const Tensor* zp = In(in, 2);
  if (zp == nullptr) return 0;
  return static_cast<int32_t>(zp->data<T>()[zp->num_elements() == 1 ? 0 : c]);
}

template <typename T>
absl::Status QuantizeTyped(Inputs in, const QuantAxis& axis, Tensor& out) {
  const float* scale = in[1]->data<float>();
  const float* xd = in[0]->data<float>();
  for (int64_t i = 0, n = out.num_elements(); i < n; ++i) {
    const int64_t c = axis.Of(i);
    // ONNX: round half to even (the default rounding mode), then saturate.
    const float q = std::nearbyint(xd[i] / scale[c]) + static_cast<float>(ZeroPointAt<T>(in, c));
    const float clamped = q < Lowest<T>() ? Lowest<T>() : q > Highest<T>() ? Highest<T>() : q;
    out.data<T>()[i] = static_cast<T>(static_cast<int32_t>(clamped));
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status DequantizeTyped(Inputs in, const QuantAxis& axis, Tensor& out) {
  const float* scale = in[1]->data<float>();
  for (int64_t i = 0, n = out.num_elements(); i < n; ++i) {
    const int64_t c = axis.Of(i);
    out.data<float>()[i] = static_cast<float>(static_cast<int32_t>(in[0]->data<T>()[i]) - ZeroPointAt<T>(in, c)) *
                           scale[c];
  }
  return absl::OkStatus();
}

absl::Status CheckScale(const Node& node, const Tensor& scale) {
  for (int64_t i = 0; i < scale.num_elements(); ++i) {
    const float s = scale.data<float>()[i];
    if (std::isfinite(s) && s > 0) continue;
    return absl::InvalidArgumentError(absl::StrCat(node.DebugName(), ": scale", scale.num_elements() > 1 ? absl::StrCat("[", i, "]") : "",
                                                   " is ", s, "; expected a finite value greater than 0"));
  }
  return absl::OkStatus();
}

absl::Status QuantizeLinearKernel(const Node& node, Inputs in, Outputs out) {
  absl::Status s = CheckScale(node, *in[1]);
  if (!s.ok()) return s;
  absl::StatusOr<QuantAxis> axis = QuantAxisOf(node, *in[0], in);
  if (!axis.ok()) return axis.status();
  return out[0].dtype() == DType::kU8 ? QuantizeTyped<uint8_t>(in, *axis, out[0])
                                      : QuantizeTyped<int8_t>(in, *axis, out[0]);
}

// ONNX's DynamicQuantizeLinear in f32 as its definition computes it: the range [min(0, min x), max(0,
// max x)] over 255 steps, the zero point round(-min / scale) clamped to [0, 255], then x / scale rounded
// half to even plus the zero point, saturated. An all-zero x (scale 0) gives scale 0, zero point 0, y 0.
absl::Status DynamicQuantizeLinearKernel(const Node& node, Inputs in, Outputs out) {
  const Tensor& x = *in[0];
  const float* xd = x.data<float>();
  float lo = 0.0f, hi = 0.0f;
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    if (!std::isfinite(xd[i])) {
      return absl::InvalidArgumentError(absl::StrCat(node.DebugName(), ": x[", i, "] is ", xd[i], "; expected finite"));
    }
    lo = std::min(lo, xd[i]);
    hi = std::max(hi, xd[i]);
  }
  const float scale = (hi - lo) / 255.0f;
  const float zp = scale == 0.0f ? 0.0f : std::clamp(std::nearbyint(0.0f - lo / scale), 0.0f, 255.0f);
  uint8_t* y = out[0].data<uint8_t>();
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    y[i] = scale == 0.0f ? 0 : static_cast<uint8_t>(std::clamp(std::nearbyint(xd[i] / scale) + zp, 0.0f, 255.0f));
  }
  out[1].data<float>()[0] = scale;
  out[2].data<uint8_t>()[0] = static_cast<uint8_t>(zp);
  return absl::OkStatus();
}

absl::Status DequantizeLinearKernel(const Node& node, Inputs in, Outputs out) {
  absl::Status s = CheckScale(node, *in[1]);
  if (!s.ok()) return s;
  absl::StatusOr<QuantAxis> axis = QuantAxisOf(node, *in[0], in);
  if (!axis.ok()) return axis.status();
  switch (in[0]->dtype()) {
    case DType::kU8:
      return DequantizeTyped<uint8_t>(in, *axis, out[0]);
    case DType::kI8:
      return DequantizeTyped<int8_t>(in, *axis, out[0]);
    default:
      return DequantizeTyped<int32_t>(in, *axis, out[0]);
  }
}

template <absl::Status (*U8)(const Node&, Inputs, Tensor&), absl::Status (*I8)(const Node&, Inputs, Tensor&)>
absl::Status ByDType(const Node& node, Inputs in, Outputs out) {
  return in[0]->dtype() == DType::kU8 ? U8(node, in, out[0]) : I8(node, in, out[0]);
}

}  // namespace

void RegisterQuantizedReferenceKernels(ReferenceKernelRegistry& r) {
  r.Register("", "QuantizeLinear", QuantizeLinearKernel);
  r.Register("", "DequantizeLinear", DequantizeLinearKernel);
  r.Register("", "DynamicQuantizeLinear", DynamicQuantizeLinearKernel);
  r.Register(kTesselDomain, "QConv", ByDType<QConvTyped<uint8_t>, QConvTyped<int8_t>>);
  r.Register(kTesselDomain, "QGemm", ByDType<QGemmTyped<uint8_t>, QGemmTyped<int8_t>>);
  r.Register(kTesselDomain, "QAdd", ByDType<QAddTyped<uint8_t>, QAddTyped<int8_t>>);
  for (const char* op : {"QMaxPool", "QAvgPool", "QGlobalAvgPool"}) {
    r.Register(kTesselDomain, op, ByDType<QPoolTyped<uint8_t>, QPoolTyped<int8_t>>);
  }
}

namespace {
// Until ReferenceKernelRegistry::Global() calls RegisterQuantizedReferenceKernels itself, this library
// (alwayslink) adds them at static-initialization time.
const bool kQuantizedKernelsRegistered = [] {
  RegisterQuantizedReferenceKernels(ReferenceKernelRegistry::Global());
  return true;
}();
}  // namespace

}  // namespace tessel
