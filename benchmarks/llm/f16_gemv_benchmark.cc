// F16 decode GEMV on TinyLlama-1.1B's 154 layer matrices (22 layers of q, k, v, o, gate, up, down; 1.94 GB
// of F16 weights in huge pages, laid out as the runtime repacks them at load: rows, and 2048-column
// blocks for the 5632-column down projection), run in decode order through the row kernel the runtime
// picks (GetRowDot), one thread. Counters: GB/s of weights and the fraction of the read bandwidth probed
// over the same number of bytes in this process (benchmarks/kernels/machine_limits.h). The F16 decode of
// `tessel generate` is ~98% this work; here it is measured without the rest of a decode step.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "benchmarks/kernels/machine_limits.h"
#include "llm/matmul/row_dot.h"
#include "llm/matmul/weight_matrix.h"
#include "support/memory.h"

namespace tessel::llm {
namespace {

// The matrices, filled once per process, and the read bandwidth probed over as many bytes.
struct F16Model {
  std::shared_ptr<uint8_t> buf;
  std::vector<WeightMatrix> mats;
  int64_t total = 0;
  double bw = 0;
};

const F16Model& Model() {
  static const F16Model* model = [] {
    auto* m = new F16Model;
    const int64_t shapes[7][2] = {{2048, 2048}, {256, 2048},  {256, 2048}, {2048, 2048},
                                  {5632, 2048}, {5632, 2048}, {2048, 5632}};
    for (const auto& s : shapes) m->total += s[0] * s[1] * 2;
    m->total *= 22;
    const int64_t total = m->total;
    m->bw = MeasureReadBandwidthGBs(static_cast<size_t>(total), 5);
    benchmark::AddCustomContext("read_bw_GBs", std::to_string(m->bw));
    m->buf.reset(static_cast<uint8_t*>(MapHugePages(total)), [total](uint8_t* p) { UnmapHugePages(p, total); });
    if (m->buf == nullptr) return m;
    // Halves of small magnitude (the speed does not depend on the values).
    auto* h = reinterpret_cast<uint16_t*>(m->buf.get());
    for (int64_t i = 0; i < total / 2; ++i) h[i] = static_cast<uint16_t>(0x2c00 | (i * 37 & 0x3ff));
    int64_t offset = 0;
    for (int l = 0; l < 22; ++l) {
      for (const auto& s : shapes) {
        WeightMatrix w;
        w.type = GgmlType::kF16;
        w.rows = s[0];
        w.cols = s[1];
        w.data = m->buf.get() + offset;
        w.layout = w.cols > kColumnBlockCols && ColumnBlocksAvailable(w.type) ? WeightLayout::kColumnBlocks
                                                                               : WeightLayout::kRows;
        m->mats.push_back(w);
        offset += s[0] * s[1] * 2;
      }
    }
    return m;
  }();
  return *model;
}

void BM_F16GemvTinyLlama(benchmark::State& state) {
  const F16Model& model = Model();
  if (model.buf == nullptr) {
    state.SkipWithError("cannot allocate the weights");
    return;
  }
  const std::vector<WeightMatrix>& mats = model.mats;
  const int64_t total = model.total;
  const double bw = model.bw;
  const RowDotFn fn = GetRowDot(GgmlType::kF16, 1);
  std::vector<float> x(5632, 0.25f), y(5632);
  for (auto _ : state) {
    for (const WeightMatrix& m : mats) fn(m.view(), x.data(), 0, m.rows, y.data());
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.counters["GBs"] = benchmark::Counter(total / 1e9 * state.iterations(), benchmark::Counter::kIsRate);
  state.counters["bw_frac"] = benchmark::Counter(total / (bw * 1e9) * state.iterations(), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_F16GemvTinyLlama)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace tessel::llm
