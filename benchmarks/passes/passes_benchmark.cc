// Pass pipeline time on synthetic graphs of 1k, 10k and 100k nodes: the passes should scale near
// linearly (report: time per node stays flat as the graph grows).
//
//   bazel run -c opt //benchmarks/passes:passes_benchmark
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "graph/graph.h"
#include "graph/op_registry.h"
#include "passes/pass_manager.h"

namespace tessel {
namespace {

// Blocks of 10 nodes with work for each pass: a foldable constant chain, x*1 and x+0 (simplify), a
// duplicated Relu (cse), a transpose pair (simplify), and a dead branch (dce).
std::unique_ptr<Graph> MakeGraph(int64_t target_nodes) {
  auto g = std::make_unique<Graph>();
  Value* x = g->AddInput("x", TensorType::Static(DType::kF32, {4, 8}));
  Value* one = g->AddConstant("one", Tensor::FromVector<float>({}, {1.0f}));
  Value* zero = g->AddConstant("zero", Tensor::FromVector<float>({}, {0.0f}));
  for (int64_t b = 0; g->num_nodes() + 10 <= target_nodes; ++b) {
    const std::string p = absl::StrCat("b", b, "_");
    Value* c = g->AddConstant(p + "c", Tensor::FromVector<float>({8}, {1, 2, 3, 4, 5, 6, 7, 8}));
    Value* c2 = g->AddNode("Neg", {c}, 1, p + "neg")->output(0);
    Value* c3 = g->AddNode("Relu", {c2}, 1, p + "crelu")->output(0);
    Value* a = g->AddNode("Mul", {x, one}, 1, p + "mul1")->output(0);
    a = g->AddNode("Add", {a, zero}, 1, p + "add0")->output(0);
    Value* r1 = g->AddNode("Relu", {a}, 1, p + "r1")->output(0);
    Value* r2 = g->AddNode("Relu", {a}, 1, p + "r2")->output(0);
    Value* s = g->AddNode("Add", {r1, r2}, 1, p + "sum")->output(0);
    g->AddNode("Exp", {s}, 1, p + "dead");
    Value* t = g->AddNode("Add", {s, c3}, 1, p + "bias")->output(0);
    x = t;
  }
  g->AddOutput(x);
  (void)InferShapes(*g);
  return g;
}

void BM_Pipeline(benchmark::State& state) {
  const std::string pipeline = "fold-constants,simplify,cse,dce";
  auto pm = PassManager::Create(pipeline);
  if (!pm.ok()) {
    state.SkipWithError(std::string(pm.status().message()).c_str());
    return;
  }
  int64_t nodes = 0;
  std::map<std::string, double> pass_ms;
  for (auto _ : state) {
    state.PauseTiming();
    std::unique_ptr<Graph> g = MakeGraph(state.range(0));
    nodes = g->num_nodes();
    state.ResumeTiming();
    absl::Status s = pm->Run(*g);
    if (!s.ok()) state.SkipWithError(std::string(s.message()).c_str());
    for (const PassRecord& r : pm->records()) pass_ms[r.name] += r.milliseconds / state.max_iterations;
  }
  for (const auto& [name, ms] : pass_ms) state.counters[name + "_ms"] = ms;
  state.counters["nodes"] = static_cast<double>(nodes);
  // Seconds per node (printed with SI prefixes, e.g. 1.3u = 1.3 microseconds).
  state.counters["time_per_node"] = benchmark::Counter(
      static_cast<double>(nodes), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_Pipeline)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace tessel
