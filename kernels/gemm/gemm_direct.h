// f32 GEMM over prepacked weights that reads A in place: the path for short K (pointwise convolutions
// over up to ~1k channels: MobileNet's expansions and projections), where packing A, as the blocked
// GEMM does, costs about as much as the multiplication. Weights are packed once into panels of `nr`
// columns (k-major, zero-padded); the bias starts the accumulators; residual and clamp are applied as
// each register tile is stored, so C is written once.
//
// Kernels (DirectGemmKernels(), op "gemm_direct", dtypes "f32", layout "row_major"):
//   tessel_f32_gemm_direct_ukernel_1x16__scalar   portable twin, any CPU
//   tessel_f32_gemm_direct_ukernel_8x32__avx512   16 zmm accumulators, columns masked at the edge
//   tessel_f32_gemm_direct_ukernel_12x16__avx512  12 zmm accumulators, for n <= 16
//   tessel_f32_gemm_direct_ukernel_6x16__avx2     12 ymm accumulators, columns masked at the edge
// Against XNNPACK's f32 fully connected (7x16 broadcast tile) on MobileNetV2's 1x1 shapes, 1 thread
// (gemm_benchmark "direct" rows, 2026-11-24): 1.1-1.45x faster with warm caches; with every cache flushed
// before each run, 0.9-1.2x (the 112x112 expansion, 12544 x 96 x 16, is the 0.9x).
#ifndef TESSEL_KERNELS_GEMM_GEMM_DIRECT_H_
#define TESSEL_KERNELS_GEMM_GEMM_DIRECT_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "kernels/gemm/gemm_epilogue.h"
#include "kernels/registry/registry.h"

namespace tessel {

// C[i, j] = clamp(bias[j] + sum_p A[i, p] B[p, j] + R[i, j], lo, hi) for i < m, j < n. packed_b holds
// ceil(n / nr) panels of k x nr floats, 64-byte aligned; bias has ceil(n / nr) * nr floats (zero
// padded); residual may be null and may alias C (each element is read before it is overwritten).
using DirectGemmF32Fn = void (*)(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* packed_b,
                                 const float* bias, float* c, int64_t ldc, const float* residual, int64_t ldr,
                                 float lo, float hi);

// What a KernelEntry of this family holds: the kernel and its panel width.
struct DirectGemmUkernel {
  DirectGemmF32Fn fn = nullptr;
  int64_t nr = 0;  // columns per packed panel
  int64_t mr = 1;  // rows per register tile (a row split in multiples of it leaves no partial tile)
};
using DirectGemmKernel = KernelEntry<DirectGemmUkernel>;

const KernelRegistry<DirectGemmUkernel>& DirectGemmKernels();

// The operator: weights packed once for the kernel chosen on (m_hint, n, k); Run is thread-safe (no
// scratch) and never allocates.
class DirectGemmF32 {
 public:
  // B is [k x n] with row stride ldb; bias (n floats) may be null. NotFound when no kernel runs on this
  // CPU or forcing (TESSEL_FORCE_BACKEND) leaves none; InvalidArgument for negative sizes.
  static absl::StatusOr<DirectGemmF32> Create(int64_t n, int64_t k, const float* b, int64_t ldb, const float* bias,
                                              int64_t m_hint);
  // The same from B^T, [n x k] row-major: convolution weights [M, KH, KW, C] as they are stored.
  static absl::StatusOr<DirectGemmF32> CreateFromTransposed(int64_t n, int64_t k, const float* b_t,
                                                            const float* bias, int64_t m_hint);
  // Estimated seconds for m rows with the kernel Create would choose on this CPU (what operator costs
  // use); infinity when no optimized kernel runs here.
  static double Cost(int64_t m, int64_t n, int64_t k);

  void Run(int64_t m, const float* a, int64_t lda, float* c, int64_t ldc, const float* residual, int64_t ldr,
           float lo, float hi) const;
  // Columns [n_begin, n_end) only: both multiples of panel_width() (n_end may also be n()); c and
  // residual point at column 0 as for Run. The split a few rows leave to threads.
  void RunColumns(int64_t m, const float* a, int64_t lda, float* c, int64_t ldc, const float* residual, int64_t ldr,
                  float lo, float hi, int64_t n_begin, int64_t n_end) const;
  const DirectGemmKernel& kernel() const { return *kernel_; }
  int64_t panel_width() const { return ukernel_.nr; }
  int64_t tile_rows() const { return ukernel_.mr; }
  int64_t n() const { return n_; }
  int64_t k() const { return k_; }

 private:
  // Selects the kernel and packs B[p, j] = b[p * row_stride + j * col_stride].
  static absl::StatusOr<DirectGemmF32> Pack(int64_t n, int64_t k, const float* b, int64_t row_stride,
                                            int64_t col_stride, const float* bias, int64_t m_hint);

  int64_t n_ = 0, k_ = 0;
  const DirectGemmKernel* kernel_ = nullptr;
  DirectGemmUkernel ukernel_{};
  std::shared_ptr<float> packed_;  // panels, then the padded bias
};

}  // namespace tessel

#endif  // TESSEL_KERNELS_GEMM_GEMM_DIRECT_H_
