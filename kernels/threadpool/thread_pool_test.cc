// ThreadPool: every index is visited exactly once, for several pool sizes, sizes and grains.
#include "kernels/threadpool/thread_pool.h"

#include <atomic>
#include <vector>

#include "gtest/gtest.h"

namespace tessel {
namespace {

struct Visits {
  std::vector<std::atomic<int>> counts;
  int64_t grain;
  std::atomic<int> misaligned{0};
};

void Visit(void* ctx, int64_t begin, int64_t end) {
  auto* v = static_cast<Visits*>(ctx);
  if (begin % v->grain != 0) v->misaligned++;
  for (int64_t i = begin; i < end; ++i) v->counts[i]++;
}

TEST(ThreadPoolTest, CoversEveryIndexOnce) {
  for (int threads : {1, 2, 3, 5}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.num_threads(), threads);
    for (int64_t n : {0, 1, 7, 64, 1001}) {
      for (int64_t grain : {1, 4, 16}) {
        for (int rep = 0; rep < 3; ++rep) {
          Visits v{std::vector<std::atomic<int>>(n), grain};
          pool.ParallelFor(n, grain, Visit, &v);
          for (int64_t i = 0; i < n; ++i) ASSERT_EQ(v.counts[i].load(), 1) << threads << " " << n << " " << i;
          EXPECT_EQ(v.misaligned.load(), 0);
        }
      }
    }
  }
}

}  // namespace
}  // namespace tessel
