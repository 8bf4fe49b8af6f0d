#include "quant/weight/parallel.h"

#include <algorithm>
#include <thread>

namespace tessel::quant {

llm::ThreadPool& QuantThreadPool() {
  static llm::ThreadPool* pool =
      new llm::ThreadPool(static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 16u)));
  return *pool;
}

}  // namespace tessel::quant
