// NEON vector kernels: four q-registers (16 floats) per iteration with independent accumulators for the
// reductions, then single registers, then the last n % 4 elements through a zero-padded register so
// that tails round exactly like full vectors. The exponential is tsl_expf's, four lanes at a time.
#include <arm_neon.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/vector/internal/vector_kernels.h"

namespace tessel {
namespace vector_internal {
namespace {

inline float32x4_t Exp(float32x4_t x) {
  x = vminq_f32(vmaxq_f32(x, vdupq_n_f32(kExpLo)), vdupq_n_f32(kExpHi));
  const float32x4_t n = vrndnq_f32(vmulq_n_f32(x, kLog2e));
  float32x4_t r = vfmsq_f32(x, n, vdupq_n_f32(kLn2Hi));
  r = vfmsq_f32(r, n, vdupq_n_f32(kLn2Lo));
  float32x4_t p = vfmaq_f32(vdupq_n_f32(kExpC6), vdupq_n_f32(kExpC7), r);
  p = vfmaq_f32(vdupq_n_f32(kExpC5), p, r);
  p = vfmaq_f32(vdupq_n_f32(kExpC4), p, r);
  p = vfmaq_f32(vdupq_n_f32(kExpC3), p, r);
  p = vfmaq_f32(vdupq_n_f32(kExpC2), p, r);
  p = vaddq_f32(vfmaq_f32(r, p, vmulq_f32(r, r)), vdupq_n_f32(1.0f));
  const int32x4_t two_n = vshlq_n_s32(vaddq_s32(vcvtq_s32_f32(n), vdupq_n_s32(127)), 23);
  return vmulq_f32(p, vreinterpretq_f32_s32(two_n));
}

// e / (1 + e) with e = exp(-|x|), mirrored for x > 0: exp never overflows, and the small values of
// the negative tail keep their relative accuracy (1 / (1 + exp(-x)) would round them through 1 + big).
inline float32x4_t Sigmoid(float32x4_t x) {
  const float32x4_t one = vdupq_n_f32(1.0f);
  const float32x4_t e = Exp(vnegq_f32(vabsq_f32(x)));
  const float32x4_t s = vdivq_f32(e, vaddq_f32(one, e));
  return vbslq_f32(vcgtq_f32(x, vdupq_n_f32(0.0f)), vsubq_f32(one, s), s);
}

inline float32x4_t Clamp(float32x4_t v, float32x4_t lo, float32x4_t hi) { return vminq_f32(vmaxq_f32(v, lo), hi); }

// y[i] = op(x[i]); y may be x.
template <typename Op>
void Map(int64_t n, const float* x, float* y, Op op) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const float32x4_t v0 = vld1q_f32(x + i), v1 = vld1q_f32(x + i + 4);
    const float32x4_t v2 = vld1q_f32(x + i + 8), v3 = vld1q_f32(x + i + 12);
    vst1q_f32(y + i, op(v0));
    vst1q_f32(y + i + 4, op(v1));
    vst1q_f32(y + i + 8, op(v2));
    vst1q_f32(y + i + 12, op(v3));
  }
  for (; i + 4 <= n; i += 4) vst1q_f32(y + i, op(vld1q_f32(x + i)));
  if (i < n) {
    float buf[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    std::copy(x + i, x + n, buf);
    vst1q_f32(buf, op(vld1q_f32(buf)));
    std::copy(buf, buf + (n - i), y + i);
  }
}

// y[i] = op(a[i], b[i]); y may be a or b.
template <typename Op>
void Map2(int64_t n, const float* a, const float* b, float* y, Op op) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const float32x4_t a0 = vld1q_f32(a + i), a1 = vld1q_f32(a + i + 4);
    const float32x4_t a2 = vld1q_f32(a + i + 8), a3 = vld1q_f32(a + i + 12);
    const float32x4_t b0 = vld1q_f32(b + i), b1 = vld1q_f32(b + i + 4);
    const float32x4_t b2 = vld1q_f32(b + i + 8), b3 = vld1q_f32(b + i + 12);
    vst1q_f32(y + i, op(a0, b0));
    vst1q_f32(y + i + 4, op(a1, b1));
    vst1q_f32(y + i + 8, op(a2, b2));
    vst1q_f32(y + i + 12, op(a3, b3));
  }
  for (; i + 4 <= n; i += 4) vst1q_f32(y + i, op(vld1q_f32(a + i), vld1q_f32(b + i)));
  if (i < n) {
    float abuf[4] = {0.0f, 0.0f, 0.0f, 0.0f}, bbuf[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    std::copy(a + i, a + n, abuf);
    std::copy(b + i, b + n, bbuf);
    vst1q_f32(abuf, op(vld1q_f32(abuf), vld1q_f32(bbuf)));
    std::copy(abuf, abuf + (n - i), y + i);
  }
}

float RowMax(int64_t n, const float* x) {
  float32x4_t m0 = vdupq_n_f32(-std::numeric_limits<float>::infinity()), m1 = m0, m2 = m0, m3 = m0;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    m0 = vmaxq_f32(m0, vld1q_f32(x + i));
    m1 = vmaxq_f32(m1, vld1q_f32(x + i + 4));
    m2 = vmaxq_f32(m2, vld1q_f32(x + i + 8));
    m3 = vmaxq_f32(m3, vld1q_f32(x + i + 12));
  }
  m0 = vmaxq_f32(vmaxq_f32(m0, m1), vmaxq_f32(m2, m3));
  for (; i + 4 <= n; i += 4) m0 = vmaxq_f32(m0, vld1q_f32(x + i));
  float m = vmaxvq_f32(m0);
  for (; i < n; ++i) m = std::max(m, x[i]);
  return m;
}

