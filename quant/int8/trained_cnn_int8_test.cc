// INT8 on trained ResNet-18 and MobileNetV2 (torchvision architectures from export_models.py's seeds,
// trained a few epochs on scikit-learn's digits at 32x32 by tools/frontend/train_digits_models.py):
// calibrate on the calibration split, compile f32 and int8 artifacts, run the 500 unseen test images
// through both, and hold the bars: int8 top-1 agrees with f32 on >= 99% of the images and
// int8 accuracy is within 0.5 points of f32's. (With random weights top-1 is too fragile to mean
// anything: see tools/frontend/train_digits_models.py.)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen/compiler.h"
#include "graph/onnx/onnx_importer.h"
#include "gtest/gtest.h"
#include "quant/int8/quantize.h"
#include "runtime/executor.h"
#include "graph/npy.h"
#include "runtime/testing/write_and_load.h"

namespace tessel {
namespace {

// One folder per model (tools/frontend:digits_<model>), so that the two train side by side.
std::string Dir(const std::string& model) { return absl::StrCat("tools/frontend/digits_", model, "/"); }
constexpr int64_t kBatch = 50;

Tensor Slice(const Tensor& all, int64_t begin, int64_t count) {
  std::vector<int64_t> shape = all.shape();
  const int64_t per_image = all.num_elements() / shape[0];
  shape[0] = count;
  Tensor x(DType::kF32, shape);
  std::memcpy(x.data<float>(), all.data<float>() + begin * per_image, count * per_image * sizeof(float));
  return x;
}

// Compiles `graph` for batch kBatch and returns the logits of every test image, [n, classes] row-major.
std::vector<float> RunAll(Graph& graph, const std::string& pipeline, const Tensor& images, int64_t* classes,
                          const std::string& name) {
  CompileOptions options;
  options.pipeline = pipeline;
  options.dim_values["batch"] = kBatch;
  auto result = CompileGraph(graph, options);
  EXPECT_TRUE(result.ok()) << result.status();
  if (!result.ok()) return {};
  auto model = WriteAndLoadArtifact(*result, name);
  EXPECT_TRUE(model.ok()) << model.status();
  if (!model.ok()) return {};
  auto session = Session::Create(*model, SessionOptions{});
  EXPECT_TRUE(session.ok()) << session.status();
  if (!session.ok()) return {};
  std::vector<float> logits;
  for (int64_t b = 0; b + kBatch <= images.dim(0); b += kBatch) {
    absl::Status s = (*session)->Run({Slice(images, b, kBatch)});
    EXPECT_TRUE(s.ok()) << s;
    if (!s.ok()) return {};
    const Tensor& out = (*session)->output(0);
    *classes = out.dim(1);
    logits.insert(logits.end(), out.data<float>(), out.data<float>() + out.num_elements());
  }
  return logits;
}

int ArgMax(const float* row, int64_t n) { return static_cast<int>(std::max_element(row, row + n) - row); }

class TrainedCnnInt8Test : public ::testing::TestWithParam<std::string> {};

TEST_P(TrainedCnnInt8Test, AgreesWithF32OnNinetyNinePercentOfTestDigits) {
  const std::string dir = Dir(GetParam());
  const std::string onnx = absl::StrCat(dir, GetParam(), "_digits.onnx");
  auto f32 = ImportOnnxFile(onnx);
  auto int8 = ImportOnnxFile(onnx);
  auto calibration = ReadNpy(dir + "calibration.npy");
  auto images = ReadNpy(dir + "evaluation.npy");
  auto labels = ReadNpy(dir + "evaluation_labels.npy");
  ASSERT_TRUE(f32.ok() && int8.ok() && calibration.ok() && images.ok() && labels.ok());

  // MSE calibration on the first 99 calibration images (the CLI's default method).
  CalibrationOptions o;
  o.method = CalibrationMethod::kMse;
  o.num_batches = 3;
  o.batch = [&](int i) -> absl::StatusOr<std::vector<Tensor>> {
    return std::vector<Tensor>{Slice(*calibration, i * 33, 33)};
  };
  auto quantized = QuantizeInt8(**int8, o);
  ASSERT_TRUE(quantized.ok()) << quantized.status();
  int integer_convs = 0, float_convs = 0;
  for (const auto& n : (*int8)->nodes()) {
    integer_convs += n->op_type() == "QConv";
    float_convs += n->op_type() == "FusedConv";
  }
  EXPECT_GT(integer_convs, 15);
  EXPECT_EQ(float_convs, 0);

  int64_t classes = 0;
  const std::vector<float> ref = RunAll(**f32, "O3", *images, &classes, GetParam() + "_f32");
  const std::vector<float> got = RunAll(**int8, "dce", *images, &classes, GetParam() + "_int8");
  ASSERT_EQ(ref.size(), got.size());
  ASSERT_GT(classes, 0);
  const int64_t n = static_cast<int64_t>(ref.size()) / classes;
  ASSERT_EQ(n, images->dim(0));
  int agree = 0, right32 = 0, right8 = 0;
  double signal = 0, noise = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int a = ArgMax(&ref[i * classes], classes), b = ArgMax(&got[i * classes], classes);
    const int64_t label = labels->GetAsInt64(i);
    agree += a == b;
    right32 += a == label;
    right8 += b == label;
  }
  for (size_t i = 0; i < ref.size(); ++i) {
    signal += static_cast<double>(ref[i]) * ref[i];
    noise += (static_cast<double>(ref[i]) - got[i]) * (static_cast<double>(ref[i]) - got[i]);
  }
  const double agreement = static_cast<double>(agree) / n, acc32 = static_cast<double>(right32) / n,
               acc8 = static_cast<double>(right8) / n;
  std::printf("%s trained on digits, %lld test images: int8/f32 top-1 agreement %.2f%%, accuracy f32 %.2f%% "
              "int8 %.2f%%, logits SQNR %.1f dB\n",
              GetParam().c_str(), static_cast<long long>(n), 100 * agreement, 100 * acc32, 100 * acc8,
              10 * std::log10(signal / noise));
  EXPECT_GT(acc32, 0.9);  // the f32 model is a trained one
  EXPECT_GE(agreement, 0.99);
  EXPECT_GE(acc8, acc32 - 0.005);
}

INSTANTIATE_TEST_SUITE_P(Models, TrainedCnnInt8Test, ::testing::Values("resnet18", "mobilenet_v2"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace tessel
