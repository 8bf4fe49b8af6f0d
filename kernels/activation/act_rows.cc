// ActRowsForCpu: the widest activation row kernels this CPU runs.
#include "kernels/activation/act_rows.h"

#include "kernels/registry/registry.h"

namespace tessel {

ActRowKernels ActRowsForCpu() {
#if defined(__x86_64__)
  if (CpuSupports(Isa::kAvx512)) return ActRowsAvx512();
  if (CpuSupports(Isa::kAvx2)) return ActRowsAvx2();
#endif
  return ActRowsAutovec();
}

}  // namespace tessel
