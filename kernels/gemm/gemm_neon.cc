// NEON f32 GEMM: an 8x12 register tile (24 q-register accumulators), A broadcast by vfmaq_laneq.
#include <arm_neon.h>

#include "kernels/gemm/internal/gemm_driver.h"
#include "kernels/gemm/internal/gemm_kernels.h"

namespace tessel {
namespace {

constexpr int kMr = 8;
constexpr int kNr = 12;
constexpr gemm_internal::Blocking kBlocking = {kMr, kNr, kMr * 16, 256, kNr * 128};

// One row of the tile: acc[row][0..2] += b[0..2] * a[lane].
#define TESSEL_NEON_ROW(row, av, lane)                    \
  acc[row][0] = vfmaq_laneq_f32(acc[row][0], b0, av, lane); \
  acc[row][1] = vfmaq_laneq_f32(acc[row][1], b1, av, lane); \
  acc[row][2] = vfmaq_laneq_f32(acc[row][2], b2, av, lane);

void Ukernel8x12(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool accumulate) {
  float32x4_t acc[kMr][3];
  for (int i = 0; i < kMr; ++i) {
    for (int j = 0; j < 3; ++j) acc[i][j] = accumulate ? vld1q_f32(c + i * ldc + 4 * j) : vdupq_n_f32(0.0f);
  }
  for (int64_t p = 0; p < kc; ++p) {
    const float32x4_t a0 = vld1q_f32(a);
    const float32x4_t a1 = vld1q_f32(a + 4);
    const float32x4_t b0 = vld1q_f32(b);
    const float32x4_t b1 = vld1q_f32(b + 4);
    const float32x4_t b2 = vld1q_f32(b + 8);
    TESSEL_NEON_ROW(0, a0, 0)
    TESSEL_NEON_ROW(1, a0, 1)
    TESSEL_NEON_ROW(2, a0, 2)
    TESSEL_NEON_ROW(3, a0, 3)
    TESSEL_NEON_ROW(4, a1, 0)
    TESSEL_NEON_ROW(5, a1, 1)
    TESSEL_NEON_ROW(6, a1, 2)
    TESSEL_NEON_ROW(7, a1, 3)
    a += kMr;
    b += kNr;
  }
  for (int i = 0; i < kMr; ++i) {
    for (int j = 0; j < 3; ++j) vst1q_f32(c + i * ldc + 4 * j, acc[i][j]);
  }
}

#undef TESSEL_NEON_ROW

}  // namespace

void tessel_f32_gemm_ukernel_8x12__neon(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                                        const float* b, int64_t ldb, float* c, int64_t ldc, void* workspace) {
  gemm_internal::Gemm(kBlocking, Ukernel8x12, m, n, k, a, lda, b, ldb, c, ldc, workspace);
}
size_t tessel_f32_gemm_ukernel_8x12__neon_workspace_bytes() { return gemm_internal::WorkspaceBytes(kBlocking); }

TESSEL_DEFINE_F32_GEMM_UKERNEL_INFO(tessel_f32_gemm_ukernel_8x12__neon, kBlocking, Ukernel8x12)

}  // namespace tessel
