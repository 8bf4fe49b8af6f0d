// XNNPACK int8 operator kernels. XNNPACK takes float scales where the node holds fixed-point
// requantizations: the real multiplier m = multiplier * 2^(shift - 31) becomes the kernel scale with
// input and output scales of 1, so XNNPACK's requantization scale (input * kernel / output) is m.
// Weights are s8 symmetric: qu8 operators get them as u8 with kernel zero point 128 (exact); qc8
// operators want s8 activations, so their u8 input is flipped to s8 (x ^ 0x80 == x - 128, zero points
// moved by 128) into scratch and their s8 output flipped back in place.
#include "kernels/xnnpack/xnnpack_int8_kernels.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/conv/conv_geometry.h"
#include "kernels/xnnpack/internal/xnn_common.h"
#include "pthreadpool.h"
#include "xnnpack.h"

namespace tessel {
namespace {

using xnn_internal::InitXnnpack;
using xnn_internal::XnnError;
using xnn_internal::XnnFlags;

// XNNPACK refuses requantization scales of 256 and more; its Arm rounding (rndnu) needs at least 2^-32.
constexpr float kMinScale = 0x1.0p-32f;
constexpr float kMaxScale = 256.0f;

// The node's quantization as XNNPACK wants it.
struct Int8Params {
  std::vector<float> scales;  // real multiplier per output channel
  bool per_tensor = true;     // every channel has the same (multiplier, shift)
  int32_t x_zero_point = 0, y_zero_point = 0, lo = 0, hi = 255;
};

// False when the attributes fall outside what XNNPACK accepts: a multiplier outside [2^-32, 256) (or 0),
// an empty output range (XNNPACK needs act_min < act_max), zero points outside u8.
bool ReadInt8Params(const Node& node, int64_t channels, Int8Params* p) {
  const std::vector<int64_t> mult = node.GetInts("multiplier");
  const std::vector<int64_t> shift = node.GetInts("shift");
  if (mult.empty() || mult.size() != shift.size() ||
      (mult.size() != 1 && static_cast<int64_t>(mult.size()) != channels)) {
    return false;
  }
  p->scales.assign(channels, 0.0f);
  p->per_tensor = true;
  for (int64_t c = 0; c < channels; ++c) {
    const size_t i = mult.size() == 1 ? 0 : static_cast<size_t>(c);
    const float m = static_cast<float>(std::ldexp(static_cast<double>(mult[i]), static_cast<int>(shift[i]) - 31));
    if (!(m >= kMinScale && m < kMaxScale)) return false;
    p->scales[c] = m;
    p->per_tensor = p->per_tensor && mult[i] == mult[0] && shift[i] == shift[0];
  }
  p->x_zero_point = static_cast<int32_t>(node.GetInt("x_zero_point", 0));
  p->y_zero_point = static_cast<int32_t>(node.GetInt("y_zero_point", 0));
  p->lo = static_cast<int32_t>(node.GetInt("act_min", 0));
  p->hi = static_cast<int32_t>(node.GetInt("act_max", 255));
  auto u8 = [](int32_t v) { return v >= 0 && v <= 255; };
  return u8(p->x_zero_point) && u8(p->y_zero_point) && u8(p->lo) && u8(p->hi) && p->lo < p->hi;
}

bool IsStatic(const OperandInfo& o, DType dtype) { return o.present && o.type.dtype == dtype && o.type.is_static(); }

// Bias: absent, or constant i32 [channels].
bool BiasOk(const OpQuery& q, int64_t channels) {
  if (!q.has_input(2)) return true;
  const TensorType& b = q.input(2);
  return q.inputs[2].constant && IsStatic(q.inputs[2], DType::kI32) && b.rank() == 1 && b.dims[0].value() == channels;
}

// The operands every entry needs: u8 activations, constant i8 weights, a non-empty u8 output and no residual
// (QConv's input 3 is added after requantization with its own multiplier, which XNNPACK's operators
// cannot express without a second rounding).
bool CommonOk(const OpQuery& q) {
  return q.has_input(0) && q.has_input(1) && !q.has_input(3) && IsStatic(q.inputs[0], DType::kU8) &&
         IsStatic(q.inputs[1], DType::kI8) && q.inputs[1].constant && q.outputs.size() == 1 &&
         IsStatic(q.outputs[0], DType::kU8) && q.output(0).NumElements() > 0;
}

bool ResolveQConv(const OpQuery& q, Conv2dGeometry* g, Int8Params* p) {
  if (!CommonOk(q) || q.input(0).rank() != 4) return false;
  absl::StatusOr<Conv2dGeometry> r = ResolveConv2dNhwc(q.node, q.input(0), q.input(1));
  if (!r.ok() || !BiasOk(q, r->m) || !ReadInt8Params(q.node, r->m, p)) return false;
  *g = *r;
  return true;
}

// QGemm as the convolution it equals: A [M, K] is M pixels of K channels, W [N, K] is N 1x1 filters.
bool ResolveQGemm(const OpQuery& q, Conv2dGeometry* g, Int8Params* p) {
  if (!CommonOk(q) || q.input(0).rank() != 2 || q.input(1).rank() != 2) return false;
  const int64_t k = q.input(0).dims[1].value(), n = q.input(1).dims[0].value();
  if (q.input(1).dims[1].value() != k || k == 0 || n == 0 || !BiasOk(q, n) || !ReadInt8Params(q.node, n, p)) {
    return false;
  }
  *g = Conv2dGeometry();
  g->n = q.input(0).dims[0].value();
  g->h = g->w = g->oh = g->ow = 1;
  g->c = k;
  g->m = n;
  return true;
}

bool QConvQu8Legal(const OpQuery& q) {
  Conv2dGeometry g;
  Int8Params p;
  return ResolveQConv(q, &g, &p) && p.per_tensor;
}

bool QConvQc8Legal(const OpQuery& q) {
  Conv2dGeometry g;
  Int8Params p;
  return ResolveQConv(q, &g, &p);
}

bool QGemmQu8Legal(const OpQuery& q) {
  Conv2dGeometry g;
  Int8Params p;
  return ResolveQGemm(q, &g, &p) && p.per_tensor;
}

bool QGemmQc8Legal(const OpQuery& q) {
  Conv2dGeometry g;
  Int8Params p;
  return ResolveQGemm(q, &g, &p);
}

// xnnpack_int8_benchmark, 1 thread on this host (AVX-512, 2022 XNNPACK): dense convolutions and fully
// connected 100-240 GOP/s, depthwise 3x3 40-48 GOP/s, grouped (8 channels a group) about 22 GOP/s; sign
// flips about 40 GB/s. The rates below stay under Tessel's own int8 kernels' (int8_op_kernels.cc: VNNI
// 700 GOP/s, NEON dotprod 150, i8mm 250; VNNI depthwise 50) so that these serve only nodes those do not
// (XNNPACK's Arm speed is not measured: qemu timings mean nothing).
constexpr double kDenseOps = 100e9;
constexpr double kDepthwiseOps = 40e9;
// The qc8 sign flips: read + write of the input, then of the output.
constexpr double kFlipBytesPerSecond = 40e9;

double Int8Cost(const Conv2dGeometry& g, bool flips) {
  const bool depthwise = g.group_in() == 1 && g.groups > 1;
  const double bytes = static_cast<double>(g.n * g.h * g.w * g.c + g.n * g.oh * g.ow * g.m);
  return g.flops() / (depthwise ? kDepthwiseOps : kDenseOps) + (flips ? 2.0 * bytes / kFlipBytesPerSecond : 0.0);
}

template <bool (*kResolve)(const OpQuery&, Conv2dGeometry*, Int8Params*), bool kFlips>
double Cost(const OpQuery& q) {
  Conv2dGeometry g;
  Int8Params p;
  return kResolve(q, &g, &p) ? Int8Cost(g, kFlips) : 1e9;
}

// dst[i] = src[i] ^ 0x80 over [start, start + count) (u8 <-> s8 with the zero point moved by 128).
struct FlipJob {
  const uint8_t* src;
  uint8_t* dst;
};

void FlipSigns(void* context, size_t start, size_t count) {
  const FlipJob* job = static_cast<const FlipJob*>(context);
  const uint8_t* src = job->src + start;  // may be dst itself: no __restrict
  uint8_t* dst = job->dst + start;
  size_t i = 0;
  // Fixed 32-byte chunks vectorize at -O2 (GCC's very-cheap cost model skips unknown trip counts); src
  // and dst may be the same buffer, which the copies through `v` allow.
  for (; i + 32 <= count; i += 32) {
    uint8_t v[32];
    std::memcpy(v, src + i, 32);
    for (int t = 0; t < 32; ++t) v[t] ^= 0x80;
    std::memcpy(dst + i, v, 32);
  }
  for (; i < count; ++i) dst[i] = src[i] ^ 0x80;
}

// One XNNPACK operator over u8 tensors bound at creation; with `flip` (qc8) the input is flipped to s8
// into scratch before the operator runs and the output flipped back to u8 after.
class XnnInt8Kernel : public OpKernel {
 public:
  XnnInt8Kernel(const OpKernelArgs& args, bool flip)
      : pool_(args.threadpool),
        parallel_flags_(ParallelFlags(args)),
        flip_(flip),
        x_(args.inputs[0]->data<uint8_t>()),
        x_bytes_(args.inputs[0]->num_elements()),
        y_(args.outputs[0].data<uint8_t>()),
        y_bytes_(args.outputs[0].num_elements()) {
    // XNNPACK may read XNN_EXTRA_BYTES past the end of its input.
    if (flip_) x_s8_.assign(x_bytes_ + XNN_EXTRA_BYTES, 0);
  }
  ~XnnInt8Kernel() override {
    if (op_ != nullptr) xnn_delete_operator(op_);
  }

