// AVX-512 F16 / BF16 weight rows against f32 x (decode of unquantized half-precision models). A row
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
#include "llm/matmul/row_dot.h"

namespace tessel::llm {
namespace {

template <bool kBf16>
inline __m512 Widen(__m256i h) {
  if (kBf16) return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  return _mm512_cvtph_ps(h);
}

// One row (the rows a range leaves after its streams).
template <bool kBf16>
float Row(const uint8_t* w, const float* x, int64_t cols) {
  __m512 acc = _mm512_setzero_ps();
  int64_t k = 0;
  for (; k + 16 <= cols; k += 16) {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 2 * k));
    acc = _mm512_fmadd_ps(Widen<kBf16>(h), _mm512_loadu_ps(x + k), acc);
  }
  if (k < cols) {
    const __mmask16 m = static_cast<__mmask16>((1u << (cols - k)) - 1);
    acc = _mm512_fmadd_ps(Widen<kBf16>(_mm256_maskz_loadu_epi16(m, w + 2 * k)), _mm512_maskz_loadu_ps(m, x + k), acc);
  }
  return _mm512_reduce_add_ps(acc);
}

// Bytes ahead of the current position that each stream prefetches (1 KiB and 4 KiB measured slower; the
// T0 / T1 hints slightly slower than NTA), where CpuFeatures::stream_prefetch says the prefetch pays.
constexpr int kStreamPrefetchBytes = 2048;

// Rows [s * q, (s + 1) * q) of `w` for s = 0..S-1, one row of each stream at a time; y = the dots, or
// y += them (kAccumulate: column blocks after the first).
template <bool kBf16, int S, bool kPrefetch, bool kAccumulate>
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
        const uint8_t* row = p[s] + 2 * k;
        if (kPrefetch) _mm_prefetch(reinterpret_cast<const char*>(row + kStreamPrefetchBytes), _MM_HINT_NTA);
        const __m256i h0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row));
        const __m256i h1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 32));
        a0[s] = _mm512_fmadd_ps(Widen<kBf16>(h0), x0, a0[s]);
        a1[s] = _mm512_fmadd_ps(Widen<kBf16>(h1), x1, a1[s]);
      }
    }
    for (; k < cols; k += 16) {
      const int64_t left = cols - k;
      const __mmask16 m = left >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << left) - 1);
      const __m512 xv = _mm512_maskz_loadu_ps(m, x + k);
#pragma GCC unroll 8
      for (int s = 0; s < S; ++s) {
        const __m256i h = _mm256_maskz_loadu_epi16(m, p[s] + 2 * k);
        a0[s] = _mm512_fmadd_ps(Widen<kBf16>(h), xv, a0[s]);
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

template <bool kBf16, int S, bool kAccumulate>
void RowDotRows(const WeightMatrix& w, const float* x, int64_t row_begin, int64_t row_end, float* y) {
  const size_t stride = w.row_bytes();
  int64_t r = row_begin;
  const int64_t q = (row_end - row_begin) / S;
  if (q >= 2) {
    if (GetCpuFeatures().stream_prefetch) {
      Streams<kBf16, S, true, kAccumulate>(w.data + r * stride, stride, q, x, w.cols, y);
    } else {
      Streams<kBf16, S, false, kAccumulate>(w.data + r * stride, stride, q, x, w.cols, y);
    }
    r += S * q;
  }
  for (; r < row_end; ++r) {
    const float dot = Row<kBf16>(w.data + r * stride, x, w.cols);
    y[r - row_begin] = kAccumulate ? y[r - row_begin] + dot : dot;
  }
}

// A kColumnBlocks matrix block by block: each block's rows are linear streams again, against an
// 8 KiB slice of x that stays in L1 (weight_matrix.h).
template <bool kBf16, int S>
void RowDot(const WeightMatrix& w, const float* x, int64_t row_begin, int64_t row_end, float* y) {
  if (w.layout != WeightLayout::kColumnBlocks) {
    RowDotRows<kBf16, S, false>(w, x, row_begin, row_end, y);
    return;
  }
  for (int64_t b = 0; b < w.column_blocks(); ++b) {
    const float* xb = x + b * kColumnBlockCols;
    if (b == 0) {
      RowDotRows<kBf16, S, false>(w.ColumnBlock(b), xb, row_begin, row_end, y);
    } else {
      RowDotRows<kBf16, S, true>(w.ColumnBlock(b), xb, row_begin, row_end, y);
    }
  }
}

template <bool kBf16>
void ToF32(const uint8_t* src, float* dst, int64_t n) {
  int64_t k = 0;
  for (; k + 16 <= n; k += 16) {
    _mm512_storeu_ps(dst + k, Widen<kBf16>(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 2 * k))));
  }
  if (k < n) {
    const __mmask16 m = static_cast<__mmask16>((1u << (n - k)) - 1);
    _mm512_mask_storeu_ps(dst + k, m, Widen<kBf16>(_mm256_maskz_loadu_epi16(m, src + 2 * k)));
  }
}

}  // namespace

void f16_to_f32__avx512(const uint8_t* src, float* dst, int64_t n) { ToF32<false>(src, dst, n); }
void bf16_to_f32__avx512(const uint8_t* src, float* dst, int64_t n) { ToF32<true>(src, dst, n); }

void f16_rowdot__avx512(const WeightMatrix& w, const float* x, int64_t row_begin, int64_t row_end, float* y) {
  RowDot<false, 4>(w, x, row_begin, row_end, y);
}

void bf16_rowdot__avx512(const WeightMatrix& w, const float* x, int64_t row_begin, int64_t row_end, float* y) {
  RowDot<true, 4>(w, x, row_begin, row_end, y);
}

void f16_rowdot_2streams__avx512(const WeightMatrix& w, const float* x, int64_t row_begin, int64_t row_end,
                                 float* y) {
  RowDot<false, 2>(w, x, row_begin, row_end, y);
}

void bf16_rowdot_2streams__avx512(const WeightMatrix& w, const float* x, int64_t row_begin, int64_t row_end,
                                  float* y) {
  RowDot<true, 2>(w, x, row_begin, row_end, y);
}

}  // namespace tessel::llm
