// The f32 GEMM family: registration of every kernel built for this target (the XNNPACK "config"
// layer), and the GemmF32 operator that validates, selects once and owns the packing scratch.
#include "kernels/gemm/gemm.h"

#include <cassert>
#include <algorithm>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/gemm/internal/gemm_kernels.h"
#include "support/memory.h"

namespace tessel {
namespace {

// Cost = flops / sustained rate + packing traffic; rates are rough single-thread GFLOP/s figures
// (measured on the x86 host for x86 kernels, per 128-bit lane of a typical Cortex-A core for Arm).
template <int kGflops>
double PackedCost(const ProblemShape& s) {
  const double flops = 2.0 * s.m * s.n * s.k;
  const double packed_bytes = 4.0 * (s.m * s.k + s.k * s.n);
  return flops / (kGflops * 1e9) + packed_bytes / 20e9 + 1e-7;
}

// PackedCost with the register tile's waste: a partial tile costs a full one.
template <int kGflops, int kMr, int kNr>
double TiledCost(const ProblemShape& s) {
  const double mt = static_cast<double>((s.m + kMr - 1) / kMr * kMr);
  const double nt = static_cast<double>((s.n + kNr - 1) / kNr * kNr);
  const double flops = 2.0 * mt * nt * s.k;
  const double packed_bytes = 4.0 * (s.m * s.k + s.k * s.n);
  return flops / (kGflops * 1e9) + packed_bytes / 20e9 + 1e-7;
}

double ReferenceCost(const ProblemShape& s) { return 2.0 * s.m * s.n * s.k / 1e9; }

#if defined(__aarch64__)
double SveCost(const ProblemShape& s) {
  const double lanes = GetCpuFeatures().sve_vector_bits / 128.0;
  return 2.0 * s.m * s.n * s.k / (lanes * 16e9) + 4.0 * (s.m * s.k + s.k * s.n) / 20e9 + 1e-7;
}
#endif

// The metadata every f32 GEMM entry shares.
template <typename Fn>
KernelEntry<Fn> Entry(const char* op, const char* name, Isa isa, const char* backend,
                      double (*cost)(const ProblemShape&), Fn fn, size_t workspace) {
  return MakeKernelEntry(name, op, "f32", "row_major", isa, backend, nullptr, cost, fn, workspace);
}

#define TESSEL_GEMM_ENTRY(fn, isa, backend, cost) \
  Entry<GemmF32Fn>("gemm", #fn, isa, backend, cost, fn, fn##_workspace_bytes())
#define TESSEL_GEMM_PREPACKED_ENTRY(fn, isa, backend, cost) \
  Entry<UkernelInfoFn>("gemm_prepacked", #fn, isa, backend, cost, fn##_ukernel, 0)

KernelRegistry<GemmF32Fn>* BuildGemmRegistry() {
  auto* r = new KernelRegistry<GemmF32Fn>;
  r->Register(TESSEL_GEMM_ENTRY(tessel_f32_gemm__reference, Isa::kPortable, "reference", ReferenceCost));
  r->Register(TESSEL_GEMM_ENTRY(tessel_f32_gemm_ukernel_4x8__scalar, Isa::kPortable, "portable", PackedCost<4>));
#if defined(__x86_64__)
  r->Register(TESSEL_GEMM_ENTRY(tessel_f32_gemm_ukernel_6x16__avx2, Isa::kAvx2, "x86", PackedCost<60>));
  r->Register(TESSEL_GEMM_ENTRY(tessel_f32_gemm_ukernel_14x32__avx512, Isa::kAvx512, "x86", (TiledCost<120, 14, 32>)));
  r->Register(TESSEL_GEMM_ENTRY(tessel_f32_gemm_ukernel_7x64__avx512, Isa::kAvx512, "x86", (TiledCost<115, 7, 64>)));
#endif
#if defined(__aarch64__)
  r->Register(TESSEL_GEMM_ENTRY(tessel_f32_gemm_ukernel_8x12__neon, Isa::kNeon, "neon", PackedCost<12>));
  r->Register(TESSEL_GEMM_ENTRY(tessel_f32_gemm_ukernel_8xVLx2__sve, Isa::kSve, "sve", SveCost));
#endif
  return r;
}

KernelRegistry<UkernelInfoFn>* BuildPrepackedRegistry() {
  auto* r = new KernelRegistry<UkernelInfoFn>;
  r->Register(TESSEL_GEMM_PREPACKED_ENTRY(tessel_f32_gemm_ukernel_4x8__scalar, Isa::kPortable, "portable",
                                          PackedCost<4>));
#if defined(__x86_64__)
  r->Register(TESSEL_GEMM_PREPACKED_ENTRY(tessel_f32_gemm_ukernel_6x16__avx2, Isa::kAvx2, "x86", PackedCost<60>));
  r->Register(TESSEL_GEMM_PREPACKED_ENTRY(tessel_f32_gemm_ukernel_14x32__avx512, Isa::kAvx512, "x86",
                                          (TiledCost<120, 14, 32>)));
  r->Register(TESSEL_GEMM_PREPACKED_ENTRY(tessel_f32_gemm_ukernel_7x64__avx512, Isa::kAvx512, "x86",
                                          (TiledCost<115, 7, 64>)));
#endif
#if defined(__aarch64__)
  r->Register(TESSEL_GEMM_PREPACKED_ENTRY(tessel_f32_gemm_ukernel_8x12__neon, Isa::kNeon, "neon", PackedCost<12>));
  r->Register(TESSEL_GEMM_PREPACKED_ENTRY(tessel_f32_gemm_ukernel_8xVLx2__sve, Isa::kSve, "sve", SveCost));
#endif
  return r;
}

#undef TESSEL_GEMM_ENTRY
#undef TESSEL_GEMM_PREPACKED_ENTRY

}  // namespace

const KernelRegistry<GemmF32Fn>& GemmKernels() {
  // Leaked on purpose: a registry must outlive every static that may still select kernels.
  static const KernelRegistry<GemmF32Fn>* registry = BuildGemmRegistry();
  return *registry;
}

const KernelRegistry<UkernelInfoFn>& GemmPrepackedKernels() {
  static const KernelRegistry<UkernelInfoFn>* registry = BuildPrepackedRegistry();
  return *registry;
}

absl::StatusOr<GemmF32> GemmF32::Create(int64_t m, int64_t n, int64_t k) {
  if (m < 0 || n < 0 || k < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("GemmF32: sizes must be non-negative, got m=", m, " n=", n, " k=", k));
  }
  absl::StatusOr<const GemmKernel*> kernel = GemmKernels().Select("gemm", "f32", "row_major", {m, n, k, 0});
  if (!kernel.ok()) return kernel.status();
  GemmF32 op;
  op.m_ = m;
  op.n_ = n;
  op.k_ = k;
  op.kernel_ = *kernel;
  if (op.kernel_->workspace_bytes > 0) {
    op.workspace_ = std::shared_ptr<char>(static_cast<char*>(std::malloc(op.kernel_->workspace_bytes)), std::free);
    if (!op.workspace_) {
      return absl::ResourceExhaustedError(
          absl::StrCat("GemmF32: cannot allocate ", op.kernel_->workspace_bytes, " bytes of packing scratch"));
    }
  }
  return op;
}

void GemmF32::Run(const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc) const {
  assert(lda >= k_ && ldb >= n_ && ldc >= n_);
  kernel_->fn(m_, n_, k_, a, lda, b, ldb, c, ldc, workspace_.get());
}

}  // namespace tessel

namespace tessel {

absl::StatusOr<PackedGemmF32> PackedGemmF32::Create(int64_t n, int64_t k, const float* b, int64_t ldb, int64_t m_hint) {
  if (n < 0 || k < 0 || ldb < n || (b == nullptr && n > 0 && k > 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("PackedGemmF32: bad sizes n=", n, " k=", k, " ldb=", ldb, " (need n, k >= 0, ldb >= n and weights)"));
  }
  absl::StatusOr<const GemmPrepackedKernel*> kernel =
      GemmPrepackedKernels().Select("gemm_prepacked", "f32", "row_major", {std::max<int64_t>(m_hint, 1), n, k, 0});
  if (!kernel.ok()) {
    // A forced operator-level backend (e.g. "xnnpack") names no microkernel: fall back to the cheapest.
    kernel = GemmPrepackedKernels().Select("gemm_prepacked", "f32", "row_major", {std::max<int64_t>(m_hint, 1), n, k, 0}, "");
    if (!kernel.ok()) return kernel.status();
  }
  PackedGemmF32 op;
  op.n_ = n;
  op.k_ = k;
  op.kernel_ = *kernel;
  op.info_ = op.kernel_->fn();
  const size_t floats = static_cast<size_t>(std::max<int64_t>(gemm_internal::PackedBFloats(op.info_.blocking, k, n), 1));
  const size_t bytes = (floats * sizeof(float) + 63) / 64 * 64;
  // 2 MiB pages when large (support/memory.h).
  op.packed_ = std::shared_ptr<float>(static_cast<float*>(AllocateBuffer(bytes)), FreeBuffer);
  if (!op.packed_) {
    return absl::ResourceExhaustedError(absl::StrCat("PackedGemmF32: cannot allocate ", bytes, " bytes of packed weights"));
  }
  gemm_internal::PackBFull(op.info_.blocking, b, ldb, k, n, op.packed_.get());
  return op;
}

void PackedGemmF32::Run(int64_t m, const float* a, int64_t lda, float* c, int64_t ldc, const GemmEpilogue& epilogue,
                        int64_t n_begin, int64_t n_end, void* workspace) const {
  assert(lda >= k_ && ldc >= n_end && n_begin % panel_width() == 0);
  info_.prepacked(m, n_, k_, a, lda, packed_.get(), c, ldc, epilogue, n_begin, n_end, workspace);
}

size_t PackedGemmF32::workspace_bytes() const { return gemm_internal::PrepackedWorkspaceBytes(info_.blocking); }

size_t PackedGemmF32::packed_bytes() const {
  return static_cast<size_t>(gemm_internal::PackedBFloats(info_.blocking, k_, n_)) * sizeof(float);
}

}  // namespace tessel
