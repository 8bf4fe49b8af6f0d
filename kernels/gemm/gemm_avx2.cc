// AVX2+FMA f32 GEMM: a 6x16 register tile (12 ymm accumulators, 2 for B, 1 broadcast of A).
#include <immintrin.h>

#include "kernels/gemm/internal/gemm_driver.h"
#include "kernels/gemm/internal/gemm_kernels.h"

namespace tessel {
namespace {

constexpr int kMr = 6;
constexpr int kNr = 16;
// A block (mc x kc) ~ 144 KiB lives in L2; one B micro-panel (kc x 16) ~ 16 KiB in L1.
constexpr gemm_internal::Blocking kBlocking = {kMr, kNr, kMr * 24, 256, kNr * 128};

void Ukernel6x16(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool accumulate) {
  __m256 acc[kMr][2];
#pragma GCC unroll 6
  for (int i = 0; i < kMr; ++i) {
    acc[i][0] = accumulate ? _mm256_loadu_ps(c + i * ldc) : _mm256_setzero_ps();
    acc[i][1] = accumulate ? _mm256_loadu_ps(c + i * ldc + 8) : _mm256_setzero_ps();
  }
  for (int64_t p = 0; p < kc; ++p) {
    const __m256 b0 = _mm256_loadu_ps(b);
    const __m256 b1 = _mm256_loadu_ps(b + 8);
#pragma GCC unroll 6
    for (int i = 0; i < kMr; ++i) {
      const __m256 ai = _mm256_set1_ps(a[i]);
      acc[i][0] = _mm256_fmadd_ps(ai, b0, acc[i][0]);
      acc[i][1] = _mm256_fmadd_ps(ai, b1, acc[i][1]);
    }
    a += kMr;
    b += kNr;
  }
#pragma GCC unroll 6
  for (int i = 0; i < kMr; ++i) {
    _mm256_storeu_ps(c + i * ldc, acc[i][0]);
    _mm256_storeu_ps(c + i * ldc + 8, acc[i][1]);
  }
}

}  // namespace

void tessel_f32_gemm_ukernel_6x16__avx2(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                                           const float* b, int64_t ldb, float* c, int64_t ldc, void* workspace) {
  gemm_internal::Gemm(kBlocking, Ukernel6x16, m, n, k, a, lda, b, ldb, c, ldc, workspace);
}
size_t tessel_f32_gemm_ukernel_6x16__avx2_workspace_bytes() { return gemm_internal::WorkspaceBytes(kBlocking); }

TESSEL_DEFINE_F32_GEMM_UKERNEL_INFO(tessel_f32_gemm_ukernel_6x16__avx2, kBlocking, Ukernel6x16)

}  // namespace tessel
