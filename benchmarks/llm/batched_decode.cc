// Batched decode rate: one LlamaRuntime::EvalBatch step over N sequences (one token each, every sequence
// at 128 tokens of context) against N = 1, the step `tessel serve` runs for N concurrent requests.
// Prints per N the step time and the aggregate tokens/s, the fastest of the repetitions (on a machine
// shared with other work the fastest step is the one least disturbed), and the process CPU time per step
// (with threads = 1, the compute a step needs whatever else the machine runs).
//   batched_decode MODEL.gguf [threads] [repetitions]
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "llm/model/llama_model.h"
#include "llm/matmul/matmul.h"
#include "llm/model/llama_runtime.h"

int main(int argc, char** argv) {
  using namespace tessel::llm;
  if (argc < 2) {
    std::fprintf(stderr, "usage: batched_decode MODEL.gguf [threads] [repetitions]\n");
    return 2;
  }
  const int threads = argc > 2 ? std::atoi(argv[2]) : 2;
  const int reps = argc > 3 ? std::atoi(argv[3]) : 16;
  auto model = LoadModel(argv[1], tessel::FileLoad::kHugePageCopy, threads);
  if (!model.ok()) {
    std::fprintf(stderr, "%s\n", model.status().ToString().c_str());
    return 1;
  }
  constexpr int kMaxRows = 8;
  constexpr int kContext = 128;
  RuntimeOptions o;
  o.max_context = kContext + reps + 8;
  o.max_batch = kContext;
  o.max_sequences = kMaxRows;
  o.threads = threads;
  auto runtime = LlamaRuntime::Create(**model, o);
  if (!runtime.ok()) {
    std::fprintf(stderr, "%s\n", runtime.status().ToString().c_str());
    return 1;
  }
  LlamaRuntime& r = **runtime;
  const int32_t vocab = static_cast<int32_t>((*model)->config().vocab_size);
  std::vector<int32_t> prompt(kContext);
  for (int i = 0; i < kContext; ++i) prompt[i] = (i * 7919 + 13) % vocab;
  double single = 0;
  const WeightMatrix& wq = (*model)->weights().layers[0].wq;
  std::printf("rows  step_ms  tokens/s  vs_1_row  cpu_ms_per_step  matmul kernel (layer 0 wq)\n");
  for (int rows : {1, 2, 4, 8}) {
    std::vector<int> seqs;
    for (int i = 0; i < rows; ++i) {
      seqs.push_back(*r.NewSequence());
      if (!r.Eval(seqs.back(), prompt).ok()) return 1;
    }
    std::vector<int32_t> token(rows, 42);
    std::vector<SequenceTokens> items;
    for (int i = 0; i < rows; ++i) items.push_back({seqs[i], absl::MakeConstSpan(&token[i], 1)});
    std::vector<double> ms, cpu_ms;
    auto cpu_now = [] {
      timespec ts;
      clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
      return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
    };
    for (int k = 0; k < reps; ++k) {
      const auto t0 = std::chrono::steady_clock::now();
      const double c0 = cpu_now();
      if (!r.EvalBatch(items).ok()) return 1;
      cpu_ms.push_back(cpu_now() - c0);
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(cpu_ms.begin(), cpu_ms.end());
    std::sort(ms.begin(), ms.end());
    const double step = ms[0];
    const double rate = rows * 1000.0 / step;
    if (rows == 1) single = rate;
    const MatmulKernel k = DescribeMatmul(wq, rows, threads);
    std::printf("%4d  %7.2f  %8.1f  %7.2fx  %15.2f  %s (%s)\n", rows, step, rate, rate / single,
                cpu_ms[cpu_ms.size() / 2], k.name.c_str(), MatmulPathName(k.path));
    if (std::getenv("BATCHED_DECODE_TYPES") != nullptr) {
      // Per weight type: the matmul seconds of one step (its tasks summed over threads).
      r.matmul().EnableTypeTiming(true);
      if (!r.EvalBatch(items).ok()) return 1;
      for (GgmlType t : {GgmlType::kQ4_0, GgmlType::kQ6_K, GgmlType::kQ8_0, GgmlType::kF32}) {
        const double sec = r.matmul().TypeSeconds(t, rows == 1) + r.matmul().TypeSeconds(t, rows != 1);
        if (sec > 0) std::printf("      %s: %.2f ms\n", std::string(GgmlTypeName(t)).c_str(), sec * 1e3);
      }
      r.matmul().EnableTypeTiming(false);
    }
    for (int s : seqs) (void)r.EndSequence(s);
  }
  return 0;
}
