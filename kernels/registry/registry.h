// The kernel registry. Every implementation of an op is one KernelEntry: a microkernel-style name
// (what, "__", how: "tessel_f32_gemm_ukernel_14x32__avx512"), the key (op, dtypes, layout, ISA), the
// backend it belongs to, a legality check and a cost estimate. Selection happens once, outside the hot
// loop: the cheapest legal entry whose ISA this CPU has. TESSEL_FORCE_BACKEND=<backend> (reference,
// portable, x86, neon, sve) or =<kernel name> restricts the choice, for debugging. Each kernel family
// owns one registry, filled once (GemmKernels() in kernels/gemm, GemvKernels() in kernels/gemv).
// Whole graph operators (a fused convolution, a Gemm node) have their own registry of operator-level
// kernels in op_kernel.h / op_kernels.h, with backends xnnpack, winograd, gemm and portable; the same
// TESSEL_FORCE_BACKEND restricts both.
#ifndef TESSEL_KERNELS_REGISTRY_REGISTRY_H_
#define TESSEL_KERNELS_REGISTRY_REGISTRY_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tessel {

enum class Isa : uint8_t {
  kPortable,  // plain C++, any CPU
  kAvx2,      // AVX2 + FMA + F16C
  kAvx512,    // AVX-512 F/BW/VL/DQ
  kAvx512Vnni,
  kNeon,
  kDotprod,
  kI8mm,
  kSve,
  kSve2,
  kAvxVnni,  // kAvx2 and AVX-VNNI (vpdpbusd on ymm); last, so that the earlier values keep their numbers
};
absl::string_view IsaName(Isa isa);
// Whether the running CPU (kernels/cpu) supports `isa`.
bool CpuSupports(Isa isa);

// The problem a kernel is asked to solve, in the op's own terms (GEMM: m, n, k; GEMV: rows, cols and
// the quantization group size).
struct ProblemShape {
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  int64_t group = 0;
};

struct KernelEntry {
  std::string name;     // unique, e.g. "tessel_q4_0_gemv_ukernel_1x32__avx512"
  std::string op;       // "gemm", "gemv"
  std::string dtypes;   // "f32", "q4_0xf32"
  std::string layout;   // "row_major", "q4_0_rows"
  Isa isa = Isa::kPortable;
  std::string backend;  // "reference", "portable", "x86", "neon", "sve"
  bool (*legal)(const ProblemShape&) = nullptr;   // nullptr: every shape
  double (*cost)(const ProblemShape&) = nullptr;  // estimated seconds on this shape
  const void* fn = nullptr;                       // the op's function type (see the op's header)
  size_t workspace_bytes = 0;                     // scratch the caller passes in (GEMM packing)

  // fn as the op's function type (GemmF32Fn, GemvFn, ...).
  template <typename Fn>
  Fn As() const {
    return reinterpret_cast<Fn>(const_cast<void*>(fn));
  }
};

class KernelRegistry {
 public:
  void Register(KernelEntry entry);
  // Every entry for the key, whatever the CPU, in registration order.
  std::vector<const KernelEntry*> Find(absl::string_view op, absl::string_view dtypes,
                                       absl::string_view layout) const;
  const std::vector<KernelEntry>& entries() const { return entries_; }
  // The estimate Select ranks `e` by: on aarch64 the Arm lab's table where it lists e (lab_costs.h),
  // else e.cost.
  double Cost(const KernelEntry& e, const ProblemShape& shape) const;

  // The cheapest entry that is legal for `shape`, runs on this CPU and passes `force` (a backend
  // name or a kernel name; empty: no restriction). NotFound says which candidates were refused why.
  absl::StatusOr<const KernelEntry*> Select(absl::string_view op, absl::string_view dtypes,
                                            absl::string_view layout, const ProblemShape& shape,
                                            absl::string_view force) const;
  // Select() with force = TESSEL_FORCE_BACKEND from the environment.
  absl::StatusOr<const KernelEntry*> Select(absl::string_view op, absl::string_view dtypes,
                                            absl::string_view layout, const ProblemShape& shape) const;

 private:
  std::vector<KernelEntry> entries_;
};

}  // namespace tessel

#endif  // TESSEL_KERNELS_REGISTRY_REGISTRY_H_
