// `tessel run`: runs a model on .npy inputs and writes one .npy per output.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/model_io.h"
#include "graph/npy.h"
#include "kernels/reference/interpreter.h"
#include "runtime/executor.h"

namespace tessel {
namespace {

// Runs a compiled artifact: inputs by the plan's input names.
int RunArtifact(const std::string& path, const cli::Args& args) {
  absl::StatusOr<std::shared_ptr<const CompiledModel>> model = CompiledModel::Load(path);
  if (!model.ok()) return cli::Fail("run", model.status());
  std::vector<ModelInput> model_inputs;
  for (int i = 0; i < (*model)->num_inputs(); ++i) {
    model_inputs.push_back({(*model)->input_name(i), (*model)->input_type(i)});
  }
  absl::StatusOr<std::vector<Tensor>> inputs = LoadInputs(model_inputs, args.GetAll("input"));
  if (!inputs.ok()) return cli::Fail("run", inputs.status());
  absl::StatusOr<int> threads = ThreadsArg(args);
  if (!threads.ok()) return cli::Fail("run", threads.status());
  SessionOptions options;
  options.num_threads = *threads;
  absl::StatusOr<WorkerWait> workers = WorkersArg(args);
  if (!workers.ok()) return cli::Fail("run", workers.status());
  options.worker_wait = *workers;
  options.check_finite = args.Has("check-finite");
  if (!options.check_finite) {
    // One pass over the inputs costs little next to the model, and the fast kernels need not carry a
    // NaN through (SessionOptions::check_finite): say so rather than print finite numbers silently.
    for (int i = 0; i < (*model)->num_inputs(); ++i) {
      absl::Status s = CheckFinite((*inputs)[i], absl::StrCat("input '", (*model)->input_name(i), "'"));
      if (!s.ok()) {
        std::fprintf(stderr,
                     "run: warning: %s; compiled kernels need not propagate NaN or Inf as the ONNX reference "
                     "does, so the outputs may be finite and meaningless (--check-finite makes this an error)\n",
                     std::string(s.message()).c_str());
      }
    }
  }
  absl::StatusOr<std::unique_ptr<Session>> created = Session::Create(*model, options);
  if (!created.ok()) return cli::Fail("run", created.status());
  Session& session = **created;
  session.set_profile(args.Has("profile"));
  const auto t0 = std::chrono::steady_clock::now();
  absl::Status s = session.Run(*inputs);
  if (!s.ok()) return cli::Fail("run", s);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const std::string dir = args.Get("output-dir");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  for (int i = 0; i < (*model)->num_outputs(); ++i) {
    const std::string out = absl::StrCat(dir, "/", SanitizeFileName((*model)->output_name(i)), ".npy");
    s = WriteNpy(out, session.output(i));
    if (!s.ok()) return cli::Fail("run", s);
    std::printf("wrote %s %s\n", out.c_str(), session.output(i).type().ToString().c_str());
  }
  if (args.Has("profile")) {
    for (const OpProfile& p : session.profile()) std::printf("  %9.3f ms  %-40s %s\n", p.milliseconds, p.name.c_str(), p.kernel.c_str());
  }
  std::printf("run %.1f ms (compiled artifact)\n", ms);
  return 0;
}

}  // namespace

cli::FlagSpec WorkersFlag() {
  return {"workers", "MODE",
          "how pool workers wait between operators: adaptive (spin within a run, sleep after it, and after every "
          "operator while other processes contend for the cores), spin (always: idle dedicated cores only) or sleep "
          "(after every operator)",
          false, "adaptive"};
}

absl::StatusOr<WorkerWait> WorkersArg(const cli::Args& args) {
  absl::StatusOr<WorkerWait> w = ParseWorkerWait(args.Get("workers"));
  if (!w.ok()) return absl::InvalidArgumentError(absl::StrCat("--workers: ", w.status().message()));
  return w;
}

int RunCommand(int argc, char** argv) {
  const std::vector<cli::FlagSpec> flags = {
      {"input", "NAME=FILE.npy", "an input tensor (a bare FILE.npy when the model has one input)", true},
      {"output-dir", "DIR", "where to write <output name>.npy files", false, "."},
      {"profile", "", "print per-node time"},
      ThreadsFlag("threads per inference (compiled .tsl artifacts)", "1"),
      WorkersFlag(),
      {"check-finite", "", "fail when an input or output holds NaN or Inf (compiled .tsl artifacts; without it a "
                           "non-finite input is a warning)"},
  };
  if (cli::WantsHelp(argc, argv)) {
    std::printf("%s", cli::Usage("run", "MODEL.onnx|MODEL.tir|MODEL.tsl --input NAME=FILE.npy ... [--output-dir DIR]",
                                 "Runs the model (ONNX/text IR with the reference interpreter, .tsl artifacts with the executor) and writes DIR/<output name>.npy per "
                                 "graph output (NumPy format).",
                                 flags)
                          .c_str());
    return 0;
  }
  absl::StatusOr<cli::Args> args = cli::Parse("run", flags, argc, argv);
  if (!args.ok()) return cli::Fail("run", args.status());
  if (args->positional().size() != 1) return cli::Fail("run", absl::InvalidArgumentError("expects one MODEL (see --help)"));
  const std::string model_path = args->positional()[0];
  if (absl::EndsWith(model_path, ".tsl")) return RunArtifact(model_path, *args);
  auto t0 = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<Graph>> graph = LoadGraph(model_path);
  if (!graph.ok()) return cli::Fail("run", graph.status());
  auto t1 = std::chrono::steady_clock::now();
  absl::StatusOr<std::vector<Tensor>> inputs = LoadInputs(InputsOf(**graph), args->GetAll("input"));
  if (!inputs.ok()) return cli::Fail("run", inputs.status());
  absl::StatusOr<ReferenceInterpreter> interp = ReferenceInterpreter::Create(graph->get());
  if (!interp.ok()) return cli::Fail("run", interp.status());
  interp->set_profile(args->Has("profile"));
  auto t2 = std::chrono::steady_clock::now();
  absl::StatusOr<std::vector<Tensor>> outputs = interp->Run(*inputs);
  if (!outputs.ok()) return cli::Fail("run", outputs.status());
  auto t3 = std::chrono::steady_clock::now();
  const std::string dir = args->Get("output-dir");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return cli::Fail("run", absl::PermissionDeniedError(absl::StrCat(dir, ": cannot create directory: ", ec.message())));
  for (size_t i = 0; i < outputs->size(); ++i) {
    const std::string path = absl::StrCat(dir, "/", SanitizeFileName((*graph)->outputs()[i]->name()), ".npy");
    absl::Status s = WriteNpy(path, (*outputs)[i]);
    if (!s.ok()) return cli::Fail("run", s);
    std::printf("wrote %s %s\n", path.c_str(), (*outputs)[i].type().ToString().c_str());
  }
  if (args->Has("profile")) {
    for (const NodeTiming& t : interp->last_profile()) {
      std::printf("  %9.3f ms  %s\n", t.milliseconds, t.node->DebugName().c_str());
    }
  }
  auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  std::printf("load %.1f ms, run %.1f ms (reference interpreter)\n", ms(t0, t1), ms(t2, t3));
  return 0;
}

}  // namespace tessel
