// Portable f32 GEMM: the reference triple loop (the oracle) and the packed driver with a plain C++
// 4x8 microkernel that any compiler can vectorize.
#include <cstddef>
#include <cstdint>

#include "kernels/gemm/internal/gemm_driver.h"
#include "kernels/gemm/internal/gemm_kernels.h"

namespace tessel {
namespace {

constexpr gemm_internal::Blocking kScalarBlocking = {4, 8, 128, 256, 1024};

void Ukernel4x8(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool accumulate) {
  float acc[4][8] = {};
  for (int64_t p = 0; p < kc; ++p) {
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 8; ++j) acc[i][j] += a[p * 4 + i] * b[p * 8 + j];
    }
  }
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 8; ++j) c[i * ldc + j] = accumulate ? c[i * ldc + j] + acc[i][j] : acc[i][j];
  }
}

}  // namespace

void tessel_f32_gemm__reference(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                                int64_t ldb, float* c, int64_t ldc, void* workspace) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t p = 0; p < k; ++p) acc += double(a[i * lda + p]) * b[p * ldb + j];
      c[i * ldc + j] = static_cast<float>(acc);
    }
  }
}
size_t tessel_f32_gemm__reference_workspace_bytes() { return 0; }

void tessel_f32_gemm_ukernel_4x8__scalar(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                                         const float* b, int64_t ldb, float* c, int64_t ldc, void* workspace) {
  gemm_internal::Gemm(kScalarBlocking, Ukernel4x8, m, n, k, a, lda, b, ldb, c, ldc, workspace);
}
size_t tessel_f32_gemm_ukernel_4x8__scalar_workspace_bytes() {
  return gemm_internal::WorkspaceBytes(kScalarBlocking);
}

TESSEL_DEFINE_F32_GEMM_UKERNEL_INFO(tessel_f32_gemm_ukernel_4x8__scalar, kScalarBlocking, Ukernel4x8)

}  // namespace tessel
