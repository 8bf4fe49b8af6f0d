// The reference vector kernels: the plainest loops, sums in double and libm's exp. The oracle twin of
// the optimized kernels, and what TESSEL_FORCE_BACKEND=reference selects.
#include <algorithm>
#include <cmath>

#include "kernels/vector/internal/vector_kernels.h"

namespace tessel {
namespace {

float Clamp(float v, float lo, float hi) { return std::min(std::max(v, lo), hi); }

float Sigmoid(float x) { return static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(x)))); }

}  // namespace

void tessel_f32_softmax__reference(int64_t rows, int64_t n, const float* x, float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    const float max = n > 0 ? *std::max_element(xr, xr + n) : 0.0f;
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += std::exp(static_cast<double>(xr[i]) - max);
    for (int64_t i = 0; i < n; ++i) yr[i] = static_cast<float>(std::exp(static_cast<double>(xr[i]) - max) / sum);
  }
}

void tessel_f32_rmsnorm__reference(int64_t rows, int64_t n, const float* x, const float* gain, float eps, float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    double ss = 0;
    for (int64_t i = 0; i < n; ++i) ss += static_cast<double>(xr[i]) * xr[i];
    const float scale = static_cast<float>(1.0 / std::sqrt(ss / n + eps));
    for (int64_t i = 0; i < n; ++i) yr[i] = xr[i] * scale * (gain ? gain[i] : 1.0f);
  }
}

void tessel_f32_clamp__reference(int64_t n, const float* x, float* y, float lo, float hi) {
  for (int64_t i = 0; i < n; ++i) y[i] = Clamp(x[i], lo, hi);
}

void tessel_f32_sigmoid__reference(int64_t n, const float* x, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = Sigmoid(x[i]);
}

void tessel_f32_silu__reference(int64_t n, const float* x, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * Sigmoid(x[i]);
}

void tessel_f32_hardswish__reference(int64_t n, const float* x, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * Clamp(x[i] + 3.0f, 0.0f, 6.0f) * (1.0f / 6.0f);
}

void tessel_f32_vadd_minmax__reference(int64_t n, const float* a, const float* b, float* y, float lo, float hi) {
  for (int64_t i = 0; i < n; ++i) y[i] = Clamp(a[i] + b[i], lo, hi);
}

void tessel_f32_vmul_minmax__reference(int64_t n, const float* a, const float* b, float* y, float lo, float hi) {
  for (int64_t i = 0; i < n; ++i) y[i] = Clamp(a[i] * b[i], lo, hi);
}

}  // namespace tessel
