// Artifact executor.
#include "runtime/executor.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "artifact/plan_graph.h"
#include "graph/op_registry.h"
#include "kernels/op_kernels.h"
#include "pthreadpool.h"
#include "runtime/lab_marks.h"
#include "support/size_limits.h"

namespace tessel {
namespace {

std::vector<int64_t> Shape(const artifact::Tensor& t) { return std::vector<int64_t>(t.shape().begin(), t.shape().end()); }

Tensor WeightView(const std::shared_ptr<Artifact>& a, DType dtype, std::vector<int64_t> shape, uint64_t offset,
                  uint64_t bytes) {
  // Kernels never write their inputs; the mapping is read-only and stays owned by the artifact.
  auto buffer = Buffer::Borrow(const_cast<uint8_t*>(a->weights()) + offset, bytes, a);
  return Tensor(dtype, std::move(shape), std::move(buffer), 0);
}

// Shape inference on the decoded node against the types the plan gives its outputs. Dimensions that
// inference leaves symbolic (a shape computed at run time) are left to the kernels.
absl::Status CheckPlannedTypes(const Node& n, const std::vector<const TensorType*>& planned_outputs) {
  std::vector<const TensorType*> types;
  std::vector<const Tensor*> constants;
  for (const Value* v : n.inputs()) {
    types.push_back(v != nullptr ? &v->type() : nullptr);
    constants.push_back(v != nullptr && v->is_constant() ? v->constant().get() : nullptr);
  }
  absl::StatusOr<std::vector<TensorType>> inferred = InferOutputTypes(n, std::move(types), std::move(constants));
  if (!inferred.ok()) return inferred.status();
  if (inferred->size() != planned_outputs.size()) {
    return absl::InvalidArgumentError(absl::StrCat("has ", planned_outputs.size(),
                                                   " outputs; its inputs and attributes give ", inferred->size()));
  }
  for (size_t i = 0; i < planned_outputs.size(); ++i) {
    const TensorType& want = (*inferred)[i];
    const TensorType& planned = *planned_outputs[i];
    bool same = want.dtype == planned.dtype && want.rank() == planned.rank();
    for (int d = 0; same && d < want.rank(); ++d) {
      same = !want.dims[d].is_static() || want.dims[d].value() == planned.dims[d].value();
    }
    if (!same) {
      return absl::InvalidArgumentError(absl::StrCat("output ", i, " is planned as ", planned.ToString(),
                                                     " but its inputs and attributes give ", want.ToString()));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckFinite(const Tensor& t, absl::string_view what) {
  if (t.dtype() != DType::kF32) return absl::OkStatus();
  const float* p = t.data<float>();
  int64_t count = 0, first = -1;
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    if (!std::isfinite(p[i])) {
      if (first < 0) first = i;
      ++count;
    }
  }
  if (count == 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(what, " has ", count, " non-finite value", count == 1 ? "" : "s",
                                                 " (first: ", std::isnan(p[first]) ? "NaN" : "Inf", " at flat index ",
                                                 first, ")"));
}

TensorType CompiledModel::input_type(int i) const {
  const artifact::Tensor& t = plan().tensors(plan().inputs(i));
  return TensorType::Static(static_cast<DType>(t.dtype()), Shape(t));
}

absl::StatusOr<std::shared_ptr<const CompiledModel>> CompiledModel::Load(const std::string& path,
                                                                         const ArtifactLoadOptions& options) {
  absl::StatusOr<std::shared_ptr<Artifact>> a = Artifact::Load(path, options);
  if (!a.ok()) return a.status();
  absl::StatusOr<std::shared_ptr<const CompiledModel>> m = FromArtifact(*a);
  if (!m.ok()) return absl::Status(m.status().code(), absl::StrCat(path, ": ", m.status().message()));
  return m;
}

absl::StatusOr<std::shared_ptr<const CompiledModel>> CompiledModel::FromArtifact(std::shared_ptr<Artifact> artifact) {
  const artifact::Plan& plan = artifact->plan();
  // The artifact was compiled elsewhere, or for other shapes: every session allocates its arena, so a
  // plan whose arena this machine cannot hold is refused here, before any session tries.
  int largest = -1;
  for (int i = 0; i < plan.tensors_size(); ++i) {
    const artifact::Tensor& t = plan.tensors(i);
    if (t.storage() == artifact::Tensor::ARENA && (largest < 0 || t.bytes() > plan.tensors(largest).bytes())) largest = i;
  }
  std::string what = "the plan's activation arena";
  if (largest >= 0) {
    const artifact::Tensor& t = plan.tensors(largest);
    const bool input = std::find(plan.inputs().begin(), plan.inputs().end(), largest) != plan.inputs().end();
    absl::StrAppend(&what, " (largest tensor: ", input ? "input '" : "'", t.name(), "' ",
                    TensorType::Static(static_cast<DType>(t.dtype()), Shape(t)).ToString(), ", ",
                    FormatBytes(t.bytes()), ")");
  }
  if (absl::Status s = CheckFitsInMemory(plan.arena_bytes(), what); !s.ok()) return s;
  for (int idx : plan.outputs()) {
    // An output allocated as it runs needs an op that computes it.
    if (plan.tensors(idx).storage() != artifact::Tensor::HEAP) continue;
    const bool produced = std::any_of(plan.ops().begin(), plan.ops().end(), [idx](const artifact::Op& op) {
      return std::find(op.outputs().begin(), op.outputs().end(), idx) != op.outputs().end();
    });
    if (!produced) {
      return absl::DataLossError(absl::StrCat("output '", plan.tensors(idx).name(), "' is computed by no op; the plan ",
                                              "is corrupt"));
    }
  }
  for (int i = 0; i < plan.tensors_size(); ++i) {
    const artifact::Tensor& t = plan.tensors(i);
    const bool input = std::find(plan.inputs().begin(), plan.inputs().end(), i) != plan.inputs().end();
    if (t.dynamic() && (input || t.storage() == artifact::Tensor::WEIGHTS)) {
      return absl::DataLossError(absl::StrCat("tensor '", t.name(), "': a ", input ? "model input" : "weight",
                                              " of data-dependent extent; the plan is corrupt"));
    }
  }
  std::shared_ptr<CompiledModel> m(new CompiledModel());
  m->artifact_ = artifact;
  m->weights_.resize(plan.tensors_size());
  for (int i = 0; i < plan.tensors_size(); ++i) {
    const artifact::Tensor& t = plan.tensors(i);
    if (t.storage() == artifact::Tensor::WEIGHTS) {
      m->weights_[i] = WeightView(artifact, static_cast<DType>(t.dtype()), Shape(t), t.offset(), t.bytes());
    }
  }
  std::vector<Value*> values;
  std::vector<Node*> nodes;
  DecodePlanGraph(
      plan,
      [&artifact](const artifact::TensorRef& r) {
        return std::make_shared<const Tensor>(WeightView(artifact, static_cast<DType>(r.dtype()),
                                                         {r.shape().begin(), r.shape().end()}, r.offset(), r.bytes()));
      },
      m->attrs_, &values, &nodes);
  for (int op_index = 0; op_index < plan.ops_size(); ++op_index) {
    const artifact::Op& op = plan.ops(op_index);
    Node* n = nodes[op_index];
    // An op with an operand of data-dependent extent runs its reference kernel on the extents of each
    // run, inferred then and checked against the planned bounds.
    bool dynamic = false;
    for (int idx : op.inputs()) dynamic = dynamic || (idx >= 0 && plan.tensors(idx).dynamic());
    for (int idx : op.outputs()) dynamic = dynamic || plan.tensors(idx).dynamic();
    // If, Loop and NonMaxSuppression compute their outputs' extents as they run, fixed or not.
    dynamic = dynamic || ComputesItsOwnShape(op.domain(), op.op_type());
    // An operand without a bound (HEAP) is allocated by the op's reference kernel as it runs.
    bool heap = false;
    for (int idx : op.inputs()) heap = heap || (idx >= 0 && plan.tensors(idx).storage() == artifact::Tensor::HEAP);
    for (int idx : op.outputs()) heap = heap || plan.tensors(idx).storage() == artifact::Tensor::HEAP;
    if (heap && (op.row_wise() || !absl::StartsWith(op.kernel(), "reference/"))) {
      return absl::DataLossError(absl::StrCat("op '", op.name(), "' (", op.op_type(), "): kernel '", op.kernel(),
                                              "' on an operand allocated as it runs; the plan is corrupt"));
    }
    // A row-wise op runs its optimized kernel over the bound of rows when only the leading extent of input
    // 0 differs from the bound in a run, and its reference kernel otherwise: only input 0 may vary.
    auto varies = [&plan](int idx) { return plan.tensors(idx).dynamic() && plan.tensors(idx).shape_size() >= 1; };
    bool row_wise = op.row_wise() && op.inputs_size() >= 1 && op.inputs(0) >= 0 && varies(op.inputs(0));
    for (int k = 1; k < op.inputs_size(); ++k) {
      row_wise = row_wise && (op.inputs(k) < 0 || !plan.tensors(op.inputs(k)).dynamic());
    }
    for (int idx : op.outputs()) row_wise = row_wise && varies(idx);
    if (op.row_wise() && !row_wise) {
      return absl::DataLossError(absl::StrCat("op '", op.name(), "' (", op.op_type(), "): marked row-wise, but ",
                                              "operands other than input 0 vary; the plan is corrupt"));
    }
    const OpKernelEntry* planned_entry =
        absl::StartsWith(op.kernel(), "reference/") ? nullptr : OpKernels().FindByName(op.kernel());
    if (dynamic && !row_wise && !absl::StartsWith(op.kernel(), "reference/") &&
        (planned_entry == nullptr || !planned_entry->any_extent)) {
      return absl::DataLossError(absl::StrCat("op '", op.name(), "' (", op.op_type(), "): kernel '", op.kernel(),
                                              "' on an operand of data-dependent extent; the plan is corrupt"));
    }
    // The op's attributes and operand shapes must give its planned outputs, by the shape inference
    // the compiler ran: a corrupt or crafted plan (a renamed attribute, other pads) stops here, before
    // any kernel reads it.
    std::vector<const TensorType*> planned;
    for (int idx : op.outputs()) planned.push_back(&values[idx]->type());
    // A row-wise op's kernel is created over the planned bounds as a fixed-shape op's is: the same check.
    if (absl::Status s = dynamic && !row_wise ? absl::OkStatus() : CheckPlannedTypes(*n, planned); !s.ok()) {
      return absl::DataLossError(absl::StrCat("op '", op.name(), "' (", op.op_type(), "): ", s.message(),
                                              "; the plan is corrupt, or was written by another version"));
    }
    ReferenceKernel reference = ReferenceKernelRegistry::Global().Find(op.domain(), op.op_type());
    const OpKernelEntry* entry = nullptr;
    if (!absl::StartsWith(op.kernel(), "reference/")) {
      entry = OpKernels().FindByName(op.kernel());
      // Validate once here: the kernel must exist in this runtime and accept the op as planned.
      std::vector<OperandInfo> ins, outs;
      for (int idx : op.inputs()) {
        OperandInfo o;
        if (idx >= 0) {
          const artifact::Tensor& t = plan.tensors(idx);
          o = {true, t.storage() == artifact::Tensor::WEIGHTS, values[idx]->type()};
        }
        ins.push_back(o);
      }
      for (int idx : op.outputs()) outs.push_back({true, false, values[idx]->type()});
      const OpQuery query{*n, ins, outs};
      if (entry != nullptr && (entry->op != query.op() || entry->dtypes != OpDTypes(query))) {
        return absl::DataLossError(absl::StrCat("op '", op.name(), "': kernel '", op.kernel(), "' computes ",
                                                entry->op, " on ", entry->dtypes, ", not ", query.op(), " on ",
                                                OpDTypes(query), "; the plan is corrupt"));
      }
      if (entry != nullptr && entry->legal && !entry->legal(query)) {
        return absl::FailedPreconditionError(absl::StrCat("op '", op.name(), "': kernel '", op.kernel(),
                                                          "' does not accept this op's shapes or attributes; "
                                                          "recompile the model with this version of tessel"));
      }
      if (entry != nullptr && !CpuSupports(entry->isa)) {
        return absl::FailedPreconditionError(absl::StrCat("op '", op.name(), "': kernel '", op.kernel(), "' needs ",
                                                          IsaName(entry->isa), ", which this CPU lacks; recompile"));
      }
    }
    // A kernel this runtime lacks is an error rather than a quiet switch to the (much slower)
    // reference kernel, unless the reference kernels were asked for.
    const bool reference_forced = ForcedBackendFromEnv() == "reference";
    // If has no registered kernel: RunDynamic runs its taken branch on the reference interpreter.
    const bool runs_if = dynamic && ComputesItsOwnShape(op.domain(), op.op_type());
    if (entry == nullptr && !runs_if &&
        (reference == nullptr || (!absl::StartsWith(op.kernel(), "reference/") && !reference_forced))) {
      return absl::UnimplementedError(absl::StrCat("op '", op.name(), "': this runtime has no kernel '", op.kernel(),
                                                   "' (", op.op_type(), "); recompile the model with this version of ",
                                                   "tessel, or run it with TESSEL_FORCE_BACKEND=reference"));
    }
    m->ops_.push_back({n, reference, entry, dynamic, row_wise, heap});
  }
  return std::shared_ptr<const CompiledModel>(std::move(m));
}

void Session::PoolDeleter::operator()(pthreadpool_t pool) const { pthreadpool_destroy(pool); }

Session::~Session() {
  // Kernels hold the pool; release them first.
  kernels_.clear();
}

absl::StatusOr<std::unique_ptr<Session>> Session::Create(std::shared_ptr<const CompiledModel> model,
                                                         const SessionOptions& options) {
  auto session = std::make_unique<Session>(std::move(model), options);
  if (!session->init_status_.ok()) return session->init_status_;
  return session;
}

Session::Session(std::shared_ptr<const CompiledModel> model, const SessionOptions& options)
    : model_(std::move(model)), num_threads_(std::max(1, options.num_threads)),
      check_finite_(options.check_finite),
      lab_marks_(LabMarksRequested()) {
  const artifact::Plan& plan = model_->plan();
  if (num_threads_ > 1) pool_.reset(pthreadpool_create(num_threads_));
  handoff_ = std::make_unique<WorkerHandoff>(pool_.get(), num_threads_, options.worker_wait, plan.ops_size());
  arena_ = Buffer::Allocate(plan.arena_bytes());
  if (arena_ == nullptr) {
    init_status_ = absl::ResourceExhaustedError(
        absl::StrCat("cannot allocate the ", FormatBytes(plan.arena_bytes()), " activation arena (out of memory)"));
    return;
  }
  views_.resize(plan.tensors_size());
  for (int i = 0; i < plan.tensors_size(); ++i) {
    const artifact::Tensor& t = plan.tensors(i);
    if (t.storage() == artifact::Tensor::WEIGHTS) {
      views_[i] = model_->weights_[i];
    } else if (t.storage() == artifact::Tensor::HEAP) {
      views_[i] = Tensor();  // set by its op's run
    } else {
      views_[i] = Tensor(static_cast<DType>(t.dtype()), Shape(t), arena_, t.offset());
    }
  }
  for (const artifact::Op& op : plan.ops()) {
    std::vector<const Tensor*> in;
    for (int idx : op.inputs()) in.push_back(idx >= 0 ? &views_[idx] : nullptr);
    std::vector<Tensor> out;
    for (int idx : op.outputs()) out.push_back(views_[idx]);
    op_inputs_.push_back(std::move(in));
    op_outputs_.push_back(std::move(out));
  }
  profile_data_.resize(plan.ops_size());
  kernels_.resize(plan.ops_size());
  fixed_flags_.assign(plan.ops_size(), false);
  scratch_ = std::make_unique<SharedScratch>();
  for (int i = 0; i < plan.ops_size(); ++i) {
    const CompiledModel::Op& op = model_->ops_[i];
    const bool optimized = op.entry != nullptr && !(options.force_reference && op.reference != nullptr);
    kernel_names_.push_back(
        optimized
            ? plan.ops(i).kernel()
            : absl::StrCat("reference/", op.node->domain().empty() ? "" : op.node->domain() + ".", op.node->op_type()));
    if (!optimized) continue;
    const OpKernelArgs args{*op.node, op_inputs_[i], absl::MakeSpan(op_outputs_[i]), pool_.get(), num_threads_,
                            handoff_->kernels_spin(), scratch_.get(), handoff_->live_flags()};
    absl::StatusOr<std::unique_ptr<OpKernel>> k = op.entry->create(args);
    if (!k.ok()) {
      init_status_ = absl::Status(k.status().code(), absl::StrCat("op '", op.node->name(), "' (kernel ",
                                                                  op.entry->name, "): ", k.status().message()));
      return;
    }
    kernels_[i] = std::move(*k);
    fixed_flags_[i] = op.entry->backend == "xnnpack";
  }
  scratch_->Allocate();
  if (scratch_->bytes() > 0 && scratch_->Get(0) == nullptr) {
    init_status_ = absl::ResourceExhaustedError(
        absl::StrCat("cannot allocate the kernels' ", FormatBytes(scratch_->bytes()), " of scratch (out of memory)"));
  }
}

absl::Status Session::Run(absl::Span<const Tensor> inputs) {
  if (!init_status_.ok()) return init_status_;
  const artifact::Plan& plan = model_->plan();
  if (static_cast<int>(inputs.size()) != plan.inputs_size()) {
    return absl::InvalidArgumentError(absl::StrCat("model takes ", plan.inputs_size(), " inputs, got ", inputs.size()));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    Tensor& slot = views_[plan.inputs(i)];
    if (inputs[i].dtype() != slot.dtype() || inputs[i].shape() != slot.shape()) {
      return absl::InvalidArgumentError(absl::StrCat("input '", model_->input_name(i), "' expects ",
                                                     slot.type().ToString(), ", got ", inputs[i].type().ToString()));
    }
    std::memcpy(slot.raw_data(), inputs[i].raw_data(), slot.byte_size());
  }
  return Run();
}

namespace {

// Only a tensor of data-dependent extent changes shape as the model runs: an op of data-dependent
// extent whose output is planned with a fixed shape must give that shape (a corrupt plan otherwise).
absl::Status CheckFixedShape(const artifact::Tensor& t, absl::Span<const int64_t> shape) {
  if (t.dynamic() || std::equal(shape.begin(), shape.end(), t.shape().begin(), t.shape().end())) {
    return absl::OkStatus();
  }
  return absl::DataLossError(absl::StrCat("output '", t.name(), "' comes out ", ShapeToString(shape), " but is planned ",
                                          ShapeToString(Shape(t)), " with a fixed extent; the plan is corrupt"));
}

}  // namespace

bool Session::OnlyRowsVary(int i) const {
  const Tensor& x = *op_inputs_[i][0];
  const artifact::Tensor& t = model_->plan().tensors(model_->plan().ops(i).inputs(0));
  if (x.rank() != t.shape_size()) return false;
  for (int d = 1; d < x.rank(); ++d) {
    if (x.dim(d) != t.shape(d)) return false;
  }
  return true;
}

absl::Status Session::SetRunRows(int i) {
  const artifact::Op& planned = model_->plan().ops(i);
  const int64_t rows = op_inputs_[i][0]->dim(0);
  for (int k = 0; k < planned.outputs_size(); ++k) {
    const int idx = planned.outputs(k);
    const artifact::Tensor& t = model_->plan().tensors(idx);
    row_shape_.assign(t.shape().begin(), t.shape().end());
    row_shape_[0] = rows;
    absl::Status s = CheckFixedShape(t, row_shape_);
    if (s.ok()) s = views_[idx].SetShapeWithin(row_shape_, t.bytes());
    if (s.ok()) s = op_outputs_[i][k].SetShapeWithin(row_shape_, t.bytes());
    if (!s.ok()) return absl::Status(s.code(), absl::StrCat("output '", t.name(), "': ", s.message()));
  }
  return absl::OkStatus();
}

absl::Status Session::RunDynamic(int i) {
  const CompiledModel::Op& op = model_->ops_[i];
  const artifact::Op& planned = model_->plan().ops(i);
  if (op.heap) {
    // A tensor allocated as it runs exists once its op ran: a plan that reads one first is refused here.
    for (int k = 0; k < planned.inputs_size(); ++k) {
      const int idx = planned.inputs(k);
      if (idx >= 0 && model_->plan().tensors(idx).storage() == artifact::Tensor::HEAP && !views_[idx].defined()) {
        return absl::DataLossError(absl::StrCat("input '", model_->plan().tensors(idx).name(),
                                                "' is read before any op computes it; the plan is corrupt"));
      }
    }
  }
  if (op.heap || ComputesItsOwnShape(op.node->domain(), op.node->op_type())) {
    // If (its taken branch on the reference interpreter) and NonMaxSuppression compute into tensors of
    // their own, computing once what inference would compute too; the results are copied into the arena
    // within their bounds.
    absl::Status s = RunReferenceNode(*op.node, op_inputs_[i], &own_outputs_);
    if (!s.ok()) return s;
    if (static_cast<int>(own_outputs_.size()) != planned.outputs_size()) {
      return absl::InternalError(absl::StrCat("the taken branch gave ", own_outputs_.size(), " outputs, not ",
                                              planned.outputs_size()));
    }
    for (int k = 0; k < planned.outputs_size(); ++k) {
      const int idx = planned.outputs(k);
      const artifact::Tensor& t = model_->plan().tensors(idx);
      Tensor& r = own_outputs_[k];
      if (static_cast<int>(r.dtype()) != t.dtype()) {
        return absl::InternalError(absl::StrCat("output '", t.name(), "' came out as ", r.type().ToString()));
      }
      if (t.storage() == artifact::Tensor::HEAP) {  // no bound: the session keeps the op's own tensor
        views_[idx] = std::move(r);
        op_outputs_[i][k] = views_[idx];
        continue;
      }
      s = CheckFixedShape(t, r.shape());
      if (!s.ok()) return s;
      s = views_[idx].SetShapeWithin(r.shape(), t.bytes());
      if (!s.ok()) {
        return absl::OutOfRangeError(absl::StrCat("output '", t.name(), "': ", s.message(), " at compile time (its ",
                                                  "upper bound ", ShapeToString(Shape(t)), ")"));
      }
      if (r.byte_size() > 0) std::memcpy(views_[idx].raw_data(), r.raw_data(), r.byte_size());
      s = op_outputs_[i][k].SetShapeWithin(r.shape(), t.bytes());
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }
  // This run's output extents, from the inputs' extents and values (NonZero counts, NMS selects).
  dynamic_types_.resize(op_inputs_[i].size());
  dynamic_type_ptrs_.assign(op_inputs_[i].size(), nullptr);
  for (size_t k = 0; k < op_inputs_[i].size(); ++k) {
    const Tensor* x = op_inputs_[i][k];
    if (x == nullptr) continue;
    // In place, so that the dims' storage is reused from run to run.
    TensorType& t = dynamic_types_[k];
    t.dtype = x->dtype();
    t.layout = Layout::kAny;
    t.dims.resize(x->rank());
    for (int d = 0; d < x->rank(); ++d) t.dims[d] = Dim(x->dim(d));
    dynamic_type_ptrs_[k] = &t;
  }
  absl::StatusOr<std::vector<TensorType>> types = InferOutputTypes(*op.node, dynamic_type_ptrs_, op_inputs_[i]);
  if (!types.ok()) return types.status();
  for (int k = 0; k < planned.outputs_size(); ++k) {
    const int idx = planned.outputs(k);
    const artifact::Tensor& t = model_->plan().tensors(idx);
    const TensorType& type = (*types)[k];
    if (!type.is_static() || static_cast<int>(type.dtype) != t.dtype()) {
      return absl::InternalError(absl::StrCat("output '", t.name(), "' inferred as ", type.ToString()));
    }
    std::vector<int64_t>& shape = row_shape_;
    shape.resize(type.dims.size());
    for (size_t d = 0; d < shape.size(); ++d) shape[d] = type.dims[d].value();
    absl::Status s = CheckFixedShape(t, shape);
    if (!s.ok()) return s;
    s = views_[idx].SetShapeWithin(shape, t.bytes());
    if (!s.ok()) {
      return absl::OutOfRangeError(absl::StrCat("output '", t.name(), "': ", s.message(), " at compile time (its ",
                                                "upper bound ", ShapeToString(Shape(t)), ")"));
    }
    s = op_outputs_[i][k].SetShapeWithin(shape, t.bytes());
    if (!s.ok()) return s;
  }
  // An any-extent kernel reads the extents just set; otherwise the reference kernel.
  if (kernels_[i] && !op.row_wise) return kernels_[i]->Run();
  return op.reference(*op.node, op_inputs_[i], absl::MakeSpan(op_outputs_[i]));
}

absl::Status Session::Run() {
  if (!init_status_.ok()) return init_status_;
  const artifact::Plan& plan = model_->plan();
  if (check_finite_) {
    for (int i = 0; i < plan.inputs_size(); ++i) {
      absl::Status s = CheckFinite(views_[plan.inputs(i)], absl::StrCat("input '", model_->input_name(i), "'"));
      if (!s.ok()) return s;
    }
  }
  for (size_t i = 0; i < model_->ops_.size(); ++i) {
    const CompiledModel::Op& op = model_->ops_[i];
    if (lab_marks_) LabMark(static_cast<int64_t>(i));
    const bool timed = profile_ || handoff_->times_ops();
    const auto start = timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
    absl::Status s;
    if (op.row_wise && kernels_[i] && OnlyRowsVary(static_cast<int>(i))) {
      s = kernels_[i]->Run();
      if (s.ok()) s = SetRunRows(static_cast<int>(i));
    } else if (op.dynamic) {
      s = RunDynamic(static_cast<int>(i));
    } else {
      s = kernels_[i] ? kernels_[i]->Run() : op.reference(*op.node, op_inputs_[i], absl::MakeSpan(op_outputs_[i]));
    }
    const auto end = timed ? std::chrono::steady_clock::now() : start;
    handoff_->AfterOp(static_cast<int>(i), std::chrono::duration<double, std::micro>(end - start).count(),
                      fixed_flags_[i]);
    if (!s.ok()) {
      handoff_->AfterRun();
      return absl::Status(s.code(), absl::StrCat("op '", op.node->name(), "': ", s.message()));
    }
    if (profile_) {
      OpProfile& p = profile_data_[i];
      p.name = op.node->name();
      p.kernel = kernel_names_[i];
      p.milliseconds = std::chrono::duration<double, std::milli>(end - start).count();
      p.bytes = 0;
      for (const Tensor* t : op_inputs_[i]) p.bytes += t ? t->byte_size() : 0;
      for (const Tensor& t : op_outputs_[i]) p.bytes += t.byte_size();
    }
  }
  handoff_->AfterRun();
  if (lab_marks_) LabMark(-1);
  if (check_finite_) {
    for (int i = 0; i < plan.outputs_size(); ++i) {
      absl::Status s = CheckFinite(output(i), absl::StrCat("output '", model_->output_name(i), "'"));
      if (!s.ok()) return absl::OutOfRangeError(s.message());
    }
  }
  return absl::OkStatus();
}

}  // namespace tessel
