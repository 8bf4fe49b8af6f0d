// AVX2 + FMA vector kernels for x86 CPUs without AVX-512: four ymm registers (32 floats) per iteration
// with independent accumulators for the reductions, then single registers, then one masked load/store
// for the last n % 8 elements. The exponential is tsl_expf's, with 2^n built in the exponent bits.
#include <immintrin.h>

#include <cmath>
#include <limits>

#include "kernels/vector/avx2_tail.h"
#include "kernels/vector/internal/vector_kernels.h"

namespace tessel {
namespace vector_internal {
namespace {

inline __m256 Exp(__m256 x) {
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(kExpLo)), _mm256_set1_ps(kExpHi));
  const __m256 n =
      _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(kLog2e)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Hi), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Lo), r);
  __m256 p = _mm256_fmadd_ps(_mm256_set1_ps(kExpC7), r, _mm256_set1_ps(kExpC6));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpC5));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpC4));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpC3));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpC2));
  p = _mm256_add_ps(_mm256_fmadd_ps(p, _mm256_mul_ps(r, r), r), _mm256_set1_ps(1.0f));
  // AVX2 has no vscalefps; n is an exact integer, so the conversion is exact.
  const __m256i two_n = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(two_n));
}

// e / (1 + e) with e = exp(-|x|), mirrored for x > 0: exp never overflows, and the small values of
// the negative tail keep their relative accuracy.
inline __m256 Sigmoid(__m256 x) {
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 e = Exp(_mm256_or_ps(x, _mm256_set1_ps(-0.0f)));  // -|x|: set the sign bit
  const __m256 s = _mm256_div_ps(e, _mm256_add_ps(one, e));
  return _mm256_blendv_ps(s, _mm256_sub_ps(one, s), _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GT_OQ));
}

inline __m256 Clamp(__m256 v, __m256 lo, __m256 hi) { return _mm256_min_ps(_mm256_max_ps(v, lo), hi); }

using avx2_tail::TailMask;

inline float ReduceAdd(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}

inline float ReduceMax(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  return _mm_cvtss_f32(_mm_max_ss(m, _mm_movehdup_ps(m)));
}

// y[i] = op(x[i]); y may be x.
template <typename Op>
void Map(int64_t n, const float* x, float* y, Op op) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256 v0 = _mm256_loadu_ps(x + i), v1 = _mm256_loadu_ps(x + i + 8);
    const __m256 v2 = _mm256_loadu_ps(x + i + 16), v3 = _mm256_loadu_ps(x + i + 24);
    _mm256_storeu_ps(y + i, op(v0));
    _mm256_storeu_ps(y + i + 8, op(v1));
    _mm256_storeu_ps(y + i + 16, op(v2));
    _mm256_storeu_ps(y + i + 24, op(v3));
  }
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, op(_mm256_loadu_ps(x + i)));
  if (i < n) {
    const __m256i m = TailMask(n - i);
    _mm256_maskstore_ps(y + i, m, op(_mm256_maskload_ps(x + i, m)));
  }
}

// y[i] = op(a[i], b[i]); y may be a or b.
template <typename Op>
void Map2(int64_t n, const float* a, const float* b, float* y, Op op) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256 a0 = _mm256_loadu_ps(a + i), a1 = _mm256_loadu_ps(a + i + 8);
    const __m256 a2 = _mm256_loadu_ps(a + i + 16), a3 = _mm256_loadu_ps(a + i + 24);
    const __m256 b0 = _mm256_loadu_ps(b + i), b1 = _mm256_loadu_ps(b + i + 8);
    const __m256 b2 = _mm256_loadu_ps(b + i + 16), b3 = _mm256_loadu_ps(b + i + 24);
    _mm256_storeu_ps(y + i, op(a0, b0));
    _mm256_storeu_ps(y + i + 8, op(a1, b1));
    _mm256_storeu_ps(y + i + 16, op(a2, b2));
    _mm256_storeu_ps(y + i + 24, op(a3, b3));
  }
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, op(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));
  if (i < n) {
    const __m256i m = TailMask(n - i);
    _mm256_maskstore_ps(y + i, m, op(_mm256_maskload_ps(a + i, m), _mm256_maskload_ps(b + i, m)));
  }
}

float RowMax(int64_t n, const float* x) {
  __m256 m0 = _mm256_set1_ps(-std::numeric_limits<float>::infinity()), m1 = m0, m2 = m0, m3 = m0;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    m0 = _mm256_max_ps(m0, _mm256_loadu_ps(x + i));
    m1 = _mm256_max_ps(m1, _mm256_loadu_ps(x + i + 8));
    m2 = _mm256_max_ps(m2, _mm256_loadu_ps(x + i + 16));
    m3 = _mm256_max_ps(m3, _mm256_loadu_ps(x + i + 24));
  }
  m0 = _mm256_max_ps(_mm256_max_ps(m0, m1), _mm256_max_ps(m2, m3));
  for (; i + 8 <= n; i += 8) m0 = _mm256_max_ps(m0, _mm256_loadu_ps(x + i));
  if (i < n) {
    // Masked-off lanes load as 0, which could exceed an all-negative row's max: keep m0 there.
    const __m256i m = TailMask(n - i);
    m0 = _mm256_blendv_ps(m0, _mm256_max_ps(m0, _mm256_maskload_ps(x + i, m)), _mm256_castsi256_ps(m));
  }
  return ReduceMax(m0);
}

