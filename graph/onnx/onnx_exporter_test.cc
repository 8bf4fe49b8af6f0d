// Export then import gives back the same graph (compared through the text IR).
#include "graph/onnx/onnx_exporter.h"

#include "graph/onnx/onnx_importer.h"
#include "graph/op_registry.h"
#include "graph/text.h"
#include "gtest/gtest.h"

namespace tessel {
namespace {

TEST(OnnxExporterTest, RoundTripsThroughImporter) {
  auto g = ParseGraph(R"(
graph @main {
  input %x : f32[N,3,8,8]
  const %w : f32[4,3,1,1] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0]
  const %b : f32[4] = [0.5, -0.5, 1.5, -1.5]
  %c = Conv "conv" (%x, %w, %b) {group = 1, pads = [0, 0, 0, 0], strides = [1, 1]} : f32[N,4,8,8]
  %r = Relu "relu" (%c) : f32[N,4,8,8]
  %p = GlobalAveragePool "gap" (%r) : f32[N,4,1,1]
  output %p
}
)");
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_TRUE(InferShapes(**g).ok());
  auto model = ExportOnnxModel(**g);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->opset_import(0).version(), 18);
  auto back = ImportOnnxModel(*model, "");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(PrintGraph(**back), PrintGraph(**g));
}

}  // namespace
}  // namespace tessel
