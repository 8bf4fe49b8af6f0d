// The BLIS-style packed GEMM driver shared by every f32 GEMM microkernel: blocks over N (nc), K (kc)
// and M (mc), packs A into mr-row and B into nr-column panels (zero-padded), and calls the microkernel
// on full mr x nr tiles. Header-only so that each per-ISA library compiles it with its own flags.
#ifndef TESSEL_KERNELS_GEMM_INTERNAL_GEMM_DRIVER_H_
#define TESSEL_KERNELS_GEMM_INTERNAL_GEMM_DRIVER_H_

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/gemm/gemm_epilogue.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif
#if defined(__aarch64__) && defined(__ARM_NEON)
#include <arm_neon.h>
#endif

namespace tessel {
namespace gemm_internal {

// The code below is compiled into every per-ISA library with that library's flags (and takes an
// AVX-512 path where __AVX512F__ is defined), so it has internal linkage: as plain inline functions the
// linker would keep one copy for all of them, which could run AVX-512 code on a CPU without it.

// Computes the full mr x nr tile c (row stride ldc) from kc packed steps: c = sum (or c += sum when
// accumulate). a: kc groups of mr floats; b: kc groups of nr floats.
using Ukernel = void (*)(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool accumulate);

// The same tile with the output stage in registers: the last K block's c = clamp(sum + bias[col], lo, hi)
// (bias null: no bias) is stored once, instead of stored, reloaded and stored again by ApplyEpilogue.
using UkernelBiasClamp = void (*)(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool accumulate,
                                  const float* bias, float lo, float hi);

struct Blocking {
  int64_t mr, nr, mc, kc, nc;  // mc a multiple of mr, nc a multiple of nr
};

// The prepacked-weights GEMM of one kernel (GemmPrepacked instantiated in the kernel's ISA library).
using PrepackedFn = void (*)(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* packed_b,
                             float* c, int64_t ldc, const GemmEpilogue& ep, int64_t n_begin, int64_t n_end,
                             void* workspace);

// A microkernel with the blocking it was tuned for.
struct UkernelInfo {
  Blocking blocking;
  Ukernel ukernel;
  PrepackedFn prepacked;
};

static inline int64_t RoundUp(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

// Bytes of scratch Gemm() needs with this blocking (packed A block + packed B block + alignment).
static inline size_t WorkspaceBytes(const Blocking& bl) {
  return static_cast<size_t>(bl.mc * bl.kc + bl.kc * bl.nc) * sizeof(float) + 64;
}

// The largest tile any microkernel uses (SVE at 2048 bits: 8 x 128), for the edge-tile buffer.
inline constexpr int64_t kMaxTileFloats = 8 * 128;

#if defined(__AVX512F__)
// 16 floats from each of 16 rows (rows past mr only padding) -> out[j * mr + i] for j < 16, i < mr: an
// in-register 16x16 transpose, mr floats stored per column.
static inline void PackAx16Avx512(const float* const (&rows)[16], int64_t mr, float* out) {
  __m512 r[16], t[16];
  for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_ps(rows[i]);
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    r[i] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t[i]), _mm512_castps_pd(t[i + 2])));
    r[i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t[i]), _mm512_castps_pd(t[i + 2])));
    r[i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t[i + 1]), _mm512_castps_pd(t[i + 3])));
    r[i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t[i + 1]), _mm512_castps_pd(t[i + 3])));
  }
  // r[4q + s] holds, per 128-bit lane L, column 4L + s' of rows 4q..4q+3 (s' = 0, 1, 2, 3 for s = 0, 1, 2, 3).
  for (int i = 0; i < 4; ++i) {
    // Gather lane pairs: rows 0-7 and 8-15.
    t[i] = _mm512_shuffle_f32x4(r[i], r[4 + i], 0x88);       // lanes 0, 2 of r[i], then of r[4 + i]
    t[4 + i] = _mm512_shuffle_f32x4(r[i], r[4 + i], 0xdd);   // lanes 1, 3
    t[8 + i] = _mm512_shuffle_f32x4(r[8 + i], r[12 + i], 0x88);
    t[12 + i] = _mm512_shuffle_f32x4(r[8 + i], r[12 + i], 0xdd);
  }
  for (int i = 0; i < 4; ++i) {
    // column (s + 4 * L) for L = 0, 1, 2, 3.
    r[i] = _mm512_shuffle_f32x4(t[i], t[8 + i], 0x88);         // L = 0
    r[4 + i] = _mm512_shuffle_f32x4(t[4 + i], t[12 + i], 0x88); // L = 1
    r[8 + i] = _mm512_shuffle_f32x4(t[i], t[8 + i], 0xdd);     // L = 2
    r[12 + i] = _mm512_shuffle_f32x4(t[4 + i], t[12 + i], 0xdd); // L = 3
  }
  const __mmask16 mask = static_cast<__mmask16>((1u << mr) - 1);
  for (int j = 0; j < 16; ++j) _mm512_mask_storeu_ps(out + j * mr, mask, r[j]);
}
#endif

