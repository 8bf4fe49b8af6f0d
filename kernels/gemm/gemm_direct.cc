// The direct-A GEMM family: registration, weight packing and the DirectGemmF32 operator; also the
// portable twin of the microkernels (plain loops over the same packed layout).
#include "kernels/gemm/gemm_direct.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "kernels/gemm/internal/gemm_direct_kernels.h"
#include "support/memory.h"

namespace tessel {

void tessel_f32_gemm_direct_ukernel_1x16__scalar(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                                                 const float* packed_b, const float* bias, float* c, int64_t ldc,
                                                 const float* residual, int64_t ldr, float lo, float hi) {
  constexpr int64_t kNr = 16;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; j += kNr) {
      float acc[kNr];
      for (int64_t jj = 0; jj < kNr; ++jj) acc[jj] = bias[j + jj];
      const float* b = packed_b + j * k;
      for (int64_t p = 0; p < k; ++p, b += kNr) {
        const float av = a[i * lda + p];
        for (int64_t jj = 0; jj < kNr; ++jj) acc[jj] += av * b[jj];
      }
      for (int64_t jj = 0; jj < kNr && j + jj < n; ++jj) {
        float v = acc[jj] + (residual ? residual[i * ldr + j + jj] : 0.0f);
        v = v < lo ? lo : v;
        c[i * ldc + j + jj] = v > hi ? hi : v;
      }
    }
  }
}

namespace {

// Seconds for the problem at `gflops` with partial tiles costing full ones, plus the output written.
template <int kGflops, int kMr, int kNr>
double TiledCost(const ProblemShape& s) {
  const double mt = static_cast<double>((s.m + kMr - 1) / kMr * kMr);
  const double nt = static_cast<double>((s.n + kNr - 1) / kNr * kNr);
  return 2.0 * mt * nt * s.k / (kGflops * 1e9) + 4.0 * s.m * s.n / 40e9 + 1e-7;
}

DirectGemmKernel Entry(const char* name, Isa isa, const char* backend, double (*cost)(const ProblemShape&),
                       DirectGemmUkernel ukernel) {
  return MakeKernelEntry(name, "gemm_direct", "f32", "row_major", isa, backend, nullptr, cost, ukernel);
}

constexpr DirectGemmUkernel kScalar{tessel_f32_gemm_direct_ukernel_1x16__scalar, 16};
#if defined(__x86_64__)
constexpr DirectGemmUkernel kAvx512_8x32{tessel_f32_gemm_direct_ukernel_8x32__avx512, 32, 8};
constexpr DirectGemmUkernel kAvx512_12x16{tessel_f32_gemm_direct_ukernel_12x16__avx512, 16, 12};
constexpr DirectGemmUkernel kAvx2_6x16{tessel_f32_gemm_direct_ukernel_6x16__avx2, 16, 6};
#endif

KernelRegistry<DirectGemmUkernel>* BuildRegistry() {
  auto* r = new KernelRegistry<DirectGemmUkernel>;
  r->Register(Entry("tessel_f32_gemm_direct_ukernel_1x16__scalar", Isa::kPortable, "portable", TiledCost<3, 1, 16>,
                    kScalar));
#if defined(__x86_64__)
  // Rates measured on the AVX-512 host against XNNPACK's fully connected (~150-180 GFLOP/s there).
  r->Register(Entry("tessel_f32_gemm_direct_ukernel_8x32__avx512", Isa::kAvx512, "x86", TiledCost<205, 8, 32>,
                    kAvx512_8x32));
  r->Register(Entry("tessel_f32_gemm_direct_ukernel_12x16__avx512", Isa::kAvx512, "x86", TiledCost<180, 12, 16>,
                    kAvx512_12x16));
  // Zen 4 capped at AVX2: 84-107 GFLOP/s on MobileNetV2's 1x1 convolutions (K = 24-320), where the
  // blocked 6x16 GEMM, packing A, ran 46-79.
  r->Register(Entry("tessel_f32_gemm_direct_ukernel_6x16__avx2", Isa::kAvx2, "x86", TiledCost<100, 6, 16>,
                    kAvx2_6x16));
#endif
  return r;
}

}  // namespace

const KernelRegistry<DirectGemmUkernel>& DirectGemmKernels() {
  // Leaked on purpose, like the other kernel registries.
  static const KernelRegistry<DirectGemmUkernel>* registry = BuildRegistry();
  return *registry;
}

namespace {

// TESSEL_FORCE_BACKEND applies here only where it names one of this family's kernels or backends;
// operator-level names ("gemm", "xnnpack") were already honoured by operator selection.
std::string FamilyForce() {
  const std::string force = ForcedBackendFromEnv();
  if (force.empty()) return "";
  for (const DirectGemmKernel& e : DirectGemmKernels().entries()) {
    if (ForceAllows(force, e.backend, e.name)) return force;
  }
  return "";
}

}  // namespace

