// Ahead-of-time memory planning: tensor lifetimes from a scheduled graph, offsets in one 64-byte
// aligned arena chosen by a named algorithm, in-place reuse for elementwise ops whose input dies
// there, a verifier that rejects overlapping live ranges, and the peak vs. the lower bound.
#ifndef TESSEL_CODEGEN_MEMORY_PLANNER_H_
#define TESSEL_CODEGEN_MEMORY_PLANNER_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/graph.h"

namespace tessel {

// One buffer to place. Steps are positions in the execution order; a tensor is live on
// [first_step, last_step] inclusive.
struct TensorLifetime {
  std::string name;
  size_t bytes = 0;
  int first_step = 0;
  int last_step = 0;
  // Index of an earlier lifetime whose buffer this one may take over (in-place), or -1. Only valid
  // when that tensor's last step is this one's first step and it is at least as large.
  int reuse_of = -1;
};

struct MemoryPlan {
  std::string algorithm;
  std::vector<size_t> offsets;  // per lifetime
  size_t arena_bytes = 0;
  size_t lower_bound = 0;  // largest total of simultaneously live (aligned) bytes
  int in_place = 0;        // lifetimes that took over another's buffer
};

inline constexpr size_t kArenaAlignment = 64;

// Algorithms: "greedy-by-size" (largest first, each into the best-fitting gap among the tensors it
// overlaps in time; TFLite's arena planner), "first-fit" (in order of first use, lowest offset that
// fits), "naive" (no reuse; for debugging and as a baseline).
absl::StatusOr<MemoryPlan> PlanMemory(const std::vector<TensorLifetime>& tensors, absl::string_view algorithm);
std::vector<std::string> MemoryPlanAlgorithms();

// Rejects any two tensors live at the same step whose byte ranges overlap (in-place pairs excepted
// at their hand-over step), misaligned offsets, and offsets past the arena.
absl::Status VerifyMemoryPlan(const std::vector<TensorLifetime>& tensors, const MemoryPlan& plan);

size_t MemoryLowerBound(const std::vector<TensorLifetime>& tensors);

// Lifetimes of every non-constant value of `graph` run in `order`: graph inputs are live from step 0,
// graph outputs until the last step. `value_index` gets, per lifetime, the Value it belongs to. With
// allow_in_place, unary/binary elementwise ops whose same-sized input dies at that op reuse it.
struct GraphLifetimes {
  std::vector<TensorLifetime> tensors;
  std::vector<const Value*> values;
};
// `no_in_place`: outputs that must not share their input's memory (a data-dependent extent, set at run
// time, may differ from the input's although their bounds agree). `unplanned`: values that live outside
// the arena (no bound on their extent): 0 bytes here.
absl::StatusOr<GraphLifetimes> ComputeLifetimes(const Graph& graph, const std::vector<Node*>& order, bool allow_in_place,
                                                const absl::flat_hash_set<const Value*>* no_in_place = nullptr,
                                                const absl::flat_hash_set<const Value*>* unplanned = nullptr);

// "arena 12.3 MB (greedy-by-size), lower bound 12.0 MB (+2.5%), 17 tensors in place".
std::string DescribePlan(const MemoryPlan& plan);

}  // namespace tessel

#endif  // TESSEL_CODEGEN_MEMORY_PLANNER_H_
