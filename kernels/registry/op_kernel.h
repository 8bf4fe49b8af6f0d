// Operator-level kernels: one implementation of a graph operator (tessel.FusedConv, Gemm, and later
// QConv / QGemm) that the compiler chooses per node and records by name in the artifact, and that the
// executor instantiates once per session over the session's fixed arena (the XNNPACK layering:
// create and pack at load, bind the arena once, then only run). Entries are keyed by (op, dtypes,
// layout) like the microkernel registry, with a legality check and a cost estimate on the node.
#ifndef TESSEL_KERNELS_REGISTRY_OP_KERNEL_H_
#define TESSEL_KERNELS_REGISTRY_OP_KERNEL_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "graph/graph.h"
#include "graph/tensor.h"
#include "kernels/registry/registry.h"
#include "pthreadpool.h"

namespace tessel {

// What selection knows about one operand: its static type and whether its data is known at compile
// time (weights), which kernels that pack weights at load require.
struct OperandInfo {
  bool present = false;
  bool constant = false;
  TensorType type;
};

// A node as kernel selection sees it: attributes from `node`, operands from the two spans.
struct OpQuery {
  const Node& node;
  absl::Span<const OperandInfo> inputs;
  absl::Span<const OperandInfo> outputs;

  const std::string op() const;  // "Gemm", "tessel.FusedConv"
  bool has_input(int i) const { return i < static_cast<int>(inputs.size()) && inputs[i].present; }
  const TensorType& input(int i) const { return inputs[i].type; }
  const TensorType& output(int i) const { return outputs[i].type; }
};

// A prepared kernel: owns its packed weights and scratch; inputs and outputs were bound at creation
// (arena views never move), so Run only computes. Run never allocates.
class OpKernel {
 public:
  virtual ~OpKernel() = default;
  virtual absl::Status Run() = 0;
};

// Scratch memory shared by every kernel of one session. The operators run one after another, so one set
// of per-task buffers serves them all, and what one operator wrote there is still in cache when the
// next one writes: with a buffer of its own per kernel, every operator's first writes to its scratch
// missed to memory (MobileNetV2's fused depthwise ops, whose depthwise output goes through scratch:
// 6.76 -> 6.51 ms shared, Zen 4, 1 thread). Kernels Reserve while they are created and look their
// buffer up with Get when they run; the session calls Allocate once every kernel is created.
struct OpKernelArgs;

class SharedScratch {
 public:
  // At least `bytes` for each task t < tasks. False once allocated: the caller then keeps its own.
  bool Reserve(int tasks, size_t bytes);
  // Allocates what was reserved (Buffer::Allocate: 64-byte aligned, zero-filled), once.
  void Allocate();
  // Task t's buffer: 64-byte aligned, as large as the largest reservation; null before Allocate.
  void* Get(int t) const {
    return t < tasks_ && memory_ ? static_cast<unsigned char*>(memory_->data()) + static_cast<size_t>(t) * stride_
                                 : nullptr;
  }
  size_t bytes() const { return static_cast<size_t>(tasks_) * stride_; }

 private:
  int tasks_ = 0;
  size_t stride_ = 0;  // bytes per task, a multiple of 64
  bool allocated_ = false;
  std::shared_ptr<Buffer> memory_;
};

// One kernel's per-task scratch: in the session's SharedScratch where the factory got one (and it is
// still open for reservations), else a buffer of the kernel's own. Either way 64-byte aligned per task.
class KernelScratch {
 public:
  void Bind(const OpKernelArgs& args, int tasks, size_t bytes_per_task);
  void* Get(int t) const {
    return shared_ ? shared_->Get(t) : static_cast<unsigned char*>(own_->data()) + static_cast<size_t>(t) * stride_;
  }

 private:
  SharedScratch* shared_ = nullptr;
  std::shared_ptr<Buffer> own_;
  size_t stride_ = 0;
};

// What a factory gets: the node's attributes, the bound operand tensors (weights are the mapped
// constants, activations are views into the session's arena; nullptr for an omitted optional input),
// and the session's thread pool (nullptr: run on the calling thread).
struct OpKernelArgs {
  const Node& node;
  absl::Span<const Tensor* const> inputs;
  absl::Span<Tensor> outputs;
  pthreadpool_t threadpool = nullptr;
  int num_threads = 1;
  // Whether pool workers spin between parallel regions (lowest latency on idle cores) or sleep on a
  // futex after each (robust when other processes compete for the cores): the flags of regions whose
  // flags are fixed when the kernel is created (XNNPACK's operators).
  bool spin_workers = false;
  // The session's shared scratch, or null (the kernel then owns its scratch).
  SharedScratch* scratch = nullptr;
  // The session's live pthreadpool flags (runtime/worker_wait.h switches them between runs), read by
  // every parallel region of Tessel's own kernels (ParallelFlags); null: fixed by spin_workers.
  const uint32_t* live_flags = nullptr;
};

// The pthreadpool flags of a kernel's parallel regions, read when a region starts: a fixed value, or the
// session's live flags (OpKernelArgs::live_flags).
class PoolFlags {
 public:
  PoolFlags() = default;
  explicit PoolFlags(uint32_t fixed) : fixed_(fixed) {}
  explicit PoolFlags(const uint32_t* live) : live_(live) {}
  // Not a conversion: a kernel that kept the value at creation would freeze the session's live flags.
  uint32_t get() const { return live_ != nullptr ? *live_ : fixed_; }

