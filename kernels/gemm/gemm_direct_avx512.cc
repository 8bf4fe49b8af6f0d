// AVX-512 direct-A GEMM microkernels (gemm_direct.h): A's rows are read in place and broadcast one
// element at a time; B comes from 64-byte aligned k-major panels. 8x32 keeps 16 independent FMA chains
// (two per row), enough to cover the FMA latency, and computes only 16 or 24 columns of a last panel
// that has no more; 12x16 serves n <= 16, where a 32-wide tile would be half padding.
#include <immintrin.h>

#include <algorithm>

#include "kernels/gemm/internal/gemm_direct_kernels.h"

namespace tessel {
namespace {

using gemm_direct_internal::ForRows;
using gemm_direct_internal::NextTileRows;
using gemm_direct_internal::RowBlock;


inline __mmask16 Mask(int64_t cols) { return cols >= 16 ? 0xffff : static_cast<__mmask16>((1u << cols) - 1); }

// acc += broadcast(*a) * b as one FMA with an embedded broadcast ({1to16} / {1to8}): no separate
// vbroadcastss. Where a broadcast value feeds only one or one and a half zmm FMAs, vbroadcastss limits
// the loop on Zen 4: 12 x (vbroadcastss + zmm FMA) take 16 cycles, 12 embedded-broadcast FMAs 12, and
// 8 x (vbroadcastss + zmm FMA + ymm FMA) 13.5 against 12 (rdtsc loops; with two zmm FMAs per broadcast
// the broadcasts cost nothing). GCC folds _mm512_set1_ps into the FMA only when the value has one use,
// and the 24-column tile uses each value twice, hence the asm.
inline __m512 FmaBroadcast(const float* a, __m512 b, __m512 acc) {
  __asm__("vfmadd231ps %1%{1to16%}, %2, %0" : "+v"(acc) : "m"(*a), "v"(b));
  return acc;
}
inline __m256 FmaBroadcast(const float* a, __m256 b, __m256 acc) {
  __asm__("vfmadd231ps %1%{1to8%}, %2, %0" : "+v"(acc) : "m"(*a), "v"(b));
  return acc;
}

// kCols (16, 24 or 32) of the panel's 32 columns: a panel holding at most 16 or 24 real columns (the
// last one of n = 24, 144, ...) skips the FMAs of its padding; the 8 columns past 16 run on ymm, which
// costs half a zmm FMA where 512-bit FMAs are split in two (Zen 4). 16 and 24 columns use embedded
// broadcasts (FmaBroadcast).
template <int kRows, int kCols>
inline void Tile8x32(int64_t k, const float* a, int64_t lda, const float* b, const float* bias, float* c,
                     int64_t ldc, const float* r, int64_t ldr, __mmask16 m0, __mmask16 m1, __m512 lo, __m512 hi) {
  static_assert(kCols == 16 || kCols == 24 || kCols == 32, "tile width");
  __m512 acc0[kRows], acc1[kRows];
  __m256 acc1h[kRows];
  const __m512 bias0 = _mm512_load_ps(bias), bias1 = _mm512_load_ps(bias + 16);
  const __m256 bias1h = _mm256_load_ps(bias + 16);
#pragma GCC unroll 8
  for (int i = 0; i < kRows; ++i) {
    acc0[i] = bias0;
    if constexpr (kCols == 32) acc1[i] = bias1;
    if constexpr (kCols == 24) acc1h[i] = bias1h;
  }
  for (int64_t p = 0; p < k; ++p) {
    const __m512 v0 = _mm512_load_ps(b);
    __m512 v1;
    __m256 v1h;
    if constexpr (kCols == 32) v1 = _mm512_load_ps(b + 16);
    if constexpr (kCols == 24) v1h = _mm256_load_ps(b + 16);
#pragma GCC unroll 8
    for (int i = 0; i < kRows; ++i) {
      if constexpr (kCols == 32) {
        const __m512 ai = _mm512_set1_ps(a[i * lda + p]);
        acc0[i] = _mm512_fmadd_ps(ai, v0, acc0[i]);
        acc1[i] = _mm512_fmadd_ps(ai, v1, acc1[i]);
      } else {
        acc0[i] = FmaBroadcast(a + i * lda + p, v0, acc0[i]);
        if constexpr (kCols == 24) acc1h[i] = FmaBroadcast(a + i * lda + p, v1h, acc1h[i]);
      }
    }
    b += 32;
  }
#pragma GCC unroll 8
  for (int i = 0; i < kRows; ++i) {
    if (r) acc0[i] = _mm512_add_ps(acc0[i], _mm512_maskz_loadu_ps(m0, r + i * ldr));
    _mm512_mask_storeu_ps(c + i * ldc, m0, _mm512_min_ps(_mm512_max_ps(acc0[i], lo), hi));
    if constexpr (kCols == 32) {
      if (r) acc1[i] = _mm512_add_ps(acc1[i], _mm512_maskz_loadu_ps(m1, r + i * ldr + 16));
      _mm512_mask_storeu_ps(c + i * ldc + 16, m1, _mm512_min_ps(_mm512_max_ps(acc1[i], lo), hi));
    }
    if constexpr (kCols == 24) {
      // m1 covers at most 8 lanes here; the upper half of the widened vector is never stored.
      __m512 v = _mm512_castps256_ps512(acc1h[i]);
      if (r) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m1, r + i * ldr + 16));
      _mm512_mask_storeu_ps(c + i * ldc + 16, m1, _mm512_min_ps(_mm512_max_ps(v, lo), hi));
    }
  }
}

