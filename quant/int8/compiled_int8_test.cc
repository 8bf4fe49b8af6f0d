// The int8 digits CNN compiled to an artifact: the compiler puts its QConv / QGemm on the VNNI kernels
// (where the CPU has them) and the session's outputs equal the reference interpreter's bit for bit.
// Without VNNI the compiler picks XNNPACK's qc8 kernels, whose fp32 requantization may round a product
// one step away from the reference's (ONNX allows it; ONNX Runtime's tests take 1 LSB too): there the
// logits must stay within a few output quanta of the interpreter's and pick the same class.
#include <algorithm>
#include <cmath>
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
#include "kernels/reference/interpreter.h"
#include "graph/npy.h"
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
  int vnni_ops = 0, xnnpack_ops = 0;
  for (const auto& op : result->plan.ops()) {
    vnni_ops += absl::StrContains(op.kernel(), "avx512vnni");
    xnnpack_ops += absl::StrContains(op.kernel(), "xnnpack");
  }
  if (HasQGemmVnni()) {
    EXPECT_EQ(vnni_ops, 4);  // three QConv and the QGemm
    EXPECT_EQ(xnnpack_ops, 0);
  } else {
    std::printf("CPU without AVX-512 VNNI: %d int8 ops on XNNPACK, the rest on reference kernels\n", xnnpack_ops);
  }
  const bool exact = xnnpack_ops == 0;
  // The logits' quantum: the scale of the DequantizeLinear that produces the graph's output.
  const Node* dequantize = (*graph)->outputs()[0]->producer();
  ASSERT_NE(dequantize, nullptr);
  ASSERT_EQ(dequantize->op_type(), "DequantizeLinear");
  ASSERT_TRUE(dequantize->input(1)->is_constant());
  const float quantum = dequantize->input(1)->constant()->data<float>()[0];
  ASSERT_GT(quantum, 0.0f);
  // XNNPACK vs reference: one-step differences in a layer may move the next layer's outputs by a step
  // or two (measured on Zen 3: 176 of 5000 logits differ, by 1 quantum at most); a wrong kernel (a bad
  // scale, a missed zero point) is off by tens.
  constexpr float kMaxQuantaOff = 2.0f;
  auto model = WriteAndLoadArtifact(*result, "digits_int8");
  ASSERT_TRUE(model.ok()) << model.status();
  auto session = Session::Create(*model, SessionOptions{});
  ASSERT_TRUE(session.ok()) << session.status();
  auto interp = ReferenceInterpreter::Create(graph->get());
  ASSERT_TRUE(interp.ok());

  int64_t compared = 0, differ = 0, same_class = 0;
  float worst = 0;
  for (int64_t b = 0; b + kBatch <= images->dim(0); b += kBatch) {
    Tensor x(DType::kF32, {kBatch, 1, 8, 8});
    std::memcpy(x.data<float>(), images->data<float>() + b * 64, kBatch * 64 * sizeof(float));
    ASSERT_TRUE((*session)->Run({x}).ok());
    auto want = interp->Run(std::vector<Tensor>{x});
    ASSERT_TRUE(want.ok()) << want.status();
    const Tensor& got = (*session)->output(0);
    ASSERT_EQ(got.shape(), (*want)[0].shape());
    const float* g = got.data<float>();
    const float* w = (*want)[0].data<float>();
    for (int64_t i = 0; i < got.num_elements(); ++i) {
      if (exact) ASSERT_EQ(g[i], w[i]) << "image " << b + i / 10 << " class " << i % 10;
      const float off = std::abs(g[i] - w[i]) / quantum;
      ASSERT_LE(off, kMaxQuantaOff) << "image " << b + i / 10 << " class " << i % 10 << ": " << g[i]
                                    << " vs the interpreter's " << w[i];
      worst = std::max(worst, off);
      differ += g[i] != w[i];
    }
    for (int64_t r = 0; r < kBatch; ++r) {
      same_class += std::max_element(g + r * 10, g + r * 10 + 10) - g == std::max_element(w + r * 10, w + r * 10 + 10) - w;
    }
    compared += got.num_elements();
  }
  EXPECT_EQ(compared, images->dim(0) * 10);
  // Ties between two logits may break either way under a one-quantum difference: allow 1%.
  EXPECT_GE(same_class * 100, (compared / 10) * 99) << same_class << " of " << compared / 10 << " images";
  std::printf("digits int8 artifact: %d ops on VNNI, %d on XNNPACK; %lld logits, %lld differ from the interpreter's "
              "(worst %.1f quanta), %lld of %lld images the same class\n",
              vnni_ops, xnnpack_ops, static_cast<long long>(compared), static_cast<long long>(differ), worst,
              static_cast<long long>(same_class), static_cast<long long>(compared / 10));
}

}  // namespace
}  // namespace tessel
