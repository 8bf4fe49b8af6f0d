// Streaming read bandwidth with N threads: each sums its slice of a 1 GiB buffer (far larger than
// the last-level cache) on huge pages, as 1, 2, 4 or 8 interleaved streams (benchmarks/kernels
// machine_limits.h SumStreams), best of 5 passes by wall time over all stream counts. The limit LLM
// decode is measured against: the most this machine streams, not one simple loop's rate.
// Usage: read_bandwidth THREADS  ->  "threads=N read_GBs=X streams=S"
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <thread>
#include <vector>

#include "benchmarks/kernels/machine_limits.h"
#include "support/memory.h"

int main(int argc, char** argv) {
  if (argc > 1 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    std::printf("usage: read_bandwidth [THREADS]  (1 to 256, default 1)\n"
                "Prints \"threads=N read_GBs=X streams=S\": the best streaming read rate over a 1 GiB buffer.\n");
    return 0;
  }
  const int threads = argc > 1 ? std::atoi(argv[1]) : 1;
  if (threads < 1 || threads > 256) {
    std::fprintf(stderr, "read_bandwidth: THREADS must be 1 to 256 (got '%s'; see --help)\n", argv[1]);
    return 1;
  }
  const size_t bytes = size_t{1} << 30;
  auto* buf = static_cast<uint8_t*>(tessel::MapHugePages(bytes));
  if (buf == nullptr) {
    std::fprintf(stderr, "read_bandwidth: cannot allocate 1 GiB\n");
    return 1;
  }
  std::memset(buf, 1, bytes);
  const size_t slice = bytes / threads / 4096 * 4096;
  double best = 0;
  int best_streams = 1;
  std::vector<uint64_t> sums(threads);
  for (int streams : {1, 2, 4, 8}) {
    for (int rep = 0; rep < 5; ++rep) {
      const auto t0 = std::chrono::steady_clock::now();
      std::vector<std::thread> pool;
      for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] { sums[t] += tessel::SumStreams(buf + t * slice, slice, streams); });
      }
      for (std::thread& th : pool) th.join();
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const double gbs = static_cast<double>(slice) * threads / s / 1e9;
      if (gbs > best) {
        best = gbs;
        best_streams = streams;
      }
    }
  }
  uint64_t total = 0;
  for (uint64_t v : sums) total += v;
  std::printf("threads=%d read_GBs=%.2f streams=%d%s\n", threads, best, best_streams, total == 42 ? " " : "");
  tessel::UnmapHugePages(buf, bytes);
  return 0;
}
