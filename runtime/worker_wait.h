// How a session's pool workers wait between operators and between runs.
//
// pthreadpool offers two waits per parallel region: spin (about a million `pause`s, tens of
// milliseconds) or sleep on a futex at once (PTHREADPOOL_FLAG_YIELD_WORKERS). Sleeping costs a wake-up
// per operator: 10 us on a busy core, 80-100 us once the worker's core has gone idle (a halted vCPU;
// Zen 5 under KVM, 2026-11-27), a large share of a CNN's 0.1-0.5 ms operators at 2 threads. Spinning
// without bound burns cores after a run and, when other processes compete for the cores, makes every
// operator wait for a preempted spinner's next time slice.
//
// WorkerWait::kAdaptive (the default) bounds the spin by the run: kernels spin between operators, and
// after the last operator a no-op region with the yield flag puts the workers to sleep. That region
// also probes the machine: it answers in ~2 us when the workers are on their cores, and takes a
// scheduler slice when one was preempted. After such a slow answer the session puts the workers to
// sleep after every operator (a wake-up per operator, as kSleep) and tries spinning again after a
// growing number of runs (WorkerHandoff).
#ifndef TESSEL_RUNTIME_WORKER_WAIT_H_
#define TESSEL_RUNTIME_WORKER_WAIT_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "pthreadpool.h"

namespace tessel {

enum class WorkerWait {
  kAdaptive,  // spin within a run, sleep after it; sleep after every op while the cores are contended
  kSpin,      // always spin (pthreadpool's full spin, also after the run): idle dedicated cores only
  kSleep,     // sleep after every operator
};

// "adaptive", "spin", "sleep".
const char* WorkerWaitName(WorkerWait wait);
absl::StatusOr<WorkerWait> ParseWorkerWait(absl::string_view name);

// Carries out a WorkerWait for one session's pool (null for one thread: then every call is a no-op).
class WorkerHandoff {
 public:
  // A settle region slower than this means a worker was not on its core.
  static constexpr double kPreemptedMicros = 100;
  static constexpr double kSlowFactor = 2;
  static constexpr double kSlowMarginMicros = 500;
  // While overloaded, every `interval` runs one run spins again as a probe (a woken worker is scheduled
  // at once, so only a spinning one shows whether it keeps its core). The interval starts at
  // kProbeInterval and doubles, up to kMaxProbeInterval, each time spinning is given up again within
  // as many runs: on steadily contended cores a slow probe run comes ever more rarely.
  static constexpr int kProbeInterval = 8;
  static constexpr int kMaxProbeInterval = 1024;

  // `ops`: the operators of a run (AfterOp's op indices), sized here so that runs never allocate.
  WorkerHandoff(pthreadpool_t pool, int threads, WorkerWait wait, int ops = 0);

  // Whether regions whose flags are fixed when the kernel is created leave the workers spinning
  // (OpKernelArgs::spin_workers).
  bool kernels_spin() const { return wait_ != WorkerWait::kSleep; }
  // The live flags every other region reads (OpKernelArgs::live_flags); stable for this object's life.
  const uint32_t* live_flags() const { return &live_flags_; }
  // Whether AfterOp wants each operator's duration (adaptive waits with a pool).
  bool times_ops() const { return pool_ != nullptr && wait_ == WorkerWait::kAdaptive; }
  // Call after operator `op` of a run, with its duration when times_ops(); `fixed_flags`: its kernel's
  // regions have create-time flags. While spinning, an operator much slower than its best so far
  // (by kSlowFactor and kSlowMarginMicros) triggers a settle probe at once, so that a run that meets
  // contended cores pays for one slow operator rather than a scheduler slice per operator.
  void AfterOp(int op, double micros, bool fixed_flags);
  // Call after the last operator of a run.
  void AfterRun();
  // The adaptive wait currently puts the workers to sleep after every operator.
  bool overloaded() const { return overloaded_; }

 private:
  // Runs a no-op region that leaves the workers asleep; true when it took kPreemptedMicros or more.
  bool Settle();
  void SetOverloaded(bool overloaded);
  // Spinning showed a worker off its core: sleep after each operator from now on.
  void GiveUpSpinning();

  pthreadpool_t pool_;
  int threads_;
  WorkerWait wait_;
  uint32_t live_flags_;
  bool overloaded_ = false;
  int interval_ = kProbeInterval;  // runs between probes while overloaded
  int runs_to_probe_ = 0;          // runs before the next probe while overloaded
  int spin_runs_ = 0;              // runs since spinning resumed
  std::vector<double> best_micros_;  // per operator: its fastest run so far
};

}  // namespace tessel

#endif  // TESSEL_RUNTIME_WORKER_WAIT_H_
