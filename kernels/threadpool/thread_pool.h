// A fixed pool of worker threads that runs one parallel-for at a time. The calling thread takes part,
// so a pool of N threads has N-1 workers; ThreadPool(1) runs everything inline.
#ifndef TESSEL_KERNELS_THREADPOOL_THREAD_POOL_H_
#define TESSEL_KERNELS_THREADPOOL_THREAD_POOL_H_

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace tessel {

class ThreadPool {
 public:
  // Runs fn(ctx, begin, end) on disjoint ranges covering [0, n); ranges are multiples of `grain`
  // except the last. A plain function pointer keeps the dispatch free of allocation.
  using RangeFn = void (*)(void* ctx, int64_t begin, int64_t end);

  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Splits [0, n) into num_threads() nearly equal chunks and blocks until all are done.
  // Not reentrant: call from one thread at a time.
  void ParallelFor(int64_t n, int64_t grain, RangeFn fn, void* ctx);

 private:
  void WorkerLoop(int index);
  void RunChunk(int index);

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  uint64_t generation_ = 0;
  int pending_ = 0;
  bool stop_ = false;
  // The current job.
  RangeFn fn_ = nullptr;
  void* ctx_ = nullptr;
  int64_t n_ = 0;
  int64_t grain_ = 1;
};

}  // namespace tessel

#endif  // TESSEL_KERNELS_THREADPOOL_THREAD_POOL_H_
