// AVX2 + FMA + F16C F32 / F16 / BF16 weight rows against f32 x, for x86 CPUs without AVX-512 (the scheme
// of rowdot_avx512.cc at 8 lanes): a row range read as S linear streams in lockstep, two FMA chains per
// stream, each x vector serving S rows; halves widen with vcvtph2ps (F16) or a 16-bit shift (BF16).
// Plain rows only (only the AVX-512 kernels read column blocks). Also the row-to-f32 conversions of the f32-GEMM
// prefill path.
#include <immintrin.h>

#include "kernels/cpu/cpu_features.h"
#include "kernels/rowdot/internal/row_elements.h"
#include "kernels/rowdot/rowdot.h"

namespace tessel {
namespace {

using rowdot_internal::Elem;
using rowdot_internal::kBytes;
using rowdot_internal::Scalar;

// The 8 elements at p as floats.
template <Elem E>
inline __m256 Load8(const uint8_t* p) {
  if constexpr (E == Elem::kF32) return _mm256_loadu_ps(reinterpret_cast<const float*>(p));
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  if constexpr (E == Elem::kBf16) return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  return _mm256_cvtph_ps(h);
}

inline float Sum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

template <Elem E>
float Row(const uint8_t* w, const float* x, int64_t cols) {
  __m256 acc = _mm256_setzero_ps();
  int64_t k = 0;
  for (; k + 8 <= cols; k += 8) acc = _mm256_fmadd_ps(Load8<E>(w + kBytes<E> * k), _mm256_loadu_ps(x + k), acc);
  float s = Sum(acc);
  for (; k < cols; ++k) s += Scalar<E>(w + kBytes<E> * k) * x[k];
  return s;
}

// Rows [s * q, (s + 1) * q) of `w` for s = 0..S-1, one row of each stream at a time.
template <Elem E, int S>
void Streams(const uint8_t* w, size_t stride, int64_t q, const float* x, int64_t cols, float* y) {
  const uint8_t* p[S];
  for (int s = 0; s < S; ++s) p[s] = w + s * q * stride;
  for (int64_t i = 0; i < q; ++i) {
    __m256 a0[S], a1[S];
#pragma GCC unroll 8
    for (int s = 0; s < S; ++s) a0[s] = a1[s] = _mm256_setzero_ps();
    int64_t k = 0;
    for (; k + 16 <= cols; k += 16) {
      const __m256 x0 = _mm256_loadu_ps(x + k), x1 = _mm256_loadu_ps(x + k + 8);
#pragma GCC unroll 8
      for (int s = 0; s < S; ++s) {
        const uint8_t* row = p[s] + kBytes<E> * k;
        a0[s] = _mm256_fmadd_ps(Load8<E>(row), x0, a0[s]);
        a1[s] = _mm256_fmadd_ps(Load8<E>(row + 8 * kBytes<E>), x1, a1[s]);
      }
    }
#pragma GCC unroll 8
    for (int s = 0; s < S; ++s) {
      float dot = Sum(_mm256_add_ps(a0[s], a1[s]));
      for (int64_t j = k; j < cols; ++j) dot += Scalar<E>(p[s] + kBytes<E> * j) * x[j];
      y[s * q + i] = dot;
      p[s] += stride;
    }
  }
}

template <Elem E, int S>
void RowDot(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end, float* y) {
  const size_t stride = w.row_stride;
  int64_t r = row_begin;
  const int64_t q = (row_end - row_begin) / S;
  if (q >= 2) {
    Streams<E, S>(w.data + r * stride, stride, q, x, w.cols, y);
    r += S * q;
  }
  for (; r < row_end; ++r) y[r - row_begin] = Row<E>(w.data + r * stride, x, w.cols);
}

template <Elem E>
void ToF32(const uint8_t* src, float* dst, int64_t n) {
  int64_t k = 0;
  for (; k + 8 <= n; k += 8) _mm256_storeu_ps(dst + k, Load8<E>(src + 2 * k));
  for (; k < n; ++k) dst[k] = Scalar<E>(src + 2 * k);
}

}  // namespace

void f16_to_f32__avx2(const uint8_t* src, float* dst, int64_t n) { ToF32<Elem::kF16>(src, dst, n); }
void bf16_to_f32__avx2(const uint8_t* src, float* dst, int64_t n) { ToF32<Elem::kBf16>(src, dst, n); }

void f32_rowdot__avx2(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end, float* y) {
  RowDot<Elem::kF32, 4>(w, x, row_begin, row_end, y);
}

void f16_rowdot__avx2(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end, float* y) {
  RowDot<Elem::kF16, 4>(w, x, row_begin, row_end, y);
}

void bf16_rowdot__avx2(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end, float* y) {
  RowDot<Elem::kBf16, 4>(w, x, row_begin, row_end, y);
}

void f32_rowdot_2streams__avx2(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end, float* y) {
  RowDot<Elem::kF32, 2>(w, x, row_begin, row_end, y);
}

void f16_rowdot_2streams__avx2(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end, float* y) {
  RowDot<Elem::kF16, 2>(w, x, row_begin, row_end, y);
}

void bf16_rowdot_2streams__avx2(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end,
                                float* y) {
  RowDot<Elem::kBf16, 2>(w, x, row_begin, row_end, y);
}

}  // namespace tessel
