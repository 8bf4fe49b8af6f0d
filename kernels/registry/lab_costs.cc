// The Arm lab's kernel cost table and the choice of its core model column.
#include "kernels/registry/lab_costs.h"

#include <cstdlib>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "kernels/cpu/cpu_features.h"

namespace tessel {
namespace {

constexpr LabCost kLabCosts[] = {
#include "kernels/registry/lab_costs_aarch64.inc"
};

bool KnownCore(absl::string_view core) {
  for (const LabCost& c : kLabCosts) {
    if (core == c.core) return true;
  }
  return false;
}

const char* CoreFromEnvironment() {
  const char* env = std::getenv("TESSEL_COST_CORE");
  return env != nullptr && KnownCore(env) ? env : nullptr;
}

std::string DetectCore() {
  if (const char* env = CoreFromEnvironment()) return env;
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (!absl::StartsWith(line, "CPU part")) continue;
    absl::string_view v = line;
    v = absl::StripAsciiWhitespace(v.substr(v.find(':') + 1));
    if (v == "0xd05") return "cortex-a55";
    if (v == "0xd0b") return "cortex-a76";
    if (v == "0xd40") return "neoverse-v1";
    break;
  }
  return GetCpuFeatures().sve ? "neoverse-v1" : "cortex-a76";
}

}  // namespace

bool LabCostCoreFromEnvironment() { return CoreFromEnvironment() != nullptr; }

const std::string& LabCostCore() {
  static const std::string* core = new std::string(DetectCore());
  return *core;
}

const LabCost* FindLabCost(absl::string_view group, absl::string_view kernel) {
  const std::string& core = LabCostCore();
  for (const LabCost& c : kLabCosts) {
    if (core == c.core && group == c.group && kernel == c.kernel) return &c;
  }
  return nullptr;
}

double LabSecondsScale(absl::string_view group) {
  const LabCost* row = group.empty() ? nullptr : FindLabCost(group, kLabSecondsScale);
  return row != nullptr && row->ratio > 0 ? row->ratio : 1.0;
}

std::string LabCostGroup(absl::string_view op, absl::string_view dtypes) {
  if (op == "gemm" || op == "gemm_prepacked") return dtypes == "f32" ? "gemm" : "";
  if (op == "gemv") {
    if (!absl::EndsWith(dtypes, "xf32")) return "";
    return absl::StrCat("gemv/", absl::StripSuffix(dtypes, "xf32"));
  }
  if (op == "softmax" || op == "rmsnorm" || op == "clamp" || op == "sigmoid" || op == "silu" || op == "hardswish" ||
      op == "vadd" || op == "vmul") {
    return absl::StrCat("vector/", op);
  }
  return "";
}

}  // namespace tessel
