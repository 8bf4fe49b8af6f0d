// Runs a compiled artifact: the model (plan, weights mapped in place, one Node per op for the
// kernels' attributes) is loaded once and shared read-only; each Session owns a fixed arena planned
// ahead of time, so several sessions run concurrently on one model. Each op runs the kernel the
// compiler recorded in the plan: an operator-level kernel (kernels/op_kernels.h) that the
// session creates once over its arena (weights packed, pointers bound), or the reference kernel.
#ifndef TESSEL_RUNTIME_EXECUTOR_H_
#define TESSEL_RUNTIME_EXECUTOR_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "artifact/artifact.h"
#include "graph/graph.h"
#include "graph/tensor.h"
#include "kernels/reference/reference.h"
#include "kernels/registry/op_kernel.h"
#include "runtime/worker_wait.h"

namespace tessel {

class CompiledModel {
 public:
  static absl::StatusOr<std::shared_ptr<const CompiledModel>> Load(const std::string& path,
                                                                   const ArtifactLoadOptions& options = {});
  static absl::StatusOr<std::shared_ptr<const CompiledModel>> FromArtifact(std::shared_ptr<Artifact> artifact);

  const artifact::Plan& plan() const { return artifact_->plan(); }
  const Artifact& artifact() const { return *artifact_; }
  int num_inputs() const { return plan().inputs_size(); }
  int num_outputs() const { return plan().outputs_size(); }
  const std::string& input_name(int i) const { return plan().tensors(plan().inputs(i)).name(); }
  const std::string& output_name(int i) const { return plan().tensors(plan().outputs(i)).name(); }
  TensorType input_type(int i) const;

 private:
  friend class Session;
  struct Op {
    const Node* node;
    ReferenceKernel reference;   // nullptr when this runtime has none for the op
    const OpKernelEntry* entry;  // the recorded optimized kernel; nullptr for "reference/..."
    bool dynamic = false;        // an operand's extent depends on input values (reference kernel, RunDynamic)
    bool row_wise = false;       // dynamic, but when only input 0's rows vary the kernel runs over the bound
    bool heap = false;           // an operand has no bound: allocated by the reference kernel as it runs
  };
  CompiledModel() = default;
  std::shared_ptr<Artifact> artifact_;
  Graph attrs_;              // holds one Node per op (attributes only)
  std::vector<Op> ops_;
  std::vector<Tensor> weights_;  // per plan tensor: a view into the mapped weights (undefined for arena tensors)
};

struct SessionOptions {
  // Threads per inference (the calling thread included).
  int num_threads = 1;
  // How pool workers wait between operators (runtime/worker_wait.h): by default they spin within a run,
  // sleep after it, and sleep after every operator while other processes contend for the cores.
  WorkerWait worker_wait = WorkerWait::kAdaptive;
  // Run every op on its reference kernel whatever the plan chose (TESSEL_FORCE_BACKEND=reference).
  bool force_reference = ForcedBackendFromEnv() == "reference";
  // Check f32 inputs before and outputs after each run for NaN and Inf (one pass over each): a
  // non-finite value is then an error naming the tensor. The fast kernels (XNNPACK's and Tessel's
  // clamps, ReLU and max pooling) may turn a NaN into a finite value where the ONNX reference
  // propagates it, so without this check a NaN input can give finite, meaningless outputs.
  bool check_finite = false;
};

// OK when `t` (f32; other types always pass) holds no NaN or Inf; otherwise an error naming `what`, the
// count and the first such value's index.
absl::Status CheckFinite(const Tensor& t, absl::string_view what);

struct OpProfile {
  std::string name;
  std::string kernel;
  double milliseconds = 0;
  size_t bytes = 0;  // bytes of the op's inputs and outputs
};

class Session {
 public:
  // Creating the session creates the ops' kernels (packing weights); an error there is returned by
  // every Run. Create() reports it at once.
  explicit Session(std::shared_ptr<const CompiledModel> model, const SessionOptions& options = {});
  static absl::StatusOr<std::unique_ptr<Session>> Create(std::shared_ptr<const CompiledModel> model,
                                                         const SessionOptions& options = {});
  Session(Session&&) = default;
  Session& operator=(Session&&) = default;
  ~Session();