  absl::Status Run() override {
    if (flip_) Flip(x_, x_s8_.data(), x_bytes_);
    const xnn_status s = xnn_run_operator(op_, pool_);
    if (s != xnn_status_success) return absl::InternalError(absl::StrCat("xnn_run_operator failed (", s, ")"));
    if (flip_) Flip(y_, y_, y_bytes_);
    return absl::OkStatus();
  }

  // Takes ownership of `op`.
  void set_op(xnn_operator_t op) { op_ = op; }
  // What the operator reads and writes: the s8 scratch and the output as s8 with `flip`, else the u8 tensors.
  const void* op_input() const { return flip_ ? static_cast<const void*>(x_s8_.data()) : x_; }
  void* op_output() const { return y_; }

 private:
  void Flip(const uint8_t* src, uint8_t* dst, size_t bytes) {
    FlipJob job{src, dst};
    // 16 KiB tiles: a few per thread for the smallest layers that are worth splitting.
    pthreadpool_parallelize_1d_tile_1d(pool_, FlipSigns, &job, bytes, 16384, parallel_flags_);
  }

  pthreadpool_t pool_;
  uint32_t parallel_flags_;
  bool flip_;
  const uint8_t* x_;
  size_t x_bytes_;
  uint8_t* y_;
  size_t y_bytes_;
  std::vector<uint8_t> x_s8_;
  xnn_operator_t op_ = nullptr;
};

// The operand view of a kernel's arguments, for the legality functions (all operands known).
struct ArgsQuery {
  explicit ArgsQuery(const OpKernelArgs& args) : inputs(args.inputs.size()) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (args.inputs[i] != nullptr) inputs[i] = {true, true, args.inputs[i]->type()};
    }
    outputs.push_back({true, false, args.outputs[0].type()});
  }
  OpQuery query(const Node& node) const { return OpQuery{node, inputs, outputs}; }
  std::vector<OperandInfo> inputs, outputs;
};

