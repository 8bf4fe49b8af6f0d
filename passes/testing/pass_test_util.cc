// Pass test helpers.
#include "passes/testing/pass_test_util.h"

#include <cctype>
#include <cmath>
#include <random>

#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/text.h"
#include "kernels/reference/interpreter.h"

namespace tessel::testing {

absl::StatusOr<PipelineResult> RunPipelineOnIr(absl::string_view ir, absl::string_view pipeline, bool explain) {
  PipelineResult result;
  auto before = ParseGraph(ir);
  if (!before.ok()) return before.status();
  auto after = ParseGraph(ir);
  if (!after.ok()) return after.status();
  for (Graph* g : {before->get(), after->get()}) {
    absl::Status s = InferShapes(*g);
    if (!s.ok()) return s;
  }
  PassManagerOptions options;
  options.verify_each = true;
  options.explain = explain;
  auto pm = PassManager::Create(pipeline, options);
  if (!pm.ok()) return pm.status();
  absl::Status s = pm->Run(**after);
  if (!s.ok()) return s;
  for (const PassRecord& r : pm->records()) {
    for (const auto& [k, v] : r.stats) result.stats[k] += v;
  }
  result.explanations = pm->explanations();
  result.after_text = PrintGraph(**after);
  result.before = std::move(*before);
  result.after = std::move(*after);
  return result;
}

std::string NormalizeIr(absl::string_view text) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = true;
      continue;
    }
    if (space && !out.empty()) out.push_back(' ');
    space = false;
    out.push_back(c);
  }
  return out;
}

namespace {

absl::StatusOr<std::vector<Tensor>> RandomInputs(const Graph& g, uint32_t seed, int64_t symbolic_dim) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<Tensor> inputs;
  for (const Value* v : g.inputs()) {
    std::vector<int64_t> shape;
    for (const Dim& d : v->type().dims) shape.push_back(d.is_static() ? d.value() : symbolic_dim);
    Tensor t(v->type().dtype, shape);
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      switch (t.dtype()) {
        case DType::kF32: t.data<float>()[i] = dist(rng); break;
        case DType::kI64: t.data<int64_t>()[i] = static_cast<int64_t>(rng() % 5); break;
        case DType::kI32: t.data<int32_t>()[i] = static_cast<int32_t>(rng() % 5); break;
        case DType::kBool: t.data<uint8_t>()[i] = rng() % 2; break;
        default: return absl::UnimplementedError(absl::StrCat("random input of type ", v->type().ToString()));
      }
    }
    inputs.push_back(std::move(t));
  }
  return inputs;
}

}  // namespace

absl::Status CheckNumericallyEquivalent(const Graph& before, const Graph& after, double atol, double rtol,
                                        uint32_t seed, int64_t symbolic_dim) {
  auto inputs = RandomInputs(before, seed, symbolic_dim);
  if (!inputs.ok()) return inputs.status();
  auto a = ReferenceInterpreter::Create(&before);
  if (!a.ok()) return a.status();
  auto b = ReferenceInterpreter::Create(&after);
  if (!b.ok()) return b.status();
  auto want = a->Run(*inputs);
  if (!want.ok()) return want.status();
  auto got = b->Run(*inputs);
  if (!got.ok()) return got.status();
  if (want->size() != got->size()) {
    return absl::FailedPreconditionError(absl::StrCat("output count changed: ", want->size(), " -> ", got->size()));
  }
  for (size_t o = 0; o < want->size(); ++o) {
    const Tensor& w = (*want)[o];
    const Tensor& g = (*got)[o];
    if (w.shape() != g.shape() || w.dtype() != g.dtype()) {
      return absl::FailedPreconditionError(absl::StrCat("output ", o, " type changed: ", w.type().ToString(), " -> ",
                                                        g.type().ToString()));
    }
    for (int64_t i = 0; i < w.num_elements(); ++i) {
      const double x = w.GetAsDouble(i), y = g.GetAsDouble(i);
      if (!(std::abs(x - y) <= atol + rtol * std::abs(x))) {
        return absl::FailedPreconditionError(absl::StrCat("output ", o, " ('", before.outputs()[o]->name(), "') element ",
                                                          i, ": before ", x, ", after ", y));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace tessel::testing