// y = exp(x - max); returns sum(y).
float StoreExpMinusMax(int64_t n, const float* x, float max, float* y) {
  const __m256 vmax = _mm256_set1_ps(max);
  __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256 e0 = Exp(_mm256_sub_ps(_mm256_loadu_ps(x + i), vmax));
    const __m256 e1 = Exp(_mm256_sub_ps(_mm256_loadu_ps(x + i + 8), vmax));
    const __m256 e2 = Exp(_mm256_sub_ps(_mm256_loadu_ps(x + i + 16), vmax));
    const __m256 e3 = Exp(_mm256_sub_ps(_mm256_loadu_ps(x + i + 24), vmax));
    _mm256_storeu_ps(y + i, e0);
    _mm256_storeu_ps(y + i + 8, e1);
    _mm256_storeu_ps(y + i + 16, e2);
    _mm256_storeu_ps(y + i + 24, e3);
    s0 = _mm256_add_ps(s0, e0);
    s1 = _mm256_add_ps(s1, e1);
    s2 = _mm256_add_ps(s2, e2);
    s3 = _mm256_add_ps(s3, e3);
  }
  s0 = _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3));
  for (; i + 8 <= n; i += 8) {
    const __m256 e = Exp(_mm256_sub_ps(_mm256_loadu_ps(x + i), vmax));
    _mm256_storeu_ps(y + i, e);
    s0 = _mm256_add_ps(s0, e);
  }
  if (i < n) {
    // exp of a masked-off lane (0 - max) is not 0: zero it before it joins the sum.
    const __m256i m = TailMask(n - i);
    const __m256 e = _mm256_and_ps(Exp(_mm256_sub_ps(_mm256_maskload_ps(x + i, m), vmax)), _mm256_castsi256_ps(m));
    _mm256_maskstore_ps(y + i, m, e);
    s0 = _mm256_add_ps(s0, e);
  }
  return ReduceAdd(s0);
}

float SumOfSquares(int64_t n, const float* x) {
  __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256 v0 = _mm256_loadu_ps(x + i), v1 = _mm256_loadu_ps(x + i + 8);
    const __m256 v2 = _mm256_loadu_ps(x + i + 16), v3 = _mm256_loadu_ps(x + i + 24);
    s0 = _mm256_fmadd_ps(v0, v0, s0);
    s1 = _mm256_fmadd_ps(v1, v1, s1);
    s2 = _mm256_fmadd_ps(v2, v2, s2);
    s3 = _mm256_fmadd_ps(v3, v3, s3);
  }
  s0 = _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3));
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    s0 = _mm256_fmadd_ps(v, v, s0);
  }
  if (i < n) {
    // Masked-off lanes load as 0 and add nothing.
    const __m256 v = _mm256_maskload_ps(x + i, TailMask(n - i));
    s0 = _mm256_fmadd_ps(v, v, s0);
  }
  return ReduceAdd(s0);
}

}  // namespace
}  // namespace vector_internal

using vector_internal::Clamp;
using vector_internal::Map;
using vector_internal::Map2;
using vector_internal::Sigmoid;

void tessel_f32_softmax__avx2(int64_t rows, int64_t n, const float* x, float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    const float max = vector_internal::RowMax(n, xr);
    const __m256 scale = _mm256_set1_ps(1.0f / vector_internal::StoreExpMinusMax(n, xr, max, yr));
    Map(n, yr, yr, [scale](__m256 v) { return _mm256_mul_ps(v, scale); });
  }
}

void tessel_f32_rmsnorm__avx2(int64_t rows, int64_t n, const float* x, const float* gain, float eps, float* y) {
  if (n == 0) return;
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    const __m256 scale =
        _mm256_set1_ps(1.0f / std::sqrt(vector_internal::SumOfSquares(n, xr) / static_cast<float>(n) + eps));
    if (gain) {
      Map2(n, xr, gain, yr, [scale](__m256 v, __m256 g) { return _mm256_mul_ps(_mm256_mul_ps(v, scale), g); });
    } else {
      Map(n, xr, yr, [scale](__m256 v) { return _mm256_mul_ps(v, scale); });
    }
  }
}

void tessel_f32_clamp__avx2(int64_t n, const float* x, float* y, float lo, float hi) {
  const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  Map(n, x, y, [vlo, vhi](__m256 v) { return Clamp(v, vlo, vhi); });
}

void tessel_f32_sigmoid__avx2(int64_t n, const float* x, float* y) {
  Map(n, x, y, [](__m256 v) { return Sigmoid(v); });
}

void tessel_f32_silu__avx2(int64_t n, const float* x, float* y) {
  Map(n, x, y, [](__m256 v) { return _mm256_mul_ps(v, Sigmoid(v)); });
}

void tessel_f32_hardswish__avx2(int64_t n, const float* x, float* y) {
  const __m256 zero = _mm256_setzero_ps(), three = _mm256_set1_ps(3.0f), six = _mm256_set1_ps(6.0f);
  const __m256 sixth = _mm256_set1_ps(1.0f / 6.0f);
  Map(n, x, y, [=](__m256 v) { return _mm256_mul_ps(_mm256_mul_ps(v, Clamp(_mm256_add_ps(v, three), zero, six)), sixth); });
}

void tessel_f32_vadd_minmax__avx2(int64_t n, const float* a, const float* b, float* y, float lo, float hi) {
  const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  Map2(n, a, b, y, [vlo, vhi](__m256 u, __m256 v) { return Clamp(_mm256_add_ps(u, v), vlo, vhi); });
}

void tessel_f32_vmul_minmax__avx2(int64_t n, const float* a, const float* b, float* y, float lo, float hi) {
  const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  Map2(n, a, b, y, [vlo, vhi](__m256 u, __m256 v) { return Clamp(_mm256_mul_ps(u, v), vlo, vhi); });
}

}  // namespace tessel
