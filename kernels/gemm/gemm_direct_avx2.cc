// AVX2 + FMA direct-A GEMM microkernel (gemm_direct.h): A's rows are read in place and broadcast one
// element at a time, B comes from k-major panels of 16 columns (2 ymm); 6 rows x 16 columns keep 12
// accumulators and 12 independent FMA chains in the 16 registers. A last panel of at most 8 columns
// computes one ymm; partial columns load and store masked.
#include <immintrin.h>

#include <algorithm>

#include "kernels/gemm/internal/gemm_direct_kernels.h"
#include "kernels/gemm/internal/gemm_kernels.h"  // kPrefetchPackedBBytes
#include "kernels/vector/avx2_tail.h"

namespace tessel {
namespace {

using gemm_direct_internal::ForRows;
using gemm_direct_internal::NextTileRows;
using gemm_direct_internal::RowBlock;

using avx2_tail::LoadN;
using avx2_tail::StoreN;

// kRows x kCols (8 or 16) of a panel; the output's first w (<= kCols) columns are stored. kPrefetch: each
// k step also prefetches the same row of the next panel (k x 16 floats on), as the prepacked GEMM's tile
// does for weights beyond 256 KiB (gemm_avx2.cc).
template <int kRows, int kCols, bool kPrefetch = false>
inline void Tile6x16(int64_t k, const float* a, int64_t lda, const float* b, const float* bias, float* c, int64_t ldc,
                     const float* r, int64_t ldr, int64_t w, __m256 lo, __m256 hi) {
  constexpr int kV = kCols / 8;
  __m256 acc[kRows][kV];
#pragma GCC unroll 2
  for (int v = 0; v < kV; ++v) {
    const __m256 bv = _mm256_loadu_ps(bias + 8 * v);  // padded to the panel: always 16 floats
#pragma GCC unroll 6
    for (int i = 0; i < kRows; ++i) acc[i][v] = bv;
  }
  for (int64_t p = 0; p < k; ++p) {
    if constexpr (kPrefetch) _mm_prefetch(reinterpret_cast<const char*>(b + 16 * k), _MM_HINT_T0);
    __m256 bv[kV];
#pragma GCC unroll 2
    for (int v = 0; v < kV; ++v) bv[v] = _mm256_loadu_ps(b + 8 * v);
#pragma GCC unroll 6
    for (int i = 0; i < kRows; ++i) {
      const __m256 ai = _mm256_broadcast_ss(a + i * lda + p);
#pragma GCC unroll 2
      for (int v = 0; v < kV; ++v) acc[i][v] = _mm256_fmadd_ps(ai, bv[v], acc[i][v]);
    }
    b += 16;
  }
#pragma GCC unroll 6
  for (int i = 0; i < kRows; ++i) {
#pragma GCC unroll 2
    for (int v = 0; v < kV; ++v) {
      const int64_t n = std::min<int64_t>(8, w - 8 * v);
      __m256 x = acc[i][v];
      if (r) x = _mm256_add_ps(x, LoadN(r + i * ldr + 8 * v, n));
      StoreN(c + i * ldc + 8 * v, _mm256_min_ps(_mm256_max_ps(x, lo), hi), n);
    }
  }
}

template <int kCols>
struct Run6xN {
  template <int kRows>
  struct Rows {
    static void Run(int64_t k, const float* a, int64_t lda, const float* b, const float* bias, float* c, int64_t ldc,
                    const float* r, int64_t ldr, int64_t w, __m256 lo, __m256 hi) {
      Tile6x16<kRows, kCols>(k, a, lda, b, bias, c, ldc, r, ldr, w, lo, hi);
    }
  };
};

// One panel (kCols of its 16 columns computed), rows [i0, i1) in 6-row tiles (NextTileRows); the full
// tiles prefetch the next panel with kPrefetch.
template <int kCols, bool kPrefetch>
void Panel6xN(int64_t i0, int64_t i1, int64_t k, const float* a, int64_t lda, const float* b, const float* bias,
              float* c, int64_t ldc, const float* r, int64_t ldr, int64_t w, __m256 lo, __m256 hi) {
  for (int64_t i = i0, rows = 0; i < i1; i += rows) {
    const float* ri = r ? r + i * ldr : nullptr;
    rows = NextTileRows(i1 - i, 6);
    if (rows == 6) {
      Tile6x16<6, kCols, kPrefetch>(k, a + i * lda, lda, b, bias, c + i * ldc, ldc, ri, ldr, w, lo, hi);
    } else {
      ForRows<5, Run6xN<kCols>::template Rows>(rows, k, a + i * lda, lda, b, bias, c + i * ldc, ldc, ri, ldr, w, lo,
                                                hi);
    }
  }
}

}  // namespace

void tessel_f32_gemm_direct_ukernel_6x16__avx2(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                                               const float* packed_b, const float* bias, float* c, int64_t ldc,
                                               const float* residual, int64_t ldr, float lo, float hi) {
  const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  const int64_t mc = RowBlock(k, 6);
  const bool prefetch = n * k * static_cast<int64_t>(sizeof(float)) >= kPrefetchPackedBBytes;
  for (int64_t i0 = 0; i0 < m; i0 += mc) {
    const int64_t i1 = std::min(m, i0 + mc);
    for (int64_t j = 0; j < n; j += 16) {
      const int64_t w = std::min<int64_t>(16, n - j);
      const float* b = packed_b + j * k;
      const float* r = residual ? residual + j : nullptr;
      if (w <= 8) {
        Panel6xN<8, false>(i0, i1, k, a, lda, b, bias + j, c + j, ldc, r, ldr, w, vlo, vhi);
      } else if (prefetch) {
        Panel6xN<16, true>(i0, i1, k, a, lda, b, bias + j, c + j, ldc, r, ldr, w, vlo, vhi);
      } else {
        Panel6xN<16, false>(i0, i1, k, a, lda, b, bias + j, c + j, ldc, r, ldr, w, vlo, vhi);
      }
    }
  }
}

}  // namespace tessel
