// `tessel opt`: runs a pass pipeline over a model and writes the optimized graph as text IR (.tir) or
// ONNX (.onnx, opens in Netron).
#include <cstdio>
#include <iostream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/model_io.h"
#include "graph/onnx/onnx_exporter.h"
#include "graph/text.h"
#include "passes/pass_manager.h"
#include "support/atomic_file.h"

namespace tessel {
namespace {

void ListPasses() {
  RegisterBuiltinPasses();
  std::printf("passes:\n");
  for (const PassInfo* p : PassRegistry::Global().All()) {
    std::printf("  %-26s %s\n", p->name.c_str(), p->summary.c_str());
    for (const PassOptionSpec& o : p->options) {
      std::printf("  %-26s   {%s=...} %s (default %s)\n", "", o.name.c_str(), o.help.c_str(), o.default_value.c_str());
    }
  }
  std::printf("named pipelines:\n");
  for (const auto& [name, text] : NamedPipelines()) std::printf("  %-26s %s\n", name.c_str(), text.c_str());
}

}  // namespace

// The pipeline a command line asks for: --pipeline wins, else -O<level>, else `fallback`.
absl::StatusOr<std::string> PipelineFromArgs(const cli::Args& args, const std::string& fallback) {
  if (args.Has("pipeline") && args.Has("O")) return absl::InvalidArgumentError("give --pipeline or -O<level>, not both");
  if (args.Has("pipeline")) return args.Get("pipeline");
  if (args.Has("O")) {
    const std::string level = args.Get("O");
    if (level != "0" && level != "1" && level != "2" && level != "3") {
      return absl::InvalidArgumentError(absl::StrCat("-O", level, ": expected -O0, -O1, -O2 or -O3"));
    }
    return absl::StrCat("O", level);
  }
  return fallback;
}

int OptCommand(int argc, char** argv) {
  const std::vector<cli::FlagSpec> flags = {
      {"pipeline", "STR", "pass pipeline, e.g. 'fold-constants,dce,fuse-conv-activation{activations=relu,relu6}'"},
      {"O", "LEVEL", "named pipeline O0..O3 (e.g. -O2)"},
      {"o", "OUT", "output file: .tir (text IR) or .onnx"},
      {"print-after", "NAME", "print the IR after pass NAME (or 'all')", true},
      {"stats", "", "print per-pass time, node counts and statistics"},
      {"explain-fusion", "", "print why fusions declined"},
      {"verify-each", "", "run the verifier after every pass"},
      {"list-passes", "", "list registered passes and named pipelines"},
  };
  if (cli::WantsHelp(argc, argv)) {
    std::printf("%s", cli::Usage("opt", "MODEL.onnx|MODEL.tir (--pipeline STR | -O0..-O3) -o OUT.tir|OUT.onnx",
                                 "Runs graph optimization passes and writes the result.", flags)
                          .c_str());
    return 0;
  }
  absl::StatusOr<cli::Args> args = cli::Parse("opt", flags, argc, argv);
  if (!args.ok()) return cli::Fail("opt", args.status());
  if (args->Has("list-passes")) {
    ListPasses();
    return 0;
  }
  if (args->positional().size() != 1) return cli::Fail("opt", absl::InvalidArgumentError("expects one MODEL (see --help)"));
  absl::StatusOr<std::string> pipeline = PipelineFromArgs(*args, "O2");
  if (!pipeline.ok()) return cli::Fail("opt", pipeline.status());
  PassManagerOptions options;
  options.verify_each = args->Has("verify-each");
  options.explain = args->Has("explain-fusion");
  options.print_after = args->GetAll("print-after");
  options.dump = &std::cout;
  absl::StatusOr<PassManager> pm = PassManager::Create(*pipeline, options);
  if (!pm.ok()) return cli::Fail("opt", pm.status());
  absl::StatusOr<std::unique_ptr<Graph>> graph = LoadGraph(args->positional()[0]);
  if (!graph.ok()) return cli::Fail("opt", graph.status());
  const int before = (*graph)->num_nodes();
  absl::Status s = pm->Run(**graph);
  if (!s.ok()) return cli::Fail("opt", s);
  if (args->Has("stats")) std::printf("%s", pm->Report().c_str());
  for (const std::string& e : pm->explanations()) std::printf("%s\n", e.c_str());
  std::printf("pipeline: %s\nnodes: %d -> %d\n", pm->pipeline().c_str(), before, (*graph)->num_nodes());
  if (args->Has("o")) {
    const std::string out = args->Get("o");
    if (absl::Status c = cli::CheckOutputIsNotAnInput(out, {args->positional()[0]}); !c.ok()) {
      return cli::Fail("opt", c);
    }
    if (absl::EndsWith(out, ".onnx")) {
      s = ExportOnnxFile(**graph, out);
    } else {
      s = WriteFileAtomically(out, PrintGraph(**graph));
    }
    if (!s.ok()) return cli::Fail("opt", s);
    std::printf("wrote %s\n", out.c_str());
  }
  return 0;
}

}  // namespace tessel
