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

// kBiasClamp: the output stage (+ bias, clamp to [lo, hi]) applied before the store. MobileNetV2 at
// the AVX2 level (Zen 4 capped; its 1x1 convolutions and fused pointwise GEMMs, K = 16-320) spent 19%
// of its time in the separate ApplyEpilogue pass over each tile before this.
// kPrefetch: each k step also prefetches the same row of the next B panel (kc x 16 floats on: packed B is
// panel after panel), so that a large B streams from memory while the current panel's row tiles compute.
// Without it the first row tile of every panel waited on memory: a Winograd F(2x2) point's GEMM (16 x 512
// x 512, 1 MiB of B) reads 64 bytes a k step, three times what one core's DRAM bandwidth delivers.
template <bool kBiasClamp, bool kPrefetch>
inline __attribute__((always_inline)) void Tile(int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                                                bool accumulate, const float* bias, float lo, float hi) {
  __m256 acc[kMr][2];
#pragma GCC unroll 6
  for (int i = 0; i < kMr; ++i) {
    acc[i][0] = accumulate ? _mm256_loadu_ps(c + i * ldc) : _mm256_setzero_ps();
    acc[i][1] = accumulate ? _mm256_loadu_ps(c + i * ldc + 8) : _mm256_setzero_ps();
  }
  for (int64_t p = 0; p < kc; ++p) {
    if constexpr (kPrefetch) _mm_prefetch(reinterpret_cast<const char*>(b + kc * kNr), _MM_HINT_T0);
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
  if constexpr (kBiasClamp) {
    const __m256 bias0 = bias ? _mm256_loadu_ps(bias) : _mm256_setzero_ps();
    const __m256 bias1 = bias ? _mm256_loadu_ps(bias + 8) : _mm256_setzero_ps();
    const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
#pragma GCC unroll 6
    for (int i = 0; i < kMr; ++i) {
      acc[i][0] = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(acc[i][0], bias0), vlo), vhi);
      acc[i][1] = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(acc[i][1], bias1), vlo), vhi);
    }
  }
#pragma GCC unroll 6
  for (int i = 0; i < kMr; ++i) {
    _mm256_storeu_ps(c + i * ldc, acc[i][0]);
    _mm256_storeu_ps(c + i * ldc + 8, acc[i][1]);
  }
}

template <bool kPrefetch>
void Ukernel6x16(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool accumulate) {
  Tile<false, kPrefetch>(kc, a, b, c, ldc, accumulate, nullptr, 0.0f, 0.0f);
}

template <bool kPrefetch>
void Ukernel6x16BiasClamp(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool accumulate,
                          const float* bias, float lo, float hi) {
  Tile<true, kPrefetch>(kc, a, b, c, ldc, accumulate, bias, lo, hi);
}

}  // namespace

void tessel_f32_gemm_ukernel_6x16__avx2(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                                           const float* b, int64_t ldb, float* c, int64_t ldc, void* workspace) {
  gemm_internal::Gemm(kBlocking, Ukernel6x16<false>, m, n, k, a, lda, b, ldb, c, ldc, workspace);
}
size_t tessel_f32_gemm_ukernel_6x16__avx2_workspace_bytes() { return gemm_internal::WorkspaceBytes(kBlocking); }

TESSEL_DEFINE_F32_GEMM_UKERNEL_INFO_PREFETCHING(tessel_f32_gemm_ukernel_6x16__avx2, kBlocking, Ukernel6x16<false>,
                                                Ukernel6x16BiasClamp<false>, Ukernel6x16<true>,
                                                Ukernel6x16BiasClamp<true>)

}  // namespace tessel
