/* f32 GEMM with a bias / residual / clamp epilogue, register-blocked for the auto-vectorizer: the
 * convolution and fully-connected work of the AOT C emitter's generated code runs here. */
#include "tessel_portable.h"

enum { kMR = 4, kNR = 32 };

/* Accumulators start from the biases. */
static void init_tile(size_t mr, size_t nr, const float* restrict bias_n, const float* restrict bias_m,
                      float acc[kMR][kNR]) {
  for (size_t i = 0; i < mr; ++i) {
    const float bm = bias_m ? bias_m[i] : 0.0f;
    for (size_t j = 0; j < nr; ++j) acc[i][j] = bm + (bias_n ? bias_n[j] : 0.0f);
  }
}

static void store_tile(size_t mr, size_t nr, float acc[kMR][kNR], const float* restrict r, size_t ldr,
                       float* restrict c, size_t ldc, float lo, float hi) {
  for (size_t i = 0; i < mr; ++i) {
    const float* restrict ai = acc[i];
    float* restrict ci = c + i * ldc;
    if (r) {
      const float* restrict ri = r + i * ldr;
      // tessel:hot
#pragma omp simd
      for (size_t j = 0; j < nr; ++j) {
        const float v = ai[j] + ri[j];
        ci[j] = v < lo ? lo : (v > hi ? hi : v);
      }
    } else {
      // tessel:hot
#pragma omp simd
      for (size_t j = 0; j < nr; ++j) {
        const float v = ai[j];
        ci[j] = v < lo ? lo : (v > hi ? hi : v);
      }
    }
  }
}

/* A full 4 x kNR tile with constant trip counts, so the column loop needs no remainder handling. Each B
 * vector feeds four FMAs, but GCC 12 keeps the accumulators in the (L1-resident) array rather than in
 * registers across k: a load and a store per FMA, unlike the hand-written NEON/SVE microkernels (see
 * kernels/VECTORIZATION.md). On aarch64 tile_neon runs instead (for every 4-row tile whose width is a
 * multiple of 4); this loop is its reference twin and the path of every other target (`used`: kept
 * and vectorized on aarch64 too, for check_vectorized.py). */
static __attribute__((used)) void full_tile(size_t k, const float* restrict a, size_t lda, const float* restrict b,
                                            size_t ldb, float acc[kMR][kNR]) {
  float* restrict acc0 = acc[0];
  float* restrict acc1 = acc[1];
  float* restrict acc2 = acc[2];
  float* restrict acc3 = acc[3];
  for (size_t p = 0; p < k; ++p) {
    const float a0 = a[p], a1 = a[lda + p], a2 = a[2 * lda + p], a3 = a[3 * lda + p];
    const float* restrict bp = b + p * ldb;
    // tessel:hot
#pragma omp simd
    for (size_t j = 0; j < kNR; ++j) {
      const float bj = bp[j];
      acc0[j] += a0 * bj;
      acc1[j] += a1 * bj;
      acc2[j] += a2 * bj;
      acc3[j] += a3 * bj;
    }
  }
}

#if defined(__aarch64__) && defined(__ARM_NEON)
#include <arm_neon.h>

/* full_tile with ACLE intrinsics: the accumulators in registers, in passes of 4 rows x 4 * nv columns
 * (nv = 4: 16 of the 32 vector registers), four k steps per load of A (one 4-float load per row, FMLA
 * by lane), as the hand-written NEON microkernels do. Sums in the same k order as full_tile. */
#define TSL_ROW_FMA(r, av, lane)                                      \
  c##r##0 = vfmaq_laneq_f32(c##r##0, b0, av, lane);                   \
  if (nv > 1) c##r##1 = vfmaq_laneq_f32(c##r##1, b1, av, lane);       \
  if (nv > 2) c##r##2 = vfmaq_laneq_f32(c##r##2, b2, av, lane);       \
  if (nv > 3) c##r##3 = vfmaq_laneq_f32(c##r##3, b3, av, lane);
#define TSL_K_STEP(lane)                                                                                  \
  {                                                                                                       \
    const float* restrict bp = b + (p + lane) * ldb + j0;                                                 \
    const float32x4_t b0 = vld1q_f32(bp);                                                                 \
    const float32x4_t b1 = nv > 1 ? vld1q_f32(bp + 4) : b0, b2 = nv > 2 ? vld1q_f32(bp + 8) : b0;        \
    const float32x4_t b3 = nv > 3 ? vld1q_f32(bp + 12) : b0;                                              \
    TSL_ROW_FMA(0, a0, lane) TSL_ROW_FMA(1, a1, lane) TSL_ROW_FMA(2, a2, lane) TSL_ROW_FMA(3, a3, lane)   \
  }
#define TSL_ROW_LOAD(r)                                               \
  float32x4_t c##r##0 = vld1q_f32(acc[r] + j0), c##r##1 = c##r##0, c##r##2 = c##r##0, c##r##3 = c##r##0; \
  if (nv > 1) c##r##1 = vld1q_f32(acc[r] + j0 + 4);                   \
  if (nv > 2) c##r##2 = vld1q_f32(acc[r] + j0 + 8);                   \
  if (nv > 3) c##r##3 = vld1q_f32(acc[r] + j0 + 12);
