// The f32 vector kernel family: registration of every kernel built for this target (the XNNPACK
// "config" layer) with cost estimates, and selection by op.
#include "kernels/vector/vector.h"

#include <algorithm>

#include "kernels/cpu/cpu_features.h"
#include "kernels/vector/internal/vector_kernels.h"

namespace tessel {
namespace {

constexpr char kDtypes[] = "f32";
constexpr char kLayout[] = "contiguous";

// Seconds to move kBytes per element at kGBs GB/s, plus a call's fixed cost. kBytes is what each kernel
// streams (softmax: read x twice, write y, rescale y in place = 16; rmsnorm with a gain: read x twice,
// the gain, write y = 16; the portable kernels' extra copy or clamp pass included). Rates are single-
// thread figures from benchmarks/kernels:vector_benchmark on the x86 host, rows in cache: AVX-512 moved
// 29-200 GB/s of that traffic (sigmoid slowest, softmax 60), so 25; AVX2 17-220 GB/s (its exp loops
// at about half AVX-512's rate, the loads and stores nearer it), so 15; the portable C, built for
// baseline x86-64, 4-50 GB/s (its exp loops slowest), so 10. NEON is unmeasured (qemu timings mean
// nothing), so the 20 GB/s the other Arm kernel families assume.
template <int kBytes, int kGBs>
double StreamCost(const ProblemShape& s) {
  return static_cast<double>(kBytes) * s.m * s.n / (kGBs * 1e9) + 2e-8;
}

#if defined(__aarch64__)
// Wider SVE vectors halve the instructions per element but not the bytes: credit them up to 2x.
template <int kBytes, int kGBs>
double SveCost(const ProblemShape& s) {
  const double lanes = std::min(GetCpuFeatures().sve_vector_bits / 128.0, 2.0);
  return static_cast<double>(kBytes) * s.m * s.n / (kGBs * 1e9 * std::max(lanes, 1.0)) + 2e-8;
}
#endif

VectorKernel Entry(const char* op, const char* name, Isa isa, const char* backend, double (*cost)(const ProblemShape&),
                   VectorFn fn) {
  return MakeKernelEntry(name, op, kDtypes, kLayout, isa, backend, nullptr, cost, fn);
}

// All eight ops of one ISA. The portable kernels pay an extra pass for out-of-place unary calls (a
// copy) and for vadd/vmul (the clamp), hence their own byte counts.
#define TESSEL_VECTOR_ENTRIES(r, suffix, isa, backend, cost, gbs, unary_bytes, binary_bytes)               \
  (r)->Register(Entry("softmax", "tessel_f32_softmax__" #suffix, isa, backend, cost<16, gbs>,              \
                      &tessel_f32_softmax__##suffix));                                                     \
  (r)->Register(Entry("rmsnorm", "tessel_f32_rmsnorm__" #suffix, isa, backend, cost<16, gbs>,              \
                      &tessel_f32_rmsnorm__##suffix));                                                     \
  (r)->Register(Entry("clamp", "tessel_f32_clamp__" #suffix, isa, backend, cost<unary_bytes, gbs>,         \
                      &tessel_f32_clamp__##suffix));                                                       \
  (r)->Register(Entry("sigmoid", "tessel_f32_sigmoid__" #suffix, isa, backend, cost<unary_bytes, gbs>,     \
                      &tessel_f32_sigmoid__##suffix));                                                     \
  (r)->Register(Entry("silu", "tessel_f32_silu__" #suffix, isa, backend, cost<unary_bytes, gbs>,           \
                      &tessel_f32_silu__##suffix));                                                        \
  (r)->Register(Entry("hardswish", "tessel_f32_hardswish__" #suffix, isa, backend, cost<unary_bytes, gbs>, \
                      &tessel_f32_hardswish__##suffix));                                                   \
  (r)->Register(Entry("vadd", "tessel_f32_vadd_minmax__" #suffix, isa, backend, cost<binary_bytes, gbs>,   \
                      &tessel_f32_vadd_minmax__##suffix));                                                 \
  (r)->Register(Entry("vmul", "tessel_f32_vmul_minmax__" #suffix, isa, backend, cost<binary_bytes, gbs>,   \
                      &tessel_f32_vmul_minmax__##suffix));

KernelRegistry<VectorFn>* BuildVectorRegistry() {
  auto* r = new KernelRegistry<VectorFn>;
  // The reference is the oracle: 1 GB/s keeps it last unless forced.
  TESSEL_VECTOR_ENTRIES(r, reference, Isa::kPortable, "reference", StreamCost, 1, 8, 12)
  TESSEL_VECTOR_ENTRIES(r, autovec, Isa::kPortable, "portable", StreamCost, 10, 16, 20)
#if defined(__x86_64__)
  TESSEL_VECTOR_ENTRIES(r, avx2, Isa::kAvx2, "x86", StreamCost, 15, 8, 12)
  TESSEL_VECTOR_ENTRIES(r, avx512, Isa::kAvx512, "x86", StreamCost, 25, 8, 12)
#endif
#if defined(__aarch64__)
  TESSEL_VECTOR_ENTRIES(r, neon, Isa::kNeon, "neon", StreamCost, 20, 8, 12)
  TESSEL_VECTOR_ENTRIES(r, sve, Isa::kSve, "sve", SveCost, 20, 8, 12)
#endif
  return r;
}

#undef TESSEL_VECTOR_ENTRIES

}  // namespace

const KernelRegistry<VectorFn>& VectorKernels() {
  // Leaked on purpose: a registry must outlive every static that may still select kernels.
  static const KernelRegistry<VectorFn>* registry = BuildVectorRegistry();
  return *registry;
}

// TinyLlama's hidden size: costs only scale with the shape, so any row length picks the same kernel.
constexpr ProblemShape kTypicalRow = {1, 2048, 0, 0};

absl::StatusOr<const VectorKernel*> SelectVectorKernel(absl::string_view op, absl::string_view force) {
  return VectorKernels().Select(op, kDtypes, kLayout, kTypicalRow, force);
}

absl::StatusOr<const VectorKernel*> SelectVectorKernel(absl::string_view op) {
  return VectorKernels().Select(op, kDtypes, kLayout, kTypicalRow);
}

}  // namespace tessel
