// End to end: the `cnn` pipeline on torchvision ResNet-18 and MobileNetV2 exported from PyTorch
// (tools/frontend/export_models.py, opsets 13 with a symbolic batch and 17) leaves no
// BatchNormalization, no activation standing alone after a convolution, no Identity or Dropout, and
// the optimized graph still matches PyTorch: max |error| <= 1e-4 * max |PyTorch output|. Node counts,
// operator histograms and pass timings go to the test log.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "graph/graph.h"
#include "graph/npy.h"
#include "graph/onnx/onnx_importer.h"
#include "gtest/gtest.h"
#include "kernels/reference/interpreter.h"
#include "passes/pass_manager.h"

namespace tessel {
namespace {

constexpr char kDir[] = "tools/frontend/models/";

struct ModelCase {
  std::string model;
  int opset;
  // Residual blocks, each of which must end as one node: FusedConv (conv + bias + residual + relu) in
  // ResNet, DwPwConv (depthwise + relu6 + pointwise + bias + residual) in MobileNetV2.
  int residual_blocks;
};

std::string Histogram(const Graph& g) {
  std::map<std::string, int> counts;
  for (const auto& n : g.nodes()) ++counts[n->domain().empty() ? n->op_type() : n->domain() + "." + n->op_type()];
  std::string out;
  for (const auto& [op, n] : counts) absl::StrAppend(&out, "  ", op, " ", n, "\n");
  return out;
}

bool IsConvLike(const Node* n) {
  return n != nullptr && (n->op_type() == "Conv" || n->op_type() == "FusedConv" || n->op_type() == "DwPwConv");
}

class CnnPipelineTest : public ::testing::TestWithParam<ModelCase> {};

TEST_P(CnnPipelineTest, FusesEverythingAndMatchesPyTorch) {
  const ModelCase& c = GetParam();
  absl::StatusOr<std::unique_ptr<Graph>> graph = ImportOnnxFile(absl::StrCat(kDir, c.model, "_op", c.opset, ".onnx"));
  ASSERT_TRUE(graph.ok()) << graph.status();
  Graph& g = **graph;
  const int before = g.num_nodes();
  const std::string histogram_before = Histogram(g);

  PassManagerOptions options;
  options.verify_each = true;
  options.explain = true;
  absl::StatusOr<PassManager> pm = PassManager::Create("cnn", options);
  ASSERT_TRUE(pm.ok()) << pm.status();
  absl::Status s = pm->Run(g);
  ASSERT_TRUE(s.ok()) << s;
  std::printf("%s opset %d: %d nodes before, %d after\nbefore:\n%safter:\n%s%s", c.model.c_str(), c.opset, before,
              g.num_nodes(), histogram_before.c_str(), Histogram(g).c_str(), pm->Report().c_str());
  for (const std::string& e : pm->explanations()) std::printf("declined: %s\n", e.c_str());

  int residual_blocks = 0;
  for (const auto& n : g.nodes()) {
    const std::string& op = n->op_type();
    if (op == "FusedConv" && n->input(3) != nullptr && n->GetString("activation", "") == "relu") ++residual_blocks;
    if (op == "DwPwConv" && n->input(5) != nullptr) ++residual_blocks;
    EXPECT_NE(op, "BatchNormalization") << n->DebugName();
    EXPECT_NE(op, "Identity") << n->DebugName();
    EXPECT_NE(op, "Dropout") << n->DebugName();
    EXPECT_NE(op, "Conv") << n->DebugName() << " was not fused";
    const bool activation = op == "Relu" || op == "Clip" || op == "Sigmoid" || op == "HardSwish" || op == "HardSigmoid";
    if (activation) {
      EXPECT_FALSE(IsConvLike(n->input(0)->producer())) << n->DebugName() << " follows a convolution";
    }
  }

  EXPECT_EQ(residual_blocks, c.residual_blocks);

  absl::StatusOr<Tensor> input = ReadNpy(absl::StrCat(kDir, c.model, ".input.npy"));
  absl::StatusOr<Tensor> want = ReadNpy(absl::StrCat(kDir, c.model, ".output.npy"));
  ASSERT_TRUE(input.ok() && want.ok());
  absl::StatusOr<ReferenceInterpreter> interp = ReferenceInterpreter::Create(&g);
  ASSERT_TRUE(interp.ok()) << interp.status();
  absl::StatusOr<std::vector<Tensor>> out = interp->Run({*input});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 1u);
  const Tensor& got = (*out)[0];
  ASSERT_EQ(got.shape(), want->shape());
  double max_ref = 0, max_err = 0;
  for (int64_t i = 0; i < got.num_elements(); ++i) {
    max_ref = std::max(max_ref, std::abs(want->GetAsDouble(i)));
    max_err = std::max(max_err, std::abs(got.GetAsDouble(i) - want->GetAsDouble(i)));
  }
  std::printf("max |err| %.3g, max |out| %.3g, ratio %.3g\n", max_err, max_ref, max_err / max_ref);
  EXPECT_GT(max_ref, 0.0);
  EXPECT_LE(max_err, 1e-4 * max_ref);
}

INSTANTIATE_TEST_SUITE_P(Models, CnnPipelineTest,
                         ::testing::Values(ModelCase{"resnet18", 13, 8}, ModelCase{"resnet18", 17, 8},
                                           ModelCase{"mobilenet_v2", 13, 10}, ModelCase{"mobilenet_v2", 17, 10}),
                         [](const ::testing::TestParamInfo<ModelCase>& info) {
                           return absl::StrCat(info.param.model, "_op", info.param.opset);
                         });

}  // namespace
}  // namespace tessel
