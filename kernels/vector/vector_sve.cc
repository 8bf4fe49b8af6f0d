// SVE vector kernels, vector-length agnostic: every loop steps by two vectors of svcntw() lanes under
// svwhilelt predicates, so the tail is the last, partly active iteration and no code assumes a vector
// length (tested at 128, 256 and 512 bits). The exponential is tsl_expf's, one vector at a time.
#include <arm_sve.h>

#include <cmath>
#include <limits>

#include "kernels/vector/internal/vector_kernels.h"

namespace tessel {
namespace vector_internal {
namespace {

inline svfloat32_t Exp(svbool_t pg, svfloat32_t x) {
  x = svmin_n_f32_x(pg, svmax_n_f32_x(pg, x, kExpLo), kExpHi);
  const svfloat32_t n = svrintn_f32_x(pg, svmul_n_f32_x(pg, x, kLog2e));
  svfloat32_t r = svmls_n_f32_x(pg, x, n, kLn2Hi);
  r = svmls_n_f32_x(pg, r, n, kLn2Lo);
  svfloat32_t p = svmad_n_f32_x(pg, svdup_n_f32(kExpC7), r, kExpC6);
  p = svmad_n_f32_x(pg, p, r, kExpC5);
  p = svmad_n_f32_x(pg, p, r, kExpC4);
  p = svmad_n_f32_x(pg, p, r, kExpC3);
  p = svmad_n_f32_x(pg, p, r, kExpC2);
  p = svadd_n_f32_x(pg, svmla_f32_x(pg, r, p, svmul_f32_x(pg, r, r)), 1.0f);
  const svint32_t two_n = svlsl_n_s32_x(pg, svadd_n_s32_x(pg, svcvt_s32_f32_x(pg, n), 127), 23);
  return svmul_f32_x(pg, p, svreinterpret_f32_s32(two_n));
}

// e / (1 + e) with e = exp(-|x|), mirrored for x > 0 (see the NEON kernel for why).
inline svfloat32_t Sigmoid(svbool_t pg, svfloat32_t x) {
  const svfloat32_t e = Exp(pg, svneg_f32_x(pg, svabs_f32_x(pg, x)));
  const svfloat32_t s = svdiv_f32_x(pg, e, svadd_n_f32_x(pg, e, 1.0f));
  return svsel_f32(svcmpgt_n_f32(pg, x, 0.0f), svsubr_n_f32_x(pg, s, 1.0f), s);
}

inline svfloat32_t Clamp(svbool_t pg, svfloat32_t v, float lo, float hi) {
  return svmin_n_f32_x(pg, svmax_n_f32_x(pg, v, lo), hi);
}

// y[i] = op(pg, x[i]); y may be x.
template <typename Op>
void Map(int64_t n, const float* x, float* y, Op op) {
  const int64_t vl = static_cast<int64_t>(svcntw());
  for (int64_t i = 0; i < n; i += 2 * vl) {
    const svbool_t p0 = svwhilelt_b32(i, n), p1 = svwhilelt_b32(i + vl, n);
    const svfloat32_t v0 = svld1_f32(p0, x + i), v1 = svld1_f32(p1, x + i + vl);
    svst1_f32(p0, y + i, op(p0, v0));
    svst1_f32(p1, y + i + vl, op(p1, v1));
  }
}

// y[i] = op(pg, a[i], b[i]); y may be a or b.
template <typename Op>
void Map2(int64_t n, const float* a, const float* b, float* y, Op op) {
  const int64_t vl = static_cast<int64_t>(svcntw());
  for (int64_t i = 0; i < n; i += 2 * vl) {
    const svbool_t p0 = svwhilelt_b32(i, n), p1 = svwhilelt_b32(i + vl, n);
    const svfloat32_t a0 = svld1_f32(p0, a + i), a1 = svld1_f32(p1, a + i + vl);
    const svfloat32_t b0 = svld1_f32(p0, b + i), b1 = svld1_f32(p1, b + i + vl);
    svst1_f32(p0, y + i, op(p0, a0, b0));
    svst1_f32(p1, y + i + vl, op(p1, a1, b1));
  }
}

float RowMax(int64_t n, const float* x) {
  const int64_t vl = static_cast<int64_t>(svcntw());
  svfloat32_t m0 = svdup_n_f32(-std::numeric_limits<float>::infinity()), m1 = m0;
  for (int64_t i = 0; i < n; i += 2 * vl) {
    const svbool_t p0 = svwhilelt_b32(i, n), p1 = svwhilelt_b32(i + vl, n);
    m0 = svmax_f32_m(p0, m0, svld1_f32(p0, x + i));
    m1 = svmax_f32_m(p1, m1, svld1_f32(p1, x + i + vl));
  }
  return svmaxv_f32(svptrue_b32(), svmax_f32_x(svptrue_b32(), m0, m1));
}

// y = exp(x - max); returns sum(y).
float StoreExpMinusMax(int64_t n, const float* x, float max, float* y) {
  const int64_t vl = static_cast<int64_t>(svcntw());
  svfloat32_t s0 = svdup_n_f32(0.0f), s1 = s0;
  for (int64_t i = 0; i < n; i += 2 * vl) {
    const svbool_t p0 = svwhilelt_b32(i, n), p1 = svwhilelt_b32(i + vl, n);
    const svfloat32_t e0 = Exp(p0, svsub_n_f32_x(p0, svld1_f32(p0, x + i), max));
    const svfloat32_t e1 = Exp(p1, svsub_n_f32_x(p1, svld1_f32(p1, x + i + vl), max));
    svst1_f32(p0, y + i, e0);
    svst1_f32(p1, y + i + vl, e1);
    s0 = svadd_f32_m(p0, s0, e0);
    s1 = svadd_f32_m(p1, s1, e1);
  }
  return svaddv_f32(svptrue_b32(), svadd_f32_x(svptrue_b32(), s0, s1));
}

float SumOfSquares(int64_t n, const float* x) {
  const int64_t vl = static_cast<int64_t>(svcntw());
  svfloat32_t s0 = svdup_n_f32(0.0f), s1 = s0;
  for (int64_t i = 0; i < n; i += 2 * vl) {
    const svbool_t p0 = svwhilelt_b32(i, n), p1 = svwhilelt_b32(i + vl, n);
    const svfloat32_t v0 = svld1_f32(p0, x + i), v1 = svld1_f32(p1, x + i + vl);
    s0 = svmla_f32_m(p0, s0, v0, v0);
    s1 = svmla_f32_m(p1, s1, v1, v1);
  }
  return svaddv_f32(svptrue_b32(), svadd_f32_x(svptrue_b32(), s0, s1));
}

}  // namespace
}  // namespace vector_internal

using vector_internal::Clamp;
using vector_internal::Map;
using vector_internal::Map2;
using vector_internal::Sigmoid;

void tessel_f32_softmax__sve(int64_t rows, int64_t n, const float* x, float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    const float max = vector_internal::RowMax(n, xr);
    const float scale = 1.0f / vector_internal::StoreExpMinusMax(n, xr, max, yr);
    Map(n, yr, yr, [scale](svbool_t pg, svfloat32_t v) { return svmul_n_f32_x(pg, v, scale); });
  }
}