  // Inputs in plan order; checked against the compiled shapes. Outputs are views into the arena,
  // valid until the next Run. No heap allocation happens here after the first call, except in ops of
  // data-dependent extent (their shape inference and reference kernels allocate).
  absl::Status Run(absl::Span<const Tensor> inputs);
  // Runs on what the input slots hold (see input()): no copy of the inputs.
  absl::Status Run();
  // The arena slot input i is read from. Ops may reuse its memory during a run: fill it before each Run().
  Tensor& input(int i) { return views_[model_->plan().inputs(i)]; }
  const Tensor& output(int i) const { return views_[model_->plan().outputs(i)]; }

  void set_profile(bool on) { profile_ = on; }
  const std::vector<OpProfile>& profile() const { return profile_data_; }
  size_t arena_bytes() const { return arena_ ? arena_->size() : 0; }
  // Scratch the kernels share (SharedScratch), besides the arena.
  size_t scratch_bytes() const { return scratch_ ? scratch_->bytes() : 0; }
  int num_threads() const { return num_threads_; }
  // True while the adaptive worker wait puts the workers to sleep after every operator (WorkerHandoff).
  bool workers_sleep_per_op() const { return handoff_->overloaded(); }
  // The kernel each op runs in this session ("reference/..." under force_reference).
  const std::string& kernel_name(int op) const { return kernel_names_[op]; }

 private:
  struct PoolDeleter {
    void operator()(pthreadpool_t pool) const;
  };
  // Runs op i, whose operands have data-dependent extents: infers this run's output shapes, sets them on
  // the arena views within their planned bounds (an error past a bound), then runs the reference kernel.
  absl::Status RunDynamic(int i);
  // Whether row-wise op i's input 0 differs from its bound in this run in the leading extent only.
  bool OnlyRowsVary(int i) const;
  // After row-wise op i ran its kernel over the bound: its outputs take input 0's row count of this run.
  absl::Status SetRunRows(int i);
  absl::Status init_status_;
  std::shared_ptr<const CompiledModel> model_;
  int num_threads_ = 1;
  std::unique_ptr<struct pthreadpool, PoolDeleter> pool_;
  std::unique_ptr<WorkerHandoff> handoff_;  // the pool's WorkerWait
  std::vector<bool> fixed_flags_;           // per op: its kernel's pool flags are fixed at creation (XNNPACK)
  std::shared_ptr<Buffer> arena_;
  std::vector<Tensor> views_;                            // per plan tensor
  std::vector<std::vector<const Tensor*>> op_inputs_;  // per op
  std::vector<std::vector<Tensor>> op_outputs_;        // per op
  std::vector<std::unique_ptr<OpKernel>> kernels_;     // per op; nullptr: the reference kernel
  std::unique_ptr<SharedScratch> scratch_;             // the kernels' shared scratch (stable address)
  std::vector<std::string> kernel_names_;              // per op
  std::vector<TensorType> dynamic_types_;              // RunDynamic's input types (reused)
  std::vector<const TensorType*> dynamic_type_ptrs_;
  std::vector<int64_t> row_shape_;                     // SetRunRows' and RunDynamic's shape (reused)
  std::vector<Tensor> own_outputs_;                    // RunDynamic: If / NMS results before the copy
  bool profile_ = false;
  std::vector<OpProfile> profile_data_;
  bool check_finite_ = false;
  bool lab_marks_ = false;  // TESSEL_LAB_MARKS=1: mark op boundaries for lab (lab_marks.h)
};

}  // namespace tessel

#endif  // TESSEL_RUNTIME_EXECUTOR_H_
