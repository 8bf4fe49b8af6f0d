// Model and input loading for the CLI.
#include "cli/model_io.h"

#include <cctype>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/npy.h"
#include "graph/onnx/onnx_importer.h"
#include "graph/text.h"

namespace tessel {

absl::StatusOr<std::unique_ptr<Graph>> LoadGraph(const std::string& path) {
  if (absl::EndsWith(path, ".tir")) {
    std::ifstream f(path);
    if (!f) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
    std::stringstream ss;
    ss << f.rdbuf();
    absl::StatusOr<std::unique_ptr<Graph>> g = ParseGraph(ss.str());
    if (!g.ok()) return absl::Status(g.status().code(), absl::StrCat(path, ": ", g.status().message()));
    return g;
  }
  return ImportOnnxFile(path);
}

absl::StatusOr<std::vector<Tensor>> LoadInputs(const Graph& graph, const std::vector<std::string>& specs) {
  auto expected = [&]() {
    std::vector<std::string> parts;
    for (const Value* v : graph.inputs()) parts.push_back(absl::StrCat(v->name(), ": ", v->type().ToString()));
    return absl::StrJoin(parts, ", ");
  };
  std::map<std::string, std::string> files;
  for (const std::string& spec : specs) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos) {
      if (graph.inputs().size() != 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("--input ", spec, ": give NAME=FILE.npy; the model's inputs are ", expected()));
      }
      files[graph.inputs()[0]->name()] = spec;
    } else {
      files[spec.substr(0, eq)] = spec.substr(eq + 1);
    }
  }
  for (const auto& [name, file] : files) {
    if (graph.FindValue(name) == nullptr || !graph.FindValue(name)->is_graph_input()) {
      return absl::InvalidArgumentError(absl::StrCat("the model has no input named '", name, "'; its inputs are ", expected()));
    }
  }
  std::vector<Tensor> inputs;
  for (const Value* v : graph.inputs()) {
    auto it = files.find(v->name());
    if (it == files.end()) {
      return absl::InvalidArgumentError(absl::StrCat("missing --input for '", v->name(), "'; the model's inputs are ", expected()));
    }
    absl::StatusOr<Tensor> t = ReadNpy(it->second);
    if (!t.ok()) return t.status();
    inputs.push_back(*t);
  }
  return inputs;
}

std::string SanitizeFileName(const std::string& name) {
  std::string out;
  for (char c : name) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
    out.push_back(ok ? c : '_');
  }
  while (!out.empty() && (out[0] == '_' || out[0] == '.')) out.erase(0, 1);
  return out.empty() ? "output" : out;
}

}  // namespace tessel