// y = exp(x - max); returns sum(y).
float StoreExpMinusMax(int64_t n, const float* x, float max, float* y) {
  const float32x4_t vmax = vdupq_n_f32(max);
  float32x4_t s0 = vdupq_n_f32(0.0f), s1 = s0, s2 = s0, s3 = s0;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const float32x4_t e0 = Exp(vsubq_f32(vld1q_f32(x + i), vmax));
    const float32x4_t e1 = Exp(vsubq_f32(vld1q_f32(x + i + 4), vmax));
    const float32x4_t e2 = Exp(vsubq_f32(vld1q_f32(x + i + 8), vmax));
    const float32x4_t e3 = Exp(vsubq_f32(vld1q_f32(x + i + 12), vmax));
    vst1q_f32(y + i, e0);
    vst1q_f32(y + i + 4, e1);
    vst1q_f32(y + i + 8, e2);
    vst1q_f32(y + i + 12, e3);
    s0 = vaddq_f32(s0, e0);
    s1 = vaddq_f32(s1, e1);
    s2 = vaddq_f32(s2, e2);
    s3 = vaddq_f32(s3, e3);
  }
  s0 = vaddq_f32(vaddq_f32(s0, s1), vaddq_f32(s2, s3));
  for (; i + 4 <= n; i += 4) {
    const float32x4_t e = Exp(vsubq_f32(vld1q_f32(x + i), vmax));
    vst1q_f32(y + i, e);
    s0 = vaddq_f32(s0, e);
  }
  float sum = vaddvq_f32(s0);
  if (i < n) {
    float buf[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    std::copy(x + i, x + n, buf);
    vst1q_f32(buf, Exp(vsubq_f32(vld1q_f32(buf), vmax)));
    for (int64_t j = 0; j < n - i; ++j) {
      y[i + j] = buf[j];
      sum += buf[j];
    }
  }
  return sum;
}

