// Softmax and tessel.RMSNorm on the vector kernels. Each entry binds one microkernel of VectorKernels()
// and takes its name (with "_nc"), ISA, backend and cost from that entry, so both registries share one
// cost model. Legality is what one contiguous row kernel serves; other forms stay with XNNPACK or the
// reference kernel.
#include "kernels/vector/vector_op_kernels.h"

#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/vector/internal/vector_kernels.h"
#include "kernels/vector/vector.h"
#include "pthreadpool.h"

namespace tessel {
namespace {

// x viewed as rows of `inner` contiguous elements, what both ops reduce over.
struct RowShape {
  int64_t rows = 0;
  int64_t inner = 0;
};

bool AllF32(const OpQuery& q) {
  for (const OperandInfo& o : q.inputs) {
    if (o.present && o.type.dtype != DType::kF32) return false;
  }
  for (const OperandInfo& o : q.outputs) {
    if (o.type.dtype != DType::kF32 || !o.type.is_static()) return false;
  }
  return q.has_input(0) && q.input(0).is_static();
}

// Softmax (opset 13) along the last axis, which must not be empty.
bool SoftmaxShape(const OpQuery& q, RowShape* s) {
  if (!AllF32(q) || q.node.num_inputs() != 1) return false;
  const TensorType& x = q.input(0);
  const int64_t rank = x.rank();
  if (rank < 1 || x.dims.back().value() < 1) return false;
  const int64_t axis = q.node.GetInt("axis", -1);
  if (axis != -1 && axis != rank - 1) return false;
  s->inner = x.dims.back().value();
  s->rows = x.NumElements() / s->inner;
  return true;
}

// tessel.RMSNorm over the axes from `axis` on, with no gain or a gain of exactly those elements: one
// that broadcasts inside a row would need an index per element.
bool RmsNormShape(const OpQuery& q, RowShape* s) {
  if (!AllF32(q)) return false;
  const TensorType& x = q.input(0);
  int64_t axis = q.node.GetInt("axis", -1);
  if (axis < 0) axis += x.rank();
  if (axis < 0 || axis >= x.rank()) return false;
  s->inner = 1;
  for (int64_t d = axis; d < x.rank(); ++d) s->inner *= x.dims[d].value();
  if (s->inner < 1) return false;
  s->rows = x.NumElements() / s->inner;
  return !q.has_input(1) || (q.input(1).is_static() && q.input(1).NumElements() == s->inner);
}

template <auto kFn>
bool ShapeOf(const OpQuery& q, RowShape* s) {
  if constexpr (std::is_same_v<decltype(kFn), SoftmaxFn>) {
    return SoftmaxShape(q, s);
  } else {
    static_assert(std::is_same_v<decltype(kFn), RmsNormFn>);
    return RmsNormShape(q, s);
  }
}

// The VectorKernels() entry of a microkernel.
template <auto kFn>
const VectorKernel& MicrokernelOf() {
  static const VectorKernel* entry = [] {
    const VectorKernel* found = nullptr;
    for (const VectorKernel& e : VectorKernels().entries()) {
      if (const auto* fn = std::get_if<decltype(kFn)>(&e.fn); fn != nullptr && *fn == kFn) found = &e;
    }
    return found;
  }();
  return *entry;
}

// Splits the rows across the session's pool in tiles of at least kTileElements, so that a task
// outweighs its dispatch; one tile runs on the calling thread.
class RowKernel : public OpKernel {
 public:
  static constexpr int64_t kTileElements = 16384;

  RowKernel(const RowShape& shape, const OpKernelArgs& args)
      : shape_(shape), pool_(args.threadpool), flags_(ParallelFlags(args)) {}

  absl::Status Run() override {
    const int64_t tile = std::max<int64_t>(1, kTileElements / shape_.inner);
    if (pool_ == nullptr || shape_.rows <= tile) {
      RunRows(0, shape_.rows);
    } else {
      pthreadpool_parallelize_1d_tile_1d(pool_, &RowKernel::Task, this, static_cast<size_t>(shape_.rows),
                                         static_cast<size_t>(tile), flags_.get());
    }
    return absl::OkStatus();
  }

 protected:
  virtual void RunRows(int64_t begin, int64_t end) const = 0;
  const RowShape shape_;

 private:
  static void Task(void* self, size_t begin, size_t count) {
    static_cast<const RowKernel*>(self)->RunRows(static_cast<int64_t>(begin), static_cast<int64_t>(begin + count));
  }