#if defined(__AVX2__) && !defined(__AVX512F__)
// 8 floats from each of 8 rows (rows past mr only padding) -> out[j * mr + i] for j < 8, i < mr: an
// in-register 8x8 transpose, each column stored as 8 floats, the floats past mr landing where the next
// column goes (stored after it); with `last`, column 7 ends the panel and stores exactly mr floats.
// (Masked stores, vmaskmovps, cost Zen 3 about as much as the whole transpose.)
__attribute__((always_inline)) static inline void PackAx8Avx2(const float* const (&rows)[8], int64_t mr, bool last,
                                                              float* out) {
  const __m256 t0 = _mm256_unpacklo_ps(_mm256_loadu_ps(rows[0]), _mm256_loadu_ps(rows[1]));
  const __m256 t1 = _mm256_unpackhi_ps(_mm256_loadu_ps(rows[0]), _mm256_loadu_ps(rows[1]));
  const __m256 t2 = _mm256_unpacklo_ps(_mm256_loadu_ps(rows[2]), _mm256_loadu_ps(rows[3]));
  const __m256 t3 = _mm256_unpackhi_ps(_mm256_loadu_ps(rows[2]), _mm256_loadu_ps(rows[3]));
  const __m256 t4 = _mm256_unpacklo_ps(_mm256_loadu_ps(rows[4]), _mm256_loadu_ps(rows[5]));
  const __m256 t5 = _mm256_unpackhi_ps(_mm256_loadu_ps(rows[4]), _mm256_loadu_ps(rows[5]));
  const __m256 t6 = _mm256_unpacklo_ps(_mm256_loadu_ps(rows[6]), _mm256_loadu_ps(rows[7]));
  const __m256 t7 = _mm256_unpackhi_ps(_mm256_loadu_ps(rows[6]), _mm256_loadu_ps(rows[7]));
  // uS (rows 0-3) and vS (rows 4-7) hold column S in their low 128 bits and column 4 + S in the high.
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xee);
  const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xee);
  const __m256 v0 = _mm256_shuffle_ps(t4, t6, 0x44), v1 = _mm256_shuffle_ps(t4, t6, 0xee);
  const __m256 v2 = _mm256_shuffle_ps(t5, t7, 0x44), v3 = _mm256_shuffle_ps(t5, t7, 0xee);
  _mm256_storeu_ps(out, _mm256_permute2f128_ps(u0, v0, 0x20));
  _mm256_storeu_ps(out + mr, _mm256_permute2f128_ps(u1, v1, 0x20));
  _mm256_storeu_ps(out + 2 * mr, _mm256_permute2f128_ps(u2, v2, 0x20));
  _mm256_storeu_ps(out + 3 * mr, _mm256_permute2f128_ps(u3, v3, 0x20));
  _mm256_storeu_ps(out + 4 * mr, _mm256_permute2f128_ps(u0, v0, 0x31));
  _mm256_storeu_ps(out + 5 * mr, _mm256_permute2f128_ps(u1, v1, 0x31));
  _mm256_storeu_ps(out + 6 * mr, _mm256_permute2f128_ps(u2, v2, 0x31));
  const __m256 c7 = _mm256_permute2f128_ps(u3, v3, 0x31);
  if (!last) {
    _mm256_storeu_ps(out + 7 * mr, c7);
  } else {
    alignas(32) float tmp[8];
    _mm256_store_ps(tmp, c7);
    std::memcpy(out + 7 * mr, tmp, sizeof(float) * mr);
  }
}
#endif

