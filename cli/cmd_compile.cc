// `tessel compile`: ONNX (or text IR) -> deployable artifact (.tsl).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cctype>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "artifact/artifact.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/model_io.h"
#include "cli/quantize_flags.h"
#include "codegen/c_emitter.h"
#include "codegen/compiler.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/registry/lab_costs.h"
#include "runtime/executor.h"

namespace tessel {

absl::StatusOr<std::string> PipelineFromArgs(const cli::Args& args, const std::string& fallback);

namespace {

// The median latency of `compiled` on this machine, one thread, random inputs: 15 runs after 3.
absl::StatusOr<double> MeasureMs(const CompileResult& compiled) {
  std::error_code ec;
  std::string templ = (std::filesystem::temp_directory_path(ec) / "tessel-compile-XXXXXX").string();
  if (ec) templ = "/tmp/tessel-compile-XXXXXX";
  std::vector<char> path(templ.begin(), templ.end());
  path.push_back('\0');
  const int fd = mkstemp(path.data());
  if (fd < 0) return absl::InternalError("cannot create a temporary file to time the int8 candidates");
  close(fd);
  absl::StatusOr<double> median = [&]() -> absl::StatusOr<double> {
    if (absl::Status s = WriteArtifact(path.data(), compiled.plan, compiled.weights); !s.ok()) return s;
    absl::StatusOr<std::shared_ptr<const CompiledModel>> model = CompiledModel::Load(path.data());
    if (!model.ok()) return model.status();
    std::vector<ModelInput> model_inputs;
    for (int i = 0; i < (*model)->num_inputs(); ++i) model_inputs.push_back({(*model)->input_name(i), (*model)->input_type(i)});
    absl::StatusOr<std::vector<Tensor>> inputs = TimingInputs(model_inputs, {});
    if (!inputs.ok()) return inputs.status();
    absl::StatusOr<std::unique_ptr<Session>> session = Session::Create(*model, SessionOptions());
    if (!session.ok()) return session.status();
    std::vector<double> ms;
    for (int i = 0; i < 18; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      if (absl::Status s = (*session)->Run(*inputs); !s.ok()) return s;
      if (i >= 3) ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
    return ms[ms.size() / 2];
  }();
  std::remove(path.data());
  return median;
}

// --int8-fallback=cost: the int8 layers that the kernel cost model prices above their f32 form on this
// target (each layer against the same node of the int8 pipeline's f32 graph) stay f32 in a second
// artifact, which replaces `compiled` where it is faster: timed here when the target is this machine,
// by the cost model otherwise. Without an 8-bit dot product (plain AVX2), int8 convolutions can cost
// more than f32 Winograd ones.
absl::Status KeepSlowInt8LayersF32(const cli::Args& args, const CompileOptions& options,
                                   const QuantizeInt8Result& int8, CompileResult& compiled) {
  absl::StatusOr<std::unique_ptr<Graph>> f32_graph = LoadGraph(args.positional()[0]);
  if (!f32_graph.ok()) return f32_graph.status();
  CompileOptions quiet = options;
  quiet.pipeline = Int8F32Pipeline(args);
  quiet.progress = nullptr;
  quiet.tune = false;
  absl::StatusOr<CompileResult> f32 = CompileGraph(**f32_graph, quiet);
  if (!f32.ok()) return f32.status();
  std::set<std::string> keep;  // what --keep-fp32 and the SQNR budget already left f32
  for (const LayerSensitivity& l : int8.layers) {
    if (!l.int8) keep.insert(l.node);
  }
  std::vector<std::string> slower;
  for (const artifact::Op& op : compiled.plan.ops()) {
    if (!int8.summary.compute_nodes.count(op.name())) continue;
    const auto f = f32->op_seconds.find(op.name());
    const auto q = compiled.op_seconds.find(op.name());
    if (f != f32->op_seconds.end() && q != compiled.op_seconds.end() && q->second > f->second) slower.push_back(op.name());
  }
  if (slower.empty()) return absl::OkStatus();
  keep.insert(slower.begin(), slower.end());
  absl::StatusOr<std::unique_ptr<Graph>> mixed_graph = LoadGraph(args.positional()[0]);
  if (!mixed_graph.ok()) return mixed_graph.status();
  if (absl::Status s = RequantizeInt8(args, int8.table, keep, **mixed_graph); !s.ok()) return s;
  CompileOptions mixed_options = options;
  mixed_options.progress = nullptr;
  absl::StatusOr<CompileResult> mixed = CompileGraph(**mixed_graph, mixed_options);
  if (!mixed.ok()) return mixed.status();
  // The two artifacts are timed where they will run (the per-layer estimates leave out the quantize and
  // dequantize steps at each f32 island and the f32 fusions the int8 pipeline does not make), and
  // compared by the cost model for another target, or for the core TESSEL_COST_CORE names (priced by
  // the Arm lab's table: this machine, e.g. qemu emulating that core's ISA, is not that core).
  double mixed_ms = mixed->estimated_seconds * 1e3, int8_ms = compiled.estimated_seconds * 1e3;
  const char* how = "estimated";
  if (ResolveTarget(options.target) == ResolveTarget("host") && !LabCostCoreFromEnvironment()) {
    absl::StatusOr<double> m = MeasureMs(*mixed);
    absl::StatusOr<double> q = m.ok() ? MeasureMs(compiled) : m;
    if (!q.ok()) return q.status();
    mixed_ms = *m, int8_ms = *q, how = "measured";
  }
  const bool better = mixed_ms < int8_ms;
  const size_t shown = std::min<size_t>(slower.size(), 4);
  std::fprintf(stderr,
               "[compile] %zu of %zu int8 layers are estimated slower than their f32 form on this CPU (%s): %s%s; "
               "with them f32 the artifact %s %.2f ms per run against %.2f ms all int8, so they %s "
               "(--int8-fallback none keeps every layer int8)\n",
               slower.size(), int8.summary.compute_nodes.size(), GetCpuFeatures().ToString().c_str(),
               absl::StrJoin(slower.begin(), slower.begin() + shown, ", ").c_str(), shown < slower.size() ? ", ..." : "",
               how, mixed_ms, int8_ms, better ? "stay f32" : "stay int8");
  if (better) compiled = std::move(*mixed);
  return absl::OkStatus();
}

}  // namespace

int CompileCommand(int argc, char** argv) {
  std::vector<cli::FlagSpec> flags = {
      {"o", "OUT.tsl", "output artifact (a folder with --emit=c)"},
      {"emit", "FORMAT", "tsl (artifact) or c (C99 source, header and weights into the -o folder)", false, "tsl"},
      {"pipeline", "STR",
       "pass pipeline (see tessel opt --list-passes); with --quantize=int8, the f32 passes before calibration"},
      {"O", "LEVEL", "named pipeline O0..O3 (O3: fused NHWC convolutions on the fast kernels)", false, "3"},
      {"target", "TARGET", "host, aarch64-neon or aarch64-sve", false, "host"},
      {"dim", "NAME=VALUE", "value (>= 1) for a symbolic dimension of the model's inputs (e.g. batch=1)", true},
      {"memory", "ALGO", "memory planner: greedy-by-size, first-fit or naive", false, "greedy-by-size"},
      {"tune", "", "time every legal kernel per op on its real shape and keep the fastest (cached)"},
      {"tune-cache", "FILE", "tuning cache (default ~/.cache/tessel/tune.tsv; keyed by CPU model and op)"},
      {"tune-ms", "MS", "time spent per candidate kernel when tuning", false, "50", cli::Between(1, 10000)},
  };
  for (const cli::FlagSpec& f : QuantizeFlagSpecs()) flags.push_back(f);
  if (cli::WantsHelp(argc, argv)) {
    std::printf("%s", cli::Usage("compile", "MODEL.onnx -o MODEL.tsl [--pipeline STR | -O0..-O3] [--target T] [--tune]",
                                 "Optimizes the model, chooses kernels, plans memory and writes a deployable artifact "
                                 "(protobuf plan + 64-byte aligned weights, mapped in place by the runtime).",
                                 flags)
                          .c_str());
    return 0;
  }
  absl::StatusOr<cli::Args> args = cli::Parse("compile", flags, argc, argv);
  if (!args.ok()) return cli::Fail("compile", args.status());
  if (args->positional().size() != 1 || !args->Has("o")) {
    return cli::Fail("compile", absl::InvalidArgumentError("expects MODEL and -o OUT.tsl (see --help)"));
  }
  if (absl::Status s = cli::CheckOutputIsNotAnInput(args->Get("o"), {args->positional()[0]}); !s.ok()) {
    return cli::Fail("compile", s);
  }
  CompileOptions options;
  absl::StatusOr<std::string> pipeline = PipelineFromArgs(*args, "O3");
  if (!pipeline.ok()) return cli::Fail("compile", pipeline.status());
  options.pipeline = args->Has("pipeline") ? *pipeline : absl::StrCat("O", args->Get("O"));
  options.target = args->Get("target");
  options.memory_algorithm = args->Get("memory");
  options.tune = args->Has("tune");
  if (options.tune) {
    absl::StatusOr<int64_t> tune_ms = args->GetInt("tune-ms");
    if (!tune_ms.ok()) return cli::Fail("compile", tune_ms.status());
    options.tune_seconds_per_candidate = *tune_ms / 1000.0;
    if (args->Has("tune-cache")) {
      options.tune_cache = args->Get("tune-cache");
    } else if (const char* home = std::getenv("HOME")) {
      const std::string dir = absl::StrCat(home, "/.cache/tessel");
      std::error_code ec;
      std::filesystem::create_directories(dir, ec);
      if (!ec) options.tune_cache = dir + "/tune.tsv";
    }
  }
  for (const std::string& d : args->GetAll("dim")) {
    const size_t eq = d.find('=');
    int64_t v;
    if (eq == std::string::npos || !absl::SimpleAtoi(d.substr(eq + 1), &v) || v <= 0) {
      return cli::Fail("compile", absl::InvalidArgumentError(absl::StrCat("--dim ", d, ": expected NAME=POSITIVE_INT")));
    }
    if (!options.dim_values.emplace(d.substr(0, eq), v).second) {
      return cli::Fail("compile", absl::InvalidArgumentError(absl::StrCat("--dim ", d.substr(0, eq), " given twice")));
    }
  }
  options.progress = [](const std::string& line) { std::fprintf(stderr, "[compile] %s\n", line.c_str()); };
  const auto t0 = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<Graph>> graph = LoadGraph(args->positional()[0]);
  if (!graph.ok()) return cli::Fail("compile", graph.status());
  // --dim binds the inputs' symbolic dimensions, nothing else: a name none of them has is a mistake.
  std::vector<std::string> symbols;
  for (const Value* v : (*graph)->inputs()) {
    for (const Dim& d : v->type().dims) {
      if (!d.is_static() && std::find(symbols.begin(), symbols.end(), d.symbol()) == symbols.end()) {
        symbols.push_back(d.symbol());
      }
    }
  }
  for (const auto& [name, value] : options.dim_values) {
    if (std::find(symbols.begin(), symbols.end(), name) == symbols.end()) {
      const std::string known = symbols.empty() ? "none" : absl::StrJoin(symbols, ", ");
      return cli::Fail("compile", absl::InvalidArgumentError(absl::StrCat(
                                      "--dim ", name, "=", value, ": no input of ", args->positional()[0],
                                      " has a symbolic dimension '", name, "' (its inputs have ", known, ")")));
    }
  }
  // Symbolic batch dims default to 1 unless given.
  for (const Value* v : (*graph)->inputs()) {
    for (const Dim& d : v->type().dims) {
      if (!d.is_static() && !options.dim_values.count(d.symbol())) {
        options.dim_values[d.symbol()] = 1;
        std::fprintf(stderr, "[compile] symbolic dimension '%s' of input '%s' set to 1 (use --dim to choose)\n",
                     d.symbol().c_str(), v->name().c_str());
      }
    }
  }
  // With --quantize=int8, the f32 compilation's estimate too: int8 is only faster where the CPU has fast
  // 8-bit dot products (VNNI, dotprod); on plain AVX2 it is slower, and the user should hear so.
  double f32_seconds = -1;
  if (args->Get("quantize") == "int8") {
    absl::StatusOr<std::unique_ptr<Graph>> f32_graph = LoadGraph(args->positional()[0]);
    CompileOptions quiet = options;
    quiet.progress = nullptr;
    quiet.tune = false;
    absl::StatusOr<CompileResult> f32 =
        f32_graph.ok() ? CompileGraph(**f32_graph, quiet) : absl::StatusOr<CompileResult>(f32_graph.status());
    if (f32.ok()) f32_seconds = f32->estimated_seconds;
  }
  const std::string fallback = args->Get("int8-fallback");
  if (fallback != "cost" && fallback != "none") {
    return cli::Fail("compile", absl::InvalidArgumentError(absl::StrCat("--int8-fallback ", fallback,
                                                                        ": expected cost or none")));
  }
  QuantizeInt8Result int8;
  absl::StatusOr<bool> quantized = MaybeQuantizeInt8(*args, **graph, std::cerr, &int8);
  if (!quantized.ok()) return cli::Fail("compile", quantized.status());
  if (*quantized) options.pipeline = "dce";  // the int8 pipeline already ran; do not fuse again
  absl::StatusOr<CompileResult> result = CompileGraph(**graph, options);
  if (!result.ok()) return cli::Fail("compile", result.status());
  if (*quantized && fallback == "cost") {
    if (absl::Status s = KeepSlowInt8LayersF32(*args, options, int8, *result); !s.ok()) return cli::Fail("compile", s);
  }
  if (*quantized && f32_seconds > 0 && result->estimated_seconds > f32_seconds) {
    std::fprintf(stderr,
                 "compile: warning: this int8 artifact is estimated slower than the f32 one on this CPU (%.2f vs %.2f ms "
                 "per run by the kernel cost model; %s): without an 8-bit dot product (AVX-512 VNNI, AVX-VNNI, Arm "
                 "dotprod) int8 convolutions cost more than f32 ones. Its weights are still 4x smaller; compile "
                 "without --quantize for speed.\n",
                 result->estimated_seconds * 1e3, f32_seconds * 1e3, GetCpuFeatures().ToString().c_str());
  }
  absl::Status s;
  if (args->Get("emit") == "c") {
    std::string name = std::filesystem::path(args->positional()[0]).stem().string();
    for (char& ch : name) {
      if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    }
    if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) name = "model_" + name;
    std::error_code ec;
    std::filesystem::create_directories(args->Get("o"), ec);
    s = ec ? absl::InvalidArgumentError(absl::StrCat("cannot create folder ", args->Get("o"), ": ", ec.message()))
           : EmitC(result->plan, result->weights, args->Get("o"), name);
  } else if (args->Get("emit") == "tsl") {
    s = WriteArtifact(args->Get("o"), result->plan, result->weights);
  } else {
    s = absl::InvalidArgumentError(absl::StrCat("--emit ", args->Get("emit"), ": expected tsl or c"));
  }
  if (!s.ok()) return cli::Fail("compile", s);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("compiled %s -> %s in %.0f ms: %d -> %d nodes, %d ops, target %s, arena %.2f MB (lower bound %.2f MB), "
              "weights %.2f MB\n",
              args->positional()[0].c_str(), args->Get("o").c_str(), ms, result->nodes_before, result->nodes_after,
              result->plan.ops_size(), result->plan.target().c_str(), result->plan.arena_bytes() / 1e6,
              result->plan.arena_lower_bound() / 1e6, result->weights.size() / 1e6);
  std::string kernels;
  for (const auto& [backend, count] : result->kernels_per_backend) {
    absl::StrAppend(&kernels, kernels.empty() ? "" : ", ", backend, " ", count);
  }
  std::printf("kernels: %s (tessel inspect %s lists them per op)\n", kernels.c_str(), args->Get("o").c_str());
  std::printf("estimated %.2f ms per run on this CPU, 1 thread (kernel cost model)\n", result->estimated_seconds * 1e3);
  // Reference kernels are plain loops written for clarity, often 10-100x slower than a vector kernel: name
  // each op type left on one, its nodes, and why no optimized kernel took it.
  if (!result->reference_ops.empty()) {
    struct Group {
      std::vector<std::string> nodes;
      double seconds = 0;
    };
    std::map<std::pair<std::string, std::string>, Group> groups;  // (op, reason)
    double reference_seconds = 0;
    for (const CompileResult::ReferenceOp& r : result->reference_ops) {
      Group& g = groups[{r.op, r.reason}];
      g.nodes.push_back(r.name);
      g.seconds += r.estimated_seconds;
      reference_seconds += r.estimated_seconds;
    }
    std::fprintf(stderr,
                 "compile: warning: %zu op(s) run on reference kernels, unoptimized on target %s (%.0f%% of the "
                 "estimated time):\n",
                 result->reference_ops.size(), result->plan.target().c_str(),
                 result->estimated_seconds > 0 ? 100 * reference_seconds / result->estimated_seconds : 0.0);
    // Heaviest first, by the cost model.
    std::vector<std::pair<std::pair<std::string, std::string>, Group>> sorted(groups.begin(), groups.end());
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const auto& a, const auto& b) { return a.second.seconds > b.second.seconds; });
    for (const auto& [key, g] : sorted) {
      const size_t shown = std::min<size_t>(g.nodes.size(), 3);
      std::fprintf(stderr, "  %s x%zu (%s%s): %s\n", key.first.c_str(), g.nodes.size(),
                   absl::StrJoin(g.nodes.begin(), g.nodes.begin() + shown, ", ").c_str(),
                   shown < g.nodes.size() ? absl::StrCat(", ", g.nodes.size() - shown, " more").c_str() : "",
                   key.second.c_str());
    }
  }
  if (options.tune) {
    std::printf("tuning: %d ops timed, %d from the cache %s\n", result->tuned_ops, result->cached_ops,
                options.tune_cache.empty() ? "(none)" : options.tune_cache.c_str());
  }
  return 0;
}

}  // namespace tessel