  pthreadpool_t pool_;
  PoolFlags flags_;
};

class SoftmaxKernel : public RowKernel {
 public:
  SoftmaxKernel(SoftmaxFn fn, const RowShape& shape, const OpKernelArgs& args)
      : RowKernel(shape, args), fn_(fn), x_(args.inputs[0]->data<float>()), y_(args.outputs[0].data<float>()) {}

 private:
  void RunRows(int64_t begin, int64_t end) const override {
    fn_(end - begin, shape_.inner, x_ + begin * shape_.inner, y_ + begin * shape_.inner);
  }
  SoftmaxFn fn_;
  const float* x_;
  float* y_;
};

class RmsNormKernel : public RowKernel {
 public:
  RmsNormKernel(RmsNormFn fn, const RowShape& shape, const OpKernelArgs& args)
      : RowKernel(shape, args),
        fn_(fn),
        x_(args.inputs[0]->data<float>()),
        gain_(args.inputs.size() > 1 && args.inputs[1] ? args.inputs[1]->data<float>() : nullptr),
        eps_(args.node.GetFloat("epsilon", 1e-5f)),
        y_(args.outputs[0].data<float>()) {}

 private:
  void RunRows(int64_t begin, int64_t end) const override {
    fn_(end - begin, shape_.inner, x_ + begin * shape_.inner, gain_, eps_, y_ + begin * shape_.inner);
  }
  RmsNormFn fn_;
  const float* x_;
  const float* gain_;
  float eps_;
  float* y_;
};

template <auto kFn>
bool Legal(const OpQuery& q) {
  RowShape s;
  return ShapeOf<kFn>(q, &s);
}

// The microkernel's own estimate for the node's rows. Against XNNPACK's Softmax (16 bytes per element
// at 20 GB/s): the AVX-512 kernel's is lower, as measured (3.2x faster in vector_benchmark); NEON's ties
// and XNNPACK, registered first, keeps the node; SVE wins only with vectors wider than 128 bits.
template <auto kFn>
double Cost(const OpQuery& q) {
  RowShape s;
  if (!ShapeOf<kFn>(q, &s)) return 1e9;
  return MicrokernelOf<kFn>().cost({s.rows, s.inner, 0, 0});
}

template <auto kFn>
absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelArgs& args) {
  std::vector<OperandInfo> inputs(args.inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (args.inputs[i] != nullptr) inputs[i] = {true, false, args.inputs[i]->type()};
  }
  const std::vector<OperandInfo> outputs = {{true, false, args.outputs[0].type()}};
  RowShape s;
  if (!ShapeOf<kFn>(OpQuery{args.node, inputs, outputs}, &s)) {
    return absl::InvalidArgumentError(absl::StrCat("node '", args.node.name(), "': ", MicrokernelOf<kFn>().name,
                                                   " does not serve this ", args.node.op_type(),
                                                   " (f32, contiguous rows, a gain of one row only)"));
  }
  if constexpr (std::is_same_v<decltype(kFn), SoftmaxFn>) {
    return std::unique_ptr<OpKernel>(std::make_unique<SoftmaxKernel>(kFn, s, args));
  } else {
    return std::unique_ptr<OpKernel>(std::make_unique<RmsNormKernel>(kFn, s, args));
  }
}

// "tessel_f32_softmax__neon" -> "tessel_f32_softmax_nc__neon" (rows x channels, as XNNPACK names it).
template <auto kFn>
OpKernelEntry Entry(const char* op) {
  const VectorKernel& k = MicrokernelOf<kFn>();
  std::string name = k.name;
  name.insert(name.find("__"), "_nc");
  return MakeOpKernelEntry(name, op, "f32", "any", k.isa, k.backend, Legal<kFn>, Cost<kFn>, Create<kFn>);
}

}  // namespace

void RegisterVectorOpKernels(OpKernelRegistry& r) {
  r.Register(Entry<tessel_f32_softmax__autovec>("Softmax"));
  r.Register(Entry<tessel_f32_rmsnorm__autovec>("tessel.RMSNorm"));
#if defined(__x86_64__)
  r.Register(Entry<tessel_f32_softmax__avx512>("Softmax"));
  r.Register(Entry<tessel_f32_rmsnorm__avx512>("tessel.RMSNorm"));
#endif
#if defined(__aarch64__)
  r.Register(Entry<tessel_f32_softmax__neon>("Softmax"));
  r.Register(Entry<tessel_f32_rmsnorm__neon>("tessel.RMSNorm"));
  r.Register(Entry<tessel_f32_softmax__sve>("Softmax"));
  r.Register(Entry<tessel_f32_rmsnorm__sve>("tessel.RMSNorm"));
#endif
}

}  // namespace tessel
