// Image classification on a compiled CNN: decode (PNG/JPEG/BMP via stb), resize, normalize, lay out
// as NCHW, run, softmax and top-k with labels.
#ifndef TESSEL_CNN_CLASSIFIER_H_
#define TESSEL_CNN_CLASSIFIER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/tensor.h"

namespace tessel {

struct Preprocess {
  int channels = 3;  // 1 = grayscale, 3 = RGB
  int height = 224;
  int width = 224;
  std::vector<float> mean = {0, 0, 0};  // applied after scaling pixels to [0, 1]
  std::vector<float> std = {1, 1, 1};
  bool invert = false;  // 1 - x before normalizing (dark ink on white paper vs. bright on black)
};

// Decodes and preprocesses an image file into a [1, channels, height, width] f32 tensor.
absl::StatusOr<Tensor> LoadImageTensor(const std::string& path, const Preprocess& p);

struct Prediction {
  int index;
  float probability;
  std::string label;
};

// Softmax over the last dimension of `logits` (one row) and the k most probable classes.
std::vector<Prediction> TopK(const Tensor& logits, int k, const std::vector<std::string>& labels);

// One label per line.
absl::StatusOr<std::vector<std::string>> LoadLabels(const std::string& path);

}  // namespace tessel

#endif  // TESSEL_CNN_CLASSIFIER_H_
