// Declarations of the direct-A GEMM kernels (DirectGemmF32Fn in gemm_direct.h), defined in per-ISA
// libraries; only the ones for the target's CPU family exist in a given build.
#ifndef TESSEL_KERNELS_GEMM_INTERNAL_GEMM_DIRECT_KERNELS_H_
#define TESSEL_KERNELS_GEMM_INTERNAL_GEMM_DIRECT_KERNELS_H_

#include <cstdint>

namespace tessel {

#define TESSEL_DECLARE_F32_GEMM_DIRECT(name)                                                                \
  void name(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* packed_b,             \
            const float* bias, float* c, int64_t ldc, const float* residual, int64_t ldr, float lo, float hi);

TESSEL_DECLARE_F32_GEMM_DIRECT(tessel_f32_gemm_direct_ukernel_1x16__scalar)
#if defined(__x86_64__)
TESSEL_DECLARE_F32_GEMM_DIRECT(tessel_f32_gemm_direct_ukernel_8x32__avx512)
TESSEL_DECLARE_F32_GEMM_DIRECT(tessel_f32_gemm_direct_ukernel_12x16__avx512)
#endif

#undef TESSEL_DECLARE_F32_GEMM_DIRECT

}  // namespace tessel

#endif  // TESSEL_KERNELS_GEMM_INTERNAL_GEMM_DIRECT_KERNELS_H_
