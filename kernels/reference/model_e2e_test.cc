// End to end: torchvision ResNet-18 and MobileNetV2 and a Llama-style decoder block, exported from
// PyTorch (tools/frontend/export_models.py) at opsets 13 and 17, imported and run by the reference
// interpreter, must match PyTorch: max |error| <= 1e-4 * max |PyTorch output|.
#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "graph/npy.h"
#include "graph/onnx/onnx_importer.h"
#include "gtest/gtest.h"
#include "kernels/reference/interpreter.h"

namespace tessel {
namespace {

constexpr char kDir[] = "tools/frontend/models/";

struct ModelCase {
  std::string model;
  int opset;
};

class ModelE2eTest : public ::testing::TestWithParam<ModelCase> {};

TEST_P(ModelE2eTest, MatchesPyTorch) {
  const ModelCase& c = GetParam();
  absl::StatusOr<std::unique_ptr<Graph>> graph =
      ImportOnnxFile(absl::StrCat(kDir, c.model, "_op", c.opset, ".onnx"));
  ASSERT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<Tensor> input = ReadNpy(absl::StrCat(kDir, c.model, ".input.npy"));
  absl::StatusOr<Tensor> want = ReadNpy(absl::StrCat(kDir, c.model, ".output.npy"));
  ASSERT_TRUE(input.ok() && want.ok());
  absl::StatusOr<ReferenceInterpreter> interp = ReferenceInterpreter::Create(graph->get());
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
  std::printf("%s opset %d: max |err| %.3g, max |out| %.3g, ratio %.3g\n", c.model.c_str(), c.opset, max_err, max_ref,
              max_err / max_ref);
  EXPECT_GT(max_ref, 0.0);
  EXPECT_LE(max_err, 1e-4 * max_ref);
}

INSTANTIATE_TEST_SUITE_P(Models, ModelE2eTest,
                         ::testing::Values(ModelCase{"resnet18", 13}, ModelCase{"resnet18", 17},
                                           ModelCase{"mobilenet_v2", 13}, ModelCase{"mobilenet_v2", 17},
                                           ModelCase{"transformer_block", 13}, ModelCase{"transformer_block", 17}),
                         [](const ::testing::TestParamInfo<ModelCase>& info) {
                           return absl::StrCat(info.param.model, "_op", info.param.opset);
                         });

}  // namespace
}  // namespace tessel