float SumOfSquares(int64_t n, const float* x) {
  float32x4_t s0 = vdupq_n_f32(0.0f), s1 = s0, s2 = s0, s3 = s0;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const float32x4_t v0 = vld1q_f32(x + i), v1 = vld1q_f32(x + i + 4);
    const float32x4_t v2 = vld1q_f32(x + i + 8), v3 = vld1q_f32(x + i + 12);
    s0 = vfmaq_f32(s0, v0, v0);
    s1 = vfmaq_f32(s1, v1, v1);
    s2 = vfmaq_f32(s2, v2, v2);
    s3 = vfmaq_f32(s3, v3, v3);
  }
  s0 = vaddq_f32(vaddq_f32(s0, s1), vaddq_f32(s2, s3));
  for (; i + 4 <= n; i += 4) {
    const float32x4_t v = vld1q_f32(x + i);
    s0 = vfmaq_f32(s0, v, v);
  }
  float ss = vaddvq_f32(s0);
  for (; i < n; ++i) ss += x[i] * x[i];
  return ss;
}

}  // namespace
}  // namespace vector_internal

using vector_internal::Clamp;
using vector_internal::Map;
using vector_internal::Map2;
using vector_internal::Sigmoid;

void tessel_f32_softmax__neon(int64_t rows, int64_t n, const float* x, float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    const float max = vector_internal::RowMax(n, xr);
    const float32x4_t scale = vdupq_n_f32(1.0f / vector_internal::StoreExpMinusMax(n, xr, max, yr));
    Map(n, yr, yr, [scale](float32x4_t v) { return vmulq_f32(v, scale); });
  }
}

void tessel_f32_rmsnorm__neon(int64_t rows, int64_t n, const float* x, const float* gain, float eps, float* y) {
  if (n == 0) return;
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    const float32x4_t scale =
        vdupq_n_f32(1.0f / std::sqrt(vector_internal::SumOfSquares(n, xr) / static_cast<float>(n) + eps));
    if (gain) {
      Map2(n, xr, gain, yr, [scale](float32x4_t v, float32x4_t g) { return vmulq_f32(vmulq_f32(v, scale), g); });
    } else {
      Map(n, xr, yr, [scale](float32x4_t v) { return vmulq_f32(v, scale); });
    }
  }
}

void tessel_f32_clamp__neon(int64_t n, const float* x, float* y, float lo, float hi) {
  const float32x4_t vlo = vdupq_n_f32(lo), vhi = vdupq_n_f32(hi);
  Map(n, x, y, [vlo, vhi](float32x4_t v) { return Clamp(v, vlo, vhi); });
}

void tessel_f32_sigmoid__neon(int64_t n, const float* x, float* y) {
  Map(n, x, y, [](float32x4_t v) { return Sigmoid(v); });
}

void tessel_f32_silu__neon(int64_t n, const float* x, float* y) {
  Map(n, x, y, [](float32x4_t v) { return vmulq_f32(v, Sigmoid(v)); });
}

void tessel_f32_hardswish__neon(int64_t n, const float* x, float* y) {
  const float32x4_t zero = vdupq_n_f32(0.0f), three = vdupq_n_f32(3.0f), six = vdupq_n_f32(6.0f);
  const float32x4_t sixth = vdupq_n_f32(1.0f / 6.0f);
  Map(n, x, y, [=](float32x4_t v) { return vmulq_f32(vmulq_f32(v, Clamp(vaddq_f32(v, three), zero, six)), sixth); });
}

void tessel_f32_vadd_minmax__neon(int64_t n, const float* a, const float* b, float* y, float lo, float hi) {
  const float32x4_t vlo = vdupq_n_f32(lo), vhi = vdupq_n_f32(hi);
  Map2(n, a, b, y, [vlo, vhi](float32x4_t u, float32x4_t v) { return Clamp(vaddq_f32(u, v), vlo, vhi); });
}

void tessel_f32_vmul_minmax__neon(int64_t n, const float* a, const float* b, float* y, float lo, float hi) {
  const float32x4_t vlo = vdupq_n_f32(lo), vhi = vdupq_n_f32(hi);
  Map2(n, a, b, y, [vlo, vhi](float32x4_t u, float32x4_t v) { return Clamp(vmulq_f32(u, v), vlo, vhi); });
}

}  // namespace tessel
