// OpKernelRegistry: a flat table of operator-level kernels; selection filters then takes the cheapest.
#include "kernels/registry/op_kernel.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "kernels/registry/lab_costs.h"
#include "pthreadpool.h"

namespace tessel {

const std::string OpQuery::op() const {
  return node.domain().empty() ? node.op_type() : absl::StrCat(node.domain(), ".", node.op_type());
}

std::string OpDTypes(const OpQuery& query) {
  return query.has_input(0) ? std::string(DTypeName(query.input(0).dtype)) : std::string("none");
}

bool SharedScratch::Reserve(int tasks, size_t bytes) {
  if (allocated_) return false;
  tasks_ = std::max(tasks_, tasks);
  stride_ = std::max(stride_, (bytes + 63) / 64 * 64);
  return true;
}

void SharedScratch::Allocate() {
  if (allocated_) return;
  allocated_ = true;
  if (bytes() > 0) memory_ = Buffer::Allocate(bytes());
}

void KernelScratch::Bind(const OpKernelArgs& args, int tasks, size_t bytes_per_task) {
  if (args.scratch != nullptr && args.scratch->Reserve(tasks, bytes_per_task)) {
    shared_ = args.scratch;
    return;
  }
  stride_ = (bytes_per_task + 63) / 64 * 64;
  own_ = Buffer::Allocate(static_cast<size_t>(tasks) * stride_);
}

PoolFlags ParallelFlags(const OpKernelArgs& args) {
  if (args.live_flags != nullptr) return PoolFlags(args.live_flags);
  return PoolFlags(args.spin_workers ? 0u : static_cast<uint32_t>(PTHREADPOOL_FLAG_YIELD_WORKERS));
}

OpKernelEntry MakeOpKernelEntry(std::string name, std::string op, std::string dtypes, std::string layout, Isa isa,
                                std::string backend, bool (*legal)(const OpQuery&), double (*cost)(const OpQuery&),
                                absl::StatusOr<std::unique_ptr<OpKernel>> (*create)(const OpKernelArgs&)) {
  OpKernelEntry e;
  e.name = std::move(name);
  e.op = std::move(op);
  e.dtypes = std::move(dtypes);
  e.layout = std::move(layout);
  e.isa = isa;
  e.backend = std::move(backend);
  e.legal = legal;
  e.cost = cost;
  e.create = create;
  return e;
}

void OpKernelRegistry::Register(OpKernelEntry entry) { entries_.push_back(std::move(entry)); }

const OpKernelEntry* OpKernelRegistry::FindByName(absl::string_view name) const {
  for (const OpKernelEntry& e : entries_) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

namespace {

// The convolution class of a channels-last node: depthwise (one input channel per group), pointwise
// (1x1) or dense; f32 dense convolutions of at most 4 input channels (an image's: a network's stem) are
// their own class, where im2col's short K ranks the kernels differently.
const char* ConvClass(const OpQuery& q) {
  const Attribute* group = q.node.FindAttr("group");
  const Attribute* kernel = q.node.FindAttr("kernel_shape");
  const int64_t channels = q.input(0).dims[3].is_static() ? q.input(0).dims[3].value() : 0;
  if (group && group->i > 1 && group->i == channels) return "depthwise";
  if (kernel && kernel->ints.size() == 2 && kernel->ints[0] == 1 && kernel->ints[1] == 1) return "pointwise";
  return "dense";
}

}  // namespace

std::string LabOpGroup(const OpQuery& q, absl::string_view dtypes) {
  const std::string op = q.op();
  if (!q.has_input(0)) return "";
  if (op == "tessel.FusedConv" && dtypes == "f32" && q.input(0).rank() == 4) {
    const std::string cls = ConvClass(q);
    const bool image = q.input(0).dims[3].is_static() && q.input(0).dims[3].value() <= 4;
    return absl::StrCat("conv/", cls == "dense" && image ? "stem" : cls);
  }
  if (op == "tessel.DwPwConv" && dtypes == "f32") return "dwpw";
  if (op == "tessel.QConv" && dtypes == "u8" && q.input(0).rank() == 4) return absl::StrCat("qconv/", ConvClass(q));
  if (op == "tessel.QGemm" && dtypes == "u8") return "qgemm";
  if (op == "QuantizeLinear" && dtypes == "f32") return "convert/quantize";
  if (op == "DequantizeLinear" && dtypes == "u8") return "convert/dequantize";
  return "";
}

double OpKernelRegistry::Cost(const OpKernelEntry& e, const OpQuery& query) const {
#if defined(__aarch64__)
  // A listed kernel costs its anchor's estimate x its ratio; every cost of a lab group is then scaled to
  // the modeled core's seconds (LabSecondsScale), listed or not, so that the order within the group is
  // the table's and groups compare with each other.
  const std::string group = LabOpGroup(query, e.dtypes);
  const double seconds = LabSecondsScale(group);
  if (const LabCost* lab = FindLabCost(group, e.name)) {
    const OpKernelEntry* anchor = FindByName(lab->anchor);
    if (anchor && anchor->cost) return anchor->cost(query) * lab->ratio * seconds;
  }
  return (e.cost ? e.cost(query) : 0.0) * seconds;
#else
  return e.cost ? e.cost(query) : 0.0;
#endif
}

const OpKernelEntry* OpKernelRegistry::Select(const OpQuery& query, absl::string_view dtypes, absl::string_view force,
                                              std::vector<std::string>* why_not) const {
  const std::string op = query.op();
  const OpKernelEntry* best = nullptr;
  double best_cost = 0;
  for (const OpKernelEntry& e : entries_) {
    if (e.op != op || e.dtypes != dtypes) continue;
    std::string refused;
    if (!ForceAllows(force, e.backend, e.name)) {
      refused = absl::StrCat("not ", force);
    } else if (!CpuSupports(e.isa)) {
      refused = absl::StrCat("CPU lacks ", IsaName(e.isa));
    } else if (e.legal && !e.legal(query)) {
      refused = "shape or attributes not supported";
    } else {
      const double cost = Cost(e, query);
      if (!best || cost < best_cost) {
        best = &e;
        best_cost = cost;
      }
      continue;
    }
    if (why_not) why_not->push_back(absl::StrCat(e.name, ": ", refused));
  }
  return best;
}

}  // namespace tessel
