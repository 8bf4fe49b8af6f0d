// Declarations of the f32 GEMM kernels (GemmF32Fn), defined in per-ISA libraries; only the ones for
// the target's CPU family exist in a given build.
#ifndef TESSEL_KERNELS_GEMM_INTERNAL_GEMM_KERNELS_H_
#define TESSEL_KERNELS_GEMM_INTERNAL_GEMM_KERNELS_H_

#include <cstddef>
#include <cstdint>

#include "kernels/gemm/internal/gemm_driver.h"

namespace tessel {

// Each packed kernel also exports its microkernel and blocking (name##_ukernel) for PackedGemmF32.
#define TESSEL_DECLARE_F32_GEMM(name)                                                                     \
  void name(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, \
            float* c, int64_t ldc, void* workspace);                                                   \
  size_t name##_workspace_bytes();                                                                     \
  gemm_internal::UkernelInfo name##_ukernel();

void tessel_f32_gemm__reference(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                                int64_t ldb, float* c, int64_t ldc, void* workspace);
size_t tessel_f32_gemm__reference_workspace_bytes();

TESSEL_DECLARE_F32_GEMM(tessel_f32_gemm_ukernel_4x8__scalar)
#if defined(__x86_64__)
TESSEL_DECLARE_F32_GEMM(tessel_f32_gemm_ukernel_6x16__avx2)
TESSEL_DECLARE_F32_GEMM(tessel_f32_gemm_ukernel_14x32__avx512)
TESSEL_DECLARE_F32_GEMM(tessel_f32_gemm_ukernel_7x64__avx512)
#endif
#if defined(__aarch64__)
TESSEL_DECLARE_F32_GEMM(tessel_f32_gemm_ukernel_8x12__neon)
TESSEL_DECLARE_F32_GEMM(tessel_f32_gemm_ukernel_8xVLx2__sve)
#endif

#undef TESSEL_DECLARE_F32_GEMM

// Defines name##_ukernel() for a per-ISA library: the microkernel, its blocking, and GemmPrepacked
// instantiated here with that library's flags.
#define TESSEL_DEFINE_F32_GEMM_UKERNEL_INFO(name, blocking, ukernel) \
  TESSEL_DEFINE_F32_GEMM_UKERNEL_INFO_FUSED(name, blocking, ukernel, nullptr)

// The same, with `fused` (a gemm_internal::UkernelBiasClamp, or nullptr) for the prepacked GEMM's full tiles.
#define TESSEL_DEFINE_F32_GEMM_UKERNEL_INFO_FUSED(name, blocking, ukernel, fused)                               \
  static void name##_prepacked(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,                    \
                               const float* packed_b, float* c, int64_t ldc, const GemmEpilogue& ep,             \
                               int64_t n_begin, int64_t n_end, void* workspace) {                                \
    gemm_internal::GemmPrepacked(blocking, ukernel, m, n, k, a, lda, packed_b, c, ldc, ep, n_begin, n_end,     \
                                 workspace, fused);                                                              \
  }                                                                                                              \
  gemm_internal::UkernelInfo name##_ukernel() { return {blocking, ukernel, name##_prepacked}; }

// The same, whose prepacked GEMM takes ukernel_pf / fused_pf (microkernels that prefetch the next B panel)
// when the packed B passes kPrefetchPackedBBytes: smaller weights stay in the caches from run to run.
inline constexpr int64_t kPrefetchPackedBBytes = 256 << 10;
#define TESSEL_DEFINE_F32_GEMM_UKERNEL_INFO_PREFETCHING(name, blocking, ukernel, fused, ukernel_pf, fused_pf)      \
  static void name##_prepacked(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,                    \
                               const float* packed_b, float* c, int64_t ldc, const GemmEpilogue& ep,             \
                               int64_t n_begin, int64_t n_end, void* workspace) {                                \
    const bool pf = gemm_internal::PackedBFloats(blocking, k, n) * 4 >= kPrefetchPackedBBytes;                 \
    gemm_internal::GemmPrepacked(blocking, pf ? ukernel_pf : ukernel, m, n, k, a, lda, packed_b, c, ldc, ep,   \
                                 n_begin, n_end, workspace, pf ? fused_pf : fused);                             \
  }                                                                                                              \
  gemm_internal::UkernelInfo name##_ukernel() { return {blocking, ukernel, name##_prepacked}; }

}  // namespace tessel

#endif  // TESSEL_KERNELS_GEMM_INTERNAL_GEMM_KERNELS_H_
