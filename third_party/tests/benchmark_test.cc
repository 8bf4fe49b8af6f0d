// Google Benchmark links and runs: a registered benchmark executes and reports a positive rate.
// (A smoke test of the library, not a timing assertion.)
#include <vector>

#include "benchmark/benchmark.h"
#include "gtest/gtest.h"

namespace {

void BM_Sum(benchmark::State& state) {
  std::vector<float> v(1024, 1.0f);
  for (auto _ : state) {
    float s = 0;
    for (float x : v) s += x;
    benchmark::DoNotOptimize(s);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(v.size()));
}
BENCHMARK(BM_Sum);

class CollectingReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& r : runs) {
      ++runs_;
      iterations_ += r.iterations;
      if (r.counters.count("items_per_second")) rate_ = r.counters.at("items_per_second");
    }
  }
  int runs_ = 0;
  int64_t iterations_ = 0;
  double rate_ = 0;
};

TEST(BenchmarkTest, RunsRegisteredBenchmark) {
  int argc = 2;
  char arg0[] = "benchmark_test";
  char arg1[] = "--benchmark_min_time=0.01";
  char* argv[] = {arg0, arg1, nullptr};
  benchmark::Initialize(&argc, argv);
  CollectingReporter reporter;
  EXPECT_EQ(benchmark::RunSpecifiedBenchmarks(&reporter), 1u);
  EXPECT_EQ(reporter.runs_, 1);
  EXPECT_GT(reporter.iterations_, 0);
  EXPECT_GT(reporter.rate_, 0.0);
}

}  // namespace
