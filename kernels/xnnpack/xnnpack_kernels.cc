// XNNPACK operator-level kernels. Legality mirrors what each XNNPACK operator accepts, so creation
// only fails on resource exhaustion; fused activations that are not clamps fall back elsewhere.
#include "kernels/xnnpack/xnnpack_kernels.h"

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/registry/conv_geometry.h"
#include "kernels/xnnpack/internal/xnn_common.h"
#include "kernels/xnnpack/xnnpack_int8_kernels.h"
#include "xnnpack.h"

namespace tessel {
namespace {

using xnn_internal::XnnError;
using xnn_internal::XnnFlags;

constexpr float kInf = std::numeric_limits<float>::infinity();

// Owns a short sequence of XNNPACK operators run in order.
class XnnKernel : public OpKernel {
 public:
  explicit XnnKernel(pthreadpool_t pool) : pool_(pool) {}
  ~XnnKernel() override {
    for (xnn_operator_t op : ops_) xnn_delete_operator(op);
  }
  absl::Status Run() override {
    for (xnn_operator_t op : ops_) {
      const xnn_status s = xnn_run_operator(op, pool_);
      if (s != xnn_status_success) return absl::InternalError(absl::StrCat("xnn_run_operator failed (", s, ")"));
    }
    return absl::OkStatus();
  }
  // Takes ownership of `op` (also when the caller then fails).
  void Add(xnn_operator_t op) { ops_.push_back(op); }
  float* Scratch(size_t floats) {
    scratch_.emplace_back(floats);
    return scratch_.back().data();
  }

