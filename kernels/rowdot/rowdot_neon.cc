// NEON F32 / F16 / BF16 weight rows against f32 x for aarch64 (the scheme of rowdot_avx2.cc at 4 lanes): a
// row range read as 4 linear streams in lockstep, two FMA chains per stream, each x vector serving the 4
// rows; halves widen with FCVTL (F16) or a 16-bit shift (BF16). Also the row-to-f32 conversions of the
// f32-GEMM prefill path.
#include <arm_neon.h>

#include "kernels/rowdot/internal/row_elements.h"
#include "kernels/rowdot/rowdot.h"

namespace tessel {
namespace {

using rowdot_internal::Elem;
using rowdot_internal::kBytes;
using rowdot_internal::Scalar;

// The 8 elements at p as two float vectors.
template <Elem E>
inline void Load8(const uint8_t* p, float32x4_t* lo, float32x4_t* hi) {
  if constexpr (E == Elem::kF32) {
    *lo = vld1q_f32(reinterpret_cast<const float*>(p));
    *hi = vld1q_f32(reinterpret_cast<const float*>(p) + 4);
  } else if constexpr (E == Elem::kF16) {
    const float16x8_t h = vld1q_f16(reinterpret_cast<const float16_t*>(p));
    *lo = vcvt_f32_f16(vget_low_f16(h));
    *hi = vcvt_high_f32_f16(h);
  } else {
    const uint16x8_t h = vld1q_u16(reinterpret_cast<const uint16_t*>(p));
    *lo = vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(h), 16));
    *hi = vreinterpretq_f32_u32(vshll_high_n_u16(h, 16));
  }
}

// Rows [s * q, (s + 1) * q) of `w` for s = 0..S-1, one row of each stream at a time.
template <Elem E, int S>
void Streams(const uint8_t* w, size_t stride, int64_t q, const float* x, int64_t cols, float* y) {
  const uint8_t* p[S];
  for (int s = 0; s < S; ++s) p[s] = w + s * q * stride;
  for (int64_t i = 0; i < q; ++i) {
    float32x4_t a0[S], a1[S];
#pragma GCC unroll 4
    for (int s = 0; s < S; ++s) a0[s] = a1[s] = vdupq_n_f32(0);
    int64_t k = 0;
    for (; k + 8 <= cols; k += 8) {
      const float32x4_t x0 = vld1q_f32(x + k), x1 = vld1q_f32(x + k + 4);
#pragma GCC unroll 4
      for (int s = 0; s < S; ++s) {
        float32x4_t w0, w1;
        Load8<E>(p[s] + kBytes<E> * k, &w0, &w1);
        a0[s] = vfmaq_f32(a0[s], w0, x0);
        a1[s] = vfmaq_f32(a1[s], w1, x1);
      }
    }
#pragma GCC unroll 4
    for (int s = 0; s < S; ++s) {
      float dot = vaddvq_f32(vaddq_f32(a0[s], a1[s]));
      for (int64_t j = k; j < cols; ++j) dot += Scalar<E>(p[s] + kBytes<E> * j) * x[j];
      y[s * q + i] = dot;
      p[s] += stride;
    }
  }
}

template <Elem E>
void RowDot(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end, float* y) {
  constexpr int kStreams = 4;
  const size_t stride = w.row_stride;
  const int64_t q = (row_end - row_begin) / kStreams;
  int64_t r = row_begin;
  if (q >= 1) {
    Streams<E, kStreams>(w.data + r * stride, stride, q, x, w.cols, y);
    r += kStreams * q;
  }
  if (r < row_end) Streams<E, 1>(w.data + r * stride, stride, row_end - r, x, w.cols, y + (r - row_begin));
}

template <Elem E>
void ToF32(const uint8_t* src, float* dst, int64_t n) {
  int64_t k = 0;
  for (; k + 8 <= n; k += 8) {
    float32x4_t lo, hi;
    Load8<E>(src + 2 * k, &lo, &hi);
    vst1q_f32(dst + k, lo);
    vst1q_f32(dst + k + 4, hi);
  }
  for (; k < n; ++k) dst[k] = Scalar<E>(src + 2 * k);
}

}  // namespace

void f16_to_f32__neon(const uint8_t* src, float* dst, int64_t n) { ToF32<Elem::kF16>(src, dst, n); }
void bf16_to_f32__neon(const uint8_t* src, float* dst, int64_t n) { ToF32<Elem::kBf16>(src, dst, n); }

void f32_rowdot__neon(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end, float* y) {
  RowDot<Elem::kF32>(w, x, row_begin, row_end, y);
}

void f16_rowdot__neon(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end, float* y) {
  RowDot<Elem::kF16>(w, x, row_begin, row_end, y);
}

void bf16_rowdot__neon(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end, float* y) {
  RowDot<Elem::kBf16>(w, x, row_begin, row_end, y);
}

}  // namespace tessel
