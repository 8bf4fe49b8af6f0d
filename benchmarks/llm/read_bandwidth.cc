// Streaming read bandwidth with N threads: each sums its slice of a 1 GiB buffer (far larger than
// the last-level cache), best of 5 passes by wall time. The limit LLM decode is measured against.
// Usage: read_bandwidth THREADS  ->  "threads=N read_GBs=X"
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

// Eight independent accumulators so that the adds never limit the loads.
uint64_t SumWords(const uint64_t* p, size_t n) {
  uint64_t s[8] = {};
  for (size_t i = 0; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; ++j) s[j] += p[i + j];
  }
  return s[0] + s[1] + s[2] + s[3] + s[4] + s[5] + s[6] + s[7];
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 1;
  if (threads < 1 || threads > 256) {
    std::fprintf(stderr, "read_bandwidth: THREADS must be 1 to 256\n");
    return 1;
  }
  const size_t words = (size_t{1} << 30) / 8;
  std::vector<uint64_t> buf(words);
  std::memset(buf.data(), 1, words * 8);
  double best = 0;
  std::vector<uint64_t> sums(threads);
  for (int rep = 0; rep < 5; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    const size_t slice = words / threads / 8 * 8;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] { sums[t] = SumWords(buf.data() + t * slice, slice); });
    }
    for (std::thread& th : pool) th.join();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, slice * threads * 8 / s / 1e9);
  }
  uint64_t total = 0;
  for (uint64_t v : sums) total += v;
  std::printf("threads=%d read_GBs=%.2f%s\n", threads, best, total == 42 ? " " : "");
  return 0;
}
