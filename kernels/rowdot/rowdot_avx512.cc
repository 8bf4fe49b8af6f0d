// AVX-512 F32 / F16 / BF16 weight rows against f32 x (decode of unquantized models). A row
// range is read as S linear streams, one from each S-th of the range, in lockstep (as the Q4_0/Q8_0
// Panel16 kernel does), optionally prefetched 2 KiB ahead (prefetchnta, CpuFeatures::stream_prefetch);
// two FMA chains per stream hide the FMA latency and each x vector serves S rows. S = 4 or 2 as
// CpuFeatures::row_streams says. Random TinyLlama F16, 1 thread: Zen 5 19.5 -> 31.4 GB/s of weights
// with 4 streams and the prefetch; Zen 4 27.4-29.1 GB/s with 4 streams and no prefetch, 24.8-26.7
// with 2. The stream loops carry `#pragma GCC unroll`: at -O2 GCC otherwise kept the 4-stream
// accumulators in memory (a store and reload around every FMA), which made 4 streams measure slower
// than 2 on Zen 4 (22.5-25.8 GB/s).
// Halves widen with vcvtph2ps (F16) or a 16-bit shift (BF16) in registers.
// Also the row-to-f32 conversions the f32-GEMM prefill path uses.
// The portable kernels convert halves in scalar code, which runs at a fraction of memory bandwidth.
#include <immintrin.h>

#include "kernels/cpu/cpu_features.h"
#include "kernels/rowdot/internal/row_elements.h"
#include "kernels/rowdot/rowdot.h"

