// SVE f32 GEMM, vector-length agnostic: an 8 x (2 vectors) tile; A is loaded as two replicated
// quadwords (ld1rqw) and broadcast per row by svmla_lane, so the same code runs at 128..2048 bits.
#include <arm_sve.h>

#include "kernels/gemm/internal/gemm_driver.h"
#include "kernels/gemm/internal/gemm_kernels.h"

namespace tessel {
namespace {

constexpr int kMr = 8;
// Sized for the longest SVE vector (2048 bits: nr = 128) so one workspace size fits every CPU.
constexpr int64_t kMaxNr = 128;
constexpr int64_t kMc = kMr * 16;
constexpr int64_t kKc = 256;
constexpr int64_t kNcVectors = 64;  // nc = 64 x nr / 2

gemm_internal::Blocking SveBlocking() {
  const int64_t nr = 2 * static_cast<int64_t>(svcntw());
  return {kMr, nr, kMc, kKc, nr * kNcVectors / 2};
}

#define TESSEL_SVE_ROW(row, av, lane)                          \
  c##row##0 = svmla_lane_f32(c##row##0, b0, av, lane);         \
  c##row##1 = svmla_lane_f32(c##row##1, b1, av, lane);

#define TESSEL_SVE_LOAD(row)                                                          \
  svfloat32_t c##row##0 = accumulate ? svld1_f32(pg, c + row * ldc) : svdup_n_f32(0.0f); \
  svfloat32_t c##row##1 = accumulate ? svld1_f32(pg, c + row * ldc + vl) : svdup_n_f32(0.0f);

#define TESSEL_SVE_STORE(row)                                                 \
  if constexpr (kBiasClamp) {                                                 \
    c##row##0 = svmin_f32_x(pg, svmax_f32_x(pg, svadd_f32_x(pg, c##row##0, bias0), vlo), vhi); \
    c##row##1 = svmin_f32_x(pg, svmax_f32_x(pg, svadd_f32_x(pg, c##row##1, bias1), vlo), vhi); \
  }                                                                           \
  svst1_f32(pg, c + row * ldc, c##row##0);                                    \
  svst1_f32(pg, c + row * ldc + vl, c##row##1);

// kBiasClamp: the output stage (+ bias, clamp to [lo, hi]) applied before the store.
template <bool kBiasClamp>
inline __attribute__((always_inline)) void Tile(int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                                                bool accumulate, const float* bias, float lo, float hi) {
  const svbool_t pg = svptrue_b32();
  const int64_t vl = static_cast<int64_t>(svcntw());
  const svbool_t pq = svptrue_pat_b32(SV_VL4);
  TESSEL_SVE_LOAD(0)
  TESSEL_SVE_LOAD(1)
  TESSEL_SVE_LOAD(2)
  TESSEL_SVE_LOAD(3)
  TESSEL_SVE_LOAD(4)
  TESSEL_SVE_LOAD(5)
  TESSEL_SVE_LOAD(6)
  TESSEL_SVE_LOAD(7)
  for (int64_t p = 0; p < kc; ++p) {
    const svfloat32_t a0 = svld1rq_f32(pq, a);
    const svfloat32_t a1 = svld1rq_f32(pq, a + 4);
    const svfloat32_t b0 = svld1_f32(pg, b);
    const svfloat32_t b1 = svld1_f32(pg, b + vl);
    TESSEL_SVE_ROW(0, a0, 0)
    TESSEL_SVE_ROW(1, a0, 1)
    TESSEL_SVE_ROW(2, a0, 2)
    TESSEL_SVE_ROW(3, a0, 3)
    TESSEL_SVE_ROW(4, a1, 0)
    TESSEL_SVE_ROW(5, a1, 1)
    TESSEL_SVE_ROW(6, a1, 2)
    TESSEL_SVE_ROW(7, a1, 3)
    a += kMr;
    b += 2 * vl;
  }
  svfloat32_t bias0 = svdup_n_f32(0.0f), bias1 = bias0, vlo = bias0, vhi = bias0;
  if constexpr (kBiasClamp) {
    if (bias != nullptr) bias0 = svld1_f32(pg, bias), bias1 = svld1_f32(pg, bias + vl);
    vlo = svdup_n_f32(lo), vhi = svdup_n_f32(hi);
  }
  TESSEL_SVE_STORE(0)
  TESSEL_SVE_STORE(1)
  TESSEL_SVE_STORE(2)
  TESSEL_SVE_STORE(3)
  TESSEL_SVE_STORE(4)
  TESSEL_SVE_STORE(5)
  TESSEL_SVE_STORE(6)
  TESSEL_SVE_STORE(7)
}

void Ukernel8xVLx2(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool accumulate) {
  Tile<false>(kc, a, b, c, ldc, accumulate, nullptr, 0.0f, 0.0f);
}

void Ukernel8xVLx2BiasClamp(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool accumulate,
                            const float* bias, float lo, float hi) {
  Tile<true>(kc, a, b, c, ldc, accumulate, bias, lo, hi);
}

#undef TESSEL_SVE_ROW
#undef TESSEL_SVE_LOAD
#undef TESSEL_SVE_STORE

}  // namespace

void tessel_f32_gemm_ukernel_8xVLx2__sve(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                                         const float* b, int64_t ldb, float* c, int64_t ldc, void* workspace) {
  gemm_internal::Gemm(SveBlocking(), Ukernel8xVLx2, m, n, k, a, lda, b, ldb, c, ldc, workspace);
}
size_t tessel_f32_gemm_ukernel_8xVLx2__sve_workspace_bytes() {
  return gemm_internal::WorkspaceBytes({kMr, kMaxNr, kMc, kKc, kMaxNr * kNcVectors / 2});
}

TESSEL_DEFINE_F32_GEMM_UKERNEL_INFO_FUSED(tessel_f32_gemm_ukernel_8xVLx2__sve, SveBlocking(), Ukernel8xVLx2,
                                          Ukernel8xVLx2BiasClamp)

}  // namespace tessel
