// Declarations of the direct-A GEMM kernels (DirectGemmF32Fn in gemm_direct.h), defined in per-ISA
// libraries; only the ones for the target's CPU family exist in a given build.
#ifndef TESSEL_KERNELS_GEMM_INTERNAL_GEMM_DIRECT_KERNELS_H_
#define TESSEL_KERNELS_GEMM_INTERNAL_GEMM_DIRECT_KERNELS_H_

#include <algorithm>
#include <cstdint>

namespace tessel {

#define TESSEL_DECLARE_F32_GEMM_DIRECT(name)                                                                \
  void name(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* packed_b,             \
            const float* bias, float* c, int64_t ldc, const float* residual, int64_t ldr, float lo, float hi);

TESSEL_DECLARE_F32_GEMM_DIRECT(tessel_f32_gemm_direct_ukernel_1x16__scalar)
#if defined(__x86_64__)
TESSEL_DECLARE_F32_GEMM_DIRECT(tessel_f32_gemm_direct_ukernel_8x32__avx512)
TESSEL_DECLARE_F32_GEMM_DIRECT(tessel_f32_gemm_direct_ukernel_12x16__avx512)
TESSEL_DECLARE_F32_GEMM_DIRECT(tessel_f32_gemm_direct_ukernel_6x16__avx2)
#endif

#undef TESSEL_DECLARE_F32_GEMM_DIRECT

// Loop helpers the per-ISA kernels share.
namespace gemm_direct_internal {

// Rows per pass over all the panels: the A block (rows x k floats) stays in L2 while every panel
// streams past it.
inline int64_t RowBlock(int64_t k, int64_t mr) {
  const int64_t rows = (192 << 10) / (4 * std::max<int64_t>(k, 1));
  return std::max<int64_t>(mr, std::min<int64_t>(rows / mr * mr, 32 * mr));
}

// Rows of the next tile when `left` rows remain and tiles hold up to kMr: kMr, except that the last
// kMr + 1 or kMr + 2 rows go as two near-halves, so no tile is left with 1-2 rows: such a tile has
// 2-4 FMA chains (12x16: 1-2), too few to cover the FMA latency, and costs about as much as a full
// one. 7x7 maps (49 pixels) end in 4 + 5 rather than 8 + 1: MobileNetV2's last 1x1 layers ~2% faster.
inline int64_t NextTileRows(int64_t left, int64_t kMr) {
  if (left > kMr && left <= kMr + 2) return left / 2;
  return std::min(left, kMr);
}

// One row count's tile, dispatched at run time for the remainder rows.
template <int kMax, template <int> class Fn, typename... Args>
inline void ForRows(int64_t rows, Args... args) {
  if constexpr (kMax > 0) {
    if (rows == kMax) return Fn<kMax>::Run(args...);
    ForRows<kMax - 1, Fn>(rows, args...);
  }
}

}  // namespace gemm_direct_internal

}  // namespace tessel

#endif  // TESSEL_KERNELS_GEMM_INTERNAL_GEMM_DIRECT_KERNELS_H_
