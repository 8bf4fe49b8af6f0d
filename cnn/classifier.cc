// Image preprocessing and top-k.
#include "cnn/classifier.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "stb/stb_image.h"
#include "stb/stb_image_resize.h"

namespace tessel {

absl::StatusOr<Tensor> LoadImageTensor(const std::string& path, const Preprocess& p) {
  if (p.channels != 1 && p.channels != 3) return absl::InvalidArgumentError("channels must be 1 or 3");
  if (static_cast<int>(p.mean.size()) < p.channels || static_cast<int>(p.std.size()) < p.channels) {
    return absl::InvalidArgumentError(absl::StrCat("need ", p.channels, " mean and std values"));
  }
  std::ifstream f(path, std::ios::binary);
  if (!f) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  int w = 0, h = 0, c = 0;
  unsigned char* pixels = stbi_load_from_memory(reinterpret_cast<const unsigned char*>(bytes.data()),
                                                static_cast<int>(bytes.size()), &w, &h, &c, p.channels);
  if (pixels == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": cannot decode image (", stbi_failure_reason(),
                                                   "); PNG, JPEG, BMP, TGA and GIF are supported"));
  }
  std::vector<float> src(static_cast<size_t>(w) * h * p.channels);
  for (size_t i = 0; i < src.size(); ++i) src[i] = pixels[i] / 255.0f;
  stbi_image_free(pixels);
  std::vector<float> resized(static_cast<size_t>(p.width) * p.height * p.channels);
  if (!stbir_resize_float(src.data(), w, h, 0, resized.data(), p.width, p.height, 0, p.channels)) {
    return absl::InternalError(absl::StrCat(path, ": resize failed"));
  }
  Tensor t(DType::kF32, {1, p.channels, p.height, p.width});
  float* out = t.data<float>();
  for (int ch = 0; ch < p.channels; ++ch) {
    for (int i = 0; i < p.height * p.width; ++i) {
      float v = std::clamp(resized[static_cast<size_t>(i) * p.channels + ch], 0.0f, 1.0f);
      if (p.invert) v = 1.0f - v;
      out[ch * p.height * p.width + i] = (v - p.mean[ch]) / p.std[ch];
    }
  }
  return t;
}

std::vector<Prediction> TopK(const Tensor& logits, int k, const std::vector<std::string>& labels) {
  const int64_t n = logits.num_elements();
  std::vector<double> prob(n);
  double max = -INFINITY;
  for (int64_t i = 0; i < n; ++i) max = std::max(max, logits.GetAsDouble(i));
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += prob[i] = std::exp(logits.GetAsDouble(i) - max);
  std::vector<int> idx(n);
  std::iota(idx.begin(), idx.end(), 0);
  k = static_cast<int>(std::min<int64_t>(k, n));
  std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), [&](int a, int b) { return prob[a] > prob[b]; });
  std::vector<Prediction> out;
  for (int i = 0; i < k; ++i) {
    out.push_back({idx[i], static_cast<float>(prob[idx[i]] / sum),
                   idx[i] < static_cast<int>(labels.size()) ? labels[idx[i]] : absl::StrCat("class ", idx[i])});
  }
  return out;
}

absl::StatusOr<std::vector<std::string>> LoadLabels(const std::string& path) {
  std::ifstream f(path);
  if (!f) return absl::NotFoundError(absl::StrCat(path, ": cannot open labels"));
  std::vector<std::string> labels;
  std::string line;
  while (std::getline(f, line)) labels.push_back(line);
  return labels;
}

}  // namespace tessel