namespace tessel {
namespace {

using rowdot_internal::Elem;
using rowdot_internal::kBytes;

template <Elem E>
inline __m512 Widen(__m256i h) {
  if constexpr (E == Elem::kBf16) return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  return _mm512_cvtph_ps(h);
}

// The 16 elements at p as floats.
template <Elem E>
inline __m512 Load16(const uint8_t* p) {
  if constexpr (E == Elem::kF32) return _mm512_loadu_ps(p);
  return Widen<E>(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
// The same with the lanes outside m read as zero.
template <Elem E>
inline __m512 Load16(const uint8_t* p, __mmask16 m) {
  if constexpr (E == Elem::kF32) return _mm512_maskz_loadu_ps(m, p);
  return Widen<E>(_mm256_maskz_loadu_epi16(m, p));
}

// One row (the rows a range leaves after its streams).
template <Elem E>
float Row(const uint8_t* w, const float* x, int64_t cols) {
  __m512 acc = _mm512_setzero_ps();
  int64_t k = 0;
  for (; k + 16 <= cols; k += 16) acc = _mm512_fmadd_ps(Load16<E>(w + kBytes<E> * k), _mm512_loadu_ps(x + k), acc);
  if (k < cols) {
    const __mmask16 m = static_cast<__mmask16>((1u << (cols - k)) - 1);
    acc = _mm512_fmadd_ps(Load16<E>(w + kBytes<E> * k, m), _mm512_maskz_loadu_ps(m, x + k), acc);
  }
  return _mm512_reduce_add_ps(acc);
}

// Bytes ahead of the current position that each stream prefetches (1 KiB and 4 KiB measured slower; the
// T0 / T1 hints slightly slower than NTA), where CpuFeatures::stream_prefetch says the prefetch pays.
constexpr int kStreamPrefetchBytes = 2048;

// Rows [s * q, (s + 1) * q) of `w` for s = 0..S-1, one row of each stream at a time; y = the dots, or
// y += them (kAccumulate: column blocks after the first).
template <Elem E, int S, bool kPrefetch, bool kAccumulate>
void Streams(const uint8_t* w, size_t stride, int64_t q, const float* x, int64_t cols, float* y) {
  const uint8_t* p[S];
  for (int s = 0; s < S; ++s) p[s] = w + s * q * stride;
  for (int64_t i = 0; i < q; ++i) {
    __m512 a0[S], a1[S];
#pragma GCC unroll 8
    for (int s = 0; s < S; ++s) a0[s] = a1[s] = _mm512_setzero_ps();
    int64_t k = 0;
    for (; k + 32 <= cols; k += 32) {
      const __m512 x0 = _mm512_loadu_ps(x + k), x1 = _mm512_loadu_ps(x + k + 16);
#pragma GCC unroll 8
      for (int s = 0; s < S; ++s) {
        const uint8_t* row = p[s] + kBytes<E> * k;
        if (kPrefetch) _mm_prefetch(reinterpret_cast<const char*>(row + kStreamPrefetchBytes), _MM_HINT_NTA);
        a0[s] = _mm512_fmadd_ps(Load16<E>(row), x0, a0[s]);
        a1[s] = _mm512_fmadd_ps(Load16<E>(row + 16 * kBytes<E>), x1, a1[s]);
      }
    }
    for (; k < cols; k += 16) {
      const int64_t left = cols - k;
      const __mmask16 m = left >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << left) - 1);
      const __m512 xv = _mm512_maskz_loadu_ps(m, x + k);
#pragma GCC unroll 8
      for (int s = 0; s < S; ++s) {
        a0[s] = _mm512_fmadd_ps(Load16<E>(p[s] + kBytes<E> * k, m), xv, a0[s]);
      }
    }
#pragma GCC unroll 8
    for (int s = 0; s < S; ++s) {
      const float dot = _mm512_reduce_add_ps(_mm512_add_ps(a0[s], a1[s]));
      y[s * q + i] = kAccumulate ? y[s * q + i] + dot : dot;
      p[s] += stride;
    }
  }
}

// Rows [row_begin, row_end) of a row-major matrix at `data`, `stride` bytes apart.
template <Elem E, int S, bool kAccumulate>
void RowDotRows(const uint8_t* data, size_t stride, int64_t cols, const float* x, int64_t row_begin, int64_t row_end,
                float* y) {
  int64_t r = row_begin;
  const int64_t q = (row_end - row_begin) / S;
  if (q >= 2) {
    if (GetCpuFeatures().stream_prefetch) {
      Streams<E, S, true, kAccumulate>(data + r * stride, stride, q, x, cols, y);
    } else {
      Streams<E, S, false, kAccumulate>(data + r * stride, stride, q, x, cols, y);
    }
    r += S * q;
  }
  for (; r < row_end; ++r) {
    const float dot = Row<E>(data + r * stride, x, cols);
    y[r - row_begin] = kAccumulate ? y[r - row_begin] + dot : dot;
  }
}

// A column-block matrix block by block: each block's rows are linear streams again, against an
// 8 KiB slice of x that stays in L1.
template <Elem E, int S>
void RowDot(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end, float* y) {
  if (!w.column_blocks) {
    RowDotRows<E, S, false>(w.data, w.row_stride, w.cols, x, row_begin, row_end, y);
    return;
  }
  for (int64_t c0 = 0; c0 < w.cols; c0 += kRowDotColumnBlockCols) {
    const int64_t width = w.cols - c0 < kRowDotColumnBlockCols ? w.cols - c0 : kRowDotColumnBlockCols;
    const uint8_t* block = w.data + static_cast<size_t>(w.rows) * kBytes<E> * c0;
    const size_t stride = kBytes<E> * width;
    if (c0 == 0) {
      RowDotRows<E, S, false>(block, stride, width, x + c0, row_begin, row_end, y);
    } else {
      RowDotRows<E, S, true>(block, stride, width, x + c0, row_begin, row_end, y);
    }
  }
}

template <Elem E>
void ToF32(const uint8_t* src, float* dst, int64_t n) {
  int64_t k = 0;
  for (; k + 16 <= n; k += 16) _mm512_storeu_ps(dst + k, Load16<E>(src + 2 * k));
  if (k < n) {
    const __mmask16 m = static_cast<__mmask16>((1u << (n - k)) - 1);
    _mm512_mask_storeu_ps(dst + k, m, Load16<E>(src + 2 * k, m));
  }
}

}  // namespace

void f16_to_f32__avx512(const uint8_t* src, float* dst, int64_t n) { ToF32<Elem::kF16>(src, dst, n); }
void bf16_to_f32__avx512(const uint8_t* src, float* dst, int64_t n) { ToF32<Elem::kBf16>(src, dst, n); }

void f32_rowdot__avx512(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end, float* y) {
  RowDot<Elem::kF32, 4>(w, x, row_begin, row_end, y);
}

void f16_rowdot__avx512(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end, float* y) {
  RowDot<Elem::kF16, 4>(w, x, row_begin, row_end, y);
}

void bf16_rowdot__avx512(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end, float* y) {
  RowDot<Elem::kBf16, 4>(w, x, row_begin, row_end, y);
}

void f32_rowdot_2streams__avx512(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end,
                                 float* y) {
  RowDot<Elem::kF32, 2>(w, x, row_begin, row_end, y);
}

void f16_rowdot_2streams__avx512(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end,
                                 float* y) {
  RowDot<Elem::kF16, 2>(w, x, row_begin, row_end, y);
}

void bf16_rowdot_2streams__avx512(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end,
                                  float* y) {
  RowDot<Elem::kBf16, 2>(w, x, row_begin, row_end, y);
}

}  // namespace tessel
