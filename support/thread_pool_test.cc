// The pool runs every task exactly once, on valid thread indices, loop after loop; ParallelFor visits
// every index once, in ranges that start on a multiple of the grain.
#include "support/thread_pool.h"

#include <atomic>
#include <vector>

#include "gtest/gtest.h"

namespace tessel {
namespace {

TEST(ThreadPoolTest, EveryTaskRunsOnce) {
  for (int threads : {1, 2, 3, 4}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.num_threads(), threads);
    for (int round = 0; round < 200; ++round) {
      const int n = round % 37;
      std::vector<std::atomic<int>> hits(n);
      std::atomic<int> bad_thread{0};
      pool.Run(n, [&](int64_t task, int thread) {
        hits[task].fetch_add(1);
        if (thread < 0 || thread >= threads) bad_thread.fetch_add(1);
      });
      for (int i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "threads " << threads << " task " << i;
      ASSERT_EQ(bad_thread.load(), 0);
    }
  }
}

TEST(ThreadPoolTest, SumsMatchSerial) {
  ThreadPool pool(3);
  std::vector<int64_t> partial(pool.num_threads());
  pool.Run(1000, [&](int64_t task, int thread) { partial[thread] += task; });
  int64_t total = 0;
  for (int64_t p : partial) total += p;
  EXPECT_EQ(total, 999 * 1000 / 2);
}

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

TEST(ThreadPoolTest, ParallelForCoversEveryIndexOnceOnGrainBoundaries) {
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
