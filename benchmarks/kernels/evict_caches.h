// "cold" benchmark rows: a buffer beyond the caches is read and written between timed runs, so the
// next run's weights and inputs come from memory, as they do inside a whole network.
#ifndef TESSEL_BENCHMARKS_KERNELS_EVICT_CACHES_H_
#define TESSEL_BENCHMARKS_KERNELS_EVICT_CACHES_H_

#include <cstddef>
#include <vector>

#include "benchmark/benchmark.h"

namespace tessel {

// Touches every cache line of `flush` (size it 64 MB) outside the timed region.
inline void EvictCaches(benchmark::State& state, std::vector<float>& flush) {
  state.PauseTiming();
  float sum = 0;
  for (size_t i = 0; i < flush.size(); i += 16) sum += flush[i]++;
  benchmark::DoNotOptimize(sum);
  state.ResumeTiming();
}

}  // namespace tessel

#endif  // TESSEL_BENCHMARKS_KERNELS_EVICT_CACHES_H_
