// Group parameters and dequantization.
#include "quant/weight/scheme.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "support/fp16.h"

namespace tessel::quant {
namespace {

// The scale as stored: an IEEE half (round to nearest even).
float RoundToHalf(float v) { return HalfToFloat(FloatToHalf(v)); }

}  // namespace

std::string QuantScheme::ToString() const {
  return absl::StrCat("W", bits, " g", group, asymmetric ? " asym" : " sym");
}

absl::Status ValidateBits(int64_t bits) {
  if (bits != 3 && bits != 4 && bits != 8) {
    return absl::InvalidArgumentError(absl::StrCat("unsupported bit width ", bits, " (use 3, 4 or 8)"));
  }
  return absl::OkStatus();
}

absl::Status ValidateGroup(int64_t group) {
  if (group != 32 && group != 64 && group != 128) {
    return absl::InvalidArgumentError(absl::StrCat("unsupported group size ", group, " (use 32, 64 or 128)"));
  }
  return absl::OkStatus();
}

absl::Status ValidateScheme(const QuantScheme& s, int64_t cols) {
  if (absl::Status bits = ValidateBits(s.bits); !bits.ok()) return bits;
  if (absl::Status group = ValidateGroup(s.group); !group.ok()) return group;
  if (cols % s.group != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("a matrix with ", cols, " columns cannot be split into groups of ", s.group));
  }
  return absl::OkStatus();
}

GroupParams ComputeGroupParams(const QuantScheme& s, float lo, float hi, float clip) {
  GroupParams p;
  if (s.asymmetric) {
    lo = std::fmin(lo, 0.0f) * clip;
    hi = std::fmax(hi, 0.0f) * clip;
    p.scale = RoundToHalf((hi - lo) / s.max_code());
    p.zero = p.scale != 0.0f ? std::clamp(static_cast<int>(std::nearbyint(-lo / p.scale)), 0, s.max_code()) : 0;
  } else {
    const float amax = std::fmax(std::fabs(lo), std::fabs(hi)) * clip;
    p.scale = RoundToHalf(amax / (s.sym_zero() - 0.5f));
    p.zero = s.sym_zero();
  }
  return p;
}

namespace {

// d^norm for d >= 0, as exp2(norm * log2(d)) from the exponent bits and short polynomials (within
// ~1e-5 relative of std::pow over normal floats; 0 for zero and subnormal d). No calls and no
// branches, so that GCC vectorizes the loops that use it: the MSE search spent most of a GPTQ run in
// double std::pow (80 grid points x every weight).
inline __attribute__((always_inline)) float PowNorm(float d, float norm) {
  const uint32_t bits = FloatToBits(d);
  const float e = static_cast<float>(static_cast<int32_t>(bits >> 23) - 127);
  float m = BitsToFloat((bits & 0x007fffffu) | 0x3f800000u);  // [1, 2)
  // log2(m) = 2 / ln 2 x atanh(t), t = (m - 1) / (m + 1) in [0, 1/3).
  const float t = (m - 1.0f) / (m + 1.0f), t2 = t * t;
  const float atanh = t * (1.0f + t2 * (1.0f / 3 + t2 * (1.0f / 5 + t2 * (1.0f / 7 + t2 * (1.0f / 9 + t2 / 11)))));
  float y = norm * (e + 2.8853900817779268f * atanh);
  y = y < -126.0f ? -126.0f : y;
  y = y > 127.0f ? 127.0f : y;
  // 2^y = 2^n x 2^f, n = floor(y), f in [0, 1): a degree-6 polynomial of f ln 2.
  const float n = static_cast<float>(static_cast<int32_t>(y + 128.0f) - 128);  // floor for y >= -128
  const float f = (y - n) * 0.6931471805599453f;
  const float p =
      1.0f + f * (1.0f + f * (0.5f + f * (1.0f / 6 + f * (1.0f / 24 + f * (1.0f / 120 + f * (1.0f / 720))))));
  const float scale = BitsToFloat(static_cast<uint32_t>(static_cast<int32_t>(n) + 127) << 23);
  const float result = p * scale;
  return bits < 0x00800000u ? 0.0f : result;
}

}  // namespace

