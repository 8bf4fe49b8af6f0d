// `tessel bench`: median and minimum latency of a compiled model; the last line is JSON. With
// --estimate CORE, an aarch64 artifact's per-op time on an Arm core model instead, estimated by the lab
// (lab/estimate_model.py: the aarch64 tessel under qemu with the block-counting plugin).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "artifact/artifact.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/model_io.h"
#include "runtime/executor.h"

namespace tessel {
namespace {

std::string SelfPath() {
  std::vector<char> buf(4096);
  const ssize_t n = readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  return n > 0 ? std::string(buf.data(), static_cast<size_t>(n)) : std::string();
}

bool Exists(const std::string& path) { return !path.empty() && access(path.c_str(), F_OK) == 0; }

// Hands over to the lab's estimator (it runs the aarch64 tessel under qemu); returns only on error.
int EstimateOnArm(const std::string& model, const std::string& core, std::string runner) {
  ArtifactLoadOptions load;
  load.verify_weights = false;
  load.check_target = false;
  absl::StatusOr<std::shared_ptr<Artifact>> artifact = Artifact::Load(model, load);
  if (!artifact.ok()) return cli::Fail("bench", artifact.status());
  if ((*artifact)->plan().target().rfind("aarch64", 0) != 0) {
    return cli::Fail("bench", absl::InvalidArgumentError(absl::StrCat(
                                  model, " is built for '", (*artifact)->plan().target(),
                                  "'; --estimate runs aarch64 artifacts (compile with an aarch64 tessel, e.g. under "
                                  "qemu-aarch64, --target aarch64-neon or aarch64-sve)")));
  }
  const std::string self = SelfPath();
  // The lab's files are this binary's runfiles (bazel), or wherever TESSEL_LAB_DIR says.
  std::string lab = self + ".runfiles/tessel/lab";
  if (const char* dir = std::getenv("TESSEL_LAB_DIR")) lab = dir;
  const std::string script = lab + "/estimate_model.py";
  if (!Exists(script)) {
    return cli::Fail("bench", absl::NotFoundError(absl::StrCat("no ", script, " (build //cli:tessel with bazel, or "
                                                               "set TESSEL_LAB_DIR to lab with its plugin built)")));
  }
  // The aarch64 build beside this one: bazel-out/<host>-opt/bin/cli/tessel -> bazel-out/aarch64-opt/...
  if (runner.empty()) runner = absl::StrReplaceAll(self, {{"/k8-opt/bin/", "/aarch64-opt/bin/"}});
  if (runner == self || !Exists(runner)) {
    return cli::Fail("bench", absl::NotFoundError(absl::StrCat(
                                  "no aarch64 tessel at '", runner, "': build it with bazel build --config=aarch64 "
                                  "--build_tag_filters= //cli:tessel, or pass --runner PATH")));
  }
  std::vector<std::string> args = {"/usr/bin/python3", script, "--core", core, "--runner", runner, model};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  execv(argv[0], argv.data());
  return cli::Fail("bench", absl::InternalError(absl::StrCat("cannot run ", args[0], " ", script)));
}

}  // namespace

int BenchCommand(int argc, char** argv) {
  const std::vector<cli::FlagSpec> flags = {
      ThreadsFlag("threads per inference", "1"),
      {"iterations", "K", "timed runs", false, "20", cli::AtLeast(1)},
      {"warmup", "W", "untimed runs first", false, "2", cli::AtLeast(0)},
      {"input", "NAME=FILE.npy", "time on this input (a bare FILE.npy when the model has one input; default: random)",
       true},
      WorkersFlag(),
      {"estimate", "CORE", "instead of timing: ESTIMATED per-op time of an aarch64 artifact on cortex-a55, cortex-a76 "
                           "or neoverse-v1, from a run under qemu (no board needed; docs/arm_lab.md)"},
      {"runner", "PATH", "the aarch64 tessel that --estimate runs under qemu (default: the aarch64 build beside this one)"},
  };
  if (cli::WantsHelp(argc, argv)) {
    std::printf("%s", cli::Usage("bench", "MODEL.tsl [--threads N] [--iterations K] [--input NAME=FILE.npy ...] | --estimate CORE",
                                 "Runs the compiled model on random inputs (or --input files) and prints latency statistics; the last "
                                 "line is one JSON object.",
                                 flags)
                          .c_str());
    return 0;
  }
  absl::StatusOr<cli::Args> args = cli::Parse("bench", flags, argc, argv);
  if (!args.ok()) return cli::Fail("bench", args.status());
  if (args->positional().size() != 1) return cli::Fail("bench", absl::InvalidArgumentError("expects one MODEL.tsl"));
  if (args->Has("estimate")) {
    const std::string core = args->Get("estimate");
    if (core != "cortex-a55" && core != "cortex-a76" && core != "neoverse-v1") {
      return cli::Fail("bench", absl::InvalidArgumentError(absl::StrCat(
                                    "--estimate ", core, ": expected cortex-a55, cortex-a76 or neoverse-v1")));
    }
    return EstimateOnArm(args->positional()[0], core, args->Has("runner") ? args->Get("runner") : "");
  }
  absl::StatusOr<int> threads = ThreadsArg(*args);
  absl::StatusOr<int64_t> iterations = args->GetInt("iterations");
  absl::StatusOr<int64_t> warmup = args->GetInt("warmup");
  for (const absl::Status& s : {threads.status(), iterations.status(), warmup.status()}) {
    if (!s.ok()) return cli::Fail("bench", s);
  }
  absl::StatusOr<std::shared_ptr<const CompiledModel>> model = CompiledModel::Load(args->positional()[0]);
  if (!model.ok()) return cli::Fail("bench", model.status());
  std::vector<ModelInput> model_inputs;
  for (int i = 0; i < (*model)->num_inputs(); ++i) {
    model_inputs.push_back({(*model)->input_name(i), (*model)->input_type(i)});
  }
  absl::StatusOr<std::vector<Tensor>> inputs = TimingInputs(model_inputs, args->GetAll("input"));
  if (!inputs.ok()) return cli::Fail("bench", inputs.status());
  SessionOptions options;
  options.num_threads = *threads;
  absl::StatusOr<WorkerWait> workers = WorkersArg(*args);
  if (!workers.ok()) return cli::Fail("bench", workers.status());
  options.worker_wait = *workers;
  absl::StatusOr<std::unique_ptr<Session>> session = Session::Create(*model, options);
  if (!session.ok()) return cli::Fail("bench", session.status());
  std::vector<double> ms;
  for (int64_t i = 0; i < *warmup + *iterations; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    absl::Status s = (*session)->Run(*inputs);
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