// Columns [p, kc) of one panel's r rows (a at its first row), zero-padded to mr: the vector packers' tail.
static inline void PackAColumns(const float* a, int64_t lda, int64_t r, int64_t mr, int64_t p, int64_t kc,
                                float* out) {
  for (; p < kc; ++p) {
    for (int64_t i = 0; i < r; ++i) out[p * mr + i] = a[i * lda + p];
    for (int64_t i = r; i < mr; ++i) out[p * mr + i] = 0.0f;
  }
}

static inline void PackA(const float* a, int64_t lda, int64_t rows, int64_t kc, int64_t mr, float* out) {
#if defined(__AVX2__) && !defined(__AVX512F__)
  // The AVX2 6x16 tile's A panels as 8x8 transposes (the element loop below, one strided load a float,
  // was a quarter of a Winograd F(4x4) layer's time on a Zen 3: its per-point GEMMs have K = channels).
  if (mr <= 8) {
    alignas(32) static const float zeros[8] = {};
    for (int64_t i0 = 0; i0 < rows; i0 += mr) {
      const int64_t r = std::min(mr, rows - i0);
      const float* rows8[8];
      for (int i = 0; i < 8; ++i) rows8[i] = i < r ? a + (i0 + i) * lda : zeros;
      const int64_t step[8] = {r > 0, r > 1, r > 2, r > 3, r > 4, r > 5, r > 6, r > 7};
      int64_t p = 0;
      for (; p + 8 <= kc; p += 8) {
        PackAx8Avx2(rows8, mr, p + 8 == kc, out + p * mr);
        for (int i = 0; i < 8; ++i) rows8[i] += 8 * step[i];
      }
      PackAColumns(a + i0 * lda, lda, r, mr, p, kc, out);
      out += mr * kc;
    }
    return;
  }
#endif
#if defined(__AVX512F__)
  if (mr <= 16) {
    alignas(64) static const float zeros[16] = {};
    for (int64_t i0 = 0; i0 < rows; i0 += mr) {
      const int64_t r = std::min(mr, rows - i0);
      int64_t p = 0;
      for (; p + 16 <= kc; p += 16) {
        const float* rows16[16];
        for (int i = 0; i < 16; ++i) rows16[i] = i < r ? a + (i0 + i) * lda + p : zeros;
        PackAx16Avx512(rows16, mr, out + p * mr);
      }
      PackAColumns(a + i0 * lda, lda, r, mr, p, kc, out);
      out += mr * kc;
    }
    return;
  }
#endif
#if defined(__aarch64__) && defined(__ARM_NEON)
  if (mr == 8) {
    // Whole 8-row panels as 4 x 4 transposes of 4-float loads (the element loop below was as dear as
    // the 8x12 tile itself on the lab's cortex-a55 model for a 1x1 convolution with K = 32).
    for (; rows >= 8; rows -= 8, a += 8 * lda, out += 8 * kc) {
      int64_t p = 0;
      for (; p + 4 <= kc; p += 4) {
        float32x4_t x[8];
        for (int i = 0; i < 8; ++i) x[i] = vld1q_f32(a + i * lda + p);
        for (int h = 0; h < 2; ++h) {
          const float32x4_t* q = x + 4 * h;
          const float64x2_t t0 = vreinterpretq_f64_f32(vtrn1q_f32(q[0], q[1]));
          const float64x2_t t1 = vreinterpretq_f64_f32(vtrn2q_f32(q[0], q[1]));
          const float64x2_t t2 = vreinterpretq_f64_f32(vtrn1q_f32(q[2], q[3]));
          const float64x2_t t3 = vreinterpretq_f64_f32(vtrn2q_f32(q[2], q[3]));
          vst1q_f32(out + (p + 0) * 8 + 4 * h, vreinterpretq_f32_f64(vtrn1q_f64(t0, t2)));
          vst1q_f32(out + (p + 1) * 8 + 4 * h, vreinterpretq_f32_f64(vtrn1q_f64(t1, t3)));
          vst1q_f32(out + (p + 2) * 8 + 4 * h, vreinterpretq_f32_f64(vtrn2q_f64(t0, t2)));
          vst1q_f32(out + (p + 3) * 8 + 4 * h, vreinterpretq_f32_f64(vtrn2q_f64(t1, t3)));
        }
      }
      for (; p < kc; ++p) {
        for (int i = 0; i < 8; ++i) out[p * 8 + i] = a[i * lda + p];
      }
    }
  }
#endif
  for (int64_t i0 = 0; i0 < rows; i0 += mr) {
    const int64_t r = std::min(mr, rows - i0);
    for (int64_t p = 0; p < kc; ++p) {
      for (int64_t i = 0; i < r; ++i) out[p * mr + i] = a[(i0 + i) * lda + p];
      for (int64_t i = r; i < mr; ++i) out[p * mr + i] = 0.0f;
    }
    out += mr * kc;
  }
}