#define TSL_ROW_STORE(r)                              \
  vst1q_f32(acc[r] + j0, c##r##0);                    \
  if (nv > 1) vst1q_f32(acc[r] + j0 + 4, c##r##1);    \
  if (nv > 2) vst1q_f32(acc[r] + j0 + 8, c##r##2);    \
  if (nv > 3) vst1q_f32(acc[r] + j0 + 12, c##r##3);

/* One pass: columns [j0, j0 + 4 * nv) of the tile; nv is a constant at every call. */
static inline __attribute__((always_inline)) void tile_pass_neon(size_t k, const float* restrict a, size_t lda,
                                                                 const float* restrict b, size_t ldb,
                                                                 float acc[kMR][kNR], size_t j0, const int nv) {
  TSL_ROW_LOAD(0) TSL_ROW_LOAD(1) TSL_ROW_LOAD(2) TSL_ROW_LOAD(3)
  size_t p = 0;
  for (; p + 4 <= k; p += 4) {
    const float32x4_t a0 = vld1q_f32(a + p), a1 = vld1q_f32(a + lda + p);
    const float32x4_t a2 = vld1q_f32(a + 2 * lda + p), a3 = vld1q_f32(a + 3 * lda + p);
    TSL_K_STEP(0) TSL_K_STEP(1) TSL_K_STEP(2) TSL_K_STEP(3)
  }
  for (; p < k; ++p) {
    const float32x4_t a0 = vdupq_n_f32(a[p]), a1 = vdupq_n_f32(a[lda + p]);
    const float32x4_t a2 = vdupq_n_f32(a[2 * lda + p]), a3 = vdupq_n_f32(a[3 * lda + p]);
    TSL_K_STEP(0)
  }
  TSL_ROW_STORE(0) TSL_ROW_STORE(1) TSL_ROW_STORE(2) TSL_ROW_STORE(3)
}
#undef TSL_ROW_FMA
#undef TSL_K_STEP
#undef TSL_ROW_LOAD
#undef TSL_ROW_STORE

/* 4 rows x nr columns, nr a multiple of 4 up to kNR: passes of 16, then 8, then 4 columns. */
static void tile_neon(size_t k, const float* restrict a, size_t lda, const float* restrict b, size_t ldb, size_t nr,
                      float acc[kMR][kNR]) {
  size_t j0 = 0;
  for (; j0 + 16 <= nr; j0 += 16) tile_pass_neon(k, a, lda, b, ldb, acc, j0, 4);
  if (j0 + 8 <= nr) {
    tile_pass_neon(k, a, lda, b, ldb, acc, j0, 2);
    j0 += 8;
  }
  if (j0 + 4 <= nr) tile_pass_neon(k, a, lda, b, ldb, acc, j0, 1);
}
#define TSL_NEON_TILE 1
#else
#define TSL_NEON_TILE 0
#endif

/* Edge tiles (fewer rows or columns): one row at a time over a variable number of columns. */
static void edge_tile(size_t mr, size_t nr, size_t k, const float* restrict a, size_t lda, const float* restrict b,
                      size_t ldb, float acc[kMR][kNR]) {
  for (size_t p = 0; p < k; ++p) {
    const float* restrict bp = b + p * ldb;
    for (size_t i = 0; i < mr; ++i) {
      const float ai = a[i * lda + p];
      float* restrict acci = acc[i];
      // tessel:hot
#pragma omp simd
      for (size_t j = 0; j < nr; ++j) acci[j] += ai * bp[j];
    }
  }
}

void tsl_f32_gemm_minmax__autovec(size_t m, size_t n, size_t k, const float* restrict a, size_t lda,
                                  const float* restrict b, size_t ldb, const float* restrict bias_n,
                                  const float* restrict bias_m, const float* restrict r, size_t ldr,
                                  float* restrict c, size_t ldc, float lo, float hi) {
  float acc[kMR][kNR] __attribute__((aligned(TSL_ALIGNMENT)));
  for (size_t i0 = 0; i0 < m; i0 += kMR) {
    const size_t mr = m - i0 < kMR ? m - i0 : kMR;
    for (size_t j0 = 0; j0 < n; j0 += kNR) {
      const size_t nr = n - j0 < kNR ? n - j0 : kNR;
      init_tile(mr, nr, bias_n ? bias_n + j0 : 0, bias_m ? bias_m + i0 : 0, acc);
#if TSL_NEON_TILE
      if (mr == kMR && nr % 4 == 0) {
        tile_neon(k, a + i0 * lda, lda, b + j0, ldb, nr, acc);
      } else
#endif
      if (mr == kMR && nr == kNR) {
        full_tile(k, a + i0 * lda, lda, b + j0, ldb, acc);
      } else {
        edge_tile(mr, nr, k, a + i0 * lda, lda, b + j0, ldb, acc);
      }
      store_tile(mr, nr, acc, r ? r + i0 * ldr + j0 : 0, ldr, c + i0 * ldc + j0, ldc, lo, hi);
    }
  }
}
