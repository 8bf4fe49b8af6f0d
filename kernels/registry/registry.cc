// Kernel selection: a flat table (a few dozen entries) per family, filtered, then the minimum cost.
#include "kernels/registry/registry.h"

#include <cstdlib>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/registry/lab_costs.h"

namespace tessel {

absl::string_view IsaName(Isa isa) {
  switch (isa) {
    case Isa::kPortable: return "portable";
    case Isa::kAvx2: return "avx2";
    case Isa::kAvx512: return "avx512";
    case Isa::kAvx512Vnni: return "avx512vnni";
    case Isa::kNeon: return "neon";
    case Isa::kDotprod: return "dotprod";
    case Isa::kI8mm: return "i8mm";
    case Isa::kSve: return "sve";
    case Isa::kSve2: return "sve2";
    case Isa::kAvxVnni: return "avxvnni";
    case Isa::kSveI8mm: return "sve_i8mm";
  }
  return "unknown";
}

bool CpuSupports(Isa isa) {
  const CpuFeatures& f = GetCpuFeatures();
  const bool avx512 = f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq && f.fma && f.f16c;
  switch (isa) {
    case Isa::kPortable: return true;
    case Isa::kAvx2: return f.avx2 && f.fma && f.f16c;
    case Isa::kAvx512: return avx512;
    case Isa::kAvx512Vnni: return avx512 && f.avx512vnni;
    case Isa::kNeon: return f.neon;
    case Isa::kDotprod: return f.neon && f.dotprod;
    case Isa::kI8mm: return f.neon && f.i8mm;
    case Isa::kSve: return f.sve;
    case Isa::kSve2: return f.sve2;
    case Isa::kSveI8mm: return f.sve && f.sve_i8mm;
    case Isa::kAvxVnni: return f.avx2 && f.fma && f.f16c && f.avx_vnni;
  }
  return false;
}

bool ForceAllows(absl::string_view force, absl::string_view backend, absl::string_view name) {
  if (force.empty()) return true;
  for (absl::string_view item : absl::StrSplit(force, ',')) {
    if (item == backend || item == name) return true;
  }
  return false;
}

std::string ForcedBackendFromEnv() {
  const char* force = std::getenv("TESSEL_FORCE_BACKEND");
  return force ? force : "";
}

namespace kernel_selection {

// On aarch64 a kernel the Arm lab's table lists costs its anchor's estimate times the lab's ratio
// (lab_costs.h); elsewhere, and for unlisted kernels, its own estimate.
double Cost(absl::Span<const KernelInfo* const> all, const KernelInfo& e, const ProblemShape& shape) {
#if defined(__aarch64__)
  if (const LabCost* lab = FindLabCost(LabCostGroup(e.op, e.dtypes), e.name)) {
    for (const KernelInfo* anchor : all) {
      if (anchor->name == lab->anchor && anchor->cost) return anchor->cost(shape) * lab->ratio;
    }
  }
#else
  (void)all;
#endif
  return e.cost ? e.cost(shape) : 0.0;
}

absl::StatusOr<const KernelInfo*> Select(absl::Span<const KernelInfo* const> all, absl::string_view op,
                                         absl::string_view dtypes, absl::string_view layout,
                                         const ProblemShape& shape, absl::string_view force) {
  const KernelInfo* best = nullptr;
  double best_cost = 0;
  std::vector<std::string> refused;
  for (const KernelInfo* e : all) {
    if (e->op != op || e->dtypes != dtypes || e->layout != layout) continue;
    if (!ForceAllows(force, e->backend, e->name)) {
      refused.push_back(absl::StrCat(e->name, " (not ", force, ")"));
    } else if (!CpuSupports(e->isa)) {
      refused.push_back(absl::StrCat(e->name, " (CPU lacks ", IsaName(e->isa), ")"));
    } else if (e->legal && !e->legal(shape)) {
      refused.push_back(absl::StrCat(e->name, " (shape not supported)"));
    } else {
      const double cost = Cost(all, *e, shape);
      if (!best || cost < best_cost) {
        best = e;
        best_cost = cost;
      }
    }
  }
  if (best) return best;
  return absl::NotFoundError(absl::StrCat("no ", op, " kernel for dtypes ", dtypes, ", layout ", layout,
                                          " and shape m=", shape.m, " n=", shape.n, " k=", shape.k,
                                          force.empty() ? "" : absl::StrCat(" with TESSEL_FORCE_BACKEND=", force),
                                          "; candidates: [", absl::StrJoin(refused, ", "),
                                          "]. Unset TESSEL_FORCE_BACKEND or pick a listed backend."));
}

}  // namespace kernel_selection

}  // namespace tessel