static inline void PackB(const float* b, int64_t ldb, int64_t kc, int64_t cols, int64_t nr, float* out) {
  for (int64_t j0 = 0; j0 < cols; j0 += nr) {
    const int64_t w = std::min(nr, cols - j0);
    for (int64_t p = 0; p < kc; ++p) {
      const float* src = b + p * ldb + j0;
      float* dst = out + p * nr;
      std::memcpy(dst, src, w * sizeof(float));
      for (int64_t j = w; j < nr; ++j) dst[j] = 0.0f;
    }
    out += nr * kc;
  }
}

// A partial h x w tile: the whole padded tile is computed aside in `edge`, then its valid part stored
// into (or, when accumulating, added to) c.
static inline void EdgeTile(const Blocking& bl, Ukernel ukernel, int64_t kc, const float* a, const float* b, float* c,
                            int64_t ldc, int64_t h, int64_t w, bool accumulate, float* edge) {
  ukernel(kc, a, b, edge, bl.nr, false);
  for (int64_t i = 0; i < h; ++i) {
    for (int64_t j = 0; j < w; ++j) c[i * ldc + j] = accumulate ? c[i * ldc + j] + edge[i * bl.nr + j] : edge[i * bl.nr + j];
  }
}

// C[m x n] = A[m x k] * B[k x n], all row-major. workspace: WorkspaceBytes(bl) bytes.
static inline void Gemm(const Blocking& bl, Ukernel ukernel, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                 const float* b, int64_t ldb, float* c, int64_t ldc, void* workspace) {
  assert(bl.mr * bl.nr <= kMaxTileFloats && bl.mc % bl.mr == 0 && bl.nc % bl.nr == 0);
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, 0.0f);
    return;
  }
  auto base = reinterpret_cast<uintptr_t>(workspace);
  float* packed_a = reinterpret_cast<float*>((base + 63) & ~uintptr_t{63});
  float* packed_b = packed_a + bl.mc * bl.kc;
  alignas(64) float edge[kMaxTileFloats];
  for (int64_t jc = 0; jc < n; jc += bl.nc) {
    const int64_t ncb = std::min(bl.nc, n - jc);
    for (int64_t pc = 0; pc < k; pc += bl.kc) {
      const int64_t kcb = std::min(bl.kc, k - pc);
      const bool accumulate = pc > 0;
      PackB(b + pc * ldb + jc, ldb, kcb, ncb, bl.nr, packed_b);
      for (int64_t ic = 0; ic < m; ic += bl.mc) {
        const int64_t mcb = std::min(bl.mc, m - ic);
        PackA(a + ic * lda + pc, lda, mcb, kcb, bl.mr, packed_a);
        for (int64_t jr = 0; jr < ncb; jr += bl.nr) {
          const int64_t w = std::min(bl.nr, ncb - jr);
          const float* bp = packed_b + jr * kcb;
          for (int64_t ir = 0; ir < mcb; ir += bl.mr) {
            const int64_t h = std::min(bl.mr, mcb - ir);
            const float* ap = packed_a + ir * kcb;
            float* ct = c + (ic + ir) * ldc + jc + jr;
            if (h == bl.mr && w == bl.nr) {
              ukernel(kcb, ap, bp, ct, ldc, accumulate);
              continue;
            }
            EdgeTile(bl, ukernel, kcb, ap, bp, ct, ldc, h, w, accumulate, edge);
          }
        }
      }
    }
  }
}