 private:
  const uint32_t* live_ = nullptr;
  uint32_t fixed_ = 0;
};

// The pthreadpool flags for a parallel region under `args`.
PoolFlags ParallelFlags(const OpKernelArgs& args);

// Below this many multiply-adds (tens of microseconds of work on a small core) a parallel region costs
// more than it saves: waking sleeping workers takes microseconds each, and the calling thread then waits
// for the slowest. Kernels run such work on the calling thread (PoolForWork).
inline constexpr double kMinParallelMacs = 1 << 16;

// `pool`, or nullptr (run on the calling thread) when `macs` is too little work to split.
inline pthreadpool_t PoolForWork(pthreadpool_t pool, double macs) {
  return macs < kMinParallelMacs ? nullptr : pool;
}

// Runs k->RunTask(t) for every task t < tasks on `pool` (on the calling thread where pool is null):
// the parallel region of a kernel that splits its work into tasks.
template <typename K>
void RunTasks(pthreadpool_t pool, K* k, int64_t tasks, PoolFlags flags) {
  pthreadpool_parallelize_1d(
      pool, [](void* self, size_t t) { static_cast<K*>(self)->RunTask(static_cast<int>(t)); }, k,
      static_cast<size_t>(tasks), flags.get());
}

// Task t's share [begin, end) of n items split over `tasks` tasks in runs of equal length, a multiple
// of `step` items: the last run may be shorter and the ones after it empty (begin == end == n).
struct TaskRange {
  int64_t begin = 0, end = 0;
};
inline TaskRange SplitForTask(int64_t n, int64_t tasks, int64_t t, int64_t step = 1) {
  const int64_t per = ((n + tasks - 1) / tasks + step - 1) / step * step;
  const int64_t begin = std::min(n, t * per);
  return {begin, std::min(n, begin + per)};
}

struct OpKernelEntry {
  std::string name;    // unique, microkernel style: "xnn_f32_conv2d_nhwc__xnnpack"
  std::string op;      // "tessel.FusedConv", "Gemm"; the domain prefixes the type
  std::string dtypes;  // "f32"; "qs8" etc. for quantized kernels
  std::string layout;  // "nhwc", "row_major", "any"
  Isa isa = Isa::kPortable;
  std::string backend;                       // "xnnpack", "gemm", "portable"
  bool (*legal)(const OpQuery&) = nullptr;   // nullptr: every node of the op
  double (*cost)(const OpQuery&) = nullptr;  // estimated seconds for one run on one thread
  absl::StatusOr<std::unique_ptr<OpKernel>> (*create)(const OpKernelArgs&) = nullptr;
  // Run reads its operands' extents then, not at creation: it serves an op whose extents depend on input
  // values (created over their planned bounds, run on each run's smaller ones; codegen/shape_bounds.h).
  bool any_extent = false;
};

// An entry from all its fields, for the backends' registration functions.
OpKernelEntry MakeOpKernelEntry(std::string name, std::string op, std::string dtypes, std::string layout, Isa isa,
                                std::string backend, bool (*legal)(const OpQuery&), double (*cost)(const OpQuery&),
                                absl::StatusOr<std::unique_ptr<OpKernel>> (*create)(const OpKernelArgs&));

class OpKernelRegistry {
 public:
  void Register(OpKernelEntry entry);
  const OpKernelEntry* FindByName(absl::string_view name) const;
  const std::vector<OpKernelEntry>& entries() const { return entries_; }
  // The estimate Select ranks `e` by: on aarch64 the Arm lab's table where it lists e for the node's
  // group (LabOpGroup, lab_costs.h), else e.cost.
  double Cost(const OpKernelEntry& e, const OpQuery& query) const;

  // The cheapest legal entry for the node that runs on this CPU and passes `force` (a backend or a
  // kernel name; empty: any). nullptr when none does: the caller falls back to the reference kernel.
  // `why_not` (optional) collects one line per refused candidate.
  const OpKernelEntry* Select(const OpQuery& query, absl::string_view dtypes, absl::string_view force,
                              std::vector<std::string>* why_not = nullptr) const;

 private:
  std::vector<OpKernelEntry> entries_;
};

// The Arm lab's cost-table group of a node for kernels of `dtypes`: "conv/depthwise", "conv/pointwise"
// or "conv/dense" for f32 tessel.FusedConv, "dwpw" for f32 tessel.DwPwConv, "qconv/<the same classes>"
// for u8 tessel.QConv, "qgemm" for u8 tessel.QGemm; empty for other ops.
std::string LabOpGroup(const OpQuery& query, absl::string_view dtypes);

// The operand dtype key of a node: its first input's dtype name ("f32"), what kernels register under.
std::string OpDTypes(const OpQuery& query);

}  // namespace tessel

#endif  // TESSEL_KERNELS_REGISTRY_OP_KERNEL_H_
