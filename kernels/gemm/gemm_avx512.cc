// AVX-512 f32 GEMM: a 14x32 register tile (28 zmm accumulators, 2 for B, 1 broadcast of A), and a 7x64
// one for layers with 7 * k rows.
#include <immintrin.h>

#include "kernels/gemm/internal/gemm_driver.h"
#include "kernels/gemm/internal/gemm_kernels.h"

namespace tessel {
namespace {

constexpr int kMr = 14;
constexpr int kNr = 32;
// A block (mc x kc) ~ 171 KiB lives in L2; one B micro-panel (kc x 32) ~ 32 KiB in L1.
constexpr gemm_internal::Blocking kBlocking = {kMr, kNr, kMr * 12, 256, kNr * 64};

void Ukernel14x32(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool accumulate) {
  __m512 acc[kMr][2];
#pragma GCC unroll 14
  for (int i = 0; i < kMr; ++i) {
    acc[i][0] = accumulate ? _mm512_loadu_ps(c + i * ldc) : _mm512_setzero_ps();
    acc[i][1] = accumulate ? _mm512_loadu_ps(c + i * ldc + 16) : _mm512_setzero_ps();
  }
  for (int64_t p = 0; p < kc; ++p) {
    const __m512 b0 = _mm512_loadu_ps(b);
    const __m512 b1 = _mm512_loadu_ps(b + 16);
#pragma GCC unroll 14
    for (int i = 0; i < kMr; ++i) {
      const __m512 ai = _mm512_set1_ps(a[i]);
      acc[i][0] = _mm512_fmadd_ps(ai, b0, acc[i][0]);
      acc[i][1] = _mm512_fmadd_ps(ai, b1, acc[i][1]);
    }
    a += kMr;
    b += kNr;
  }
#pragma GCC unroll 14
  for (int i = 0; i < kMr; ++i) {
    _mm512_storeu_ps(c + i * ldc, acc[i][0]);
    _mm512_storeu_ps(c + i * ldc + 16, acc[i][1]);
  }
}

// 7 rows x 64 channels (28 zmm accumulators, 4 for B): the tile for 7x7 feature maps (49 rows).
constexpr gemm_internal::Blocking kBlocking7x64 = {7, 64, 7 * 24, 128, 64 * 32};

void Ukernel7x64(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool accumulate) {
  __m512 acc[7][4];
#pragma GCC unroll 7
  for (int i = 0; i < 7; ++i) {
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) acc[i][j] = accumulate ? _mm512_loadu_ps(c + i * ldc + 16 * j) : _mm512_setzero_ps();
  }
  for (int64_t p = 0; p < kc; ++p) {
    const __m512 b0 = _mm512_loadu_ps(b);
    const __m512 b1 = _mm512_loadu_ps(b + 16);
    const __m512 b2 = _mm512_loadu_ps(b + 32);
    const __m512 b3 = _mm512_loadu_ps(b + 48);
#pragma GCC unroll 7
    for (int i = 0; i < 7; ++i) {
      const __m512 ai = _mm512_set1_ps(a[i]);
      acc[i][0] = _mm512_fmadd_ps(ai, b0, acc[i][0]);
      acc[i][1] = _mm512_fmadd_ps(ai, b1, acc[i][1]);
      acc[i][2] = _mm512_fmadd_ps(ai, b2, acc[i][2]);
      acc[i][3] = _mm512_fmadd_ps(ai, b3, acc[i][3]);
    }
    a += 7;
    b += 64;
  }
#pragma GCC unroll 7
  for (int i = 0; i < 7; ++i) {
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) _mm512_storeu_ps(c + i * ldc + 16 * j, acc[i][j]);
  }
}

}  // namespace

void tessel_f32_gemm_ukernel_7x64__avx512(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                                          const float* b, int64_t ldb, float* c, int64_t ldc, void* workspace) {
  gemm_internal::Gemm(kBlocking7x64, Ukernel7x64, m, n, k, a, lda, b, ldb, c, ldc, workspace);
}
size_t tessel_f32_gemm_ukernel_7x64__avx512_workspace_bytes() { return gemm_internal::WorkspaceBytes(kBlocking7x64); }

TESSEL_DEFINE_F32_GEMM_UKERNEL_INFO(tessel_f32_gemm_ukernel_7x64__avx512, kBlocking7x64, Ukernel7x64)

void tessel_f32_gemm_ukernel_14x32__avx512(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                                           const float* b, int64_t ldb, float* c, int64_t ldc, void* workspace) {
  gemm_internal::Gemm(kBlocking, Ukernel14x32, m, n, k, a, lda, b, ldb, c, ldc, workspace);
}
size_t tessel_f32_gemm_ukernel_14x32__avx512_workspace_bytes() { return gemm_internal::WorkspaceBytes(kBlocking); }

TESSEL_DEFINE_F32_GEMM_UKERNEL_INFO(tessel_f32_gemm_ukernel_14x32__avx512, kBlocking, Ukernel14x32)

}  // namespace tessel
