// Gelu, Tanh and Erf over a whole f32 tensor of static shape: the row kernel of act_rows.h over tiles of
// the flat tensor, split over the pool's threads; LogSoftmax along the last axis over tiles of rows;
// HardSigmoid as one plain loop.
#include "kernels/activation/act_op_kernels.h"

#include <algorithm>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "kernels/activation/act_rows.h"
#include "kernels/registry/bound_operands.h"
#include "pthreadpool.h"

namespace tessel {
namespace {

enum class ActOp { kGelu, kTanh, kErf };

// The element count of an f32 unary op with static shapes, or -1 when the kernels do not serve it.
int64_t ResolveElements(const OpQuery& q) {
  if (!q.has_input(0) || q.outputs.size() != 1) return -1;
  const TensorType& x = q.input(0);
  const TensorType& y = q.output(0);
  if (x.dtype != DType::kF32 || y.dtype != DType::kF32 || !x.is_static() || !y.is_static()) return -1;
  if (x.NumElements() != y.NumElements()) return -1;
  if (q.op() == "Gelu") {
    const std::string approximate = q.node.GetString("approximate", "none");
    if (approximate != "none" && approximate != "tanh") return -1;
  }
  return x.NumElements();
}

ActRowFn RowFor(ActOp op, const ActRowKernels& k, const Node& node) {
  switch (op) {
    case ActOp::kGelu:
      return node.GetString("approximate", "none") == "tanh" ? k.gelu_tanh : k.gelu_erf;
    case ActOp::kTanh:
      return k.tanh;
    default:
      return k.erf;
  }
}

class ActKernel : public OpKernel {
 public:
  // Elements per task: large enough that a region's wake-up is paid back.
  static constexpr int64_t kTile = 16384;

  ActKernel(int64_t n, ActRowFn row, const OpKernelArgs& args)
      : n_(n),
        row_(row),
        // About 20 operations per element: weigh it like that many multiply-adds.
        pool_(PoolForWork(args.threadpool, 20.0 * static_cast<double>(n))),
        flags_(ParallelFlags(args)),
        x_(args.inputs[0]->data<float>()),
        y_(args.outputs[0].data<float>()) {}

  absl::Status Run() override {
    if (pool_ == nullptr || n_ <= kTile) {
      row_(n_, x_, y_);
    } else {
      pthreadpool_parallelize_1d_tile_1d(pool_, &ActKernel::Task, this, static_cast<size_t>(n_),
                                         static_cast<size_t>(kTile), flags_.get());
    }
    return absl::OkStatus();
  }

 private:
  static void Task(void* self, size_t begin, size_t count) {
    const ActKernel* k = static_cast<const ActKernel*>(self);
    k->row_(static_cast<int64_t>(count), k->x_ + begin, k->y_ + begin);
  }

  const int64_t n_;
  const ActRowFn row_;
  pthreadpool_t pool_;
  PoolFlags flags_;
  const float* x_;
  float* y_;
};

// LogSoftmax along the last axis as rows x inner, the form one contiguous row kernel serves; false
// otherwise (the reference kernel keeps other axes).
bool ResolveRows(const OpQuery& q, int64_t* rows, int64_t* inner) {
  if (!q.has_input(0) || q.outputs.size() != 1 || q.node.num_inputs() != 1) return false;
  const TensorType& x = q.input(0);
  const TensorType& y = q.output(0);
  if (x.dtype != DType::kF32 || y.dtype != DType::kF32 || !x.is_static() || !y.is_static()) return false;
  const int64_t rank = x.rank();
  if (rank < 1 || x.dims.back().value() < 1 || x.NumElements() != y.NumElements()) return false;
  const int64_t axis = q.node.GetInt("axis", -1);
  if (axis != -1 && axis != rank - 1) return false;
  *inner = x.dims.back().value();
  *rows = x.NumElements() / *inner;
  return true;
}

class LogSoftmaxKernel : public OpKernel {
 public:
  static constexpr int64_t kTileElements = 16384;

  LogSoftmaxKernel(int64_t rows, int64_t inner, LogSoftmaxFn fn, const OpKernelArgs& args)
      : rows_(rows),
        inner_(inner),
        fn_(fn),
        pool_(PoolForWork(args.threadpool, 20.0 * static_cast<double>(rows * inner))),
        flags_(ParallelFlags(args)),
        x_(args.inputs[0]->data<float>()),
        y_(args.outputs[0].data<float>()) {}

  absl::Status Run() override {
    const int64_t tile = std::max<int64_t>(1, kTileElements / inner_);
    if (pool_ == nullptr || rows_ <= tile) {
      fn_(rows_, inner_, x_, y_);
    } else {
      pthreadpool_parallelize_1d_tile_1d(pool_, &LogSoftmaxKernel::Task, this, static_cast<size_t>(rows_),
                                         static_cast<size_t>(tile), flags_.get());
    }
    return absl::OkStatus();
  }

