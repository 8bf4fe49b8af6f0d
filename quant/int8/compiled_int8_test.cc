// The int8 digits CNN compiled to an artifact: the compiler puts its QConv / QGemm on the VNNI kernels
// (where the CPU has them) and the session's outputs equal the reference interpreter's bit for bit.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "codegen/compiler.h"
#include "graph/onnx/onnx_importer.h"
#include "gtest/gtest.h"
#include "kernels/int8/qgemm.h"
#include "quant/int8/quantize.h"
#include "runtime/executor.h"
#include "runtime/interpreter.h"
#include "runtime/npy.h"
#include "runtime/testing/write_and_load.h"

namespace tessel {
namespace {

constexpr char kDir[] = "cnn/digits/";
constexpr int64_t kBatch = 100;

TEST(CompiledInt8Test, DigitsArtifactMatchesTheInterpreterExactly) {
  auto graph = ImportOnnxFile(std::string(kDir) + "digits_cnn.onnx");
  auto calibration = ReadNpy(std::string(kDir) + "calibration_images.npy");
  auto images = ReadNpy(std::string(kDir) + "test_images.npy");
  ASSERT_TRUE(graph.ok() && calibration.ok() && images.ok());
  CalibrationOptions o;
  o.method = CalibrationMethod::kMse;
  // Whole batches only (297 calibration images: 2 batches; a third read past the end, as ASan showed).
  o.num_batches = static_cast<int>(calibration->shape()[0] / kBatch);
  ASSERT_GE(o.num_batches, 1);
  o.batch = [&](int i) -> absl::StatusOr<std::vector<Tensor>> {
    Tensor x(DType::kF32, {kBatch, 1, 8, 8});
    std::memcpy(x.data<float>(), calibration->data<float>() + i * kBatch * 64, kBatch * 64 * sizeof(float));
    return std::vector<Tensor>{x};
  };
  ASSERT_TRUE(QuantizeInt8(**graph, o).ok());

  CompileOptions options;
  options.pipeline = "dce";  // the int8 pipeline already ran
  for (const Value* v : (*graph)->inputs()) {
    for (const Dim& d : v->type().dims) {
      if (!d.is_static()) options.dim_values[d.symbol()] = kBatch;
    }
  }
  auto result = CompileGraph(**graph, options);
  ASSERT_TRUE(result.ok()) << result.status();
  int vnni_ops = 0;
  for (const auto& op : result->plan.ops()) vnni_ops += absl::StrContains(op.kernel(), "avx512vnni");
  if (HasQGemmVnni()) {
    EXPECT_EQ(vnni_ops, 4);  // three QConv and the QGemm
  } else {
    std::printf("CPU without AVX-512 VNNI: the int8 ops run their reference kernels\n");
  }
  auto model = WriteAndLoadArtifact(*result, "digits_int8");
  ASSERT_TRUE(model.ok()) << model.status();
  auto session = Session::Create(*model, SessionOptions{});
  ASSERT_TRUE(session.ok()) << session.status();
  auto interp = ReferenceInterpreter::Create(graph->get());
  ASSERT_TRUE(interp.ok());

  int64_t compared = 0;
  for (int64_t b = 0; b + kBatch <= images->dim(0); b += kBatch) {
    Tensor x(DType::kF32, {kBatch, 1, 8, 8});
    std::memcpy(x.data<float>(), images->data<float>() + b * 64, kBatch * 64 * sizeof(float));
    ASSERT_TRUE((*session)->Run({x}).ok());
    auto want = interp->Run(std::vector<Tensor>{x});
    ASSERT_TRUE(want.ok()) << want.status();
    const Tensor& got = (*session)->output(0);
    ASSERT_EQ(got.shape(), (*want)[0].shape());
    for (int64_t i = 0; i < got.num_elements(); ++i) {
      ASSERT_EQ(got.data<float>()[i], (*want)[0].data<float>()[i]) << "image " << b + i / 10 << " class " << i % 10;
    }
    compared += got.num_elements();
  }
  EXPECT_EQ(compared, images->dim(0) * 10);
  std::printf("digits int8 artifact: %d ops on VNNI kernels, %lld logits equal to the interpreter's\n", vnni_ops,
              static_cast<long long>(compared));
}

}  // namespace
}  // namespace tessel