const int32_t* BiasOrNull(const OpKernelArgs& args) {
  return args.inputs.size() > 2 && args.inputs[2] != nullptr ? args.inputs[2]->data<int32_t>() : nullptr;
}

absl::Status NotServed(const OpKernelArgs& args, const char* kernel) {
  return absl::InvalidArgumentError(
      absl::StrCat("node '", args.node.name(), "' is not served by ", kernel, " (see its legality check)"));
}

// QConv or QGemm (as a 1x1 convolution over batch * 1 * 1 pixels) on xnn_convolution2d_nhwc_qc8, with
// per-channel scales.
template <bool (*kResolve)(const OpQuery&, Conv2dGeometry*, Int8Params*)>
absl::StatusOr<std::unique_ptr<OpKernel>> CreateQc8(const OpKernelArgs& args) {
  absl::Status st = InitXnnpack();
  if (!st.ok()) return st;
  Conv2dGeometry g;
  Int8Params p;
  if (!kResolve(ArgsQuery(args).query(args.node), &g, &p)) return NotServed(args, "XNNPACK's qc8 convolution");
  auto k = std::make_unique<XnnInt8Kernel>(args, /*flip=*/true);
  xnn_operator_t op = nullptr;
  xnn_status s = xnn_create_convolution2d_nhwc_qc8(
      g.pad_top, g.pad_right, g.pad_bottom, g.pad_left, g.kh, g.kw, g.sh, g.sw, g.dh, g.dw, g.groups, g.group_in(),
      g.group_out(), g.c, g.m, static_cast<int8_t>(p.x_zero_point - 128), 1.0f, p.scales.data(),
      args.inputs[1]->data<int8_t>(), BiasOrNull(args), static_cast<int8_t>(p.y_zero_point - 128), 1.0f,
      static_cast<int8_t>(p.lo - 128), static_cast<int8_t>(p.hi - 128), XnnFlags(args), &op);
  if (s != xnn_status_success) return XnnError(args, "create qc8 convolution", s);
  k->set_op(op);
  s = xnn_setup_convolution2d_nhwc_qc8(op, g.n, g.h, g.w, static_cast<const int8_t*>(k->op_input()),
                                       static_cast<int8_t*>(k->op_output()), args.threadpool);
  if (s != xnn_status_success) return XnnError(args, "setup qc8 convolution", s);
  return std::unique_ptr<OpKernel>(std::move(k));
}