 private:
  static void Task(void* self, size_t begin, size_t count) {
    const LogSoftmaxKernel* k = static_cast<const LogSoftmaxKernel*>(self);
    k->fn_(static_cast<int64_t>(count), k->inner_, k->x_ + begin * k->inner_, k->y_ + begin * k->inner_);
  }

  const int64_t rows_, inner_;
  const LogSoftmaxFn fn_;
  pthreadpool_t pool_;
  PoolFlags flags_;
  const float* x_;
  float* y_;
};

bool Legal(const OpQuery& q) { return ResolveElements(q) >= 0; }

// Activations with float attributes as plain loops for the vectorizer: HardSigmoid, y = clamp(alpha * x +
// beta, 0, 1) (MobileNetV3's squeeze-and-excitation gates), and LeakyRelu, y = x < 0 ? alpha * x : x
// (YOLO-style detectors; a compare and a blend per vector).
struct HardSigmoidOp {
  static constexpr const char* kName = "HardSigmoid";
  explicit HardSigmoidOp(const Node& n) : alpha(n.GetFloat("alpha", 0.2f)), beta(n.GetFloat("beta", 0.5f)) {}
  float operator()(float x) const { return std::min(1.0f, std::max(0.0f, alpha * x + beta)); }
  float alpha, beta;
};
struct LeakyReluOp {
  static constexpr const char* kName = "LeakyRelu";
  explicit LeakyReluOp(const Node& n) : alpha(n.GetFloat("alpha", 0.01f)) {}
  float operator()(float x) const { return x < 0.0f ? alpha * x : x; }
  float alpha;
};

template <typename Op>
class ParamActKernel : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelArgs& args) {
    const int64_t n = ResolveElements(BoundOperands(args).query());
    if (n < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("node '", args.node.name(), "': the fast ", Op::kName, " kernel needs f32 static shapes"));
    }
    return std::unique_ptr<OpKernel>(new ParamActKernel(n, Op(args.node), args));
  }

  absl::Status Run() override {
    const Op op = op_;
    const float* x = x_;
    float* y = y_;
    for (int64_t i = 0; i < n_; ++i) y[i] = op(x[i]);
    return absl::OkStatus();
  }

 private:
  ParamActKernel(int64_t n, Op op, const OpKernelArgs& args)
      : n_(n), op_(op), x_(args.inputs[0]->data<float>()), y_(args.outputs[0].data<float>()) {}
  const int64_t n_;
  const Op op_;
  const float* x_;
  float* y_;
};

// PRelu with a slope per innermost channel (or one slope): NHWC CNNs after the layout pass, where the
// slope [C, 1, 1] became [1, 1, 1, C]. y = x < 0 ? slope[i % C] * x : x. Channels of the slope: 0 when it
// does not have that form.
int64_t PReluChannels(const TensorType& x, const TensorType& s) {
  if (s.dtype != DType::kF32 || !s.is_static() || !x.is_static() || x.rank() == 0 || s.rank() > x.rank()) return 0;
  const int64_t n = s.NumElements();
  if (n == 1) return 1;
  for (int d = 0; d + 1 < s.rank(); ++d) {
    if (s.dims[d].value() != 1) return 0;
  }
  return s.rank() >= 1 && s.dims[s.rank() - 1].value() == x.dims[x.rank() - 1].value() ? n : 0;
}

bool PReluLegal(const OpQuery& q) {
  return ResolveElements(q) >= 0 && q.has_input(1) && q.inputs[1].constant && PReluChannels(q.input(0), q.input(1)) > 0;
}

class PReluKernel : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelArgs& args) {
    const Tensor& x = *args.inputs[0];
    const Tensor* slope = args.inputs.size() > 1 ? args.inputs[1] : nullptr;
    const Tensor& y = args.outputs[0];
    const int64_t c = slope == nullptr || x.dtype() != DType::kF32 || y.dtype() != DType::kF32 ||
                              x.num_elements() != y.num_elements()
                          ? 0
                          : PReluChannels(x.type(), slope->type());
    if (c == 0) {
      return absl::InvalidArgumentError(absl::StrCat("node '", args.node.name(),
                                                     "': the fast PRelu kernel needs f32 static shapes and a constant "
                                                     "slope of one value or one per innermost channel"));
    }
    return std::unique_ptr<OpKernel>(new PReluKernel(x.num_elements(), c, args));
  }

  absl::Status Run() override {
    const float* x = x_;
    const float* s = slope_;
    float* y = y_;
    for (int64_t p = 0; p < n_; p += c_) {
      for (int64_t j = 0; j < c_; ++j) y[p + j] = x[p + j] < 0.0f ? s[j] * x[p + j] : x[p + j];
    }
    return absl::OkStatus();
  }

 private:
  PReluKernel(int64_t n, int64_t c, const OpKernelArgs& args)
      : n_(n), c_(c), x_(args.inputs[0]->data<float>()), slope_(args.inputs[1]->data<float>()),
        y_(args.outputs[0].data<float>()) {}
  const int64_t n_, c_;
  const float* x_;
  const float* slope_;
  float* y_;
};