double DirectGemmF32::Cost(int64_t m, int64_t n, int64_t k) {
  absl::StatusOr<const DirectGemmKernel*> e =
      DirectGemmKernels().Select("gemm_direct", "f32", "row_major", {m, n, k, 0}, FamilyForce());
  if (!e.ok() || (*e)->backend == "portable") return std::numeric_limits<double>::infinity();
  return (*e)->cost(ProblemShape{m, n, k, 0});
}

absl::StatusOr<DirectGemmF32> DirectGemmF32::Create(int64_t n, int64_t k, const float* b, int64_t ldb,
                                                    const float* bias, int64_t m_hint) {
  if (n < 0 || k < 0 || ldb < n) {
    return absl::InvalidArgumentError(absl::StrCat("DirectGemmF32: bad sizes n=", n, " k=", k, " ldb=", ldb));
  }
  return Pack(n, k, b, ldb, 1, bias, m_hint);
}

absl::StatusOr<DirectGemmF32> DirectGemmF32::CreateFromTransposed(int64_t n, int64_t k, const float* b_t,
                                                                  const float* bias, int64_t m_hint) {
  if (n < 0 || k < 0) return absl::InvalidArgumentError(absl::StrCat("DirectGemmF32: bad sizes n=", n, " k=", k));
  return Pack(n, k, b_t, 1, k, bias, m_hint);
}

absl::StatusOr<DirectGemmF32> DirectGemmF32::Pack(int64_t n, int64_t k, const float* b, int64_t row_stride,
                                                  int64_t col_stride, const float* bias, int64_t m_hint) {
  if (b == nullptr && n * k > 0) return absl::InvalidArgumentError("DirectGemmF32: null weights");
  absl::StatusOr<const DirectGemmKernel*> e = DirectGemmKernels().Select("gemm_direct", "f32", "row_major",
                                                                    {std::max<int64_t>(m_hint, 1), n, k, 0},
                                                                    FamilyForce());
  if (!e.ok()) return e.status();
  DirectGemmF32 op;
  op.n_ = n;
  op.k_ = k;
  op.kernel_ = *e;
  op.ukernel_ = (*e)->fn;
  const int64_t nr = op.ukernel_.nr;
  const int64_t np = (n + nr - 1) / nr * nr;
  const size_t floats = static_cast<size_t>(np * k + np);
  void* mem = AllocateBuffer(floats * sizeof(float) + 64);  // 2 MiB pages when large (support/memory.h)
  if (mem == nullptr) return absl::ResourceExhaustedError("DirectGemmF32: cannot allocate the packed weights");
  op.packed_ = std::shared_ptr<float>(static_cast<float*>(mem), FreeBuffer);
  float* packed = op.packed_.get();
  std::memset(packed, 0, floats * sizeof(float));
  for (int64_t j0 = 0; j0 < np; j0 += nr) {
    float* panel = packed + j0 * k;
    for (int64_t p = 0; p < k; ++p) {
      for (int64_t jj = 0; jj < nr && j0 + jj < n; ++jj) panel[p * nr + jj] = b[p * row_stride + (j0 + jj) * col_stride];
    }
  }
  if (bias) std::memcpy(packed + np * k, bias, n * sizeof(float));
  return op;
}

void DirectGemmF32::Run(int64_t m, const float* a, int64_t lda, float* c, int64_t ldc, const float* residual,
                        int64_t ldr, float lo, float hi) const {
  if (m <= 0 || n_ == 0) return;
  const int64_t np = (n_ + ukernel_.nr - 1) / ukernel_.nr * ukernel_.nr;
  ukernel_.fn(m, n_, k_, a, lda, packed_.get(), packed_.get() + np * k_, c, ldc, residual, ldr, lo, hi);
}

void DirectGemmF32::RunColumns(int64_t m, const float* a, int64_t lda, float* c, int64_t ldc, const float* residual,
                               int64_t ldr, float lo, float hi, int64_t n_begin, int64_t n_end) const {
  n_end = std::min(n_end, n_);
  if (m <= 0 || n_begin >= n_end) return;
  const int64_t np = (n_ + ukernel_.nr - 1) / ukernel_.nr * ukernel_.nr;
  // Panel n_begin / nr starts n_begin * k floats in; the padded bias follows the panels.
  ukernel_.fn(m, n_end - n_begin, k_, a, lda, packed_.get() + n_begin * k_, packed_.get() + np * k_ + n_begin,
              c + n_begin, ldc, residual ? residual + n_begin : nullptr, ldr, lo, hi);
}

}  // namespace tessel
