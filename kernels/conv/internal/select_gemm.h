// The f32 GEMM microkernel that a GEMM-based convolution or fully connected kernel runs for a whole
// layer, chosen once at creation (kernels/conv): conv_kernels.cc and conv_nd.cc share this rule.
#ifndef TESSEL_KERNELS_CONV_INTERNAL_SELECT_GEMM_H_
#define TESSEL_KERNELS_CONV_INTERNAL_SELECT_GEMM_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "kernels/gemm/gemm.h"
#include "kernels/registry/registry.h"

namespace tessel {
namespace conv_internal {

// The cheapest GEMM microkernel for an m x n x k problem. TESSEL_FORCE_BACKEND applies here only where
// it names a microkernel or its backend (x86, portable...); operator-level names ("gemm", "xnnpack")
// were already honoured when the operator kernel was selected.
inline absl::StatusOr<const GemmKernel*> SelectGemm(int64_t m, int64_t n, int64_t k) {
  std::string force = ForcedBackendFromEnv();
  bool microkernel_force = false;
  for (const GemmKernel& e : GemmKernels().entries()) microkernel_force |= ForceAllows(force, e.backend, e.name);
  if (!microkernel_force) force.clear();
  return GemmKernels().Select("gemm", "f32", "row_major", {m, n, k, 0}, force);
}

}  // namespace conv_internal
}  // namespace tessel

#endif  // TESSEL_KERNELS_CONV_INTERNAL_SELECT_GEMM_H_
