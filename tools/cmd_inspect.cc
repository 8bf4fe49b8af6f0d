// `tessel inspect`: what is in a model — inputs, outputs, operators, parameters, the text IR.
#include <cstdio>
#include <fstream>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "graph/dot.h"
#include "graph/text.h"
#include "runtime/memory_planner.h"
#include "tools/cli.h"
#include "tools/commands.h"
#include "tools/model_io.h"

namespace tessel {

int InspectCommand(int argc, char** argv) {
  const std::vector<cli::FlagSpec> flags = {
      {"dot", "FILE", "also write the graph as Graphviz DOT (render with: dot -Tsvg FILE -o graph.svg)"},
      {"no-ir", "", "omit the text IR"},
      {"full-constants", "", "print every constant element in the IR (default: elide large ones)"},
  };
  if (cli::WantsHelp(argc, argv)) {
    std::printf("%s", cli::Usage("inspect", "MODEL.onnx|MODEL.tir [--dot FILE]",
                                 "Prints the model's inputs and outputs, operator counts, parameter count and the "
                                 "text IR.",
                                 flags)
                          .c_str());
    return 0;
  }
  absl::StatusOr<cli::Args> args = cli::Parse("inspect", flags, argc, argv);
  if (!args.ok()) return cli::Fail("inspect", args.status());
  if (args->positional().size() != 1) return cli::Fail("inspect", absl::InvalidArgumentError("expects one MODEL (see --help)"));
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
    std::ofstream f(args->Get("dot"));
    f << ToDot(g);
    if (!f) return cli::Fail("inspect", absl::PermissionDeniedError(absl::StrCat(args->Get("dot"), ": cannot write")));
    std::printf("wrote %s\n", args->Get("dot").c_str());
  }
  return 0;
}

}  // namespace tessel
