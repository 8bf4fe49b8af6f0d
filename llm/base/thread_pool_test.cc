// The pool runs every task exactly once, on valid thread indices, loop after loop.
#include "llm/base/thread_pool.h"

#include <atomic>
#include <vector>

#include "gtest/gtest.h"

namespace tessel::llm {
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

}  // namespace
}  // namespace tessel::llm
