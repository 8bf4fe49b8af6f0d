// Pass manager.
#include "passes/pass_manager.h"

#include <chrono>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "graph/text.h"

namespace tessel {

absl::StatusOr<PassManager> PassManager::Create(absl::string_view pipeline, PassManagerOptions options) {
  RegisterBuiltinPasses();
  auto parsed = ParsePipeline(pipeline);
  if (!parsed.ok()) return parsed.status();
  auto expanded = ExpandPipeline(*parsed);
  if (!expanded.ok()) return expanded.status();
  PassManager pm;
  pm.pipeline_ = PrintPipeline(*parsed);
  pm.options_ = std::move(options);
  pm.ctx_.set_explain(pm.options_.explain);
  for (const std::string& name : pm.options_.print_after) {
    if (name != "all" && PassRegistry::Global().Find(name) == nullptr) {
      return absl::NotFoundError(absl::StrCat("--print-after: unknown pass '", name, "'"));
    }
  }
  for (const PassSpec& spec : *expanded) {
    const PassInfo* info = PassRegistry::Global().Find(spec.name);
    absl::Status s = CheckOptionNames(*info, spec.options);
    if (!s.ok()) return s;
    auto pass = info->create(spec.options);
    if (!pass.ok()) {
      return absl::Status(pass.status().code(), absl::StrCat("pass '", spec.name, "': ", pass.status().message()));
    }
    pm.specs_.push_back(spec);
    pm.passes_.push_back(std::move(*pass));
  }
  return pm;
}

absl::Status PassManager::Run(Graph& graph) {
  records_.clear();
  std::ostream& dump = options_.dump ? *options_.dump : std::cerr;
  for (size_t i = 0; i < passes_.size(); ++i) {
    const std::string& name = specs_[i].name;
    PassRecord record;
    record.name = name;
    record.nodes_before = graph.num_nodes();
    ctx_.ClearStats();
    const auto start = std::chrono::steady_clock::now();
    absl::Status s = passes_[i]->Run(graph, ctx_);
    record.milliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!s.ok()) return absl::Status(s.code(), absl::StrCat("pass '", name, "' failed: ", s.message()));
    record.nodes_after = graph.num_nodes();
    record.stats = ctx_.stats();
    records_.push_back(std::move(record));
    if (options_.verify_each) {
      s = graph.Verify();
      if (!s.ok()) return absl::Status(s.code(), absl::StrCat("verifier failed after pass '", name, "': ", s.message()));
    }
    for (const std::string& p : options_.print_after) {
      if (p == "all" || p == name) {
        PrintOptions po;
        po.elide_large_constants = true;
        dump << "// ----- IR after " << name << " -----\n" << PrintGraph(graph, po);
        break;
      }
    }
  }
  return absl::OkStatus();
}

std::string PassManager::Report() const {
  std::string out = absl::StrFormat("%-28s %10s %7s %7s  %s\n", "pass", "time(ms)", "nodes", "after", "statistics");
  double total = 0;
  for (const PassRecord& r : records_) {
    std::string stats;
    for (const auto& [k, v] : r.stats) absl::StrAppend(&stats, stats.empty() ? "" : ", ", k, "=", v);
    absl::StrAppend(&out, absl::StrFormat("%-28s %10.3f %7d %7d  %s\n", r.name, r.milliseconds, r.nodes_before,
                                          r.nodes_after, stats));
    total += r.milliseconds;
  }
  absl::StrAppend(&out, absl::StrFormat("%-28s %10.3f\n", "total", total));
  return out;
}

}  // namespace tessel
