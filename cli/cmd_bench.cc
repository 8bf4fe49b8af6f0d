// `tessel bench`: median and minimum latency of a compiled model; the last line is JSON.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "runtime/executor.h"

namespace tessel {

int BenchCommand(int argc, char** argv) {
  const std::vector<cli::FlagSpec> flags = {
      {"threads", "N", "threads per inference", false, "1"},
      {"iterations", "K", "timed runs", false, "20"},
      {"warmup", "W", "untimed runs first", false, "2"},
      {"spin", "", "worker threads spin between operators (faster on idle cores, slower on busy ones)"},
  };
  if (cli::WantsHelp(argc, argv)) {
    std::printf("%s", cli::Usage("bench", "MODEL.tsl [--threads N] [--iterations K]",
                                 "Runs the compiled model on random inputs and prints latency statistics; the last "
                                 "line is one JSON object.",
                                 flags)
                          .c_str());
    return 0;
  }
  absl::StatusOr<cli::Args> args = cli::Parse("bench", flags, argc, argv);
  if (!args.ok()) return cli::Fail("bench", args.status());
  if (args->positional().size() != 1) return cli::Fail("bench", absl::InvalidArgumentError("expects one MODEL.tsl"));
  absl::StatusOr<int64_t> threads = args->GetInt("threads");
  absl::StatusOr<int64_t> iterations = args->GetInt("iterations");
  absl::StatusOr<int64_t> warmup = args->GetInt("warmup");
  if (!threads.ok()) return cli::Fail("bench", threads.status());
  if (*threads < 1 || *threads > 256) return cli::Fail("bench", absl::InvalidArgumentError("--threads must be in 1..256"));
  if (!iterations.ok() || *iterations < 1) return cli::Fail("bench", absl::InvalidArgumentError("--iterations must be >= 1"));
  if (!warmup.ok()) return cli::Fail("bench", warmup.status());
  absl::StatusOr<std::shared_ptr<const CompiledModel>> model = CompiledModel::Load(args->positional()[0]);
  if (!model.ok()) return cli::Fail("bench", model.status());
  std::vector<Tensor> inputs;
  std::mt19937 rng(0);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (int i = 0; i < (*model)->num_inputs(); ++i) {
    TensorType t = (*model)->input_type(i);
    Tensor x(t.dtype, t.StaticShape());
    if (t.dtype == DType::kF32) {
      for (int64_t k = 0; k < x.num_elements(); ++k) x.data<float>()[k] = dist(rng);
    }
    inputs.push_back(std::move(x));
  }
  SessionOptions options;
  options.num_threads = static_cast<int>(*threads);
  options.spin_workers = args->Has("spin");
  absl::StatusOr<std::unique_ptr<Session>> session = Session::Create(*model, options);
  if (!session.ok()) return cli::Fail("bench", session.status());
  std::vector<double> ms;
  for (int64_t i = 0; i < *warmup + *iterations; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    absl::Status s = (*session)->Run(inputs);
    if (!s.ok()) return cli::Fail("bench", s);
    if (i >= *warmup) ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::string samples;  // in run order, for drivers that pool runs across invocations
  for (double v : ms) absl::StrAppend(&samples, samples.empty() ? "" : ",", absl::StrFormat("%.4f", v));
  std::sort(ms.begin(), ms.end());
  const double median = ms.size() % 2 ? ms[ms.size() / 2] : 0.5 * (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]);
  std::printf("%s: %zu runs, median %.3f ms, min %.3f ms, max %.3f ms\n", args->positional()[0].c_str(), ms.size(),
              median, ms.front(), ms.back());
  std::printf("{\"model\": \"%s\", \"threads\": %lld, \"iterations\": %zu, \"median_ms\": %.4f, \"min_ms\": %.4f, "
              "\"max_ms\": %.4f, \"samples_ms\": [%s]}\n",
              args->positional()[0].c_str(), static_cast<long long>(*threads), ms.size(), median, ms.front(), ms.back(),
              samples.c_str());
  return 0;
}

}  // namespace tessel
