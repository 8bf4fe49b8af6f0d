// Registers the int8 QConv / QGemm (AVX-512 VNNI, AVX-VNNI, AVX2; NEON dotprod, NEON i8mm and SVE on
// aarch64), the depthwise QConv (AVX-512 VNNI, AVX2, NEON) and QuantizeLinear as operator kernels; the
// session binds arena views once and every run only computes (packing and scratch happen in
// PreparedInt8Node::Create).
#include "kernels/int8/int8_op_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/ops/nn_params.h"
#include "kernels/int8/int8_kernels.h"
#include "kernels/int8/quantize.h"

namespace tessel {
namespace {

// Prepared::Create(node, inputs, output, extra...) with the GEMM kernel fixed by the entry.
template <QGemmKernel kKernel>
struct PreparedWith {
  using Prepared = PreparedInt8Node;
  static absl::StatusOr<std::unique_ptr<PreparedInt8Node>> Create(const Node& node,
                                                                  absl::Span<const Tensor* const> inputs,
                                                                  const Tensor& output) {
    return PreparedInt8Node::Create(node, inputs, output, kKernel);
  }
};

// The same for the depthwise kernel.
template <QDwConvKernel kKernel>
struct PreparedDepthwiseWith {
  using Prepared = PreparedQDwConv;
  static absl::StatusOr<std::unique_ptr<PreparedQDwConv>> Create(const Node& node,
                                                                 absl::Span<const Tensor* const> inputs,
                                                                 const Tensor& output) {
    return PreparedQDwConv::Create(node, inputs, output, kKernel);
  }
};

// Int8 GEMM weights past this many bytes (s8) split their rows into one task per thread (see Run).
constexpr int64_t kOneTaskPerThreadWeightBytes = 512 << 10;
// Runs of fewer multiply-adds stay on the calling thread.
constexpr int64_t kMinParallelMacs = int64_t{1} << 18;

template <typename Factory>
class Int8OpKernel : public OpKernel {
 public:
  using Prepared = typename Factory::Prepared;

  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelArgs& args) {
    std::unique_ptr<Int8OpKernel> k(new Int8OpKernel);
    // Copies of the bound views: the span may not outlive creation, the arena and weights do.
    for (const Tensor* t : args.inputs) k->inputs_.push_back(t ? *t : Tensor());
    for (const Tensor& t : k->inputs_) k->input_ptrs_.push_back(t.buffer() ? &t : nullptr);
    k->output_ = args.outputs[0];
    k->pool_ = args.threadpool;
    k->threads_ = args.num_threads;
    k->flags_ = ParallelFlags(args);
    absl::StatusOr<std::unique_ptr<Prepared>> p = Factory::Create(args.node, k->input_ptrs_, k->output_);
    if (!p.ok()) return p.status();
    k->prepared_ = std::move(*p);
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Run() override {
    if constexpr (std::is_same_v<Prepared, PreparedInt8Node>) {
      // GEMMs split their output rows. Each task streams every weight block once (a task's row tiles run
      // block by block), so weights past L2 get one task per thread; smaller ones four, for balance.
      const int64_t rows = prepared_->rows();
      const int64_t weight_bytes = inputs_[1].num_elements();  // s8: N x K
      // A batch-1 classifier's few rows: its column parts (up to 4) go over the threads instead.
      columns_ = prepared_->column_parts() > 1 && pool_ != nullptr && threads_ > 1 &&
                 rows * weight_bytes >= kMinParallelMacs;
      if (columns_) tasks_ = prepared_->column_parts();
      if (columns_ || Split(rows, rows * weight_bytes, weight_bytes > kOneTaskPerThreadWeightBytes ? 1 : 4)) {
        operands_ = prepared_->Begin(input_ptrs_);
        RunTasks(pool_, this, tasks_, flags_);
        return absl::OkStatus();
      }
    } else if (Split(prepared_->pixels(), prepared_->work(), 4)) {
      // Depthwise convolutions split their output pixels (before, they ran on one thread: MobileNetV2
      // INT8's 17 depthwise layers took as long on 2 threads as on 1).
      prepared_->Begin(input_ptrs_);
      RunTasks(pool_, this, tasks_, flags_);
      return absl::OkStatus();
    }
    prepared_->Run(input_ptrs_, output_);
    return absl::OkStatus();
  }

  // Whether a run of `units` output rows or pixels and `work` multiply-adds goes over the session's
  // threads (kMinParallelMacs or more, at least 2 units a thread); if so, sets tasks_ to
  // tasks_per_thread a thread (at most one unit each).
  bool Split(int64_t units, int64_t work, int64_t tasks_per_thread) {
    if (pool_ == nullptr || threads_ <= 1 || units < 2 * threads_ || work < kMinParallelMacs) return false;
    tasks_ = std::min<int64_t>(units, tasks_per_thread * threads_);
    return true;
  }

  // Task t of a parallel run: its share of the GEMM's output rows or of the depthwise output pixels.
  void RunTask(int t) {
    if constexpr (std::is_same_v<Prepared, PreparedInt8Node>) {
      if (columns_) return prepared_->GemmColumns(operands_, t, output_.data<uint8_t>());
      const TaskRange r = SplitForTask(prepared_->rows(), tasks_, t);
      prepared_->GemmRows(operands_, r.begin, r.end, output_.data<uint8_t>());
    } else {
      const TaskRange r = SplitForTask(prepared_->pixels(), tasks_, t);
      prepared_->Pixels(r.begin, r.end, output_.data<uint8_t>());
    }
  }

 private:
  std::vector<Tensor> inputs_;
  std::vector<const Tensor*> input_ptrs_;
  Tensor output_;
  std::unique_ptr<Prepared> prepared_;
  pthreadpool_t pool_ = nullptr;
  int threads_ = 1;
  PoolFlags flags_;
  int64_t tasks_ = 1;
  bool columns_ = false;  // the tasks are the GEMM's column parts
  PreparedInt8Node::Operands operands_;
};

// The entry's own kernel must be available too: an i8mm CPU may lack dotprod and the other way round
// (the registry checks only the entry's ISA, not that Int8NodeSupported found the same one).
template <QGemmKernel kKernel>
bool Legal(const OpQuery& q) {
  return q.has_input(0) && q.has_input(1) && q.inputs[1].constant && q.input(0).is_static() &&
         q.input(1).is_static() && q.output(0).is_static() &&
         Int8NodeSupported(q.node, q.input(0).dtype, q.input(0).rank()) && QGemmKernelAvailable(kKernel);
}

// Whether the node's constant s8 weights (W [N, K] as packed) take the AVX2 kernel's byte path, as
// PackQGemmWeights will decide (7-bit weights, --int8-weight-bits 7, always do).
bool BytePairWeights(const OpQuery& q) {
  const Value* v = q.node.num_inputs() > 1 ? q.node.input(1) : nullptr;
  if (v == nullptr || !v->is_constant() || v->constant()->dtype() != DType::kI8) return false;
  const Tensor& w = *v->constant();
  const int64_t n = w.rank() > 0 ? w.dim(0) : 1;
  return n > 0 && QGemmBytePairsFitInt16(w.data<int8_t>(), n, w.num_elements() / n);
}

// 2 ops per u8 x s8 MAC at `kOpsPerSecond` (kBytePairOps for byte-pair weights where nonzero), plus the
// output stage (requantize, clamp, store) at `kStagePicos` per output element, which dominates 1x1
// convolutions with few input channels.
template <int64_t kOpsPerSecond, int64_t kStagePicos, int64_t kBytePairOps = 0>
double Cost(const OpQuery& q) {
  const TensorType& w = q.input(1);
  int64_t k = 1;
  for (int i = 1; i < w.rank(); ++i) k *= w.dims[i].value();
  const int64_t out = q.output(0).NumElements();
  const int64_t ops = kBytePairOps > 0 && BytePairWeights(q) ? kBytePairOps : kOpsPerSecond;
  return 2.0 * out * k / static_cast<double>(ops) + out * (kStagePicos * 1e-12);
}

// VNNI: ~700 GOP/s (qgemm_benchmark on ResNet-18 shapes, 1 thread, Zen 5). AVX-VNNI (vpdpbusd on ymm):
// ~190 GOP/s over ResNet-18 (19 ms, Emerald Rapids at TESSEL_MAX_ISA=avx2vnni). AVX2: ~92 GOP/s on
// ResNet-18's 3x3 layers and ~0.4 ns per output of output stage (MobileNetV2's K = 16 expansion: 0.89 ms
// for 1.2M outputs), Emerald Rapids at TESSEL_MAX_ISA=avx2, 2026-11-26; with the f32 output stage the same
// layer takes 0.77 ms inside MobileNetV2 on a Zen 3 (2026-11-29), 0.24 ms of it at the byte-pair rate
// below and ~0.45 ns per output for the rest, so 0.4 still stands. NEON: not measured on Arm
// hardware (qemu timings mean nothing); estimates from instruction counts for a ~3 GHz core issuing
// two 128-bit SDOT per cycle (16 MACs each, ~190 GOP/s peak) and i8mm's USMMLA at twice the MACs per
// instruction. SVE runs the same SDOT by lane in every 128-bit segment: wider vectors do more MACs per
// instruction but issue fewer per cycle (Neoverse V1: two 256-bit SVE pipes, four 128-bit NEON ones), so
// about dotprod's rate, with less waste on channel tails (predicated, 2 vectors per tile); ranked between
// the two NEON kernels, behind i8mm's doubled MACs per instruction. SVE's USMMLA doubles the SVE kernel's
// MACs per instruction again. The order is what selection uses: SVE i8mm, i8mm, then SVE, then dotprod,
// except on aarch64, where the Arm lab's cost table (lab_costs.h) prices these
// kernels and XNNPACK's against this dotprod entry's estimate.
constexpr int64_t kVnniOps = 700'000'000'000;
constexpr int64_t kAvxVnniOps = 190'000'000'000;
constexpr int64_t kAvx2Ops = 92'000'000'000;
// AVX2 on 7-bit weights (vpmaddubsw): 1.7-2.2x the 8-bit rate on ResNet-18's 3x3 shapes (qgemm_benchmark
// BM_QConvIndirect, 64-67 against 34-39 GMAC/s, Zen 3, 2026-11-29).
constexpr int64_t kAvx2BytePairOps = 160'000'000'000;
constexpr int64_t kNeonDotOps = 150'000'000'000;
constexpr int64_t kSveOps = 200'000'000'000;
constexpr int64_t kNeonI8mmOps = 250'000'000'000;
constexpr int64_t kSveI8mmOps = 400'000'000'000;

template <QDwConvKernel kKernel>
bool DepthwiseLegal(const OpQuery& q) {
  if (!q.has_input(0) || !q.has_input(1) || !q.inputs[1].constant || !q.input(0).is_static() ||
      !q.input(1).is_static() || !q.output(0).is_static() || q.input(0).rank() != 4 || q.input(1).rank() != 4) {
    return false;
  }
  return Int8DepthwiseSupported(q.node, q.input(0).dtype, q.input(0).rank(), q.input(0).dims[3].value(),
                                q.input(1).dims[0].value(), q.input(1).dims[3].value(), q.has_input(3)) &&
         QDwConvKernelAvailable(kKernel);
}

// 2 ops per MAC at kOpsPerSecond. VNNI: one vpdpbusd per 4 taps x 16 channels plus the output stage per 16
// channels; about 25 GMAC/s on MobileNetV2's 3x3 shapes (1 thread). AVX2: a vpmaddwd per 2 taps x 8
// channels (and two shuffles): 12-17 GMAC/s (24-35 GOP/s) on MobileNetV2's 3x3 shapes, 1 thread, at
// TESSEL_MAX_ISA=avx2 on Zen 5, 2026-11-27 (qdwconv_benchmark, xnnpack_int8_benchmark; shared machine).
// XNNPACK's entries (40 GOP/s per-tensor, less the sign flips per-channel) still win stride-1 layers.
template <int64_t kOpsPerSecond>
double DepthwiseCost(const OpQuery& q) {
  const TensorType& w = q.input(1);
  const int64_t taps = w.dims[1].value() * w.dims[2].value();
  return 2.0 * q.output(0).NumElements() * taps / static_cast<double>(kOpsPerSecond);
}
constexpr int64_t kDepthwiseVnniOps = 50'000'000'000;
constexpr int64_t kDepthwiseAvx2Ops = 30'000'000'000;
// SVE with i8mm: one USDOT per 4 taps x svcntw() channels after four ZIPs; ranked ahead of NEON until the
// Arm lab's table prices it (lab_costs.h).
constexpr int64_t kDepthwiseSveI8mmOps = 80'000'000'000;

OpKernelEntry DepthwiseEntry(const char* name, Isa isa, double (*cost)(const OpQuery&),
                             absl::StatusOr<std::unique_ptr<OpKernel>> (*create)(const OpKernelArgs&),
                             bool (*legal)(const OpQuery&)) {
  return MakeOpKernelEntry(name, "tessel.QConv", "u8", "nhwc", isa, "int8", legal, cost, create);
}

// Max pooling of u8 channels-last activations: the quantization parameters pass through unchanged (max
// commutes with the monotone dequantization), so this equals the reference QMaxPool exactly.
class MaxPoolU8Kernel : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelArgs& args) {
    const Tensor& x = *args.inputs[0];
    std::unique_ptr<MaxPoolU8Kernel> k(new MaxPoolU8Kernel);
    k->x_ = x.data<uint8_t>();
    k->y_ = args.outputs[0].data<uint8_t>();
    k->n_ = x.dim(0), k->h_ = x.dim(1), k->w_ = x.dim(2), k->c_ = x.dim(3);
    k->oh_ = args.outputs[0].dim(1), k->ow_ = args.outputs[0].dim(2);
    absl::StatusOr<PoolParams> p = ResolvePoolParams(args.node, DimsOf({k->n_, k->c_, k->h_, k->w_}));
    if (!p.ok()) return p.status();
    k->p_ = *p;
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Run() override {
    for (int64_t n = 0; n < n_; ++n) {
      for (int64_t i = 0; i < oh_; ++i) {
        for (int64_t j = 0; j < ow_; ++j) {
          uint8_t* __restrict y = y_ + ((n * oh_ + i) * ow_ + j) * c_;
          std::fill(y, y + c_, uint8_t{0});
          for (int64_t u = 0; u < p_.kernel[0]; ++u) {
            const int64_t ih = i * p_.strides[0] - p_.pads_begin[0] + u * p_.dilations[0];
            if (ih < 0 || ih >= h_) continue;
            for (int64_t v = 0; v < p_.kernel[1]; ++v) {
              const int64_t iw = j * p_.strides[1] - p_.pads_begin[1] + v * p_.dilations[1];
              if (iw < 0 || iw >= w_) continue;
              const uint8_t* __restrict x = x_ + ((n * h_ + ih) * w_ + iw) * c_;
              int64_t c = 0;
              // Fixed 16-byte chunks vectorize at -O2 (GCC's very-cheap cost model skips unknown trip counts).
              for (; c + 16 <= c_; c += 16) {
                uint8_t xv[16], yv[16];
                std::memcpy(xv, x + c, 16);
                std::memcpy(yv, y + c, 16);
                for (int t = 0; t < 16; ++t) yv[t] = xv[t] > yv[t] ? xv[t] : yv[t];
                std::memcpy(y + c, yv, 16);
              }
              for (; c < c_; ++c) y[c] = x[c] > y[c] ? x[c] : y[c];
            }
          }
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  const uint8_t* x_ = nullptr;
  uint8_t* y_ = nullptr;
  int64_t n_ = 0, h_ = 0, w_ = 0, c_ = 0, oh_ = 0, ow_ = 0;
  PoolParams p_;
};

bool MaxPoolLegal(const OpQuery& q) {
  return q.node.domain() == kTesselDomain && q.has_input(0) && q.input(0).dtype == DType::kU8 &&
         q.input(0).rank() == 4 && q.input(0).is_static() && q.output(0).is_static() &&
         q.node.GetString("layout", "nchw") == "nhwc";
}

double MaxPoolCost(const OpQuery& q) { return 9.0 * q.output(0).NumElements() / 20e9; }

// QuantizeLinear (f32 -> u8 / i8) and DequantizeLinear (u8 / i8 -> f32) with one constant scale and zero
// point, the artifact's boundary ops, equal to the reference kernels element for element: the same
// division, round half to even, saturation (NaN becomes 0, as the reference's conversion gives on
// x86-64). Written in 16-element chunks so that GCC vectorizes them at -O2 on any target; the rounding is
// the add-and-subtract of 1.5 * 2^23 (exact for |v| <= 2^22, and v is clamped well inside that first).
bool QuantizeLegal(const OpQuery& q) {
  if (!q.has_input(0) || !q.has_input(1) || !q.inputs[1].constant || q.input(1).NumElements() != 1 ||
      q.input(1).dtype != DType::kF32 || !q.input(0).is_static() || !q.output(0).is_static()) {
    return false;
  }
  if (q.has_input(2) && (!q.inputs[2].constant || q.input(2).NumElements() != 1)) return false;
  return q.node.domain().empty() && q.input(0).NumElements() == q.output(0).NumElements();
}

double ConvertCost(const OpQuery& q) { return q.output(0).NumElements() / 4e9; }
double VectorConvertCost(const OpQuery& q) { return q.output(0).NumElements() / 16e9; }

bool QuantizeLinearLegal(const OpQuery& q) {
  return QuantizeLegal(q) && q.input(0).dtype == DType::kF32 &&
         (q.output(0).dtype == DType::kU8 || q.output(0).dtype == DType::kI8);
}

bool DequantizeLinearLegal(const OpQuery& q) {
  return QuantizeLegal(q) && (q.input(0).dtype == DType::kU8 || q.input(0).dtype == DType::kI8) &&
         q.output(0).dtype == DType::kF32;
}

int32_t ZeroPoint(const Tensor* zp) {
  if (zp == nullptr || zp->buffer() == nullptr) return 0;
  return zp->dtype() == DType::kU8 ? zp->data<uint8_t>()[0] : zp->data<int8_t>()[0];
}

// The one scale of a QuantizeLinear / DequantizeLinear, checked as the reference kernel checks it.
absl::StatusOr<float> ScaleOf(const OpKernelArgs& args) {
  const float scale = args.inputs[1]->data<float>()[0];
  if (std::isfinite(scale) && scale > 0) return scale;
  return absl::InvalidArgumentError(
      absl::StrCat(args.node.DebugName(), ": scale is ", scale, "; expected a finite value greater than 0"));
}

// Which QuantizeKernel runs: the portable loop or one of quantize.h's vector kernels.
enum class QuantizeVector { kPortable, kNeon, kAvx2 };

template <QuantizeVector kVector>
class QuantizeKernel : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelArgs& args) {
    std::unique_ptr<QuantizeKernel> k(new QuantizeKernel);
    k->x_ = args.inputs[0]->data<float>();
    k->y_ = args.outputs[0].raw_data();
    k->n_ = args.outputs[0].num_elements();
    absl::StatusOr<float> scale = ScaleOf(args);
    if (!scale.ok()) return scale.status();
    k->scale_ = *scale;
    k->zp_ = static_cast<float>(ZeroPoint(args.inputs.size() > 2 ? args.inputs[2] : nullptr));
    k->signed_ = args.outputs[0].dtype() == DType::kI8;
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Run() override {
#if defined(__aarch64__)
    if (kVector == QuantizeVector::kNeon) {
      QuantizeF32__neon(x_, n_, scale_, zp_, signed_ ? -128.0f : 0.0f, signed_ ? 127.0f : 255.0f,
                        static_cast<uint8_t*>(y_));
      return absl::OkStatus();
    }
#endif
#if defined(__x86_64__)
    if (kVector == QuantizeVector::kAvx2) {
      QuantizeF32__avx2(x_, n_, scale_, zp_, signed_ ? -128.0f : 0.0f, signed_ ? 127.0f : 255.0f,
                        static_cast<uint8_t*>(y_));
      return absl::OkStatus();
    }
#endif
    if (signed_) {
      Convert<int8_t>(-128.0f, 127.0f);
    } else {
      Convert<uint8_t>(0.0f, 255.0f);
    }
    return absl::OkStatus();
  }

 private:
  template <typename T>
  static inline T One(float x, float scale, float zp, float lo, float hi) {
    constexpr float kRound = 12582912.0f;  // 1.5 * 2^23
    float v = x / scale;
    const bool nan = v != v;
    v = v < -1024.0f ? -1024.0f : v > 1024.0f ? 1024.0f : v;
    float q = (v + kRound) - kRound + zp;
    q = q < lo ? lo : q > hi ? hi : q;
    return nan ? T{0} : static_cast<T>(static_cast<int32_t>(q));
  }

  template <typename T>
  void Convert(float lo, float hi) const {
    const float* __restrict x = x_;
    T* __restrict y = static_cast<T*>(y_);
    const float scale = scale_, zp = zp_;
    int64_t i = 0;
    for (; i + 16 <= n_; i += 16) {
      for (int t = 0; t < 16; ++t) y[i + t] = One<T>(x[i + t], scale, zp, lo, hi);
    }
    for (; i < n_; ++i) y[i] = One<T>(x[i], scale, zp, lo, hi);
  }

  const float* x_ = nullptr;
  void* y_ = nullptr;
  int64_t n_ = 0;
  float scale_ = 1, zp_ = 0;
  bool signed_ = false;
};

class DequantizeKernel : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelArgs& args) {
    std::unique_ptr<DequantizeKernel> k(new DequantizeKernel);
    k->x_ = args.inputs[0]->raw_data();
    k->y_ = args.outputs[0].data<float>();
    k->n_ = args.outputs[0].num_elements();
    absl::StatusOr<float> scale = ScaleOf(args);
    if (!scale.ok()) return scale.status();
    k->scale_ = *scale;
    k->zp_ = ZeroPoint(args.inputs.size() > 2 ? args.inputs[2] : nullptr);
    k->signed_ = args.inputs[0]->dtype() == DType::kI8;
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Run() override {
    if (signed_) {
      Convert(static_cast<const int8_t*>(x_));
    } else {
      Convert(static_cast<const uint8_t*>(x_));
    }
    return absl::OkStatus();
  }

 private:
  template <typename T>
  void Convert(const T* __restrict x) const {
    float* __restrict y = y_;
    const float scale = scale_;
    const int32_t zp = zp_;
    int64_t i = 0;
    for (; i + 16 <= n_; i += 16) {
      for (int t = 0; t < 16; ++t) y[i + t] = static_cast<float>(static_cast<int32_t>(x[i + t]) - zp) * scale;
    }
    for (; i < n_; ++i) y[i] = static_cast<float>(static_cast<int32_t>(x[i]) - zp) * scale;
  }

  const void* x_ = nullptr;
  float* y_ = nullptr;
  int64_t n_ = 0;
  float scale_ = 1;
  int32_t zp_ = 0;
  bool signed_ = false;
};

template <QGemmKernel kKernel, int64_t kOps, int64_t kStagePicos = 0, int64_t kBytePairOps = 0>
OpKernelEntry GemmEntry(const char* name, const char* op, Isa isa) {
  return MakeOpKernelEntry(name, op, "u8", "nhwc", isa, "int8", Legal<kKernel>, Cost<kOps, kStagePicos, kBytePairOps>,
                           Int8OpKernel<PreparedWith<kKernel>>::Create);
}

}  // namespace

void RegisterInt8OpKernels(OpKernelRegistry& r) {
  using K = QGemmKernel;
  r.Register(GemmEntry<K::kAvx512Vnni, kVnniOps>("tessel_qu8_conv2d_nhwc__avx512vnni", "tessel.QConv", Isa::kAvx512Vnni));
  r.Register(
      GemmEntry<K::kAvx512Vnni, kVnniOps>("tessel_qu8_fully_connected__avx512vnni", "tessel.QGemm", Isa::kAvx512Vnni));
  r.Register(
      GemmEntry<K::kAvxVnni, kAvxVnniOps, 200>("tessel_qu8_conv2d_nhwc__avxvnni", "tessel.QConv", Isa::kAvxVnni));
  r.Register(
      GemmEntry<K::kAvxVnni, kAvxVnniOps, 200>("tessel_qu8_fully_connected__avxvnni", "tessel.QGemm", Isa::kAvxVnni));
  r.Register(GemmEntry<K::kAvx2, kAvx2Ops, 400, kAvx2BytePairOps>("tessel_qu8_conv2d_nhwc__avx2", "tessel.QConv",
                                                                  Isa::kAvx2));
  r.Register(GemmEntry<K::kAvx2, kAvx2Ops, 400, kAvx2BytePairOps>("tessel_qu8_fully_connected__avx2", "tessel.QGemm",
                                                                  Isa::kAvx2));
  r.Register(GemmEntry<K::kNeonDot, kNeonDotOps>("tessel_qu8_conv2d_nhwc__neondot", "tessel.QConv", Isa::kDotprod));
  r.Register(GemmEntry<K::kNeonDot, kNeonDotOps>("tessel_qu8_fully_connected__neondot", "tessel.QGemm", Isa::kDotprod));
  r.Register(GemmEntry<K::kNeonI8mm, kNeonI8mmOps>("tessel_qu8_conv2d_nhwc__neoni8mm", "tessel.QConv", Isa::kI8mm));
  r.Register(
      GemmEntry<K::kNeonI8mm, kNeonI8mmOps>("tessel_qu8_fully_connected__neoni8mm", "tessel.QGemm", Isa::kI8mm));
  r.Register(GemmEntry<K::kSve, kSveOps>("tessel_qu8_conv2d_nhwc__sve", "tessel.QConv", Isa::kSve));
  r.Register(GemmEntry<K::kSve, kSveOps>("tessel_qu8_fully_connected__sve", "tessel.QGemm", Isa::kSve));
  r.Register(GemmEntry<K::kSveI8mm, kSveI8mmOps>("tessel_qu8_conv2d_nhwc__svei8mm", "tessel.QConv", Isa::kSveI8mm));
  r.Register(
      GemmEntry<K::kSveI8mm, kSveI8mmOps>("tessel_qu8_fully_connected__svei8mm", "tessel.QGemm", Isa::kSveI8mm));
  using D = QDwConvKernel;
  r.Register(DepthwiseEntry("tessel_qu8_dwconv2d_nhwc__avx512vnni", Isa::kAvx512Vnni, DepthwiseCost<kDepthwiseVnniOps>,
                            Int8OpKernel<PreparedDepthwiseWith<D::kAvx512Vnni>>::Create,
                            DepthwiseLegal<D::kAvx512Vnni>));
  r.Register(DepthwiseEntry("tessel_qu8_dwconv2d_nhwc__avx2", Isa::kAvx2, DepthwiseCost<kDepthwiseAvx2Ops>,
                            Int8OpKernel<PreparedDepthwiseWith<D::kAvx2>>::Create, DepthwiseLegal<D::kAvx2>));
  r.Register(DepthwiseEntry("tessel_qu8_dwconv2d_nhwc__neon", Isa::kNeon, DepthwiseCost<kDepthwiseVnniOps>,
                            Int8OpKernel<PreparedDepthwiseWith<D::kNeon>>::Create, DepthwiseLegal<D::kNeon>));
  r.Register(DepthwiseEntry("tessel_qu8_dwconv2d_nhwc__svei8mm", Isa::kSveI8mm,
                            DepthwiseCost<kDepthwiseSveI8mmOps>, Int8OpKernel<PreparedDepthwiseWith<D::kSveI8mm>>::Create,
                            DepthwiseLegal<D::kSveI8mm>));
  r.Register(MakeOpKernelEntry("tessel_f32_quantize__portable", "QuantizeLinear", "f32", "any", Isa::kPortable,
                               "int8", QuantizeLinearLegal, ConvertCost,
                               QuantizeKernel<QuantizeVector::kPortable>::Create));
  // 16 (NEON) or 32 (AVX2) elements a step against the portable loop's one (a division each, which GCC
  // leaves scalar).
  r.Register(MakeOpKernelEntry("tessel_f32_quantize__neon", "QuantizeLinear", "f32", "any", Isa::kNeon, "int8",
                               QuantizeLinearLegal, VectorConvertCost, QuantizeKernel<QuantizeVector::kNeon>::Create));
  r.Register(MakeOpKernelEntry("tessel_f32_quantize__avx2", "QuantizeLinear", "f32", "any", Isa::kAvx2, "int8",
                               QuantizeLinearLegal, VectorConvertCost, QuantizeKernel<QuantizeVector::kAvx2>::Create));
  for (const char* dtype : {"u8", "i8"}) {
    r.Register(MakeOpKernelEntry(absl::StrCat("tessel_", dtype, "_dequantize__portable"), "DequantizeLinear", dtype,
                                 "any", Isa::kPortable, "int8", DequantizeLinearLegal, ConvertCost,
                                 DequantizeKernel::Create));
  }
  r.Register(MakeOpKernelEntry("tessel_u8_maxpool_nhwc__portable", "tessel.QMaxPool", "u8", "nhwc", Isa::kPortable,
                               "int8", MaxPoolLegal, MaxPoolCost, MaxPoolU8Kernel::Create));
}

}  // namespace tessel
