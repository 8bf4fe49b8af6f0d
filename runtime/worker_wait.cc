#include "runtime/worker_wait.h"

#include <algorithm>
#include <chrono>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace tessel {

const char* WorkerWaitName(WorkerWait wait) {
  switch (wait) {
    case WorkerWait::kAdaptive:
      return "adaptive";
    case WorkerWait::kSpin:
      return "spin";
    case WorkerWait::kSleep:
      return "sleep";
  }
  return "?";
}

absl::StatusOr<WorkerWait> ParseWorkerWait(absl::string_view name) {
  for (WorkerWait w : {WorkerWait::kAdaptive, WorkerWait::kSpin, WorkerWait::kSleep}) {
    if (name == WorkerWaitName(w)) return w;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("worker wait '", name, "': expected adaptive, spin or sleep"));
}

WorkerHandoff::WorkerHandoff(pthreadpool_t pool, int threads, WorkerWait wait, int ops)
    : pool_(pool),
      threads_(threads),
      wait_(wait),
      live_flags_(wait == WorkerWait::kSleep ? static_cast<uint32_t>(PTHREADPOOL_FLAG_YIELD_WORKERS) : 0u),
      best_micros_(static_cast<size_t>(std::max(ops, 0)), std::numeric_limits<double>::infinity()) {}

void WorkerHandoff::SetOverloaded(bool overloaded) {
  overloaded_ = overloaded;
  live_flags_ = overloaded ? static_cast<uint32_t>(PTHREADPOOL_FLAG_YIELD_WORKERS) : 0u;
  runs_to_probe_ = interval_;
  spin_runs_ = 0;
}

void WorkerHandoff::GiveUpSpinning() {
  // Given up again soon after spinning resumed: probe less often.
  interval_ = spin_runs_ <= interval_ ? std::min(2 * interval_, kMaxProbeInterval) : kProbeInterval;
  SetOverloaded(true);
}

void WorkerHandoff::AfterOp(int op, double micros, bool fixed_flags) {
  if (!times_ops()) return;
  if (op >= static_cast<int>(best_micros_.size())) best_micros_.resize(op + 1, micros);  // unsized handoff
  double& best = best_micros_[op];
  const bool slow = micros > kSlowFactor * best + kSlowMarginMicros;
  best = std::min(best, micros);
  if (overloaded_) {
    if (fixed_flags) Settle();  // its regions left the workers spinning
  } else if (slow && Settle()) {
    GiveUpSpinning();
  }
}

void WorkerHandoff::AfterRun() {
  if (pool_ == nullptr || wait_ != WorkerWait::kAdaptive) return;
  if (overloaded_) {
    if (--runs_to_probe_ <= 0) SetOverloaded(false);  // the next run spins: the probe
    return;
  }
  ++spin_runs_;
  if (Settle()) GiveUpSpinning();
}

bool WorkerHandoff::Settle() {
  if (pool_ == nullptr) return false;
  const auto start = std::chrono::steady_clock::now();
  // One item per thread, so that every worker runs it and reads the yield flag (a region of one item
  // runs on the calling thread alone).
  pthreadpool_parallelize_1d(
      pool_, [](void*, size_t) {}, nullptr, static_cast<size_t>(threads_), PTHREADPOOL_FLAG_YIELD_WORKERS);
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() >=
         kPreemptedMicros;
}

}  // namespace tessel
