// Model and input loading for the CLI.
#include "cli/model_io.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/npy.h"
#include "graph/onnx/onnx_importer.h"
#include "graph/text.h"
#include "passes/fold_shape_ops/fold_shape_ops.h"

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
  OnnxImportOptions options;
  options.fold_node = FoldShapeNode;
  return ImportOnnxFile(path, options);
}

std::vector<ModelInput> InputsOf(const Graph& graph) {
  std::vector<ModelInput> inputs;
  for (const Value* v : graph.inputs()) inputs.push_back({v->name(), v->type()});
  return inputs;
}

absl::StatusOr<std::vector<Tensor>> LoadInputs(const std::vector<ModelInput>& inputs,
                                               const std::vector<std::string>& specs) {
  auto expected = [&]() {
    std::vector<std::string> parts;
    for (const ModelInput& in : inputs) parts.push_back(absl::StrCat(in.name, ": ", in.type.ToString()));
    return absl::StrJoin(parts, ", ");
  };
  std::map<std::string, std::string> files;
  for (const std::string& spec : specs) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos && inputs.size() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("--input ", spec, ": give NAME=FILE.npy; the model's inputs are ", expected()));
    }
    const std::string name = eq == std::string::npos ? inputs[0].name : spec.substr(0, eq);
    const std::string file = eq == std::string::npos ? spec : spec.substr(eq + 1);
    auto known = std::find_if(inputs.begin(), inputs.end(), [&](const ModelInput& in) { return in.name == name; });
    if (known == inputs.end()) {
      return absl::InvalidArgumentError(absl::StrCat("the model has no input named '", name, "'; its inputs are ", expected()));
    }
    if (auto [it, added] = files.emplace(name, file); !added) {
      return absl::InvalidArgumentError(
          absl::StrCat("--input given twice for '", name, "' (", it->second, " and ", file, "); give each input once"));
    }
  }
  std::vector<Tensor> tensors;
  for (const ModelInput& in : inputs) {
    auto it = files.find(in.name);
    if (it == files.end()) {
      return absl::InvalidArgumentError(absl::StrCat("missing --input for '", in.name, "'; the model's inputs are ", expected()));
    }
    absl::StatusOr<Tensor> t = ReadNpy(it->second);
    if (!t.ok()) return t.status();
    // numpy's uint16 ('<u2') reads as bfloat16 bits (numpy has no bfloat16); a uint16 input takes it as is.
    if (t->dtype() == DType::kBF16 && in.type.dtype == DType::kU16) {
      t = Tensor(DType::kU16, t->shape(), t->buffer(), t->offset());
    }
    tensors.push_back(*std::move(t));
  }
  return tensors;
}

absl::StatusOr<std::vector<Tensor>> TimingInputs(const std::vector<ModelInput>& inputs,
                                                 const std::vector<std::string>& specs) {
  if (!specs.empty()) return LoadInputs(inputs, specs);
  std::vector<Tensor> tensors;
  std::mt19937 rng(0);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (const ModelInput& in : inputs) {
    Tensor x(in.type.dtype, in.type.StaticShape());
    if (in.type.dtype == DType::kF32) {
      for (int64_t k = 0; k < x.num_elements(); ++k) x.data<float>()[k] = dist(rng);
    }
    tensors.push_back(std::move(x));
  }
  return tensors;
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