// The s8 weights as u8 with zero point 128: the same values, as the qu8 operators take them.
std::vector<uint8_t> WeightsAsU8(const Tensor& w) {
  std::vector<uint8_t> u(w.num_elements());
  const int8_t* s = w.data<int8_t>();
  for (size_t i = 0; i < u.size(); ++i) u[i] = static_cast<uint8_t>(s[i] + 128);
  return u;
}

constexpr uint8_t kWeightZeroPoint = 128;

absl::StatusOr<std::unique_ptr<OpKernel>> CreateQConvQu8(const OpKernelArgs& args) {
  absl::Status st = InitXnnpack();
  if (!st.ok()) return st;
  Conv2dGeometry g;
  Int8Params p;
  if (!ResolveQConv(ArgsQuery(args).query(args.node), &g, &p) || !p.per_tensor) {
    return NotServed(args, "XNNPACK's qu8 convolution");
  }
  auto k = std::make_unique<XnnInt8Kernel>(args, /*flip=*/false);
  // XNNPACK packs (copies) the weights at creation.
  const std::vector<uint8_t> w = WeightsAsU8(*args.inputs[1]);
  xnn_operator_t op = nullptr;
  xnn_status s = xnn_create_convolution2d_nhwc_qu8(
      g.pad_top, g.pad_right, g.pad_bottom, g.pad_left, g.kh, g.kw, g.sh, g.sw, g.dh, g.dw, g.groups, g.group_in(),
      g.group_out(), g.c, g.m, static_cast<uint8_t>(p.x_zero_point), 1.0f, kWeightZeroPoint, p.scales[0], w.data(),
      BiasOrNull(args), static_cast<uint8_t>(p.y_zero_point), 1.0f, static_cast<uint8_t>(p.lo),
      static_cast<uint8_t>(p.hi), XnnFlags(args), &op);
  if (s != xnn_status_success) return XnnError(args, "create qu8 convolution", s);
  k->set_op(op);
  s = xnn_setup_convolution2d_nhwc_qu8(op, g.n, g.h, g.w, static_cast<const uint8_t*>(k->op_input()),
                                       static_cast<uint8_t*>(k->op_output()), args.threadpool);
  if (s != xnn_status_success) return XnnError(args, "setup qu8 convolution", s);
  return std::unique_ptr<OpKernel>(std::move(k));
}

