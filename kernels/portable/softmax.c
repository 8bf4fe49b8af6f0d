/* Softmax pieces (row max, exp and sum, scale) and RMSNorm for the auto-vectorizer; the exponential is
 * tsl_expf, inlined, so the loops hold no calls. */
#include "tessel_portable.h"

float tsl_f32_rmax__autovec(size_t n, const float* restrict x) {
  float m = -__builtin_inff();
  // tessel:hot
#pragma omp simd reduction(max : m)
  for (size_t i = 0; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

float tsl_f32_exp_minus_max_sum__autovec(size_t n, const float* restrict x, float max, float* restrict y) {
  float sum = 0.0f;
  // tessel:hot
#pragma omp simd reduction(+ : sum)
  for (size_t i = 0; i < n; ++i) {
    const float e = tsl_expf(x[i] - max);
    y[i] = e;
    sum += e;
  }
  return sum;
}

void tsl_f32_vscale__autovec(size_t n, float* restrict y, float scale) {
  // tessel:hot
#pragma omp simd
  for (size_t i = 0; i < n; ++i) y[i] *= scale;
}

void tsl_f32_softmax__autovec(size_t rows, size_t n, const float* restrict x, float* restrict y) {
  for (size_t r = 0; r < rows; ++r) {
    const float m = tsl_f32_rmax__autovec(n, x + r * n);
    const float sum = tsl_f32_exp_minus_max_sum__autovec(n, x + r * n, m, y + r * n);
    tsl_f32_vscale__autovec(n, y + r * n, 1.0f / sum);
  }
}

void tsl_f32_rmsnorm__autovec(size_t rows, size_t n, const float* restrict x, const float* restrict gain, float eps,
                              float* restrict y) {
  for (size_t r = 0; r < rows; ++r) {
    const float* restrict xr = x + r * n;
    float* restrict yr = y + r * n;
    float ss = 0.0f;
    // tessel:hot
#pragma omp simd reduction(+ : ss)
    for (size_t i = 0; i < n; ++i) ss += xr[i] * xr[i];
    const float scale = 1.0f / __builtin_sqrtf(ss / (float)n + eps);
    if (gain) {
      // tessel:hot
#pragma omp simd
      for (size_t i = 0; i < n; ++i) yr[i] = xr[i] * scale * gain[i];
    } else {
      // tessel:hot
#pragma omp simd
      for (size_t i = 0; i < n; ++i) yr[i] = xr[i] * scale;
    }
  }
}
