// AVX-512 vector kernels: four zmm registers (64 floats) per iteration with independent accumulators
// for the reductions, then single registers, then one masked load/store for the last n % 16 elements.
// The exponential is tsl_expf's, with 2^n applied by vscalefps.
#include <immintrin.h>

#include <cmath>
#include <limits>

#include "kernels/vector/internal/vector_kernels.h"

namespace tessel {
namespace vector_internal {
namespace {

inline __m512 Exp(__m512 x) {
  x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(kExpLo)), _mm512_set1_ps(kExpHi));
  const __m512 n =
      _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(kLog2e)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Hi), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Lo), r);
  __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(kExpC7), r, _mm512_set1_ps(kExpC6));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpC5));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpC4));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpC3));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpC2));
  p = _mm512_add_ps(_mm512_fmadd_ps(p, _mm512_mul_ps(r, r), r), _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, n);
}

// e / (1 + e) with e = exp(-|x|), mirrored for x > 0: exp never overflows, and the small values of
// the negative tail keep their relative accuracy.
inline __m512 Sigmoid(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 e = Exp(_mm512_sub_ps(_mm512_setzero_ps(), _mm512_abs_ps(x)));
  const __m512 s = _mm512_div_ps(e, _mm512_add_ps(one, e));
  const __mmask16 positive = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GT_OQ);
  return _mm512_mask_sub_ps(s, positive, one, s);
}

inline __m512 Clamp(__m512 v, __m512 lo, __m512 hi) { return _mm512_min_ps(_mm512_max_ps(v, lo), hi); }

// The first `count` (< 16) lanes.
inline __mmask16 TailMask(int64_t count) { return static_cast<__mmask16>((1u << count) - 1); }

// y[i] = op(x[i]); y may be x.
template <typename Op>
void Map(int64_t n, const float* x, float* y, Op op) {
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    const __m512 v0 = _mm512_loadu_ps(x + i), v1 = _mm512_loadu_ps(x + i + 16);
    const __m512 v2 = _mm512_loadu_ps(x + i + 32), v3 = _mm512_loadu_ps(x + i + 48);
    _mm512_storeu_ps(y + i, op(v0));
    _mm512_storeu_ps(y + i + 16, op(v1));
    _mm512_storeu_ps(y + i + 32, op(v2));
    _mm512_storeu_ps(y + i + 48, op(v3));
  }
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, op(_mm512_loadu_ps(x + i)));
  if (i < n) {
    const __mmask16 m = TailMask(n - i);
    _mm512_mask_storeu_ps(y + i, m, op(_mm512_maskz_loadu_ps(m, x + i)));
  }
}

// y[i] = op(a[i], b[i]); y may be a or b.
template <typename Op>
void Map2(int64_t n, const float* a, const float* b, float* y, Op op) {
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    const __m512 a0 = _mm512_loadu_ps(a + i), a1 = _mm512_loadu_ps(a + i + 16);
    const __m512 a2 = _mm512_loadu_ps(a + i + 32), a3 = _mm512_loadu_ps(a + i + 48);
    const __m512 b0 = _mm512_loadu_ps(b + i), b1 = _mm512_loadu_ps(b + i + 16);
    const __m512 b2 = _mm512_loadu_ps(b + i + 32), b3 = _mm512_loadu_ps(b + i + 48);
    _mm512_storeu_ps(y + i, op(a0, b0));
    _mm512_storeu_ps(y + i + 16, op(a1, b1));
    _mm512_storeu_ps(y + i + 32, op(a2, b2));
    _mm512_storeu_ps(y + i + 48, op(a3, b3));
  }
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, op(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i)));
  if (i < n) {
    const __mmask16 m = TailMask(n - i);
    _mm512_mask_storeu_ps(y + i, m, op(_mm512_maskz_loadu_ps(m, a + i), _mm512_maskz_loadu_ps(m, b + i)));
  }
}

float RowMax(int64_t n, const float* x) {
  __m512 m0 = _mm512_set1_ps(-std::numeric_limits<float>::infinity()), m1 = m0, m2 = m0, m3 = m0;
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    m0 = _mm512_max_ps(m0, _mm512_loadu_ps(x + i));
    m1 = _mm512_max_ps(m1, _mm512_loadu_ps(x + i + 16));
    m2 = _mm512_max_ps(m2, _mm512_loadu_ps(x + i + 32));
    m3 = _mm512_max_ps(m3, _mm512_loadu_ps(x + i + 48));
  }
  m0 = _mm512_max_ps(_mm512_max_ps(m0, m1), _mm512_max_ps(m2, m3));
  for (; i + 16 <= n; i += 16) m0 = _mm512_max_ps(m0, _mm512_loadu_ps(x + i));
  if (i < n) {
    const __mmask16 m = TailMask(n - i);
    m0 = _mm512_mask_max_ps(m0, m, m0, _mm512_maskz_loadu_ps(m, x + i));
  }
  return _mm512_reduce_max_ps(m0);
}

