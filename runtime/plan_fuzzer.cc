// Structure-aware fuzz target for artifact loading: the input bytes steer mutations of a real compiled
// plan (attribute values and names, operand indices, tensor shapes and sizes, op types, kernel
// names), the plan is re-encoded with a correct checksum, and the result must be refused at load with
// a status or load, run on zeros and finish. Three base plans: a small CNN on fused kernels, the same at
// -O0, and a graph with data-dependent extents (bounded and allocated as they run). Byte-level fuzzing (artifact_fuzzer) rarely gets past
// the checksum; this reaches the checks behind it, where a renamed MaxPool attribute once corrupted
// the heap.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "artifact/artifact.h"
#include "codegen/compiler.h"
#include "graph/text.h"
#include "runtime/executor.h"

namespace {

using tessel::artifact::Attribute;
using tessel::artifact::Plan;

// Reads choices from the fuzz input; zeros once it runs out.
class Choices {
 public:
  Choices(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint32_t Next(uint32_t n) {  // in [0, n)
    if (n == 0) return 0;
    uint32_t v = 0;
    for (int i = 0; i < 2; ++i) v = (v << 8) | (pos_ < size_ ? data_[pos_++] : 0);
    return v % n;
  }
  int64_t SmallInt() { return static_cast<int64_t>(Next(40)) - 4; }
  bool Empty() const { return pos_ >= size_; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

struct Base {
  Plan plan;
  std::string weights;
};

// A small CNN with a residual, pooling, a classifier and a transpose, compiled with the CNN pipeline
// (fused NHWC convolutions, XNNPACK and Tessel kernels) or at -O0 (reference kernels).
Base Compile(const std::string& pipeline) {
  std::string w1, w2, fc;
  for (int i = 0; i < 8 * 3 * 3 * 3; ++i) absl::StrAppend(&w1, i ? ", " : "", (i % 7 - 3) * 0.125);
  for (int i = 0; i < 8 * 8 * 3 * 3; ++i) absl::StrAppend(&w2, i ? ", " : "", (i % 5 - 2) * 0.0625);
  for (int i = 0; i < 8 * 4; ++i) absl::StrAppend(&fc, i ? ", " : "", (i % 3 - 1) * 0.5);
  auto graph = tessel::ParseGraph(absl::StrCat(R"(
graph @main {
  input %x : f32[1,3,8,8]
  const %w1 : f32[8,3,3,3] = [)", w1, R"(]
  const %w2 : f32[8,8,3,3] = [)", w2, R"(]
  const %fc : f32[8,4] = [)", fc, R"(]
  const %lo : f32[] = [0.0]
  const %hi : f32[] = [6.0]
  %c1 = Conv "conv1" (%x, %w1) {pads = [1, 1, 1, 1]} : f32[1,8,8,8]
  %r1 = Relu "relu1" (%c1) : f32[1,8,8,8]
  %c2 = Conv "conv2" (%r1, %w2) {pads = [1, 1, 1, 1]} : f32[1,8,8,8]
  %a = Add "add" (%c2, %r1) : f32[1,8,8,8]
  %k = Clip "clip" (%a, %lo, %hi) : f32[1,8,8,8]
  %p = MaxPool "pool" (%k) {kernel_shape = [2, 2], strides = [2, 2]} : f32[1,8,4,4]
  %t = Transpose "transpose" (%p) {perm = [0, 2, 3, 1]} : f32[1,4,4,8]
  %g = GlobalAveragePool "gap" (%p) : f32[1,8,1,1]
  %f = Flatten "flat" (%g) {axis = 1} : f32[1,8]
  %m = MatMul "fc" (%f, %fc) : f32[1,4]
  %s = Softmax "soft" (%m) {axis = 1} : f32[1,4]
  output %s, %t
}
)"));
  if (!graph.ok()) {
    std::fprintf(stderr, "plan_fuzzer: %s\n", std::string(graph.status().message()).c_str());
    std::abort();
  }
  tessel::CompileOptions options;
  options.pipeline = pipeline;
  auto result = tessel::CompileGraph(**graph, options);
  if (!result.ok()) {
    std::fprintf(stderr, "plan_fuzzer: %s\n", std::string(result.status().message()).c_str());
    std::abort();
  }
  return {result->plan, result->weights};
}

// A graph with data-dependent extents: NonZero's count bounded at compile time, a TopK whose k is
// computed from it, a row-wise MatMul over the selected rows, and a Reshape to a shape read from an input
// (no bound: allocated as it runs).
Base CompileDynamic() {
  auto graph = tessel::ParseGraph(R"(
graph @main {
  input %x : f32[6,4]
  input %shape : i64[2]
  const %zero : f32[] = [0.0]
  const %flat : i64[1] = [-1]
  const %first : i64[1] = [0]
  const %one : i64[1] = [1]
  const %three : i64[1] = [3]
  const %w : f32[4,4] = [0.5, -1.0, 0.25, 2.0, 1.0, 0.0, -0.5, 0.75, 0.125, 1.5, -2.0, 0.5, 1.0, 1.0, -1.0, 0.0]
  %col = Slice "col" (%x, %first, %one, %one) : f32[6,1]
  %pos = Greater "pos" (%col, %zero) : bool[6,1]
  %nz = NonZero "nz" (%pos) : i64[2,?a]
  %rows2 = Slice "rows2" (%nz, %first, %one) : i64[1,?a]
  %rows = Reshape "rows" (%rows2, %flat) : i64[?a]
  %picked = Gather "picked" (%x, %rows) {axis = 0} : f32[?a,4]
  %fc = MatMul "fc" (%picked, %w) : f32[?a,4]
  %n = Shape "n" (%fc) : i64[2]
  %count = Slice "count" (%n, %first, %one) : i64[1]
  %k = Min "k" (%count, %three) : i64[1]
  %flatfc = Reshape "flatfc" (%fc, %flat) : f32[?b]
  %top, %idx = TopK "top" (%flatfc, %k) : f32[?c], i64[?c]
  %r = Reshape "r" (%x, %shape) : f32[?d,?e]
  output %top, %idx, %r
}
)");
  if (!graph.ok()) {
    std::fprintf(stderr, "plan_fuzzer: %s\n", std::string(graph.status().message()).c_str());
    std::abort();
  }
  auto result = tessel::CompileGraph(**graph, tessel::CompileOptions());
  if (!result.ok()) {
    std::fprintf(stderr, "plan_fuzzer: %s\n", std::string(result.status().message()).c_str());
    std::abort();
  }
  return {result->plan, result->weights};
}

void MutateAttribute(Choices& c, Attribute* a) {
  switch (c.Next(6)) {
    case 0: a->set_name(absl::StrCat(a->name(), "x")); break;
    case 1: a->set_i(c.SmallInt()); break;
    case 2: a->set_f(static_cast<float>(c.SmallInt()) * 0.5f); break;
    case 3:
      if (a->has_ints() && a->ints().values_size() > 0) {
        a->mutable_ints()->set_values(static_cast<int>(c.Next(a->ints().values_size())), c.SmallInt());
      }
      break;
    case 4:
      if (a->has_ints()) a->mutable_ints()->add_values(c.SmallInt());
      break;
    default:
      if (a->has_ints() && a->ints().values_size() > 0) a->mutable_ints()->mutable_values()->RemoveLast();
      break;
  }
}

void Mutate(Choices& c, const Plan& other, Plan* plan) {
  const int ops = plan->ops_size(), tensors = plan->tensors_size();
  tessel::artifact::Op* op = plan->mutable_ops(static_cast<int>(c.Next(ops)));
  tessel::artifact::Tensor* t = plan->mutable_tensors(static_cast<int>(c.Next(tensors)));
  switch (c.Next(10)) {
    case 0:
    case 1:
      if (op->attributes_size() > 0) MutateAttribute(c, op->mutable_attributes(static_cast<int>(c.Next(op->attributes_size()))));
      break;
    case 2:
      if (op->attributes_size() > 0) op->mutable_attributes()->DeleteSubrange(static_cast<int>(c.Next(op->attributes_size())), 1);
      break;
    case 3:
      if (op->inputs_size() > 0) op->set_inputs(static_cast<int>(c.Next(op->inputs_size())), static_cast<int>(c.Next(tensors + 1)) - 1);
      break;
    case 4:
      if (op->outputs_size() > 0) op->set_outputs(static_cast<int>(c.Next(op->outputs_size())), static_cast<int>(c.Next(tensors)));
      break;
    case 5:  // another shape, its byte size made consistent half the time
      if (t->shape_size() > 0) {
        t->set_shape(static_cast<int>(c.Next(t->shape_size())), c.SmallInt());
        if (c.Next(2) == 0) {
          int64_t n = 1;
          for (int64_t d : t->shape()) n *= d < 0 ? 0 : d;
          t->set_bytes(static_cast<uint64_t>(n) * 4);
        }
      }
      break;
    case 6: {  // another op's type or kernel, from this plan or the other one
      const tessel::artifact::Op& from = c.Next(2) ? other.ops(static_cast<int>(c.Next(other.ops_size())))
                                                    : plan->ops(static_cast<int>(c.Next(ops)));
      if (c.Next(2)) {
        op->set_op_type(from.op_type());
        op->set_domain(from.domain());
      } else {
        op->set_kernel(from.kernel());
      }
      break;
    }
    case 7:
      t->set_dtype(static_cast<int>(c.Next(14)));
      break;
    case 8:  // data-dependent extents: the flag, the storage (arena or allocated as it runs), row-wise
      switch (c.Next(3)) {
        case 0: t->set_dynamic(!t->dynamic()); break;
        case 1:
          t->set_storage(t->storage() == tessel::artifact::Tensor::HEAP ? tessel::artifact::Tensor::ARENA
                                                                          : tessel::artifact::Tensor::HEAP);
          break;
        default: op->set_row_wise(!op->row_wise()); break;
      }
      break;
    default:
      plan->set_arena_bytes(plan->arena_bytes() / (1 + c.Next(4)));
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Base* fused = new Base(Compile("cnn"));
  static const Base* plain = new Base(Compile("O0"));
  static const Base* dynamic = new Base(CompileDynamic());
  Choices c(data, size);
  const uint32_t which = c.Next(3);
  const Base& base = which == 0 ? *fused : which == 1 ? *plain : *dynamic;
  const Base& other = which == 0 ? *plain : *fused;
  Plan plan = base.plan;
  const int mutations = 1 + static_cast<int>(c.Next(4));
  for (int i = 0; i < mutations && !c.Empty(); ++i) Mutate(c, other.plan, &plan);
  auto bytes = tessel::SerializeArtifact(plan, base.weights);
  if (!bytes.ok()) return 0;
  auto artifact = tessel::Artifact::FromBytes(*bytes);
  if (!artifact.ok()) return 0;
  auto model = tessel::CompiledModel::FromArtifact(*artifact);
  if (!model.ok() || (*model)->plan().arena_bytes() > (64u << 20)) return 0;
  auto session = tessel::Session::Create(*model);
  if (!session.ok()) return 0;
  std::vector<tessel::Tensor> inputs;
  for (int i = 0; i < (*model)->num_inputs(); ++i) {
    const tessel::TensorType type = (*model)->input_type(i);
    if (!type.is_static() || type.NumElements() < 0 || type.NumElements() > (1 << 20)) return 0;
    inputs.emplace_back(type.dtype, type.StaticShape());  // zero-filled
  }
  (void)(*session)->Run(inputs);
  return 0;
}