 private:
  pthreadpool_t pool_;
  std::vector<xnn_operator_t> ops_;
  std::vector<std::vector<float>> scratch_;
};

bool AllF32(const OpQuery& q) {
  for (const OperandInfo& o : q.inputs) {
    if (o.present && o.type.dtype != DType::kF32) return false;
  }
  for (const OperandInfo& o : q.outputs) {
    if (o.type.dtype != DType::kF32 || !o.type.is_static()) return false;
  }
  return true;
}

bool ConstantOrAbsent(const OpQuery& q, int i) { return !q.has_input(i) || q.inputs[i].constant; }

const float* DataOrNull(const Tensor* t) { return t ? t->data<float>() : nullptr; }

// ---- tessel.FusedConv: act(conv(X, W) + B + R); a clamp fused, other activations appended ------------

bool FusedConvLegal(const OpQuery& q) {
  if (!AllF32(q) || !q.has_input(1) || !q.inputs[1].constant || !ConstantOrAbsent(q, 2)) return false;
  return ResolveConv2dNhwc(q.node, q.input(0), q.input(1)).ok();
}

// XNNPACK's f32 GEMM rate: ~150 GFLOP/s measured for its AVX-512 GEMM; ~45 where it runs its slow
// FMA3 kernel (XnnpackF32GemmIsSlow: 41 GFLOP/s on MobileNetV2's 320 -> 1280 1x1 convolution).
double GemmRate() { return XnnpackF32GemmIsSlow() ? 45e9 : 150e9; }

double ConvCost(const Conv2dGeometry& g) {
  const double bytes = 4.0 * (g.n * g.h * g.w * g.c + g.n * g.oh * g.ow * g.m);
  // Depthwise layers are bound by memory; dense ones by FMA throughput.
  if (g.group_in() == 1 && g.groups > 1) return g.flops() / 30e9 + bytes / 20e9;
  // XNNPACK's single-thread loop sweeps all the weights for every 7 output pixels: weights beyond L2
  // stream from L3 or memory ceil(pixels / 7) times (ResNet-18's 7x7x512 layers: 7 passes over 9.4 MB).
  const double weight_bytes = 4.0 * g.m * g.kh * g.kw * g.group_in();
  const double restream = weight_bytes > (1 << 20) ? weight_bytes * std::ceil(g.n * g.oh * g.ow / 7.0) / 50e9 : 0.0;
  return g.flops() / GemmRate() + bytes / 40e9 + restream;
}

double FusedConvCost(const OpQuery& q) {
  absl::StatusOr<Conv2dGeometry> g = ResolveConv2dNhwc(q.node, q.input(0), q.input(1));
  return g.ok() ? ConvCost(*g) : 1e9;
}

xnn_status CreateConv(const Conv2dGeometry& g, const float* w, const float* b, float lo, float hi, uint32_t flags,
                      xnn_operator_t* op) {
  return xnn_create_convolution2d_nhwc_f32(g.pad_top, g.pad_right, g.pad_bottom, g.pad_left, g.kh, g.kw, g.sh, g.sw,
                                           g.dh, g.dw, g.groups, g.group_in(), g.group_out(), g.c, g.m, w, b, lo, hi,
                                           flags, op);
}

// Appends `y = clamp(a + r)` over same-shaped [elements] tensors.
absl::Status AddResidual(const OpKernelArgs& args, XnnKernel* k, int64_t elements, const float* a, const float* r,
                         float* y, const ClampActivation& act) {
  xnn_operator_t op = nullptr;
  xnn_status s = xnn_create_add_nd_f32(act.lo, act.hi, XnnFlags(args), &op);
  if (s != xnn_status_success) return XnnError(args, "create add", s);
  k->Add(op);
  const size_t shape[1] = {static_cast<size_t>(elements)};
  s = xnn_setup_add_nd_f32(op, 1, shape, 1, shape, a, r, y, args.threadpool);
  if (s != xnn_status_success) return XnnError(args, "setup add", s);
  return absl::OkStatus();
}

// Hardswish, sigmoid or SiLU (named by `<prefix>activation`), which XNNPACK's convolution cannot fuse,
// as XNNPACK operators over `y` in place after it: SiLU as y * sigmoid(y) through scratch. A clamp
// (none, relu, clip) was fused already and appends nothing.
absl::Status AppendActivation(const OpKernelArgs& args, XnnKernel* k, const std::string& prefix, int64_t elements,
                              float* y) {
  const std::string kind = args.node.GetString(prefix + "activation", "none");
  if (ReadClampActivation(args.node, prefix).is_clamp) return absl::OkStatus();
  const size_t n = static_cast<size_t>(elements);
  float* s_out = kind == "silu" ? k->Scratch(n) : y;
  xnn_operator_t op = nullptr;
  xnn_status s = kind == "hardswish" ? xnn_create_hardswish_nc_f32(1, 1, 1, XnnFlags(args), &op)
                                     : xnn_create_sigmoid_nc_f32(1, 1, 1, XnnFlags(args), &op);
  if (s != xnn_status_success) return XnnError(args, "create activation", s);
  k->Add(op);
  s = kind == "hardswish" ? xnn_setup_hardswish_nc_f32(op, n, y, s_out, args.threadpool)
                          : xnn_setup_sigmoid_nc_f32(op, n, y, s_out, args.threadpool);
  if (s != xnn_status_success) return XnnError(args, "setup activation", s);
  if (kind != "silu") return absl::OkStatus();
  s = xnn_create_multiply_nd_f32(-kInf, kInf, XnnFlags(args), &op);
  if (s != xnn_status_success) return XnnError(args, "create multiply", s);
  k->Add(op);
  const size_t shape[1] = {n};
  s = xnn_setup_multiply_nd_f32(op, 1, shape, 1, shape, y, s_out, y, args.threadpool);
  if (s != xnn_status_success) return XnnError(args, "setup multiply", s);
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<OpKernel>> CreateFusedConv(const OpKernelArgs& args) {
  absl::Status st = InitXnnpack();
  if (!st.ok()) return st;
  absl::StatusOr<Conv2dGeometry> g = ResolveConv2dNhwc(args.node, args.inputs[0]->type(), args.inputs[1]->type());
  if (!g.ok()) return g.status();
  const ClampActivation act = ReadClampActivation(args.node, "");
  const Tensor* residual = args.inputs.size() > 3 ? args.inputs[3] : nullptr;
  const Tensor* bias = args.inputs.size() > 2 ? args.inputs[2] : nullptr;
  auto k = std::make_unique<XnnKernel>(args.threadpool);
  float* y = args.outputs[0].data<float>();
  const int64_t elements = args.outputs[0].num_elements();
  // With a residual the clamp comes after the add; a residual sharing the output's memory would be
  // overwritten by the convolution, so the convolution then writes to scratch.
  float* conv_out = residual && residual->data<float>() == y ? k->Scratch(elements) : y;
  xnn_operator_t op = nullptr;
  xnn_status s = CreateConv(*g, args.inputs[1]->data<float>(), DataOrNull(bias), residual ? -kInf : act.lo,
                            residual ? kInf : act.hi, XnnFlags(args), &op);
  if (s != xnn_status_success) return XnnError(args, "create convolution", s);
  k->Add(op);
  s = xnn_setup_convolution2d_nhwc_f32(op, g->n, g->h, g->w, args.inputs[0]->data<float>(), conv_out, args.threadpool);
  if (s != xnn_status_success) return XnnError(args, "setup convolution", s);
  if (residual) {
    st = AddResidual(args, k.get(), elements, conv_out, residual->data<float>(), y, act);
    if (!st.ok()) return st;
  }
  st = AppendActivation(args, k.get(), "", elements, y);
  if (!st.ok()) return st;
  return std::unique_ptr<OpKernel>(std::move(k));
}

// ---- tessel.DwPwConv: pw_act(conv1x1(dw_act(dwconv(X, W_dw) + B_dw), W_pw) + B_pw + R) ----------------

bool DwPwConvLegal(const OpQuery& q) {
  if (q.has_input(6) || q.has_input(7)) return false;  // an expansion: only Tessel's fused kernel runs it
  if (!AllF32(q) || !q.has_input(1) || !q.inputs[1].constant || !ConstantOrAbsent(q, 2)) return false;
  if (!q.has_input(3) || !q.inputs[3].constant || !ConstantOrAbsent(q, 4)) return false;
  return ResolveConv2dNhwc(q.node, q.input(0), q.input(1)).ok() && q.input(3).rank() == 4;
}

double DwPwConvCost(const OpQuery& q) {
  absl::StatusOr<Conv2dGeometry> g = ResolveConv2dNhwc(q.node, q.input(0), q.input(1));
  if (!g.ok()) return 1e9;
  const double pw_flops = 2.0 * g->n * g->oh * g->ow * g->m * q.input(3).dims[0].value();
  return ConvCost(*g) + pw_flops / GemmRate();
}

absl::StatusOr<std::unique_ptr<OpKernel>> CreateDwPwConv(const OpKernelArgs& args) {
  absl::Status st = InitXnnpack();
  if (!st.ok()) return st;
  absl::StatusOr<Conv2dGeometry> dw = ResolveConv2dNhwc(args.node, args.inputs[0]->type(), args.inputs[1]->type());
  if (!dw.ok()) return dw.status();
  const Tensor& w_pw = *args.inputs[3];
  const Tensor* b_dw = args.inputs.size() > 2 ? args.inputs[2] : nullptr;
  const Tensor* b_pw = args.inputs.size() > 4 ? args.inputs[4] : nullptr;
  const Tensor* residual = args.inputs.size() > 5 ? args.inputs[5] : nullptr;
  Conv2dGeometry pw;
  pw.n = dw->n;
  pw.h = pw.oh = dw->oh;
  pw.w = pw.ow = dw->ow;
  pw.c = dw->m;
  pw.m = w_pw.dim(0);
  const ClampActivation dw_act = ReadClampActivation(args.node, "dw_");
  const ClampActivation pw_act = ReadClampActivation(args.node, "pw_");
  auto k = std::make_unique<XnnKernel>(args.threadpool);
  float* mid = k->Scratch(dw->n * dw->oh * dw->ow * dw->m);
  float* y = args.outputs[0].data<float>();
  const int64_t elements = args.outputs[0].num_elements();
  float* pw_out = residual && residual->data<float>() == y ? k->Scratch(elements) : y;
  xnn_operator_t op = nullptr;
  xnn_status s =
      CreateConv(*dw, args.inputs[1]->data<float>(), DataOrNull(b_dw), dw_act.lo, dw_act.hi, XnnFlags(args), &op);
  if (s != xnn_status_success) return XnnError(args, "create depthwise convolution", s);
  k->Add(op);
  s = xnn_setup_convolution2d_nhwc_f32(op, dw->n, dw->h, dw->w, args.inputs[0]->data<float>(), mid, args.threadpool);
  if (s != xnn_status_success) return XnnError(args, "setup depthwise convolution", s);
  st = AppendActivation(args, k.get(), "dw_", dw->n * dw->oh * dw->ow * dw->m, mid);
  if (!st.ok()) return st;
  s = CreateConv(pw, w_pw.data<float>(), DataOrNull(b_pw), residual ? -kInf : pw_act.lo, residual ? kInf : pw_act.hi,
                 XnnFlags(args), &op);
  if (s != xnn_status_success) return XnnError(args, "create pointwise convolution", s);
  k->Add(op);
  s = xnn_setup_convolution2d_nhwc_f32(op, pw.n, pw.h, pw.w, mid, pw_out, args.threadpool);
  if (s != xnn_status_success) return XnnError(args, "setup pointwise convolution", s);
  if (residual) {
    st = AddResidual(args, k.get(), elements, pw_out, residual->data<float>(), y, pw_act);
    if (!st.ok()) return st;
  }
  st = AppendActivation(args, k.get(), "pw_", elements, y);
  if (!st.ok()) return st;
  return std::unique_ptr<OpKernel>(std::move(k));
}

// ---- tessel.MaxPool / tessel.AveragePool / tessel.GlobalAveragePool (nhwc) ----------------------------

bool PoolLegal(const OpQuery& q) {
  if (!AllF32(q) || q.outputs.size() != 1) return false;
  absl::StatusOr<Conv2dGeometry> g = ResolvePool2dNhwc(q.node, q.input(0));
  if (!g.ok() || g->kh * g->kw < 2) return false;  // XNNPACK refuses 1x1 windows
  if (q.node.op_type() == "MaxPool") return true;
  // XNNPACK averages over the valid pixels only, which is ONNX's count_include_pad=0, and has no
  // dilation for averages.
  const bool padded = g->pad_top || g->pad_left || g->pad_bottom || g->pad_right;
  return (!padded || q.node.GetInt("count_include_pad", 0) == 0) && g->dh == 1 && g->dw == 1;
}

double PoolCost(const OpQuery& q) {
  const TensorType& x = q.input(0);
  return 4.0 * (x.NumElements() + q.output(0).NumElements()) / 10e9;
}

absl::StatusOr<std::unique_ptr<OpKernel>> CreatePool(const OpKernelArgs& args) {
  absl::Status st = InitXnnpack();
  if (!st.ok()) return st;
  absl::StatusOr<Conv2dGeometry> g = ResolvePool2dNhwc(args.node, args.inputs[0]->type());
  if (!g.ok()) return g.status();
  auto k = std::make_unique<XnnKernel>(args.threadpool);
  xnn_operator_t op = nullptr;
  const bool max = args.node.op_type() == "MaxPool";
  xnn_status s =
      max ? xnn_create_max_pooling2d_nhwc_f32(g->pad_top, g->pad_right, g->pad_bottom, g->pad_left, g->kh, g->kw, g->sh,
                                              g->sw, g->dh, g->dw, g->c, g->c, g->c, -kInf, kInf, XnnFlags(args), &op)
          : xnn_create_average_pooling2d_nhwc_f32(g->pad_top, g->pad_right, g->pad_bottom, g->pad_left, g->kh, g->kw,
                                                  g->sh, g->sw, g->c, g->c, g->c, -kInf, kInf, XnnFlags(args), &op);
  if (s != xnn_status_success) return XnnError(args, "create pooling", s);
  k->Add(op);
  const float* x = args.inputs[0]->data<float>();
  float* y = args.outputs[0].data<float>();
  s = max ? xnn_setup_max_pooling2d_nhwc_f32(op, g->n, g->h, g->w, x, y, args.threadpool)
          : xnn_setup_average_pooling2d_nhwc_f32(op, g->n, g->h, g->w, x, y, args.threadpool);
  if (s != xnn_status_success) return XnnError(args, "setup pooling", s);
  return std::unique_ptr<OpKernel>(std::move(k));
}

bool GlobalPoolLegal(const OpQuery& q) {
  return AllF32(q) && q.node.GetString("layout", "nchw") == "nhwc" && q.input(0).rank() == 4 && q.input(0).is_static();
}

absl::StatusOr<std::unique_ptr<OpKernel>> CreateGlobalPool(const OpKernelArgs& args) {
  absl::Status st = InitXnnpack();
  if (!st.ok()) return st;
  const Tensor& x = *args.inputs[0];
  const size_t c = x.dim(3);
  auto k = std::make_unique<XnnKernel>(args.threadpool);
  xnn_operator_t op = nullptr;
  xnn_status s = xnn_create_global_average_pooling_nwc_f32(c, c, c, -kInf, kInf, XnnFlags(args), &op);
  if (s != xnn_status_success) return XnnError(args, "create global average pooling", s);
  k->Add(op);
  s = xnn_setup_global_average_pooling_nwc_f32(op, x.dim(0), x.dim(1) * x.dim(2), x.data<float>(),
                                               args.outputs[0].data<float>(), args.threadpool);
  if (s != xnn_status_success) return XnnError(args, "setup global average pooling", s);
  return std::unique_ptr<OpKernel>(std::move(k));
}

// ---- Gemm, MatMul, tessel.MatMulBias: fully connected over constant 2-D weights ------------------------

// The weights input, whether they are [N, K] (transposed) and the bias input (-1: none) of a
// fully-connected-shaped node; false when the node is not one.
struct FcShape {
  int64_t batch = 0, k = 0, n = 0;
  bool weights_nk = false;
  int bias = -1;
};

bool ResolveFc(const OpQuery& q, FcShape* fc) {
  if (!AllF32(q) || !q.has_input(1) || !q.inputs[1].constant || q.input(1).rank() != 2) return false;
  const TensorType& a = q.input(0);
  const TensorType& w = q.input(1);
  if (a.rank() < 2 || !a.is_static() || !w.is_static()) return false;
  const std::string op = q.op();
  if (op == "Gemm") {
    if (a.rank() != 2 || q.node.GetInt("transA", 0) != 0 || q.node.GetFloat("alpha", 1.0f) != 1.0f) return false;
    fc->weights_nk = q.node.GetInt("transB", 0) != 0;
    if (q.has_input(2)) {
      if (!q.inputs[2].constant || q.node.GetFloat("beta", 1.0f) != 1.0f) return false;
      fc->bias = 2;
    }
  } else if (op == "tessel.MatMulBias") {
    fc->bias = 2;
  } else if (op != "MatMul") {
    return false;
  }
  fc->k = a.dims.back().value();
  if (fc->k <= 0) return false;  // an empty contraction (a corrupt plan; never compiled so)
  fc->batch = a.NumElements() / fc->k;
  fc->n = fc->weights_nk ? w.dims[0].value() : w.dims[1].value();
  if ((fc->weights_nk ? w.dims[1].value() : w.dims[0].value()) != fc->k) return false;
  if (fc->bias >= 0) {
    // A per-output-column bias: [N] or [1, N].
    const TensorType& b = q.input(fc->bias);
    if (!b.is_static() || b.NumElements() != fc->n || b.dims.back().value() != fc->n) return false;
  }
  return true;
}

bool FcLegal(const OpQuery& q) {
  FcShape fc;
  return ResolveFc(q, &fc);
}

double FcCost(const OpQuery& q) {
  FcShape fc;
  if (!ResolveFc(q, &fc)) return 1e9;
  // Batch-1 layers stream the weights once, on XNNPACK's GEMV kernels, which the slow FMA3 GEMM does not
  // concern (the 1280 -> 1000 classifier at the AVX2 level: 0.13-0.15 ms, Tessel's GEMM 0.16-0.19).
  const double rate = fc.batch <= 1 ? 150e9 : GemmRate();
  // As in ConvCost, its single-thread loop sweeps all the weights for every 7 rows: weights beyond L2
  // stream again for each further 7 (Mask R-CNN's box head, 252 regions x 12544 x 1024, 51 MB of
  // weights: 108 ms here against 63 on the prepacked GEMM, which blocks its rows).
  const double weight_bytes = 4.0 * fc.n * fc.k;
  const double restream =
      weight_bytes > (1 << 20) ? weight_bytes * (std::ceil(fc.batch / 7.0) - 1) / 50e9 : 0.0;
  return 2.0 * fc.batch * fc.n * fc.k / rate + 4.0 * fc.n * fc.k / 20e9 + restream;
}

// A fully connected operator whose row count is the run's: set up again when it changes (a detection
// head's regions, planned at their bound, come out fewer), so only the rows that exist are computed.
class XnnFcKernel : public OpKernel {
 public:
  XnnFcKernel(pthreadpool_t pool, int64_t k, const Tensor* x, Tensor* y) : pool_(pool), k_(k), x_(x), y_(y) {}
  ~XnnFcKernel() override {
    if (op_ != nullptr) xnn_delete_operator(op_);
  }
  xnn_status Setup() {
    rows_ = k_ > 0 ? x_->num_elements() / k_ : 0;
    return xnn_setup_fully_connected_nc_f32(op_, rows_, x_->data<float>(), y_->data<float>(), pool_);
  }
  absl::Status Run() override {
    if ((k_ > 0 ? x_->num_elements() / k_ : 0) != rows_) {
      const xnn_status s = Setup();
      if (s != xnn_status_success) return absl::InternalError(absl::StrCat("xnn_setup_fully_connected failed (", s, ")"));
    }
    if (rows_ == 0) return absl::OkStatus();
    const xnn_status s = xnn_run_operator(op_, pool_);
    if (s != xnn_status_success) return absl::InternalError(absl::StrCat("xnn_run_operator failed (", s, ")"));
    return absl::OkStatus();
  }
  xnn_operator_t op_ = nullptr;

 private:
  pthreadpool_t pool_;
  int64_t k_ = 0, rows_ = -1;
  const Tensor* x_;
  Tensor* y_;
};

absl::StatusOr<std::unique_ptr<OpKernel>> CreateFc(const OpKernelArgs& args) {
  absl::Status st = InitXnnpack();
  if (!st.ok()) return st;
  std::vector<OperandInfo> info(args.inputs.size());
  for (size_t i = 0; i < info.size(); ++i) {
    if (args.inputs[i] == nullptr) continue;
    info[i] = {true, true, args.inputs[i]->type()};
  }
  std::vector<OperandInfo> out_info = {{true, false, args.outputs[0].type()}};
  FcShape fc;
  if (!ResolveFc(OpQuery{args.node, info, out_info}, &fc)) {
    return absl::InvalidArgumentError(absl::StrCat("node '", args.node.name(), "' is not a fully connected layer"));
  }
  auto k = std::make_unique<XnnFcKernel>(args.threadpool, fc.k, args.inputs[0], &args.outputs[0]);
  const float* bias = fc.bias >= 0 ? DataOrNull(args.inputs[fc.bias]) : nullptr;
  xnn_status s =
      xnn_create_fully_connected_nc_f32(fc.k, fc.n, fc.k, fc.n, args.inputs[1]->data<float>(), bias, -kInf, kInf,
                                        XnnFlags(args) | (fc.weights_nk ? 0 : XNN_FLAG_TRANSPOSE_WEIGHTS), &k->op_);
  if (s != xnn_status_success) return XnnError(args, "create fully connected", s);
  s = k->Setup();
  if (s != xnn_status_success) return XnnError(args, "setup fully connected", s);
  return std::unique_ptr<OpKernel>(std::move(k));
}

// ---- Add, Mul, Sub, Div (numpy broadcasting, up to XNN_MAX_TENSOR_DIMS) ------------------------------

bool AddLegal(const OpQuery& q) {
  return AllF32(q) && q.has_input(0) && q.has_input(1) && q.input(0).is_static() && q.input(1).is_static() &&
         q.input(0).rank() <= XNN_MAX_TENSOR_DIMS && q.input(1).rank() <= XNN_MAX_TENSOR_DIMS;
}

double AddCost(const OpQuery& q) { return 12.0 * q.output(0).NumElements() / 10e9; }

// The binary operators with numpy broadcasting (Add, Mul, Sub, Div): one XNNPACK nd operator each.
using BinaryCreateFn = xnn_status (*)(float, float, uint32_t, xnn_operator_t*);
using BinarySetupFn = xnn_status (*)(xnn_operator_t, size_t, const size_t*, size_t, const size_t*, const float*,
                                     const float*, float*, pthreadpool_t);

template <BinaryCreateFn kCreate, BinarySetupFn kSetup>
absl::StatusOr<std::unique_ptr<OpKernel>> CreateBinary(const OpKernelArgs& args) {
  absl::Status st = InitXnnpack();
  if (!st.ok()) return st;
  auto k = std::make_unique<XnnKernel>(args.threadpool);
  xnn_operator_t op = nullptr;
  xnn_status s = kCreate(-kInf, kInf, XnnFlags(args), &op);
  if (s != xnn_status_success) return XnnError(args, absl::StrCat("create ", args.node.op_type()).c_str(), s);
  k->Add(op);
  const Tensor& a = *args.inputs[0];
  const Tensor& b = *args.inputs[1];
  std::vector<size_t> sa(a.shape().begin(), a.shape().end()), sb(b.shape().begin(), b.shape().end());
  s = kSetup(op, sa.size(), sa.data(), sb.size(), sb.data(), a.data<float>(), b.data<float>(),
             args.outputs[0].data<float>(), args.threadpool);
  if (s != xnn_status_success) return XnnError(args, absl::StrCat("setup ", args.node.op_type()).c_str(), s);
  return std::unique_ptr<OpKernel>(std::move(k));
}

// ---- Relu, Clip, Sigmoid, HardSwish: elementwise over the flattened tensor ------------------------------

// Clip's bounds (opset 11+: optional constant scalar inputs; the importer rewrites the older attribute
// form). False when a bound is not a constant we can read, is NaN, or when min >= max (ONNX then
// gives max everywhere, which XNNPACK's clamp does not express).
bool ClipBounds(const Node& node, float* lo, float* hi) {
  if (node.HasAttr("min") || node.HasAttr("max")) return false;
  *lo = -kInf;
  *hi = kInf;
  for (int i = 1; i <= 2; ++i) {
    const Value* v = node.input(i);
    if (v == nullptr) continue;
    const std::shared_ptr<const Tensor>& t = v->constant();
    if (t == nullptr || t->dtype() != DType::kF32 || t->num_elements() != 1) return false;
    (i == 1 ? *lo : *hi) = t->data<float>()[0];
  }
  return !std::isnan(*lo) && !std::isnan(*hi) && *lo < *hi;
}

bool UnaryLegal(const OpQuery& q) {
  if (!AllF32(q) || !q.has_input(0) || !q.input(0).is_static()) return false;
  if (q.node.op_type() != "Clip") return q.node.num_inputs() == 1;
  float lo, hi;
  for (int i = 1; i <= 2; ++i) {
    if (q.has_input(i) && !q.inputs[i].constant) return false;
  }
  return ClipBounds(q.node, &lo, &hi);
}

// Streams the tensor in and out once.
double UnaryCost(const OpQuery& q) { return 8.0 * q.output(0).NumElements() / 20e9; }

absl::StatusOr<std::unique_ptr<OpKernel>> CreateUnary(const OpKernelArgs& args) {
  absl::Status st = InitXnnpack();
  if (!st.ok()) return st;
  const std::string& type = args.node.op_type();
  auto k = std::make_unique<XnnKernel>(args.threadpool);
  xnn_operator_t op = nullptr;
  // One channel per row: contiguous rows are processed as a single flat range.
  xnn_status s;
  if (type == "Relu" || type == "Clip") {
    float lo = 0.0f, hi = kInf;
    if (type == "Clip" && !ClipBounds(args.node, &lo, &hi)) {
      return absl::InvalidArgumentError(
          absl::StrCat("node '", args.node.name(), "': Clip bounds are not constant, ordered scalars"));
    }
    s = xnn_create_clamp_nc_f32(1, 1, 1, lo, hi, XnnFlags(args), &op);
  } else if (type == "Sigmoid") {
    s = xnn_create_sigmoid_nc_f32(1, 1, 1, XnnFlags(args), &op);
  } else if (type == "HardSwish") {
    s = xnn_create_hardswish_nc_f32(1, 1, 1, XnnFlags(args), &op);
  } else {
    return absl::InvalidArgumentError(absl::StrCat("node '", args.node.name(), "': no XNNPACK unary for ", type));
  }
  if (s != xnn_status_success) return XnnError(args, "create unary elementwise", s);
  k->Add(op);
  const size_t n = static_cast<size_t>(args.inputs[0]->num_elements());
  const float* x = args.inputs[0]->data<float>();
  float* y = args.outputs[0].data<float>();
  if (type == "Sigmoid") {
    s = xnn_setup_sigmoid_nc_f32(op, n, x, y, args.threadpool);
  } else if (type == "HardSwish") {
    s = xnn_setup_hardswish_nc_f32(op, n, x, y, args.threadpool);
  } else {
    s = xnn_setup_clamp_nc_f32(op, n, x, y, args.threadpool);
  }
  if (s != xnn_status_success) return XnnError(args, "setup unary elementwise", s);
  return std::unique_ptr<OpKernel>(std::move(k));
}

// ---- Softmax (opset 13) along the last axis only -----------------------------------------------------

bool SoftmaxLegal(const OpQuery& q) {
  if (!AllF32(q) || !q.has_input(0) || !q.input(0).is_static()) return false;
  const TensorType& x = q.input(0);
  const int64_t rank = x.rank();
  if (rank < 1 || x.dims.back().value() < 1) return false;
  const int64_t axis = q.node.GetInt("axis", -1);
  return axis == -1 || axis == rank - 1;
}

// Reads the input twice (max, then exp and sum) and writes the output twice (exp, then scale).
double SoftmaxCost(const OpQuery& q) { return 16.0 * q.output(0).NumElements() / 20e9; }

absl::StatusOr<std::unique_ptr<OpKernel>> CreateSoftmax(const OpKernelArgs& args) {
  absl::Status st = InitXnnpack();
  if (!st.ok()) return st;
  const Tensor& x = *args.inputs[0];
  if (x.rank() < 1 || x.dim(x.rank() - 1) < 1) {
    return absl::InvalidArgumentError(absl::StrCat("node '", args.node.name(), "': softmax needs a non-empty last axis"));
  }
  const size_t channels = static_cast<size_t>(x.dim(x.rank() - 1));
  auto k = std::make_unique<XnnKernel>(args.threadpool);
  xnn_operator_t op = nullptr;
  xnn_status s = xnn_create_softmax_nc_f32(channels, channels, channels, XnnFlags(args), &op);
  if (s != xnn_status_success) return XnnError(args, "create softmax", s);
  k->Add(op);
  s = xnn_setup_softmax_nc_f32(op, x.num_elements() / channels, x.data<float>(), args.outputs[0].data<float>(),
                               args.threadpool);
  if (s != xnn_status_success) return XnnError(args, "setup softmax", s);
  return std::unique_ptr<OpKernel>(std::move(k));
}

OpKernelEntry Entry(const char* name, const char* op, const char* layout, bool (*legal)(const OpQuery&),
                    double (*cost)(const OpQuery&),
                    absl::StatusOr<std::unique_ptr<OpKernel>> (*create)(const OpKernelArgs&)) {
  // Isa::kPortable: XNNPACK dispatches on the CPU itself.
  return MakeOpKernelEntry(name, op, "f32", layout, Isa::kPortable, "xnnpack", legal, cost, create);
}

}  // namespace

void RegisterXnnpackOpKernels(OpKernelRegistry& r) {
  r.Register(Entry("xnn_f32_conv2d_nhwc__xnnpack", "tessel.FusedConv", "nhwc", FusedConvLegal, FusedConvCost,
                   CreateFusedConv));
  r.Register(Entry("xnn_f32_dwconv2d_pwconv2d_nhwc__xnnpack", "tessel.DwPwConv", "nhwc", DwPwConvLegal, DwPwConvCost,
                   CreateDwPwConv));
  r.Register(Entry("xnn_f32_maxpool2d_nhwc__xnnpack", "tessel.MaxPool", "nhwc", PoolLegal, PoolCost, CreatePool));
  r.Register(Entry("xnn_f32_avgpool2d_nhwc__xnnpack", "tessel.AveragePool", "nhwc", PoolLegal, PoolCost, CreatePool));
  r.Register(Entry("xnn_f32_global_avgpool_nwc__xnnpack", "tessel.GlobalAveragePool", "nhwc", GlobalPoolLegal, PoolCost,
                   CreateGlobalPool));
  r.Register(Entry("xnn_f32_fully_connected_gemm__xnnpack", "Gemm", "row_major", FcLegal, FcCost, CreateFc));
  r.Register(Entry("xnn_f32_fully_connected_matmul__xnnpack", "MatMul", "row_major", FcLegal, FcCost, CreateFc));
  r.Register(Entry("xnn_f32_fully_connected_matmul_bias__xnnpack", "tessel.MatMulBias", "row_major", FcLegal, FcCost,
                   CreateFc));
  r.Register(Entry("xnn_f32_add_nd__xnnpack", "Add", "any", AddLegal, AddCost,
                   CreateBinary<xnn_create_add_nd_f32, xnn_setup_add_nd_f32>));
  r.Register(Entry("xnn_f32_multiply_nd__xnnpack", "Mul", "any", AddLegal, AddCost,
                   CreateBinary<xnn_create_multiply_nd_f32, xnn_setup_multiply_nd_f32>));
  r.Register(Entry("xnn_f32_subtract_nd__xnnpack", "Sub", "any", AddLegal, AddCost,
                   CreateBinary<xnn_create_subtract_nd_f32, xnn_setup_subtract_nd_f32>));
  r.Register(Entry("xnn_f32_divide_nd__xnnpack", "Div", "any", AddLegal, AddCost,
                   CreateBinary<xnn_create_divide_nd_f32, xnn_setup_divide_nd_f32>));
  r.Register(Entry("xnn_f32_clamp_nc_relu__xnnpack", "Relu", "any", UnaryLegal, UnaryCost, CreateUnary));
  r.Register(Entry("xnn_f32_clamp_nc_clip__xnnpack", "Clip", "any", UnaryLegal, UnaryCost, CreateUnary));
  r.Register(Entry("xnn_f32_sigmoid_nc__xnnpack", "Sigmoid", "any", UnaryLegal, UnaryCost, CreateUnary));
  r.Register(Entry("xnn_f32_hardswish_nc__xnnpack", "HardSwish", "any", UnaryLegal, UnaryCost, CreateUnary));
  r.Register(Entry("xnn_f32_softmax_nc__xnnpack", "Softmax", "any", SoftmaxLegal, SoftmaxCost, CreateSoftmax));
  RegisterXnnpackInt8OpKernels(r);
}

}  // namespace tessel
