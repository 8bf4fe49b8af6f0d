#include "runtime/worker_wait.h"

#include <algorithm>
#include <thread>

#include "gtest/gtest.h"

namespace tessel {
namespace {

TEST(WorkerWaitTest, NamesRoundTrip) {
  for (WorkerWait w : {WorkerWait::kAdaptive, WorkerWait::kSpin, WorkerWait::kSleep}) {
    absl::StatusOr<WorkerWait> parsed = ParseWorkerWait(WorkerWaitName(w));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, w);
  }
  absl::StatusOr<WorkerWait> bad = ParseWorkerWait("busy");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'busy'"), std::string::npos);
}

TEST(WorkerWaitTest, KernelsSpinUnlessSleep) {
  EXPECT_TRUE(WorkerHandoff(nullptr, 1, WorkerWait::kAdaptive).kernels_spin());
  EXPECT_TRUE(WorkerHandoff(nullptr, 1, WorkerWait::kSpin).kernels_spin());
  EXPECT_FALSE(WorkerHandoff(nullptr, 1, WorkerWait::kSleep).kernels_spin());
  EXPECT_EQ(*WorkerHandoff(nullptr, 1, WorkerWait::kAdaptive).live_flags(), 0u);
  EXPECT_EQ(*WorkerHandoff(nullptr, 1, WorkerWait::kSpin).live_flags(), 0u);
  EXPECT_EQ(*WorkerHandoff(nullptr, 1, WorkerWait::kSleep).live_flags(),
            static_cast<uint32_t>(PTHREADPOOL_FLAG_YIELD_WORKERS));
}

// Without a pool (one thread) nothing is probed and the wait never switches.
TEST(WorkerWaitTest, NoPoolIsANoOp) {
  WorkerHandoff h(nullptr, 1, WorkerWait::kAdaptive);
  h.AfterOp(0, 1000, true);
  h.AfterRun();
  EXPECT_FALSE(h.overloaded());
}

struct Pool {
  explicit Pool(int threads) : pool(pthreadpool_create(threads)) {}
  ~Pool() { pthreadpool_destroy(pool); }
  pthreadpool_t pool;
};

// Leaves the pool's workers spinning, as an operator's region without the yield flag does.
void SpinningRegion(pthreadpool_t pool, int threads) {
  pthreadpool_parallelize_1d(pool, [](void*, size_t) {}, nullptr, static_cast<size_t>(threads), 0);
}

// Four spinning workers per core cannot all be on a core: the settle region after the run must wait
// for scheduler slices (milliseconds, far above kPreemptedMicros), and the adaptive wait then sleeps
// after every operator. The fixed waits never switch.
TEST(WorkerWaitTest, ContendedCoresSwitchAdaptiveToSleepPerOp) {
  const int threads = 4 * static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  Pool p(threads);
  ASSERT_NE(p.pool, nullptr);
  WorkerHandoff adaptive(p.pool, threads, WorkerWait::kAdaptive);
  WorkerHandoff spin(p.pool, threads, WorkerWait::kSpin);
  bool switched = false;
  for (int attempt = 0; attempt < 5 && !switched; ++attempt) {
    SpinningRegion(p.pool, threads);
    adaptive.AfterRun();
    switched = adaptive.overloaded();
  }
  EXPECT_TRUE(switched);
  // Overloaded: the kernels' live flags put the workers to sleep after each region.
  EXPECT_EQ(*adaptive.live_flags(), static_cast<uint32_t>(PTHREADPOOL_FLAG_YIELD_WORKERS));
  SpinningRegion(p.pool, threads);
  spin.AfterRun();
  EXPECT_FALSE(spin.overloaded());
  EXPECT_EQ(*spin.live_flags(), 0u);
}

}  // namespace
}  // namespace tessel