// The clip search is the inner loop of GPTQ's group parameters (80 grid points x every weight): on x86-64
// it is compiled for AVX-512, AVX2 and the baseline, picked at load (GCC target_clones; the quant
// libraries are otherwise built for baseline x86-64, i.e. SSE). scheme.cc is compiled with
// -ffp-contract=off, so every clone rounds each operation alike and the search picks the same
// parameters on every x86 CPU. Random TinyLlama F16, GPTQ W4 g128, first layer: see the README.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TESSEL_CLIP_SEARCH_TARGETS __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define TESSEL_CLIP_SEARCH_TARGETS
#endif

TESSEL_CLIP_SEARCH_TARGETS
GroupParams SearchGroupParams(const QuantScheme& s, const float* w, const double* weights, int64_t n,
                              const ClipSearch& search) {
  const auto [lo, hi] = std::minmax_element(w, w + n);
  GroupParams best = ComputeGroupParams(s, *lo, *hi);
  double best_err = std::numeric_limits<double>::infinity();
  const int steps = std::max(1, static_cast<int>(search.max_shrink * search.grid));
  const float max_code = static_cast<float>(s.max_code());
  constexpr int64_t kChunk = 256;
  // Eight partial sums (lane j % 8 of each chunk) added in a fixed order at the end: vector adds instead
  // of one serial chain of double adds, with the same result at any vector width.
  constexpr int kLanes = 8;
  float e[kChunk];
  for (int i = 0; i < steps; ++i) {
    const float clip = 1.0f - static_cast<float>(i) / search.grid;
    const GroupParams p = ComputeGroupParams(s, *lo, *hi, clip);
    const float inv = p.scale != 0.0f ? 1.0f / p.scale : 0.0f, zero = static_cast<float>(p.zero);
    double part[kLanes] = {};
    for (int64_t j0 = 0; j0 < n; j0 += kChunk) {
      const int64_t m = std::min(kChunk, n - j0);
      // QuantizeValue / DequantizeValue spelled out for the vectorizer: adding and subtracting 1.5 x 2^23
      // rounds to nearest even as std::nearbyint does in the default rounding mode.
      for (int64_t j = 0; j < m; ++j) {
        const float x = w[j0 + j];
        float q = (x * inv + 12582912.0f) - 12582912.0f + zero;
        q = q < 0.0f ? 0.0f : (q > max_code ? max_code : q);
        e[j] = std::fabs(x - (q - zero) * p.scale);
      }
      if (search.norm == 2.0f) {
        for (int64_t j = 0; j < m; ++j) e[j] *= e[j];
      } else {
        for (int64_t j = 0; j < m; ++j) e[j] = PowNorm(e[j], search.norm);
      }
      // Whole runs of kLanes, then the tail into the first lanes.
      const int64_t mv = m / kLanes * kLanes;
      const double* wt = weights != nullptr ? weights + j0 : nullptr;
      if (wt != nullptr) {
        for (int64_t j = 0; j < mv; j += kLanes) {
          for (int l = 0; l < kLanes; ++l) part[l] += wt[j + l] * static_cast<double>(e[j + l]);
        }
        for (int64_t j = mv; j < m; ++j) part[j - mv] += wt[j] * static_cast<double>(e[j]);
      } else {
        for (int64_t j = 0; j < mv; j += kLanes) {
          for (int l = 0; l < kLanes; ++l) part[l] += static_cast<double>(e[j + l]);
        }
        for (int64_t j = mv; j < m; ++j) part[j - mv] += static_cast<double>(e[j]);
      }
    }
    const double err = ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
    if (err < best_err) {
      best_err = err;
      best = p;
    }
  }
  return best;
}

void QuantizedMatrix::Resize(const QuantScheme& s, int64_t r, int64_t c) {
  scheme = s;
  rows = r;
  cols = c;
  codes.assign(r * c, 0);
  params.assign(r * (c / s.group), GroupParams{});
}

std::vector<float> QuantizedMatrix::Dequantize() const {
  std::vector<float> w(rows * cols);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) w[r * cols + c] = DequantizeValue(codes[r * cols + c], param(r, c));
  }
  return w;
}

}  // namespace tessel::quant