// ---- prepacked B (constant weights) with a fused epilogue -------------------------------------------------
//
// B [k x n] is packed once: for each kc block pc, every nr panel [kcb][nr] (zero-padded columns), so the
// panel (pc, jr) starts at pc * RoundUp(n, nr) + jr * kcb. GemmPrepacked walks M blocks outermost, so
// all of B streams once per mc rows (once per call for the small-M late layers of a CNN, where the
// weights are largest), and applies bias, residual and clamp to each tile right after its last K block,
// while the tile is still in L1.

static inline int64_t PackedBFloats(const Blocking& bl, int64_t k, int64_t n) { return RoundUp(n, bl.nr) * k; }

static inline void PackBFull(const Blocking& bl, const float* b, int64_t ldb, int64_t k, int64_t n, float* out) {
  const int64_t np = RoundUp(n, bl.nr);
  for (int64_t pc = 0; pc < k; pc += bl.kc) PackB(b + pc * ldb, ldb, std::min(bl.kc, k - pc), n, bl.nr, out + pc * np);
}

// Scratch GemmPrepacked needs: one packed A block, 64-byte aligned.
static inline size_t PrepackedWorkspaceBytes(const Blocking& bl) {
  return static_cast<size_t>(bl.mc * bl.kc) * sizeof(float) + 64;
}

// c = clamp(c + bias + residual) over a rows x cols tile at (row0, col0) of the output. The residual
// must not alias C (GemmPrepacked writes partial sums into C before the epilogue reads it).
static inline void ApplyEpilogue(const GemmEpilogue& ep, float* c, int64_t ldc, int64_t rows, int64_t cols, int64_t row0,
                          int64_t col0) {
  const float lo = ep.lo, hi = ep.hi;
  for (int64_t i = 0; i < rows; ++i) {
    float* __restrict ci = c + i * ldc;
    const float* __restrict r = ep.residual ? ep.residual + (row0 + i) * ep.ldr + col0 : nullptr;
    const float* __restrict bias = ep.bias ? ep.bias + col0 : nullptr;
#if defined(__aarch64__) && defined(__ARM_NEON)
    // GCC 12 leaves the plain loops (the #else branch) scalar on aarch64 (std::max / std::min are not
    // FMAX / FMIN for NaNs, which the clamp then passes through anyway); on the lab's cortex-a55 model
    // they cost more than the 8x12 tile on a 1x1 convolution with K = 32.
    const float32x4_t vlo = vdupq_n_f32(lo), vhi = vdupq_n_f32(hi);
    int64_t j = 0;
    // Three independent vectors at a time (a tile row is 12 columns): an in-order core (cortex-a55)
    // otherwise waits out each vector's load -> add -> max -> min chain.
    for (; j + 12 <= cols; j += 12) {
      float32x4_t v0 = vld1q_f32(ci + j), v1 = vld1q_f32(ci + j + 4), v2 = vld1q_f32(ci + j + 8);
      if (bias) {
        v0 = vaddq_f32(v0, vld1q_f32(bias + j)), v1 = vaddq_f32(v1, vld1q_f32(bias + j + 4));
        v2 = vaddq_f32(v2, vld1q_f32(bias + j + 8));
      }
      if (r) {
        v0 = vaddq_f32(v0, vld1q_f32(r + j)), v1 = vaddq_f32(v1, vld1q_f32(r + j + 4));
        v2 = vaddq_f32(v2, vld1q_f32(r + j + 8));
      }
      vst1q_f32(ci + j, vminq_f32(vmaxq_f32(v0, vlo), vhi));
      vst1q_f32(ci + j + 4, vminq_f32(vmaxq_f32(v1, vlo), vhi));
      vst1q_f32(ci + j + 8, vminq_f32(vmaxq_f32(v2, vlo), vhi));
    }
    for (; j + 4 <= cols; j += 4) {
      float32x4_t v = vld1q_f32(ci + j);
      if (bias) v = vaddq_f32(v, vld1q_f32(bias + j));
      if (r) v = vaddq_f32(v, vld1q_f32(r + j));
      vst1q_f32(ci + j, vminq_f32(vmaxq_f32(v, vlo), vhi));
    }
    for (; j < cols; ++j) {
      float v = ci[j];
      if (bias) v += bias[j];
      if (r) v += r[j];
      ci[j] = std::min(std::max(v, lo), hi);
    }
#else
    if (bias && r) {
      for (int64_t j = 0; j < cols; ++j) ci[j] = std::min(std::max(ci[j] + bias[j] + r[j], lo), hi);
    } else if (bias) {
      for (int64_t j = 0; j < cols; ++j) ci[j] = std::min(std::max(ci[j] + bias[j], lo), hi);
    } else if (r) {
      for (int64_t j = 0; j < cols; ++j) ci[j] = std::min(std::max(ci[j] + r[j], lo), hi);
    } else {
      for (int64_t j = 0; j < cols; ++j) ci[j] = std::min(std::max(ci[j], lo), hi);
    }
#endif
  }
}

