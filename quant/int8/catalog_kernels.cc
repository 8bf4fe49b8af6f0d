// The catalog kernel override for calibration runs.
#include "quant/int8/catalog_kernels.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/op_kernels.h"
#include "kernels/registry/registry.h"
#include "pthreadpool.h"

namespace tessel {

KernelOverride CatalogKernelOverride(int threads) {
  std::shared_ptr<pthreadpool> pool(pthreadpool_create(threads < 0 ? 0 : static_cast<size_t>(threads)),
                                    pthreadpool_destroy);
  const int num_threads = pool != nullptr ? static_cast<int>(pthreadpool_get_threads_count(pool.get())) : 1;
  const std::string force = ForcedBackendFromEnv();
  return [pool, num_threads, force](const Node& node, absl::Span<const Tensor* const> inputs,
                                    absl::Span<Tensor> outputs) -> absl::StatusOr<bool> {
    if (force == "reference") return false;
    std::vector<OperandInfo> ins, outs;
    for (int i = 0; i < node.num_inputs(); ++i) {
      const Value* v = node.input(i);
      OperandInfo o;
      if (v != nullptr && i < static_cast<int>(inputs.size()) && inputs[i] != nullptr) {
        o = {true, v->is_constant(), inputs[i]->type()};
        o.type.layout = v->type().layout;
      }
      ins.push_back(o);
    }
    for (int i = 0; i < node.num_outputs(); ++i) {
      OperandInfo o{true, false, outputs[i].type()};
      o.type.layout = node.output(i)->type().layout;
      outs.push_back(o);
    }
    const OpQuery query{node, ins, outs};
    const OpKernelEntry* e = OpKernels().Select(query, OpDTypes(query), force);
    if (e == nullptr) return false;
    absl::StatusOr<std::unique_ptr<OpKernel>> kernel =
        e->create(OpKernelArgs{node, inputs, outputs, num_threads > 1 ? pool.get() : nullptr, num_threads, false});
    if (!kernel.ok()) return false;  // the reference kernel computes what this one could not set up
    if (absl::Status s = (*kernel)->Run(); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat("kernel ", e->name, ": ", s.message()));
    }
    return true;
  };
}

}  // namespace tessel
