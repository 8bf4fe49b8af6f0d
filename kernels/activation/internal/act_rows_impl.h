// The row kernels of act_rows.h as portable C++, included once by each per-ISA source file
// (act_rows_autovec.cc, act_rows_avx2.cc, act_rows_avx512.cc), which compiles them with that ISA's
// flags (-O3 -fopenmp-simd -ffp-contract=fast). Every loop body is branch-free (selects, one clamp
// before the exponential, see tsl_sigmoidf) so that it vectorizes. Internal linkage: each file holds
// its own copy.
#ifndef TESSEL_KERNELS_ACTIVATION_INTERNAL_ACT_ROWS_IMPL_H_
#define TESSEL_KERNELS_ACTIVATION_INTERNAL_ACT_ROWS_IMPL_H_

#include <cmath>
#include <cstdint>

#include "kernels/activation/act_rows.h"
#include "kernels/portable/tessel_portable.h"

namespace tessel {
namespace act_internal {
namespace {

// erf(|x|) by Abramowitz and Stegun 7.1.26: 1 - t (a1 + t (a2 + ... a5 t)) exp(-x^2), t = 1 / (1 + p |x|).
inline float ErfAbs(float x) {
  const float z = x < 0.0f ? -x : x;
  const float t = 1.0f / (1.0f + 0.3275911f * z);
  const float poly =
      t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f + t * (-1.453152027f + t * 1.061405429f))));
  float e = -z * z;
  e = e < TSL_EXPF_LO ? TSL_EXPF_LO : e;
  return 1.0f - poly * tsl_expf_in_range(e);
}

// tanh(|x|) = (1 - e) / (1 + e) with e = exp(-2|x|) <= 1: no overflow, one clamp.
inline float TanhAbs(float x) {
  float e = x < 0.0f ? 2.0f * x : -2.0f * x;
  e = e < TSL_EXPF_LO ? TSL_EXPF_LO : e;
  const float q = tsl_expf_in_range(e);
  return (1.0f - q) / (1.0f + q);
}

void GeluErf(int64_t n, const float* x, float* y) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    const float a = ErfAbs(v * 0.70710678118654752f);
    y[i] = 0.5f * v * (1.0f + (v < 0.0f ? -a : a));
  }
}

void GeluTanh(int64_t n, const float* x, float* y) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    const float u = 0.7978845608028654f * (v + 0.044715f * v * v * v);
    const float a = TanhAbs(u);
    y[i] = 0.5f * v * (1.0f + (u < 0.0f ? -a : a));
  }
}

void Tanh(int64_t n, const float* x, float* y) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    const float a = TanhAbs(v);
    y[i] = v < 0.0f ? -a : a;
  }
}

void Erf(int64_t n, const float* x, float* y) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    const float a = ErfAbs(v);
    y[i] = v < 0.0f ? -a : a;
  }
}

void LogSoftmax(int64_t rows, int64_t n, const float* x, float* y) {
  for (int64_t r = 0; r < rows; ++r, x += n, y += n) {
    float mx = x[0];
#pragma omp simd reduction(max : mx)
    for (int64_t i = 0; i < n; ++i) mx = x[i] > mx ? x[i] : mx;
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (int64_t i = 0; i < n; ++i) {
      float d = x[i] - mx;
      d = d < TSL_EXPF_LO ? TSL_EXPF_LO : d;
      sum += tsl_expf_in_range(d);
    }
    const float log_sum = std::log(sum);
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mx) - log_sum;
  }
}

void Sigmoid(int64_t n, const float* x, float* y) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = tsl_sigmoidf(x[i]);
}

void SiLU(int64_t n, const float* x, float* y) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    // Below the exponential's range sigmoid(v) stays at its clamped floor, and v times it would not
    // vanish for huge |v| (-3e38 x 1.2e-38): 0 there, as v e^v is.
    const float v = x[i];
    y[i] = v < TSL_EXPF_LO ? 0.0f : v * tsl_sigmoidf(v);
  }
}

void HardSwish(int64_t n, const float* x, float* y) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    float t = v + 3.0f;
    t = t < 0.0f ? 0.0f : t;
    t = t > 6.0f ? 6.0f : t;
    y[i] = v * (t * (1.0f / 6.0f));
  }
}

constexpr ActRowKernels kActRows = {GeluErf, GeluTanh, Tanh, Erf, LogSoftmax, Sigmoid, SiLU, HardSwish};

}  // namespace
}  // namespace act_internal
}  // namespace tessel

#endif  // TESSEL_KERNELS_ACTIVATION_INTERNAL_ACT_ROWS_IMPL_H_
