#include "quant/weight/parallel.h"

#include <algorithm>
#include <atomic>
#include <thread>

namespace tessel::quant {
namespace {

std::atomic<int> requested_threads{0};

}  // namespace

bool SetQuantThreads(int threads) {
  if (threads < 1) return false;
  requested_threads.store(threads);
  return QuantThreadPool().num_threads() == threads;
}

ThreadPool& QuantThreadPool() {
  static ThreadPool* pool = [] {
    const int n = requested_threads.load();
    return new ThreadPool(n > 0 ? n : static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 16u)));
  }();
  return *pool;
}

}  // namespace tessel::quant