bool LogSoftmaxLegal(const OpQuery& q) {
  int64_t rows, inner;
  return ResolveRows(q, &rows, &inner);
}

// Three passes over each row (max, sum of exponentials, output).
template <int kElementsPerNs>
double LogSoftmaxCost(const OpQuery& q) {
  int64_t rows, inner;
  if (!ResolveRows(q, &rows, &inner)) return 1e9;
  return 3.0 * static_cast<double>(rows * inner) / (kElementsPerNs * 1e9) + rows * 10e-9 + 50e-9;
}

template <ActRowKernels (*kRows)()>
absl::StatusOr<std::unique_ptr<OpKernel>> CreateLogSoftmax(const OpKernelArgs& args) {
  int64_t rows, inner;
  if (!ResolveRows(BoundOperands(args).query(), &rows, &inner)) {
    return absl::InvalidArgumentError(absl::StrCat("node '", args.node.name(),
                                                   "': the fast LogSoftmax kernel serves f32 static shapes along "
                                                   "the last axis only"));
  }
  return std::unique_ptr<OpKernel>(std::make_unique<LogSoftmaxKernel>(rows, inner, kRows().log_softmax, args));
}

// One read and one write per element at an estimated `kElementsPerNs` elements per nanosecond: ranks
// these entries among themselves (and far below the reference's libm call per element).
template <int kElementsPerNs>
double Cost(const OpQuery& q) {
  const int64_t n = ResolveElements(q);
  if (n < 0) return 1e9;
  return static_cast<double>(n) / (kElementsPerNs * 1e9) + 50e-9;
}

template <ActOp kOp, ActRowKernels (*kRows)()>
absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelArgs& args) {
  const int64_t n = ResolveElements(BoundOperands(args).query());
  if (n < 0) {
    return absl::InvalidArgumentError(absl::StrCat("node '", args.node.name(), "': the fast ", args.node.op_type(),
                                                   " kernel does not serve it (it needs f32 input and output of one "
                                                   "static element count, and Gelu's approximate none or tanh)"));
  }
  return std::unique_ptr<OpKernel>(std::make_unique<ActKernel>(n, RowFor(kOp, kRows(), args.node), args));
}

template <ActRowKernels (*kRows)(), int kElementsPerNs>
void RegisterIsa(OpKernelRegistry& r, const char* isa_name, Isa isa, const char* backend) {
  r.Register(MakeOpKernelEntry(absl::StrCat("tessel_f32_gelu__", isa_name), "Gelu", "f32", "any", isa, backend, Legal,
                               Cost<kElementsPerNs>, Create<ActOp::kGelu, kRows>));
  r.Register(MakeOpKernelEntry(absl::StrCat("tessel_f32_tanh__", isa_name), "Tanh", "f32", "any", isa, backend, Legal,
                               Cost<kElementsPerNs>, Create<ActOp::kTanh, kRows>));
  r.Register(MakeOpKernelEntry(absl::StrCat("tessel_f32_erf__", isa_name), "Erf", "f32", "any", isa, backend, Legal,
                               Cost<kElementsPerNs>, Create<ActOp::kErf, kRows>));
  r.Register(MakeOpKernelEntry(absl::StrCat("tessel_f32_logsoftmax_nc__", isa_name), "LogSoftmax", "f32", "any", isa,
                               backend, LogSoftmaxLegal, LogSoftmaxCost<kElementsPerNs>, CreateLogSoftmax<kRows>));
}

}  // namespace

void RegisterActivationOpKernels(OpKernelRegistry& r) {
  RegisterIsa<ActRowsAutovec, 1>(r, "autovec", Isa::kPortable, "portable");
  r.Register(MakeOpKernelEntry("tessel_f32_hardsigmoid__portable", "HardSigmoid", "f32", "any", Isa::kPortable,
                               "portable", Legal, Cost<2>, ParamActKernel<HardSigmoidOp>::Create));
  r.Register(MakeOpKernelEntry("tessel_f32_leakyrelu__portable", "LeakyRelu", "f32", "any", Isa::kPortable,
                               "portable", Legal, Cost<2>, ParamActKernel<LeakyReluOp>::Create));
  r.Register(MakeOpKernelEntry("tessel_f32_prelu__portable", "PRelu", "f32", "any", Isa::kPortable, "portable",
                               PReluLegal, Cost<2>, PReluKernel::Create));
#if defined(__x86_64__)
  RegisterIsa<ActRowsAvx2, 2>(r, "avx2", Isa::kAvx2, "x86");
  RegisterIsa<ActRowsAvx512, 4>(r, "avx512", Isa::kAvx512, "x86");
#endif
}

}  // namespace tessel
