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

namespace tessel {
namespace gemm_internal {

// Computes the full mr x nr tile c (row stride ldc) from kc packed steps: c = sum (or c += sum when
// accumulate). a: kc groups of mr floats; b: kc groups of nr floats.
using Ukernel = void (*)(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool accumulate);

struct Blocking {
  int64_t mr, nr, mc, kc, nc;  // mc a multiple of mr, nc a multiple of nr
};

inline int64_t RoundUp(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

// Bytes of scratch Gemm() needs with this blocking (packed A block + packed B block + alignment).
inline size_t WorkspaceBytes(const Blocking& bl) {
  return static_cast<size_t>(bl.mc * bl.kc + bl.kc * bl.nc) * sizeof(float) + 64;
}

// The largest tile any microkernel uses (SVE at 2048 bits: 8 x 128), for the edge-tile buffer.
inline constexpr int64_t kMaxTileFloats = 8 * 128;

inline void PackA(const float* a, int64_t lda, int64_t rows, int64_t kc, int64_t mr, float* out) {
  for (int64_t i0 = 0; i0 < rows; i0 += mr) {
    const int64_t r = std::min(mr, rows - i0);
    for (int64_t p = 0; p < kc; ++p) {
      for (int64_t i = 0; i < r; ++i) out[p * mr + i] = a[(i0 + i) * lda + p];
      for (int64_t i = r; i < mr; ++i) out[p * mr + i] = 0.0f;
    }
    out += mr * kc;
  }
}

inline void PackB(const float* b, int64_t ldb, int64_t kc, int64_t cols, int64_t nr, float* out) {
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

// C[m x n] = A[m x k] * B[k x n], all row-major. workspace: WorkspaceBytes(bl) bytes.
inline void Gemm(const Blocking& bl, Ukernel ukernel, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
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
            // Edge tile: compute the whole padded tile aside, then merge the valid part.
            ukernel(kcb, ap, bp, edge, bl.nr, false);
            for (int64_t i = 0; i < h; ++i) {
              for (int64_t j = 0; j < w; ++j) {
                ct[i * ldc + j] = accumulate ? ct[i * ldc + j] + edge[i * bl.nr + j] : edge[i * bl.nr + j];
              }
            }
          }
        }
      }
    }
  }
}

}  // namespace gemm_internal
}  // namespace tessel

#endif  // TESSEL_KERNELS_GEMM_INTERNAL_GEMM_DRIVER_H_
