// The thread pool every Tessel component uses (XNNPACK keeps its own pthreadpool): a fixed pool of
// std::threads that runs one parallel loop at a time; the caller is one of the workers. Sized once;
// Run() never allocates, so it is safe inside an inference or token loop.
#ifndef TESSEL_SUPPORT_THREAD_POOL_H_
#define TESSEL_SUPPORT_THREAD_POOL_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace tessel {

class ThreadPool {
 public:
  // num_threads counts the calling thread: 1 runs everything inline.
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls fn(task, thread) for every task in [0, num_tasks), handing tasks out one at a time to
  // whichever thread asks first; `thread` is in [0, num_threads()) and identifies per-thread scratch.
  // Returns when every task is done. The caller never waits for a worker that has not claimed a
  // task, so a descheduled worker (other processes on the cores) does not stall the loop.
  template <typename Fn>
  void Run(int64_t num_tasks, Fn&& fn) {
    using F = typename std::remove_reference<Fn>::type;
    RunImpl(num_tasks, [](void* ctx, int64_t task, int thread) { (*static_cast<F*>(ctx))(task, thread); },
            const_cast<void*>(static_cast<const void*>(&fn)));
  }

  // Splits [0, n) into num_threads() nearly equal ranges whose boundaries are multiples of `grain`
  // (e.g. rows in whole cache lines of output) and runs fn(ctx, begin, end) on each non-empty one.
  // A plain function pointer keeps the dispatch free of allocation.
  using RangeFn = void (*)(void* ctx, int64_t begin, int64_t end);
  void ParallelFor(int64_t n, int64_t grain, RangeFn fn, void* ctx);

 private:
  using TaskFn = void (*)(void* ctx, int64_t task, int thread);
  void RunImpl(int64_t num_tasks, TaskFn fn, void* ctx);
  void WorkerLoop(int thread);
  // Claims and runs one task of the current loop; false when none is left.
  bool RunOne(int thread);
  bool HasWork() const;

  std::vector<std::thread> workers_;
  // generation << 32 | index of the next unclaimed task. Claims are compare-exchanges, so a worker
  // holding a stale generation can never take a task of a newer loop.
  std::atomic<uint64_t> next_{0};
  std::atomic<int64_t> num_tasks_{0};
  std::atomic<int64_t> done_{0};
  // Valid while the current loop has unfinished tasks (published by the release store of next_).
  TaskFn fn_ = nullptr;
  void* ctx_ = nullptr;
  uint32_t generation_ = 0;  // the caller's
  std::atomic<int> sleepers_{0};
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable wake_;
};

}  // namespace tessel

#endif  // TESSEL_SUPPORT_THREAD_POOL_H_