template <int kRows>
inline void Tile12x16(int64_t k, const float* a, int64_t lda, const float* b, const float* bias, float* c,
                      int64_t ldc, const float* r, int64_t ldr, __mmask16 m0, __m512 lo, __m512 hi) {
  __m512 acc[kRows];
  const __m512 bias0 = _mm512_load_ps(bias);
#pragma GCC unroll 12
  for (int i = 0; i < kRows; ++i) acc[i] = bias0;
  for (int64_t p = 0; p < k; ++p) {
    const __m512 v0 = _mm512_load_ps(b);
#pragma GCC unroll 12
    for (int i = 0; i < kRows; ++i) acc[i] = _mm512_fmadd_ps(_mm512_set1_ps(a[i * lda + p]), v0, acc[i]);
    b += 16;
  }
#pragma GCC unroll 12
  for (int i = 0; i < kRows; ++i) {
    if (r) acc[i] = _mm512_add_ps(acc[i], _mm512_maskz_loadu_ps(m0, r + i * ldr));
    _mm512_mask_storeu_ps(c + i * ldc, m0, _mm512_min_ps(_mm512_max_ps(acc[i], lo), hi));
  }
}


template <int kCols>
struct Run8xN {
  template <int kRows>
  struct Rows {
    static void Run(int64_t k, const float* a, int64_t lda, const float* b, const float* bias, float* c, int64_t ldc,
                    const float* r, int64_t ldr, __mmask16 m0, __mmask16 m1, __m512 lo, __m512 hi) {
      Tile8x32<kRows, kCols>(k, a, lda, b, bias, c, ldc, r, ldr, m0, m1, lo, hi);
    }
  };
};


// One panel (kCols of its 32 columns computed), rows [i0, i1) in 8-row tiles (NextTileRows).
template <int kCols>
void Panel8xN(int64_t i0, int64_t i1, int64_t k, const float* a, int64_t lda, const float* b, const float* bias,
              float* c, int64_t ldc, const float* r, int64_t ldr, __mmask16 m0, __mmask16 m1, __m512 lo,
              __m512 hi) {
  for (int64_t i = i0, rows = 0; i < i1; i += rows) {
    const float* ri = r ? r + i * ldr : nullptr;
    rows = NextTileRows(i1 - i, 8);
    if (rows == 8) {
      Tile8x32<8, kCols>(k, a + i * lda, lda, b, bias, c + i * ldc, ldc, ri, ldr, m0, m1, lo, hi);
    } else {
      ForRows<7, Run8xN<kCols>::template Rows>(rows, k, a + i * lda, lda, b, bias, c + i * ldc, ldc, ri, ldr, m0, m1,
                                                lo, hi);
    }
  }
}

template <int kRows>
struct Run12x16 {
  static void Run(int64_t k, const float* a, int64_t lda, const float* b, const float* bias, float* c, int64_t ldc,
                  const float* r, int64_t ldr, __mmask16 m0, __m512 lo, __m512 hi) {
    Tile12x16<kRows>(k, a, lda, b, bias, c, ldc, r, ldr, m0, lo, hi);
  }
};

}  // namespace

void tessel_f32_gemm_direct_ukernel_8x32__avx512(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                                                 const float* packed_b, const float* bias, float* c, int64_t ldc,
                                                 const float* residual, int64_t ldr, float lo, float hi) {
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  const int64_t mc = RowBlock(k, 8);
  for (int64_t i0 = 0; i0 < m; i0 += mc) {
    const int64_t i1 = std::min(m, i0 + mc);
    for (int64_t j = 0; j < n; j += 32) {
      const int64_t w = std::min<int64_t>(32, n - j);
      const __mmask16 m0 = Mask(w), m1 = Mask(w - 16 > 0 ? w - 16 : 0);
      const float* b = packed_b + j * k;
      const float* r = residual ? residual + j : nullptr;
      if (w <= 16) {
        Panel8xN<16>(i0, i1, k, a, lda, b, bias + j, c + j, ldc, r, ldr, m0, m1, vlo, vhi);
      } else if (w <= 24) {
        Panel8xN<24>(i0, i1, k, a, lda, b, bias + j, c + j, ldc, r, ldr, m0, m1, vlo, vhi);
      } else {
        Panel8xN<32>(i0, i1, k, a, lda, b, bias + j, c + j, ldc, r, ldr, m0, m1, vlo, vhi);
      }
    }
  }
}

void tessel_f32_gemm_direct_ukernel_12x16__avx512(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                                                  const float* packed_b, const float* bias, float* c, int64_t ldc,
                                                  const float* residual, int64_t ldr, float lo, float hi) {
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  const int64_t mc = RowBlock(k, 12);
  for (int64_t i0 = 0; i0 < m; i0 += mc) {
    const int64_t i1 = std::min(m, i0 + mc);
    for (int64_t j = 0; j < n; j += 16) {
      const __mmask16 m0 = Mask(n - j);
      const float* b = packed_b + j * k;
      for (int64_t i = i0, rows = 0; i < i1; i += rows) {
        const float* r = residual ? residual + i * ldr + j : nullptr;
        rows = NextTileRows(i1 - i, 12);
        if (rows == 12) {
          Tile12x16<12>(k, a + i * lda, lda, b, bias + j, c + i * ldc + j, ldc, r, ldr, m0, vlo, vhi);
        } else {
          ForRows<11, Run12x16>(rows, k, a + i * lda, lda, b, bias + j, c + i * ldc + j, ldc, r, ldr, m0, vlo, vhi);
        }
      }
    }
  }
}

}  // namespace tessel