// y = exp(x - max); returns sum(y).
float StoreExpMinusMax(int64_t n, const float* x, float max, float* y) {
  const __m512 vmax = _mm512_set1_ps(max);
  __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    const __m512 e0 = Exp(_mm512_sub_ps(_mm512_loadu_ps(x + i), vmax));
    const __m512 e1 = Exp(_mm512_sub_ps(_mm512_loadu_ps(x + i + 16), vmax));
    const __m512 e2 = Exp(_mm512_sub_ps(_mm512_loadu_ps(x + i + 32), vmax));
    const __m512 e3 = Exp(_mm512_sub_ps(_mm512_loadu_ps(x + i + 48), vmax));
    _mm512_storeu_ps(y + i, e0);
    _mm512_storeu_ps(y + i + 16, e1);
    _mm512_storeu_ps(y + i + 32, e2);
    _mm512_storeu_ps(y + i + 48, e3);
    s0 = _mm512_add_ps(s0, e0);
    s1 = _mm512_add_ps(s1, e1);
    s2 = _mm512_add_ps(s2, e2);
    s3 = _mm512_add_ps(s3, e3);
  }
  s0 = _mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3));
  for (; i + 16 <= n; i += 16) {
    const __m512 e = Exp(_mm512_sub_ps(_mm512_loadu_ps(x + i), vmax));
    _mm512_storeu_ps(y + i, e);
    s0 = _mm512_add_ps(s0, e);
  }
  if (i < n) {
    const __mmask16 m = TailMask(n - i);
    const __m512 e = Exp(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), vmax));
    _mm512_mask_storeu_ps(y + i, m, e);
    s0 = _mm512_mask_add_ps(s0, m, s0, e);
  }
  return _mm512_reduce_add_ps(s0);
}

float SumOfSquares(int64_t n, const float* x) {
  __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    const __m512 v0 = _mm512_loadu_ps(x + i), v1 = _mm512_loadu_ps(x + i + 16);
    const __m512 v2 = _mm512_loadu_ps(x + i + 32), v3 = _mm512_loadu_ps(x + i + 48);
    s0 = _mm512_fmadd_ps(v0, v0, s0);
    s1 = _mm512_fmadd_ps(v1, v1, s1);
    s2 = _mm512_fmadd_ps(v2, v2, s2);
    s3 = _mm512_fmadd_ps(v3, v3, s3);
  }
  s0 = _mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3));
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    s0 = _mm512_fmadd_ps(v, v, s0);
  }
  if (i < n) {
    // Masked-off lanes load as 0 and add nothing.
    const __m512 v = _mm512_maskz_loadu_ps(TailMask(n - i), x + i);
    s0 = _mm512_fmadd_ps(v, v, s0);
  }
  return _mm512_reduce_add_ps(s0);
}

}  // namespace
}  // namespace vector_internal

using vector_internal::Clamp;
using vector_internal::Map;
using vector_internal::Map2;
using vector_internal::Sigmoid;

void tessel_f32_softmax__avx512(int64_t rows, int64_t n, const float* x, float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    const float max = vector_internal::RowMax(n, xr);
    const __m512 scale = _mm512_set1_ps(1.0f / vector_internal::StoreExpMinusMax(n, xr, max, yr));
    Map(n, yr, yr, [scale](__m512 v) { return _mm512_mul_ps(v, scale); });
  }
}

void tessel_f32_rmsnorm__avx512(int64_t rows, int64_t n, const float* x, const float* gain, float eps, float* y) {
  if (n == 0) return;
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    const __m512 scale =
        _mm512_set1_ps(1.0f / std::sqrt(vector_internal::SumOfSquares(n, xr) / static_cast<float>(n) + eps));
    if (gain) {
      Map2(n, xr, gain, yr, [scale](__m512 v, __m512 g) { return _mm512_mul_ps(_mm512_mul_ps(v, scale), g); });
    } else {
      Map(n, xr, yr, [scale](__m512 v) { return _mm512_mul_ps(v, scale); });
    }
  }
}

void tessel_f32_clamp__avx512(int64_t n, const float* x, float* y, float lo, float hi) {
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  Map(n, x, y, [vlo, vhi](__m512 v) { return Clamp(v, vlo, vhi); });
}

void tessel_f32_sigmoid__avx512(int64_t n, const float* x, float* y) {
  Map(n, x, y, [](__m512 v) { return Sigmoid(v); });
}

void tessel_f32_silu__avx512(int64_t n, const float* x, float* y) {
  Map(n, x, y, [](__m512 v) { return _mm512_mul_ps(v, Sigmoid(v)); });
}

void tessel_f32_hardswish__avx512(int64_t n, const float* x, float* y) {
  const __m512 zero = _mm512_setzero_ps(), three = _mm512_set1_ps(3.0f), six = _mm512_set1_ps(6.0f);
  const __m512 sixth = _mm512_set1_ps(1.0f / 6.0f);
  Map(n, x, y, [=](__m512 v) { return _mm512_mul_ps(_mm512_mul_ps(v, Clamp(_mm512_add_ps(v, three), zero, six)), sixth); });
}

void tessel_f32_vadd_minmax__avx512(int64_t n, const float* a, const float* b, float* y, float lo, float hi) {
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  Map2(n, a, b, y, [vlo, vhi](__m512 u, __m512 v) { return Clamp(_mm512_add_ps(u, v), vlo, vhi); });
}

void tessel_f32_vmul_minmax__avx512(int64_t n, const float* a, const float* b, float* y, float lo, float hi) {
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  Map2(n, a, b, y, [vlo, vhi](__m512 u, __m512 v) { return Clamp(_mm512_mul_ps(u, v), vlo, vhi); });
}

}  // namespace tessel
