// Thread pool: idle workers poll briefly (decode issues dozens of short loops per token) and then
// sleep on a condition variable; the caller only pays for a wake-up when someone sleeps.
#include "support/thread_pool.h"

#include <algorithm>

namespace tessel {
namespace {

// About 20-50 microseconds of polling before a worker goes to sleep.
constexpr int kSpinIterations = 20000;
constexpr uint64_t kIndexMask = 0xFFFFFFFFull;

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace

ThreadPool::ThreadPool(int num_threads) {
  for (int i = 1; i < num_threads; ++i) workers_.emplace_back([this, i] { WorkerLoop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_.store(true);
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

bool ThreadPool::HasWork() const {
  return static_cast<int64_t>(next_.load(std::memory_order_acquire) & kIndexMask) <
         num_tasks_.load(std::memory_order_acquire);
}

bool ThreadPool::RunOne(int thread) {
  uint64_t cur = next_.load(std::memory_order_acquire);
  for (;;) {
    const int64_t index = static_cast<int64_t>(cur & kIndexMask);
    // num_tasks_ may already belong to a newer loop than `cur`; then the exchange below fails.
    if (index >= num_tasks_.load(std::memory_order_acquire)) return false;
    if (next_.compare_exchange_weak(cur, cur + 1, std::memory_order_acq_rel, std::memory_order_acquire)) {
      fn_(ctx_, index, thread);
      done_.fetch_add(1, std::memory_order_acq_rel);
      return true;
    }
  }
}

void ThreadPool::RunImpl(int64_t num_tasks, TaskFn fn, void* ctx) {
  if (num_tasks <= 0) return;
  if (workers_.empty() || num_tasks == 1) {
    for (int64_t t = 0; t < num_tasks; ++t) fn(ctx, t, 0);
    return;
  }
  ++generation_;
  // Close the old loop first: a worker that read the old next_ and then sees the new num_tasks_
  // fails its compare-exchange instead of claiming a task past the old end.
  next_.store((static_cast<uint64_t>(generation_) << 32) | kIndexMask);
  fn_ = fn;
  ctx_ = ctx;
  done_.store(0, std::memory_order_relaxed);
  num_tasks_.store(num_tasks, std::memory_order_relaxed);
  next_.store(static_cast<uint64_t>(generation_) << 32);  // seq_cst: pairs with the sleepers_ check
  if (sleepers_.load() > 0) {
    std::lock_guard<std::mutex> lock(mu_);
    wake_.notify_all();
  }
  while (RunOne(0)) {
  }
  for (int spin = 0; done_.load(std::memory_order_acquire) < num_tasks; ++spin) {
    if (spin < kSpinIterations) {
      CpuRelax();
    } else {
      std::this_thread::yield();  // a worker holding the last task may need this core
    }
  }
}

void ThreadPool::ParallelFor(int64_t n, int64_t grain, RangeFn fn, void* ctx) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  const int64_t units = (n + grain - 1) / grain;
  const int64_t parts = std::min<int64_t>(num_threads(), units);
  Run(parts, [&](int64_t part, int) {
    const int64_t begin = std::min(n, units * part / parts * grain);
    const int64_t end = std::min(n, units * (part + 1) / parts * grain);
    if (begin < end) fn(ctx, begin, end);
  });
}

void ThreadPool::WorkerLoop(int thread) {
  for (;;) {
    if (RunOne(thread)) continue;
    bool found = false;
    for (int spin = 0; spin < kSpinIterations && !found; ++spin) {
      CpuRelax();
      found = HasWork() || stop_.load(std::memory_order_relaxed);
    }
    if (!found) {
      std::unique_lock<std::mutex> lock(mu_);
      sleepers_.fetch_add(1);  // seq_cst: either the caller sees a sleeper or this sees the work
      wake_.wait(lock, [this] { return stop_.load() || HasWork(); });
      sleepers_.fetch_sub(1);
    }
    if (stop_.load()) return;
  }
}

}  // namespace tessel
