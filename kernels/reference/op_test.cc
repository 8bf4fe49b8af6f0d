// Every supported operator against an independent reference: each case is a one-node ONNX model with
// inputs and expected outputs computed by numpy or PyTorch (kernels/reference/testdata/gen_*.py). The
// case is imported, type-inferred and run through the reference interpreter.
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/npy.h"
#include "graph/onnx/onnx_importer.h"
#include "graph/op_registry.h"
#include "gtest/gtest.h"
#include "kernels/reference/interpreter.h"

namespace tessel {
namespace {

struct Case {
  std::string dir;
  std::string name;
  int num_inputs = 0;
  int num_outputs = 0;
  double atol = 0;
  double rtol = 0;
};

std::vector<Case> LoadCases(const std::string& dir) {
  std::vector<Case> cases;
  std::ifstream f(dir + "/cases.txt");
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream ss(line);
    Case c;
    c.dir = dir;
    if (ss >> c.name >> c.num_inputs >> c.num_outputs >> c.atol >> c.rtol) cases.push_back(c);
  }
  return cases;
}

std::vector<Case> AllCases() {
  std::vector<Case> all;
  for (const char* dir : {"kernels/reference/testdata/nn_cases", "kernels/reference/testdata/elementwise_cases",
                          "kernels/reference/testdata/detection_cases"}) {
    std::vector<Case> c = LoadCases(dir);
    all.insert(all.end(), c.begin(), c.end());
  }
  return all;
}

class OpTest : public ::testing::TestWithParam<Case> {};

TEST_P(OpTest, MatchesReference) {
  const Case& c = GetParam();
  const std::string base = c.dir + "/" + c.name;
  absl::StatusOr<std::unique_ptr<Graph>> graph = ImportOnnxFile(base + ".onnx");
  ASSERT_TRUE(graph.ok()) << graph.status();
  std::vector<Tensor> inputs;
  for (int i = 0; i < c.num_inputs; ++i) {
    absl::StatusOr<Tensor> t = ReadNpy(absl::StrCat(base, ".in.", i, ".npy"));
    ASSERT_TRUE(t.ok()) << t.status();
    inputs.push_back(*t);
  }
  absl::StatusOr<ReferenceInterpreter> interp = ReferenceInterpreter::Create(graph->get());
  ASSERT_TRUE(interp.ok()) << interp.status();
  absl::StatusOr<std::vector<Tensor>> outputs = interp->Run(inputs);
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  ASSERT_EQ(static_cast<int>(outputs->size()), c.num_outputs);
  for (int o = 0; o < c.num_outputs; ++o) {
    absl::StatusOr<Tensor> want = ReadNpy(absl::StrCat(base, ".out.", o, ".npy"));
    ASSERT_TRUE(want.ok()) << want.status();
    const Tensor& got = (*outputs)[o];
    ASSERT_EQ(got.dtype(), want->dtype()) << "output " << o;
    ASSERT_EQ(got.shape(), want->shape()) << "output " << o;
    int reported = 0;
    for (int64_t i = 0; i < got.num_elements(); ++i) {
      const double g = got.GetAsDouble(i), w = want->GetAsDouble(i);
      const bool both_nan = std::isnan(g) && std::isnan(w);
      const bool same_inf = std::isinf(g) && g == w;
      if (!both_nan && !same_inf && !(std::abs(g - w) <= c.atol + c.rtol * std::abs(w))) {
        ADD_FAILURE() << "output " << o << " element " << i << ": got " << g << ", want " << w << " (atol " << c.atol
                      << ", rtol " << c.rtol << ")";
        if (++reported == 5) break;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllOps, OpTest, ::testing::ValuesIn(AllCases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

TEST(OpTestCoverage, EveryRegisteredOnnxOpHasCases) {
  std::set<std::string> covered;
  for (const Case& c : AllCases()) {
    absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxFile(c.dir + "/" + c.name + ".onnx");
    if (!g.ok()) continue;
    for (const auto& n : (*g)->nodes()) covered.insert(n->op_type());
  }
  for (const OpSchema* s : OpRegistry::Global().All()) {
    if (!s->domain.empty()) continue;  // Tessel's fused ops are tested with their passes
    EXPECT_TRUE(covered.count(s->op_type)) << "no op test case for " << s->op_type;
  }
}

}  // namespace
}  // namespace tessel