void tessel_f32_rmsnorm__sve(int64_t rows, int64_t n, const float* x, const float* gain, float eps, float* y) {
  if (n == 0) return;
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    const float scale = 1.0f / std::sqrt(vector_internal::SumOfSquares(n, xr) / static_cast<float>(n) + eps);
    if (gain) {
      Map2(n, xr, gain, yr, [scale](svbool_t pg, svfloat32_t v, svfloat32_t g) {
        return svmul_f32_x(pg, svmul_n_f32_x(pg, v, scale), g);
      });
    } else {
      Map(n, xr, yr, [scale](svbool_t pg, svfloat32_t v) { return svmul_n_f32_x(pg, v, scale); });
    }
  }
}

void tessel_f32_clamp__sve(int64_t n, const float* x, float* y, float lo, float hi) {
  Map(n, x, y, [lo, hi](svbool_t pg, svfloat32_t v) { return Clamp(pg, v, lo, hi); });
}

void tessel_f32_sigmoid__sve(int64_t n, const float* x, float* y) {
  Map(n, x, y, [](svbool_t pg, svfloat32_t v) { return Sigmoid(pg, v); });
}

void tessel_f32_silu__sve(int64_t n, const float* x, float* y) {
  Map(n, x, y, [](svbool_t pg, svfloat32_t v) { return svmul_f32_x(pg, v, Sigmoid(pg, v)); });
}

void tessel_f32_hardswish__sve(int64_t n, const float* x, float* y) {
  Map(n, x, y, [](svbool_t pg, svfloat32_t v) {
    return svmul_n_f32_x(pg, svmul_f32_x(pg, v, Clamp(pg, svadd_n_f32_x(pg, v, 3.0f), 0.0f, 6.0f)), 1.0f / 6.0f);
  });
}

void tessel_f32_vadd_minmax__sve(int64_t n, const float* a, const float* b, float* y, float lo, float hi) {
  Map2(n, a, b, y,
       [lo, hi](svbool_t pg, svfloat32_t u, svfloat32_t v) { return Clamp(pg, svadd_f32_x(pg, u, v), lo, hi); });
}

void tessel_f32_vmul_minmax__sve(int64_t n, const float* a, const float* b, float* y, float lo, float hi) {
  Map2(n, a, b, y,
       [lo, hi](svbool_t pg, svfloat32_t u, svfloat32_t v) { return Clamp(pg, svmul_f32_x(pg, u, v), lo, hi); });
}

}  // namespace tessel
