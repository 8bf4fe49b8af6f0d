// The table of Tessel's built-in passes.
#include <mutex>

#include "passes/cse/cse.h"
#include "passes/dce/dce.h"
#include "passes/fold_constants/fold_constants.h"
#include "passes/fold_shape_ops/fold_shape_ops.h"
#include "passes/pass_manager.h"
#include "passes/simplify/simplify.h"

namespace tessel {

void RegisterBuiltinPasses() {
  static std::once_flag once;
  std::call_once(once, [] {
    PassRegistry& r = PassRegistry::Global();
    for (PassInfo info : {FoldShapeOpsPassInfo(), FoldConstantsPassInfo(), SimplifyPassInfo(), DcePassInfo(), CsePassInfo()}) {
      // Already registered (e.g. by a test that registered it first) is fine.
      r.Register(std::move(info)).IgnoreError();
    }
  });
}

}  // namespace tessel
