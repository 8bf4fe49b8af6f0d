// The digits CNN (trained by cnn/digits/train_digits.py on scikit-learn's digits) compiled and run on
// its held-out split: Tessel's top-1 accuracy equals PyTorch's; PNG digits classify correctly.
#include "cnn/classifier.h"

#include <cmath>
#include <fstream>

#include "codegen/compiler.h"
#include "graph/npy.h"
#include "graph/onnx/onnx_importer.h"
#include "gtest/gtest.h"
#include "runtime/executor.h"

namespace tessel {
namespace {

constexpr char kDir[] = "cnn/digits/";

std::shared_ptr<const CompiledModel> Compile() {
  auto graph = ImportOnnxFile(std::string(kDir) + "digits_cnn.onnx");
  EXPECT_TRUE(graph.ok()) << graph.status();
  CompileOptions options;
  options.dim_values["batch"] = 1;
  auto result = CompileGraph(**graph, options);
  EXPECT_TRUE(result.ok()) << result.status();
  auto bytes = SerializeArtifact(result->plan, result->weights);
  EXPECT_TRUE(bytes.ok());
  static std::string* keep = new std::string();  // FromBytes borrows; keep the image alive
  *keep = *bytes;
  auto artifact = Artifact::FromBytes(*keep);
  EXPECT_TRUE(artifact.ok()) << artifact.status();
  auto model = CompiledModel::FromArtifact(*artifact);
  EXPECT_TRUE(model.ok()) << model.status();
  return *model;
}

TEST(ClassifierTest, TestSplitAccuracyMatchesPyTorch) {
  auto model = Compile();
  auto images = ReadNpy(std::string(kDir) + "test_images.npy");
  auto labels = ReadNpy(std::string(kDir) + "test_labels.npy");
  ASSERT_TRUE(images.ok() && labels.ok());
  double torch_acc = 0;
  std::ifstream(std::string(kDir) + "test_accuracy.txt") >> torch_acc;
  Session session(model);
  const int64_t n = images->dim(0);
  int correct = 0;
  for (int64_t i = 0; i < n; ++i) {
    Tensor x(DType::kF32, {1, 1, 8, 8});
    std::copy(images->data<float>() + i * 64, images->data<float>() + (i + 1) * 64, x.data<float>());
    ASSERT_TRUE(session.Run({x}).ok());
    correct += TopK(session.output(0), 1, {})[0].index == labels->GetAsInt64(i);
  }
  const double acc = double(correct) / n;
  std::printf("digits test split: Tessel top-1 %.2f%%, PyTorch %.2f%% (%lld images)\n", 100 * acc, 100 * torch_acc,
              static_cast<long long>(n));
  EXPECT_NEAR(acc, torch_acc, 1.0 / n + 1e-9);
}

TEST(ClassifierTest, ClassifiesPngDigits) {
  auto model = Compile();
  Preprocess p;
  p.channels = 1;
  p.height = p.width = 8;
  p.mean = {0};
  p.std = {1};
  Session session(model);
  for (const char* file : {"digit_0_1.png", "digit_1_7.png", "digit_2_6.png"}) {
    auto x = LoadImageTensor(std::string(kDir) + file, p);
    ASSERT_TRUE(x.ok()) << x.status();
    ASSERT_TRUE(session.Run({*x}).ok());
    auto top = TopK(session.output(0), 3, {});
    const int want = file[8] - '0';
    EXPECT_EQ(top[0].index, want) << file;
    EXPECT_GT(top[0].probability, top[1].probability);
  }
  EXPECT_EQ(LoadImageTensor("/nonexistent.png", p).status().code(), absl::StatusCode::kNotFound);
  auto bad = LoadImageTensor(std::string(kDir) + "labels.txt", p);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ClassifierTest, TopKIsSoftmaxOrdered) {
  Tensor logits = Tensor::FromVector<float>({1, 4}, {1.0f, 3.0f, 2.0f, 0.0f});
  auto top = TopK(logits, 2, {"a", "b", "c", "d"});
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0].label, "b");
  EXPECT_EQ(top[1].label, "c");
  // softmax by hand: e^3 / (e + e^3 + e^2 + 1)
  EXPECT_NEAR(top[0].probability, std::exp(3.0) / (std::exp(1.0) + std::exp(3.0) + std::exp(2.0) + 1.0), 1e-6);
}

}  // namespace
}  // namespace tessel
