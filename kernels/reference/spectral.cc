// Reference kernels for the spectral operators: DFT, STFT and MelWeightMatrix (opset 17). Direct O(n^2) transforms in
// double: X[k] = sum_j x[j] e^(-+2 pi i j k / n), the inverse divided by n. Complex tensors are [..., 2]
// (real, imaginary); real inputs [..., 1].
#include <cmath>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "kernels/reference/reference.h"

namespace tessel {
namespace {

using Inputs = absl::Span<const Tensor* const>;

// out[k] (k < bins) of the n-point transform of seq (complex, n entries).
void Transform(const std::vector<double>& re, const std::vector<double>& im, int64_t n, int64_t bins, bool inverse,
               std::vector<double>* out_re, std::vector<double>* out_im) {
  const double sign = inverse ? 1.0 : -1.0;
  out_re->assign(bins, 0.0);
  out_im->assign(bins, 0.0);
  for (int64_t k = 0; k < bins; ++k) {
    double sr = 0, si = 0;
    for (int64_t j = 0; j < n; ++j) {
      // j * k mod n keeps the angle small (exact integer reduction before the multiply).
      const double angle = sign * 2.0 * M_PI * static_cast<double>((j * k) % n) / static_cast<double>(n);
      const double c = std::cos(angle), s = std::sin(angle);
      sr += re[j] * c - im[j] * s;
      si += re[j] * s + im[j] * c;
    }
    (*out_re)[k] = inverse ? sr / n : sr;
    (*out_im)[k] = inverse ? si / n : si;
  }
}

// Bins k of a transform (real, imaginary) into y at base + k * stride and the element after it.
void StoreBins(const std::vector<double>& yr, const std::vector<double>& yi, int64_t base, int64_t stride, Tensor* y) {
  for (size_t k = 0; k < yr.size(); ++k) {
    y->SetFromDouble(base + static_cast<int64_t>(k) * stride, yr[k]);
    y->SetFromDouble(base + static_cast<int64_t>(k) * stride + 1, yi[k]);
  }
}

absl::Status DftKernel(const Node& node, Inputs in, absl::Span<Tensor> out) {
  const Tensor& x = *in[0];
  Tensor& y = out[0];
  const int rank = x.rank();
  int64_t axis = node.GetInt("axis", 1);
  if (axis < 0) axis += rank;
  const bool inverse = node.GetInt("inverse", 0) != 0;
  const int64_t comps = x.dim(rank - 1), len = x.dim(axis);
  const int64_t n = in.size() > 1 && in[1] != nullptr ? in[1]->GetAsInt64(0) : len;
  const int64_t bins = y.dim(axis);
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= x.dim(d);
  for (int d = axis + 1; d < rank - 1; ++d) inner *= x.dim(d);
  std::vector<double> re(n), im(n), yr, yi;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        const bool inside = j < len;
        const int64_t at = ((o * len + j) * inner + i) * comps;
        re[j] = inside ? x.GetAsDouble(at) : 0.0;
        im[j] = inside && comps == 2 ? x.GetAsDouble(at + 1) : 0.0;
      }
      Transform(re, im, n, bins, inverse, &yr, &yi);
      StoreBins(yr, yi, ((o * bins) * inner + i) * 2, inner * 2, &y);
    }
  }
  return absl::OkStatus();
}

