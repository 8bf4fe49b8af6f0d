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

// HardSigmoid: y = clamp(alpha * x + beta, 0, 1), a plain loop for the vectorizer (MobileNetV3's
// squeeze-and-excitation gates).
class HardSigmoidKernel : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelArgs& args) {
    const int64_t n = ResolveElements(BoundOperands(args).query());
    if (n < 0) {
      return absl::InvalidArgumentError(absl::StrCat("node '", args.node.name(),
                                                     "': the fast HardSigmoid kernel needs f32 static shapes"));
    }
    auto k = std::make_unique<HardSigmoidKernel>();
    k->n_ = n;
    k->alpha_ = args.node.GetFloat("alpha", 0.2f);
    k->beta_ = args.node.GetFloat("beta", 0.5f);
    k->x_ = args.inputs[0]->data<float>();
    k->y_ = args.outputs[0].data<float>();
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Run() override {
    const float a = alpha_, b = beta_;
    const float* x = x_;
    float* y = y_;
    for (int64_t i = 0; i < n_; ++i) y[i] = std::min(1.0f, std::max(0.0f, a * x[i] + b));
    return absl::OkStatus();
  }

 private:
  int64_t n_ = 0;
  float alpha_ = 0.2f, beta_ = 0.5f;
  const float* x_ = nullptr;
  float* y_ = nullptr;
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
                               "portable", Legal, Cost<2>, HardSigmoidKernel::Create));
#if defined(__x86_64__)
  RegisterIsa<ActRowsAvx2, 2>(r, "avx2", Isa::kAvx2, "x86");
  RegisterIsa<ActRowsAvx512, 4>(r, "avx512", Isa::kAvx512, "x86");
#endif
}

}  // namespace tessel
