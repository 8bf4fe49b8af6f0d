// Dispatch of quantized nodes to the VNNI GEMM, with im2col for convolutions.
#include "kernels/int8/int8_kernels.h"

#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "graph/op_registry.h"
#include "graph/ops/nn_params.h"
#include "kernels/int8/qgemm.h"

namespace tessel {
namespace {

const PackedQGemmWeights& Packed(const Node& node, const Tensor& w, const Tensor* bias, int64_t n, int64_t k) {
  static std::mutex* mu = new std::mutex();
  static auto* cache = new std::map<std::pair<const void*, const void*>, std::unique_ptr<PackedQGemmWeights>>();
  std::lock_guard<std::mutex> lock(*mu);
  std::unique_ptr<PackedQGemmWeights>& slot = (*cache)[{w.raw_data(), bias ? bias->raw_data() : nullptr}];
  if (slot == nullptr) {
    slot = std::make_unique<PackedQGemmWeights>(PackQGemmWeights(
        w.data<int8_t>(), n, k, bias ? bias->data<int32_t>() : nullptr, static_cast<int32_t>(node.GetInt("x_zero_point", 0)),
        node.GetInts("multiplier"), node.GetInts("shift")));
  }
  return *slot;
}

QGemmOutputStage OutputStage(const Node& node, const Tensor* residual) {
  QGemmOutputStage s;
  s.y_zero_point = static_cast<int32_t>(node.GetInt("y_zero_point", 0));
  s.act_min = static_cast<int32_t>(node.GetInt("act_min", 0));
  s.act_max = static_cast<int32_t>(node.GetInt("act_max", 255));
  if (residual != nullptr) {
    s.residual = residual->data<uint8_t>();
    s.r_zero_point = static_cast<int32_t>(node.GetInt("r_zero_point", 0));
    s.r_multiplier = static_cast<int32_t>(node.GetInts("r_multiplier").at(0));
    s.r_shift = static_cast<int32_t>(node.GetInts("r_shift").at(0));
  }
  return s;
}

const Tensor* In(absl::Span<const Tensor* const> in, int i) { return i < static_cast<int>(in.size()) ? in[i] : nullptr; }

absl::StatusOr<bool> RunQGemm(const Node& node, absl::Span<const Tensor* const> in, Tensor& y) {
  const Tensor& a = *in[0];
  const int64_t rows = a.dim(0), k = a.dim(1), n = in[1]->dim(0);
  const PackedQGemmWeights& w = Packed(node, *in[1], In(in, 2), n, k);
  std::vector<uint8_t> padded(rows * w.kp, 0);
  for (int64_t r = 0; r < rows; ++r) std::memcpy(padded.data() + r * w.kp, a.data<uint8_t>() + r * k, k);
#if defined(__x86_64__)  // only reached when HasQGemmVnni()
  QGemmU8S8__avx512vnni(padded.data(), rows, w, OutputStage(node, nullptr), y.data<uint8_t>(), n);
#endif
  return true;
}

absl::StatusOr<bool> RunQConv(const Node& node, absl::Span<const Tensor* const> in, Tensor& y) {
  const Tensor& x = *in[0];
  const Tensor& wt = *in[1];
  // Channels-last: x [N, H, W, C], w [M, KH, KW, C], y [N, OH, OW, M].
  const int64_t batch = x.dim(0), h = x.dim(1), wd = x.dim(2), c = x.dim(3);
  const int64_t m = wt.dim(0), kh = wt.dim(1), kw = wt.dim(2);
  const int64_t oh = y.dim(1), ow = y.dim(2);
  absl::StatusOr<ConvParams> p = ResolveConvParams(node, DimsOf({batch, c, h, wd}), DimsOf({m, c, kh, kw}));
  if (!p.ok()) return p.status();
  const int64_t k = kh * kw * c;
  const PackedQGemmWeights& w = Packed(node, wt, In(in, 2), m, k);
  const uint8_t zp = static_cast<uint8_t>(node.GetInt("x_zero_point", 0));
  const int64_t rows = batch * oh * ow;
  const bool direct = kh == 1 && kw == 1 && p->strides[0] == 1 && p->strides[1] == 1 && p->pads_begin[0] == 0 &&
                      p->pads_begin[1] == 0 && c == w.kp;
  std::vector<uint8_t> cols;
  const uint8_t* a = x.data<uint8_t>();
  if (!direct) {
    // Padding reads as the zero point (real 0); the K padding as 0, which meets zero weights.
    cols.assign(rows * w.kp, 0);
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t i = 0; i < oh; ++i) {
        for (int64_t j = 0; j < ow; ++j) {
          uint8_t* row = cols.data() + ((n * oh + i) * ow + j) * w.kp;
          for (int64_t u = 0; u < kh; ++u) {
            const int64_t ih = i * p->strides[0] - p->pads_begin[0] + u * p->dilations[0];
            for (int64_t v = 0; v < kw; ++v) {
              const int64_t iw = j * p->strides[1] - p->pads_begin[1] + v * p->dilations[1];
              uint8_t* dst = row + (u * kw + v) * c;
              if (ih < 0 || ih >= h || iw < 0 || iw >= wd) {
                std::memset(dst, zp, c);
              } else {
                std::memcpy(dst, a + ((n * h + ih) * wd + iw) * c, c);
              }
            }
          }
        }
      }
    }
    a = cols.data();
  }
#if defined(__x86_64__)  // only reached when HasQGemmVnni()
  QGemmU8S8__avx512vnni(a, rows, w, OutputStage(node, In(in, 3)), y.data<uint8_t>(), m);
#endif
  return true;
}

}  // namespace

absl::StatusOr<bool> RunInt8Node(const Node& node, absl::Span<const Tensor* const> inputs, absl::Span<Tensor> outputs) {
  if (node.domain() != kTesselDomain || !HasQGemmVnni() || inputs[0]->dtype() != DType::kU8) return false;
  if (node.op_type() == "QGemm") return RunQGemm(node, inputs, outputs[0]);
  if (node.op_type() == "QConv" && node.GetString("layout", "nchw") == "nhwc" && node.GetInt("group", 1) == 1 &&
      inputs[0]->rank() == 4) {
    return RunQConv(node, inputs, outputs[0]);
  }
  return false;
}

}  // namespace tessel