absl::Status StftKernel(const Node& node, Inputs in, absl::Span<Tensor> out) {
  const Tensor& x = *in[0];
  Tensor& y = out[0];
  const int64_t step = in[1]->GetAsInt64(0);
  const Tensor* window = in.size() > 2 ? in[2] : nullptr;
  const int64_t n = in.size() > 3 && in[3] != nullptr ? in[3]->GetAsInt64(0) : window->dim(0);
  if (window != nullptr && window->dim(0) != n) {
    return absl::InvalidArgumentError(
        absl::StrCat("STFT window has ", window->dim(0), " entries but frame_length is ", n));
  }
  if (step < 1) return absl::InvalidArgumentError(absl::StrCat("STFT frame_step is ", step, "; expected >= 1"));
  const int64_t batch = x.dim(0), length = x.dim(1), comps = x.dim(2), frames = y.dim(1), bins = y.dim(2);
  std::vector<double> re(n), im(n), yr, yi;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t f = 0; f < frames; ++f) {
      for (int64_t j = 0; j < n; ++j) {
        const int64_t at = (b * length + f * step + j) * comps;
        const double w = window != nullptr ? window->GetAsDouble(j) : 1.0;
        re[j] = x.GetAsDouble(at) * w;
        im[j] = comps == 2 ? x.GetAsDouble(at + 1) * w : 0.0;
      }
      Transform(re, im, n, bins, false, &yr, &yi);
      StoreBins(yr, yi, (b * frames + f) * bins * 2, 2, &y);
    }
  }
  return absl::OkStatus();
}

// The mel filter bank as ONNX's reference computes it: num_mel_bins + 2 points evenly spaced in mel between
// the edges, mapped to spectrogram bins floor((dft_length + 1) f / sample_rate), then triangles between
// neighbouring points (a zero-width rising side puts 1 at its center).
absl::Status MelWeightMatrixKernel(const Node& node, Inputs in, absl::Span<Tensor> out) {
  const int64_t mels = in[0]->GetAsInt64(0), dft_length = in[1]->GetAsInt64(0), rate = in[2]->GetAsInt64(0);
  const double lower = in[3]->GetAsDouble(0), upper = in[4]->GetAsDouble(0);
  Tensor& y = out[0];
  const int64_t rows = dft_length / 2 + 1;
  if (y.dim(0) != rows || y.dim(1) != mels) return absl::InternalError("MelWeightMatrix output shape");
  const double low_mel = 2595.0 * std::log10(1.0 + lower / 700.0), high_mel = 2595.0 * std::log10(1.0 + upper / 700.0);
  const double step = (high_mel - low_mel) / static_cast<double>(mels + 2);
  std::vector<int64_t> point(mels + 2);
  for (int64_t i = 0; i < mels + 2; ++i) {
    const double hz = 700.0 * (std::pow(10.0, (i * step + low_mel) / 2595.0) - 1.0);
    point[i] = static_cast<int64_t>(std::floor((dft_length + 1) * hz / rate));
  }
  for (int64_t i = 0; i < y.num_elements(); ++i) y.SetFromDouble(i, 0.0);
  auto set = [&](int64_t row, int64_t col, double v) -> absl::Status {
    if (row < 0 || row >= rows) {
      return absl::InvalidArgumentError(absl::StrCat("MelWeightMatrix: mel bin ", col, " reaches spectrogram bin ",
                                                     row, ", outside [0, ", rows, ") (check the edge frequencies)"));
    }
    y.SetFromDouble(row * mels + col, v);
    return absl::OkStatus();
  };
  for (int64_t i = 0; i < mels; ++i) {
    const int64_t lo = point[i], center = point[i + 1], hi = point[i + 2];
    if (center == lo) {
      if (absl::Status s = set(center, i, 1.0); !s.ok()) return s;
    } else {
      for (int64_t j = lo; j <= center; ++j) {
        if (absl::Status s = set(j, i, static_cast<double>(j - lo) / (center - lo)); !s.ok()) return s;
      }
    }
    for (int64_t j = center; j < hi; ++j) {
      if (absl::Status s = set(j, i, static_cast<double>(hi - j) / (hi - center)); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterSpectralReferenceKernels(ReferenceKernelRegistry& r) {
  r.Register("", "MelWeightMatrix", MelWeightMatrixKernel);
  r.Register("", "DFT", DftKernel);
  r.Register("", "STFT", StftKernel);
}

}  // namespace tessel
