// `tessel inspect`: what is in a model — inputs, outputs, operators, parameters, the text IR.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/model_io.h"
#include "codegen/memory_planner.h"
#include "graph/dot.h"
#include "graph/text.h"
#include "runtime/executor.h"
#include "support/atomic_file.h"
#include "support/memory.h"

namespace tessel {
namespace {

// "f32[1,3,224,224]"; a data-dependent extent as its upper bound, "f32[<=300,4]", or "?" without one.
std::string ShapeOf(const artifact::Tensor& t) {
  const std::vector<int64_t> shape(t.shape().begin(), t.shape().end());
  if (!t.dynamic()) return TensorType::Static(static_cast<DType>(t.dtype()), shape).ToString();
  std::string dims;
  for (size_t d = 0; d < shape.size(); ++d) {
    const bool varies = absl::c_linear_search(t.dynamic_axes(), static_cast<int>(d));
    if (shape[d] < 0) {
      absl::StrAppend(&dims, d == 0 ? "" : ",", "?");
    } else {
      absl::StrAppend(&dims, d == 0 ? "" : ",", varies ? "<=" : "", shape[d]);
    }
  }
  return absl::StrCat(DTypeName(static_cast<DType>(t.dtype())), "[", dims, "]");
}

int InspectArtifact(const std::string& path, bool profile, int iterations, int threads,
                    const std::vector<std::string>& input_specs) {
  absl::StatusOr<std::shared_ptr<const CompiledModel>> model = CompiledModel::Load(path);
  if (!model.ok()) return cli::Fail("inspect", model.status());
  const artifact::Plan& plan = (*model)->plan();
  std::printf("artifact: %s (%.2f MB; graph '%s')\ntarget: %s\npipeline: %s\n", path.c_str(),
              (*model)->artifact().file_bytes() / 1e6, plan.graph_name().c_str(), plan.target().c_str(),
              plan.pipeline().c_str());
  const double over = plan.arena_lower_bound() ? 100.0 * (double(plan.arena_bytes()) / plan.arena_lower_bound() - 1) : 0;
  std::printf("memory: arena %.3f MB (%s), lower bound %.3f MB (%+.1f%%), weights %.2f MB (mapped in place)\n",
              plan.arena_bytes() / 1e6, plan.memory_algorithm().c_str(), plan.arena_lower_bound() / 1e6, over,
              (*model)->artifact().weights_bytes() / 1e6);
  std::vector<double> ms(plan.ops_size(), 0);
  if (profile) {
    SessionOptions options;
    options.num_threads = threads;
    absl::StatusOr<std::unique_ptr<Session>> created = Session::Create(*model, options);
    if (!created.ok()) return cli::Fail("inspect", created.status());
    Session& session = **created;
    std::printf("scratch: %.3f MB per session on %d thread(s), one buffer per task that every kernel shares\n",
                session.scratch_bytes() / 1e6, threads);
    // Packed weights, arena and scratch of 64 KiB or more sit on 2 MiB pages where the kernel gives
    // them (support/memory.h).
    const long long backed = HugePageBackedBytes();
    std::printf("pages: %.2f MB of packed weights and buffers on 2 MiB-page chunks", PooledBytes() / 1e6);
    if (backed >= 0) std::printf("; %.2f MB of this process backed by 2 MiB pages", backed / 1e6);
    std::printf("\n");
    std::vector<ModelInput> model_inputs;
    for (int i = 0; i < (*model)->num_inputs(); ++i) {
      model_inputs.push_back({(*model)->input_name(i), (*model)->input_type(i)});
    }
    absl::StatusOr<std::vector<Tensor>> inputs = TimingInputs(model_inputs, input_specs);
    if (!inputs.ok()) return cli::Fail("inspect", inputs.status());
    // Two untimed runs first (page faults on the mapped weights, kernel set-up), then the per-op median of
    // `iterations` runs.
    for (int w = 0; w < 2; ++w) {
      absl::Status s = session.Run(*inputs);
      if (!s.ok()) return cli::Fail("inspect", s);
    }
    session.set_profile(true);
    std::vector<std::vector<double>> samples(plan.ops_size());
    for (int it = 0; it < iterations; ++it) {
      absl::Status s = session.Run(*inputs);
      if (!s.ok()) return cli::Fail("inspect", s);
      for (int i = 0; i < plan.ops_size(); ++i) samples[i].push_back(session.profile()[i].milliseconds);
    }
    for (int i = 0; i < plan.ops_size(); ++i) {
      std::sort(samples[i].begin(), samples[i].end());
      ms[i] = samples[i][samples[i].size() / 2];
    }
  }
  for (int i = 0; i < plan.inputs_size(); ++i) {
    const auto& t = plan.tensors(plan.inputs(i));
    std::printf("input:  %s %s @arena+%llu\n", t.name().c_str(), ShapeOf(t).c_str(), (unsigned long long)t.offset());
  }
  for (int i = 0; i < plan.outputs_size(); ++i) {
    const auto& t = plan.tensors(plan.outputs(i));
    std::printf("output: %s %s\n", t.name().c_str(), ShapeOf(t).c_str());
  }
  std::printf("ops: %d\n", plan.ops_size());
  double total = 0;
  for (int i = 0; i < plan.ops_size(); ++i) {
    const artifact::Op& op = plan.ops(i);
    std::string outs;
    for (int idx : op.outputs()) {
      const auto& t = plan.tensors(idx);
      const char* where = t.storage() == artifact::Tensor::ARENA  ? "arena+"
                          : t.storage() == artifact::Tensor::HEAP ? "heap+"
                                                                  : "weights+";
      absl::StrAppend(&outs, outs.empty() ? "" : ", ", ShapeOf(t), " @", where,
                      t.offset());
    }
    if (profile) {
      std::printf("  %3d %-34s %-44s %-28s %9.3f ms\n", i, op.name().c_str(), op.kernel().c_str(), outs.c_str(), ms[i]);
      total += ms[i];
    } else {
      std::printf("  %3d %-34s %-44s %s\n", i, op.name().c_str(), op.kernel().c_str(), outs.c_str());
    }
  }
  if (profile) std::printf("total %.3f ms (sum of per-op medians over %d runs on %d thread(s), after 2 warm-up runs)\n", total, iterations, threads);
  return 0;
}

}  // namespace

int InspectCommand(int argc, char** argv) {
  const std::vector<cli::FlagSpec> flags = {
      {"dot", "FILE", "also write the graph as Graphviz DOT (render with: dot -Tsvg FILE -o graph.svg)"},
      {"no-ir", "", "omit the text IR"},
      {"full-constants", "", "print every constant element in the IR (default: elide large ones)"},
      {"profile", "", "for a .tsl artifact: add per-op time (median of --iterations runs after 2 warm-up runs)"},
      {"iterations", "K", "profiled runs", false, "10", cli::Between(1, 100000)},
      {"input", "NAME=FILE.npy", "with --profile: run on this input (default: random)", true},
      ThreadsFlag("threads per inference when profiling", "1"),
  };
  if (cli::WantsHelp(argc, argv)) {
    std::printf("%s", cli::Usage("inspect", "MODEL.onnx|MODEL.tir|MODEL.tsl [--dot FILE] [--profile [--iterations K] [--threads N] [--input NAME=FILE.npy ...]]",
                                 "Prints the model's inputs and outputs, operator counts, parameter count and the "
                                 "text IR.",
                                 flags)
                          .c_str());
    return 0;
  }
  absl::StatusOr<cli::Args> args = cli::Parse("inspect", flags, argc, argv);
  if (!args.ok()) return cli::Fail("inspect", args.status());
  if (args->positional().size() != 1) return cli::Fail("inspect", absl::InvalidArgumentError("expects one MODEL (see --help)"));
  if (absl::EndsWith(args->positional()[0], ".tsl")) {
    absl::StatusOr<int64_t> iterations = args->GetInt("iterations");
    if (!iterations.ok()) return cli::Fail("inspect", iterations.status());
    absl::StatusOr<int> threads = ThreadsArg(*args);
    if (!threads.ok()) return cli::Fail("inspect", threads.status());
    return InspectArtifact(args->positional()[0], args->Has("profile"), static_cast<int>(*iterations), *threads,
                           args->GetAll("input"));
  }
  absl::StatusOr<std::unique_ptr<Graph>> graph = LoadGraph(args->positional()[0]);
  if (!graph.ok()) return cli::Fail("inspect", graph.status());
  const Graph& g = **graph;
  std::printf("model: %s (graph '%s')\n", args->positional()[0].c_str(), g.name().c_str());
  for (const Value* v : g.inputs()) std::printf("input:  %s %s\n", v->name().c_str(), v->type().ToString().c_str());
  for (const Value* v : g.outputs()) std::printf("output: %s %s\n", v->name().c_str(), v->type().ToString().c_str());
  std::map<std::string, int> ops;
  for (const auto& n : g.nodes()) ops[(n->domain().empty() ? "" : n->domain() + ".") + n->op_type()]++;
  std::printf("nodes: %d\n", g.num_nodes());
  for (const auto& [op, count] : ops) std::printf("  %-28s %d\n", op.c_str(), count);
  std::printf("parameters: %lld (%.2f MB in %zu constants)\n", static_cast<long long>(g.ConstantElements()),
              g.ConstantBytes() / 1e6, g.Constants().size());
  // Activation memory if this graph ran as it is (compiled artifacts plan after fusion).
  if (absl::StatusOr<std::vector<Node*>> order = g.TopologicalOrder(); order.ok()) {
    absl::StatusOr<GraphLifetimes> lifetimes = ComputeLifetimes(g, *order, /*allow_in_place=*/true);
    if (lifetimes.ok()) {
      for (const std::string& algo : MemoryPlanAlgorithms()) {
        absl::StatusOr<MemoryPlan> plan = PlanMemory(lifetimes->tensors, algo);
        if (plan.ok() && VerifyMemoryPlan(lifetimes->tensors, *plan).ok()) {
          std::printf("memory plan: %s\n", DescribePlan(*plan).c_str());
        }
      }
    } else {
      std::printf("memory plan: not available (%s)\n", std::string(lifetimes.status().message()).c_str());
    }
  }
  if (!args->Has("no-ir")) {
    PrintOptions options;
    options.elide_large_constants = !args->Has("full-constants");
    std::printf("\n%s", PrintGraph(g, options).c_str());
  }
  if (args->Has("dot")) {
    if (absl::Status s = WriteFileAtomically(args->Get("dot"), ToDot(g)); !s.ok()) return cli::Fail("inspect", s);
    std::printf("wrote %s\n", args->Get("dot").c_str());
  }
  return 0;
}

}  // namespace tessel
