// Models of opsets 7 to 10, as PyTorch exports them, import through the ONNX version converter (to
// opset 11), run on the reference interpreter and compile and run as artifacts, within 1e-4 of
// PyTorch's output (relative to its largest magnitude), like the opset 13 and 17 exports of the same
// seeded models.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen/compiler.h"
#include "graph/npy.h"
#include "graph/onnx/onnx_importer.h"
#include "gtest/gtest.h"
#include "kernels/reference/interpreter.h"
#include "runtime/testing/write_and_load.h"

namespace tessel {
namespace {

double RelativeError(const Tensor& got, const Tensor& want) {
  double max_ref = 0, max_err = 0;
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    max_ref = std::max(max_ref, std::abs(want.GetAsDouble(i)));
    max_err = std::max(max_err, std::abs(got.GetAsDouble(i) - want.GetAsDouble(i)));
  }
  return max_err / max_ref;
}

struct Case {
  std::string dir, model;
  int opset;
};

class LegacyOpsetTest : public ::testing::TestWithParam<Case> {};

TEST_P(LegacyOpsetTest, MatchesPyTorch) {
  const Case& c = GetParam();
  const std::string base = absl::StrCat("tools/frontend/", c.dir, "/", c.model);
  auto graph = ImportOnnxFile(absl::StrCat(base, "_op", c.opset, ".onnx"));
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto input = ReadNpy(base + ".input.npy");
  auto want = ReadNpy(base + ".output.npy");
  ASSERT_TRUE(input.ok() && want.ok());
  auto interp = ReferenceInterpreter::Create(graph->get());
  ASSERT_TRUE(interp.ok()) << interp.status();
  auto outputs = interp->Run(std::vector<Tensor>{*input});
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  const double interpreted = RelativeError((*outputs)[0], *want);
  EXPECT_LE(interpreted, 1e-4);

  auto result = CompileGraph(**graph, CompileOptions());
  ASSERT_TRUE(result.ok()) << result.status();
  auto model = WriteAndLoadArtifact(*result, absl::StrCat(c.model, "_op", c.opset));
  ASSERT_TRUE(model.ok()) << model.status();
  auto session = Session::Create(*model);
  ASSERT_TRUE(session.ok()) << session.status();
  ASSERT_TRUE((*session)->Run({*input}).ok());
  const double compiled = RelativeError((*session)->output(0), *want);
  EXPECT_LE(compiled, 1e-4);
  std::printf("%s opset %d: max relative error vs PyTorch %.3g interpreted, %.3g compiled\n", c.model.c_str(),
              c.opset, interpreted, compiled);
}

INSTANTIATE_TEST_SUITE_P(Models, LegacyOpsetTest,
                         ::testing::Values(Case{"legacy_cnn_models", "resnet18", 7},
                                           Case{"legacy_cnn_models", "resnet18", 9},
                                           Case{"legacy_cnn_models", "resnet18", 10},
                                           Case{"legacy_cnn_models", "mobilenet_v2", 7},
                                           Case{"legacy_cnn_models", "mobilenet_v2", 9},
                                           Case{"legacy_cnn_models", "mobilenet_v2", 10},
                                           Case{"legacy_transformer_models", "transformer_block", 9},
                                           Case{"legacy_transformer_models", "transformer_block", 10}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return absl::StrCat(info.param.model, "_op", info.param.opset);
                         });

}  // namespace
}  // namespace tessel