absl::StatusOr<std::unique_ptr<OpKernel>> CreateQGemmQu8(const OpKernelArgs& args) {
  absl::Status st = InitXnnpack();
  if (!st.ok()) return st;
  Conv2dGeometry g;
  Int8Params p;
  if (!ResolveQGemm(ArgsQuery(args).query(args.node), &g, &p) || !p.per_tensor) {
    return NotServed(args, "XNNPACK's qu8 fully connected");
  }
  auto k = std::make_unique<XnnInt8Kernel>(args, /*flip=*/false);
  const std::vector<uint8_t> w = WeightsAsU8(*args.inputs[1]);  // [N, K], XNNPACK's default order
  xnn_operator_t op = nullptr;
  xnn_status s = xnn_create_fully_connected_nc_qu8(
      g.c, g.m, g.c, g.m, static_cast<uint8_t>(p.x_zero_point), 1.0f, kWeightZeroPoint, p.scales[0], w.data(),
      BiasOrNull(args), static_cast<uint8_t>(p.y_zero_point), 1.0f, static_cast<uint8_t>(p.lo),
      static_cast<uint8_t>(p.hi), XnnFlags(args), &op);
  if (s != xnn_status_success) return XnnError(args, "create qu8 fully connected", s);
  k->set_op(op);
  s = xnn_setup_fully_connected_nc_qu8(op, g.n, static_cast<const uint8_t*>(k->op_input()),
                                       static_cast<uint8_t*>(k->op_output()), args.threadpool);
  if (s != xnn_status_success) return XnnError(args, "setup qu8 fully connected", s);
  return std::unique_ptr<OpKernel>(std::move(k));
}

OpKernelEntry Entry(const char* name, const char* op, const char* layout, bool (*legal)(const OpQuery&),
                    double (*cost)(const OpQuery&),
                    absl::StatusOr<std::unique_ptr<OpKernel>> (*create)(const OpKernelArgs&)) {
  // Isa::kPortable: XNNPACK dispatches on the CPU itself.
  return MakeOpKernelEntry(name, op, "u8", layout, Isa::kPortable, "xnnpack", legal, cost, create);
}

}  // namespace

void RegisterXnnpackInt8OpKernels(OpKernelRegistry& r) {
  r.Register(Entry("xnn_qu8_conv2d_nhwc__xnnpack", "tessel.QConv", "nhwc", QConvQu8Legal, Cost<ResolveQConv, false>,
                   CreateQConvQu8));
  r.Register(Entry("xnn_qc8_conv2d_nhwc__xnnpack", "tessel.QConv", "nhwc", QConvQc8Legal, Cost<ResolveQConv, true>,
                   CreateQc8<ResolveQConv>));
  r.Register(Entry("xnn_qu8_fully_connected__xnnpack", "tessel.QGemm", "row_major", QGemmQu8Legal,
                   Cost<ResolveQGemm, false>, CreateQGemmQu8));
  r.Register(Entry("xnn_qc8_fully_connected__xnnpack", "tessel.QGemm", "row_major", QGemmQc8Legal,
                   Cost<ResolveQGemm, true>, CreateQc8<ResolveQGemm>));
}

}  // namespace tessel
