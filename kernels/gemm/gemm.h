// f32 GEMM: C[m x n] = A[m x k] * B[k x n], row-major with leading dimensions; C is overwritten.
//
// Kernels (all registered in GemmKernels(), op "gemm", dtypes "f32", layout "row_major"):
//   tessel_f32_gemm__reference           plain triple loop, the oracle
//   tessel_f32_gemm_ukernel_4x8__scalar  packed driver + portable C++ microkernel
//   tessel_f32_gemm_ukernel_6x16__avx2   AVX2+FMA, 12 ymm accumulators
//   tessel_f32_gemm_ukernel_14x32__avx512  AVX-512, 28 zmm accumulators
//   tessel_f32_gemm_ukernel_7x64__avx512   AVX-512, 28 zmm accumulators (for 7 * k rows)
//   tessel_f32_gemm_ukernel_8x12__neon   NEON vfmaq_laneq
//   tessel_f32_gemm_ukernel_8xVLx2__sve  SVE, vector-length agnostic (nr = 2 vectors)
// A kernel never allocates: the caller passes entry.workspace_bytes of scratch (packed panels).
// GemmF32 is the operator layer: validates once, selects the kernel once, owns the scratch.
#ifndef TESSEL_KERNELS_GEMM_GEMM_H_
#define TESSEL_KERNELS_GEMM_GEMM_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "kernels/gemm/gemm_epilogue.h"
#include "kernels/gemm/internal/gemm_driver.h"
#include "kernels/registry/registry.h"

namespace tessel {

using GemmF32Fn = void (*)(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                           int64_t ldb, float* c, int64_t ldc, void* workspace);

using GemmKernel = KernelEntry<GemmF32Fn>;
// Every f32 GEMM kernel built for this target (whatever the CPU supports; see CpuSupports).
const KernelRegistry<GemmF32Fn>& GemmKernels();

// The packed kernels again, as prepacked-weights microkernels (op "gemm_prepacked"; fn returns the
// kernel's gemm_internal::UkernelInfo): what PackedGemmF32 selects from.
using UkernelInfoFn = gemm_internal::UkernelInfo (*)();
using GemmPrepackedKernel = KernelEntry<UkernelInfoFn>;
const KernelRegistry<UkernelInfoFn>& GemmPrepackedKernels();

class GemmF32 {
 public:
  // Picks the kernel for an m x n x k problem (TESSEL_FORCE_BACKEND honoured). InvalidArgument for
  // negative sizes, NotFound when forcing leaves no kernel.
  static absl::StatusOr<GemmF32> Create(int64_t m, int64_t n, int64_t k);

  // Leading dimensions must be at least k (lda), n (ldb, ldc); checked by assert only.
  void Run(const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc) const;
  const GemmKernel& kernel() const { return *kernel_; }

 private:
  int64_t m_ = 0, n_ = 0, k_ = 0;
  const GemmKernel* kernel_ = nullptr;
  std::shared_ptr<char> workspace_;
};

// Constant weights B [k x n] packed once for one microkernel (registry op "gemm_prepacked": the packed
// kernels above, same names and costs), then multiplied by any number of A rows with the output stage
// fused (GemmEpilogue). Run never allocates: each concurrent caller passes its own workspace_bytes().
class PackedGemmF32 {
 public:
  // Packs B (row stride ldb >= n). `m_hint` (rows per Run) only steers kernel selection.
  static absl::StatusOr<PackedGemmF32> Create(int64_t n, int64_t k, const float* b, int64_t ldb, int64_t m_hint);

  // C[i, j] = epilogue(sum_p A[i, p] B[p, j]) for i < m, n_begin <= j < n_end; n_begin must be a multiple
  // of panel_width(). The epilogue's residual rows are indexed from A's row 0.
  void Run(int64_t m, const float* a, int64_t lda, float* c, int64_t ldc, const GemmEpilogue& epilogue,
           int64_t n_begin, int64_t n_end, void* workspace) const;

  int64_t n() const { return n_; }
  int64_t k() const { return k_; }
  int64_t panel_width() const { return info_.blocking.nr; }  // columns per packed panel
  int64_t row_block() const { return info_.blocking.mc; }    // rows per pass over all of B
  size_t workspace_bytes() const;
  size_t packed_bytes() const;
  const GemmPrepackedKernel& kernel() const { return *kernel_; }

 private:
  int64_t n_ = 0, k_ = 0;
  const GemmPrepackedKernel* kernel_ = nullptr;
  gemm_internal::UkernelInfo info_{};
  std::shared_ptr<float> packed_;
};

}  // namespace tessel

#endif  // TESSEL_KERNELS_GEMM_GEMM_H_
