// NEON f32 GEMM: an 8x12 register tile (24 q-register accumulators), A broadcast by vfmaq_laneq.
#include <arm_neon.h>

#include "kernels/gemm/internal/gemm_driver.h"
#include "kernels/gemm/internal/gemm_kernels.h"

namespace tessel {
namespace {

constexpr int kMr = 8;
constexpr int kNr = 12;
constexpr gemm_internal::Blocking kBlocking = {kMr, kNr, kMr * 16, 256, kNr * 128};

// The 24 accumulators are named variables, not an array: with `float32x4_t acc[8][3]` GCC 12 kept the
// array in memory and stored all 24 vectors back to the stack on every k step (12 STP per 24 FMLA),
// which put the tile at about twice XNNPACK's 6x8 kernel on the lab's cortex-a76 (A57) model.
#define TESSEL_NEON_ROW(row, av, lane)                 \
  c##row##0 = vfmaq_laneq_f32(c##row##0, b0, av, lane); \
  c##row##1 = vfmaq_laneq_f32(c##row##1, b1, av, lane); \
  c##row##2 = vfmaq_laneq_f32(c##row##2, b2, av, lane);
#define TESSEL_NEON_LOAD(row)                                                      \
  float32x4_t c##row##0 = zero, c##row##1 = zero, c##row##2 = zero;                \
  if (accumulate) {                                                                \
    c##row##0 = vld1q_f32(c + (row) * ldc);                                        \
    c##row##1 = vld1q_f32(c + (row) * ldc + 4);                                    \
    c##row##2 = vld1q_f32(c + (row) * ldc + 8);                                    \
  }
#define TESSEL_NEON_STORE(row)                                              \
  if constexpr (kBiasClamp) {                                               \
    c##row##0 = vminq_f32(vmaxq_f32(vaddq_f32(c##row##0, bias0), vlo), vhi); \
    c##row##1 = vminq_f32(vmaxq_f32(vaddq_f32(c##row##1, bias1), vlo), vhi); \
    c##row##2 = vminq_f32(vmaxq_f32(vaddq_f32(c##row##2, bias2), vlo), vhi); \
  }                                                                         \
  vst1q_f32(c + (row) * ldc, c##row##0);                                    \
  vst1q_f32(c + (row) * ldc + 4, c##row##1);                                \
  vst1q_f32(c + (row) * ldc + 8, c##row##2);

// kBiasClamp: the output stage (+ bias, clamp to [lo, hi]) applied before the store.
template <bool kBiasClamp>
inline __attribute__((always_inline)) void Tile(int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                                                bool accumulate, const float* bias, float lo, float hi) {
  const float32x4_t zero = vdupq_n_f32(0.0f);
  TESSEL_NEON_LOAD(0) TESSEL_NEON_LOAD(1) TESSEL_NEON_LOAD(2) TESSEL_NEON_LOAD(3)
  TESSEL_NEON_LOAD(4) TESSEL_NEON_LOAD(5) TESSEL_NEON_LOAD(6) TESSEL_NEON_LOAD(7)
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
  float32x4_t bias0 = zero, bias1 = zero, bias2 = zero, vlo = zero, vhi = zero;
  if constexpr (kBiasClamp) {
    if (bias != nullptr) bias0 = vld1q_f32(bias), bias1 = vld1q_f32(bias + 4), bias2 = vld1q_f32(bias + 8);
    vlo = vdupq_n_f32(lo), vhi = vdupq_n_f32(hi);
  }
  TESSEL_NEON_STORE(0) TESSEL_NEON_STORE(1) TESSEL_NEON_STORE(2) TESSEL_NEON_STORE(3)
  TESSEL_NEON_STORE(4) TESSEL_NEON_STORE(5) TESSEL_NEON_STORE(6) TESSEL_NEON_STORE(7)
}

void Ukernel8x12(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool accumulate) {
  Tile<false>(kc, a, b, c, ldc, accumulate, nullptr, 0.0f, 0.0f);
}

void Ukernel8x12BiasClamp(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool accumulate,
                          const float* bias, float lo, float hi) {
  Tile<true>(kc, a, b, c, ldc, accumulate, bias, lo, hi);
}

#undef TESSEL_NEON_LOAD
#undef TESSEL_NEON_STORE
#undef TESSEL_NEON_ROW

}  // namespace

void tessel_f32_gemm_ukernel_8x12__neon(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                                        const float* b, int64_t ldb, float* c, int64_t ldc, void* workspace) {
  gemm_internal::Gemm(kBlocking, Ukernel8x12, m, n, k, a, lda, b, ldb, c, ldc, workspace);
}
size_t tessel_f32_gemm_ukernel_8x12__neon_workspace_bytes() { return gemm_internal::WorkspaceBytes(kBlocking); }

TESSEL_DEFINE_F32_GEMM_UKERNEL_INFO_FUSED(tessel_f32_gemm_ukernel_8x12__neon, kBlocking, Ukernel8x12,
                                          Ukernel8x12BiasClamp)

}  // namespace tessel