// C[m x (n_begin..n_end)] = epilogue(A[m x k] * B) with B from PackBFull. n_begin is a multiple of nr;
// n_end <= n. Residual rows are indexed like C's (row 0 = A's row 0). `fused` (may be null): the
// microkernel with the output stage in registers, for full tiles of an epilogue without a residual.
static inline void GemmPrepacked(const Blocking& bl, Ukernel ukernel, int64_t m, int64_t n, int64_t k, const float* a,
                          int64_t lda, const float* packed_b, float* c, int64_t ldc, const GemmEpilogue& ep,
                          int64_t n_begin, int64_t n_end, void* workspace, UkernelBiasClamp fused = nullptr) {
  assert(bl.mr * bl.nr <= kMaxTileFloats && bl.mc % bl.mr == 0 && n_begin % bl.nr == 0 && n_end <= n);
  if (m == 0 || n_end <= n_begin) return;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc + n_begin, c + i * ldc + n_end, 0.0f);
    ApplyEpilogue(ep, c + n_begin, ldc, m, n_end - n_begin, 0, n_begin);
    return;
  }
  auto base = reinterpret_cast<uintptr_t>(workspace);
  float* packed_a = reinterpret_cast<float*>((base + 63) & ~uintptr_t{63});
  const int64_t np = RoundUp(n, bl.nr);
  alignas(64) float edge[kMaxTileFloats];
  for (int64_t ic = 0; ic < m; ic += bl.mc) {
    const int64_t mcb = std::min(bl.mc, m - ic);
    for (int64_t pc = 0; pc < k; pc += bl.kc) {
      const int64_t kcb = std::min(bl.kc, k - pc);
      const bool accumulate = pc > 0;
      const bool last = pc + kcb == k;
      PackA(a + ic * lda + pc, lda, mcb, kcb, bl.mr, packed_a);
      for (int64_t jr = n_begin; jr < n_end; jr += bl.nr) {
        const int64_t w = std::min(bl.nr, n_end - jr);
        const float* bp = packed_b + pc * np + jr * kcb;
        for (int64_t ir = 0; ir < mcb; ir += bl.mr) {
          const int64_t h = std::min(bl.mr, mcb - ir);
          const float* ap = packed_a + ir * kcb;
          float* ct = c + (ic + ir) * ldc + jr;
          if (h == bl.mr && w == bl.nr && last && fused != nullptr && ep.residual == nullptr) {
            fused(kcb, ap, bp, ct, ldc, accumulate, ep.bias ? ep.bias + jr : nullptr, ep.lo, ep.hi);
            continue;
          }
          if (h == bl.mr && w == bl.nr) {
            ukernel(kcb, ap, bp, ct, ldc, accumulate);
          } else {
            EdgeTile(bl, ukernel, kcb, ap, bp, ct, ldc, h, w, accumulate, edge);
          }
          if (last) ApplyEpilogue(ep, ct, ldc, h, w, ic + ir, jr);
        }
      }
    }
  }
}

}  // namespace gemm_internal
}  // namespace tessel

#endif  // TESSEL_KERNELS_GEMM_INTERNAL_GEMM_DRIVER_H_
