/* Activations, bias + clamp and elementwise arithmetic for the auto-vectorizer. */
#include "tessel_portable.h"

void tsl_f32_clamp__autovec(size_t n, float* restrict y, float lo, float hi) {
  y = __builtin_assume_aligned(y, sizeof(float));
  // tessel:hot
#pragma omp simd
  for (size_t i = 0; i < n; ++i) {
    const float v = y[i];
    y[i] = v < lo ? lo : (v > hi ? hi : v);
  }
}

/* ONNX HardSwish, x * clamp(x / 6 + 1/2, 0, 1), written as x * clamp(x + 3, 0, 6) / 6: GCC sinks the
 * product of the first form into the clamp's branches, which it then cannot if-convert. */
void tsl_f32_hardswish__autovec(size_t n, float* restrict y) {
  // tessel:hot
#pragma omp simd
  for (size_t i = 0; i < n; ++i) {
    const float v = y[i];
    float g = v + 3.0f;
    g = g < 0.0f ? 0.0f : g;
    g = g > 6.0f ? 6.0f : g;
    y[i] = v * g * (1.0f / 6.0f);
  }
}

void tsl_f32_sigmoid__autovec(size_t n, float* restrict y) {
  // tessel:hot
#pragma omp simd
  for (size_t i = 0; i < n; ++i) y[i] = 1.0f / (1.0f + tsl_expf(-y[i]));
}

/* x * sigmoid(x) through tsl_sigmoidf: the form 1 / (1 + tsl_expf(-x)) that Sigmoid keeps (about 20%
 * faster there, where the clamped copies fold to constants) made SiLU 7x slower on AVX2 and SSE. */
void tsl_f32_silu__autovec(size_t n, float* restrict y) {
  // tessel:hot
#pragma omp simd
  for (size_t i = 0; i < n; ++i) y[i] = y[i] * tsl_sigmoidf(y[i]);
}

void tsl_f32_bias_minmax__autovec(size_t rows, size_t channels, const float* restrict x, const float* restrict bias,
                                  float* restrict y, float lo, float hi) {
  for (size_t i = 0; i < rows; ++i) {
    const float* restrict xi = x + i * channels;
    float* restrict yi = y + i * channels;
    // tessel:hot
#pragma omp simd
    for (size_t c = 0; c < channels; ++c) {
      const float v = xi[c] + bias[c];
      yi[c] = v < lo ? lo : (v > hi ? hi : v);
    }
  }
}

void tsl_f32_vadd__autovec(size_t n, const float* restrict a, const float* restrict b, float* restrict y) {
  // tessel:hot
#pragma omp simd
  for (size_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
}

void tsl_f32_vmul__autovec(size_t n, const float* restrict a, const float* restrict b, float* restrict y) {
  // tessel:hot
#pragma omp simd
  for (size_t i = 0; i < n; ++i) y[i] = a[i] * b[i];
}
