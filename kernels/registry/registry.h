// The kernel registry. Every implementation of an op is one KernelEntry<Fn>: a microkernel-style name
// (what, "__", how: "tessel_f32_gemm_ukernel_14x32__avx512"), the key (op, dtypes, layout, ISA), the
// backend it belongs to, a legality check, a cost estimate and the kernel itself, typed as the op's
// function (or descriptor) type Fn, so that callers never cast. Selection happens once, outside the hot
// loop: the cheapest legal entry whose ISA this CPU has (CpuSupports, which TESSEL_MAX_ISA caps).
// TESSEL_FORCE_BACKEND=<backend> (reference, portable, x86, neon, sve) or =<kernel name>, or a
// comma-separated list of them, restricts the choice, for debugging. Each kernel family owns one typed
// registry, filled once (GemmKernels() in kernels/gemm, GemvKernels() in kernels/gemv, RowDotKernels()
// in kernels/rowdot, FlashTileKernels() in kernels/attention, QGemmKernels() in kernels/int8, ...).
// Whole graph operators (a fused convolution, a Gemm node) have their own registry of operator-level
// kernels in op_kernel.h / op_kernels.h, with backends xnnpack, winograd, gemm and portable; it filters
// with the same CpuSupports and ForceAllows.
#ifndef TESSEL_KERNELS_REGISTRY_REGISTRY_H_
#define TESSEL_KERNELS_REGISTRY_REGISTRY_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

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
  kAvxVnni,  // kAvx2 and AVX-VNNI (vpdpbusd on ymm)
  kSveI8mm,  // kSve and its int8 matrix multiply (USMMLA); new values go last, so that the earlier keep their numbers
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

// What selection knows of a kernel, whatever its function type.
struct KernelInfo {
  std::string name;     // unique, e.g. "tessel_q4_0_gemv_ukernel_1x32__avx512"
  std::string op;       // "gemm", "gemv"
  std::string dtypes;   // "f32", "q4_0xf32"
  std::string layout;   // "row_major", "q4_0_rows"
  Isa isa = Isa::kPortable;
  std::string backend;  // "reference", "portable", "x86", "neon", "sve"
  bool (*legal)(const ProblemShape&) = nullptr;   // nullptr: every shape
  double (*cost)(const ProblemShape&) = nullptr;  // estimated seconds on this shape
  size_t workspace_bytes = 0;                     // scratch the caller passes in (GEMM packing)
};

// A kernel of one family: its metadata and the kernel, of the family's type (GemmF32Fn, GemvFn, ...).
template <typename Fn>
struct KernelEntry : KernelInfo {
  Fn fn{};
};

// An entry from all its fields, for the families' registration functions.
template <typename Fn>
KernelEntry<Fn> MakeKernelEntry(std::string name, std::string op, std::string dtypes, std::string layout, Isa isa,
                                std::string backend, bool (*legal)(const ProblemShape&),
                                double (*cost)(const ProblemShape&), Fn fn, size_t workspace_bytes = 0) {
  KernelEntry<Fn> e;
  e.name = std::move(name);
  e.op = std::move(op);
  e.dtypes = std::move(dtypes);
  e.layout = std::move(layout);
  e.isa = isa;
  e.backend = std::move(backend);
  e.legal = legal;
  e.cost = cost;
  e.workspace_bytes = workspace_bytes;
  e.fn = fn;
  return e;
}

// Whether `force` admits a kernel: empty, or a comma-separated list of backends and kernel names of
// which one is the kernel's ("xnnpack,portable": XNNPACK's operators and the portable layout kernels).
bool ForceAllows(absl::string_view force, absl::string_view backend, absl::string_view name);

// The force setting from TESSEL_FORCE_BACKEND ("" when unset).
std::string ForcedBackendFromEnv();

// The selection every typed registry shares, over its entries' metadata (kept out of the template so
// that there is one copy of the rule).
namespace kernel_selection {
// The estimate selection ranks `e` by: on aarch64 the Arm lab's table where it lists e (lab_costs.h,
// relative to an anchor among `all`), else e.cost.
double Cost(absl::Span<const KernelInfo* const> all, const KernelInfo& e, const ProblemShape& shape);
// The cheapest of `all` with the key that is legal for `shape`, runs on this CPU and passes `force`.
// NotFound says which candidates were refused why.
absl::StatusOr<const KernelInfo*> Select(absl::Span<const KernelInfo* const> all, absl::string_view op,
                                         absl::string_view dtypes, absl::string_view layout,
                                         const ProblemShape& shape, absl::string_view force);
}  // namespace kernel_selection

template <typename Fn>
class KernelRegistry {
 public:
  using Entry = KernelEntry<Fn>;

  void Register(Entry entry) { entries_.push_back(std::move(entry)); }
  // Every entry for the key, whatever the CPU, in registration order.
  std::vector<const Entry*> Find(absl::string_view op, absl::string_view dtypes, absl::string_view layout) const {
    std::vector<const Entry*> out;
    for (const Entry& e : entries_) {
      if (e.op == op && e.dtypes == dtypes && e.layout == layout) out.push_back(&e);
    }
    return out;
  }
  const Entry* FindByName(absl::string_view name) const {
    for (const Entry& e : entries_) {
      if (e.name == name) return &e;
    }
    return nullptr;
  }
  const std::vector<Entry>& entries() const { return entries_; }
  double Cost(const KernelInfo& e, const ProblemShape& shape) const {
    return kernel_selection::Cost(Infos(), e, shape);
  }

  // The cheapest entry that is legal for `shape`, runs on this CPU and passes `force` (backend or
  // kernel names, as ForceAllows; empty: no restriction). NotFound says which candidates were refused why.
  absl::StatusOr<const Entry*> Select(absl::string_view op, absl::string_view dtypes, absl::string_view layout,
                                      const ProblemShape& shape, absl::string_view force) const {
    absl::StatusOr<const KernelInfo*> e = kernel_selection::Select(Infos(), op, dtypes, layout, shape, force);
    if (!e.ok()) return e.status();
    return static_cast<const Entry*>(*e);  // one of entries_
  }
  // Select() with force = TESSEL_FORCE_BACKEND from the environment.
  absl::StatusOr<const Entry*> Select(absl::string_view op, absl::string_view dtypes, absl::string_view layout,
                                      const ProblemShape& shape) const {
    return Select(op, dtypes, layout, shape, ForcedBackendFromEnv());
  }

 private:
  std::vector<const KernelInfo*> Infos() const {
    std::vector<const KernelInfo*> out;
    out.reserve(entries_.size());
    for (const Entry& e : entries_) out.push_back(&e);
    return out;
  }

  std::vector<Entry> entries_;
};

}  // namespace tessel

#endif  // TESSEL_KERNELS_REGISTRY_REGISTRY_H_
