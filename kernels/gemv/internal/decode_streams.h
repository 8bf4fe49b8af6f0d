// How the Panel16 decode kernels (one token, int8 x) stream their weights: the panels of a row range
// split into lockstep linear streams, and the software prefetch that runs ahead in each stream. Shared
// by the x86 kernels of every ISA level so that the stream count and the prefetch distance are chosen
// in one place (CpuFeatures::decode_streams, CpuFeatures::stream_prefetch).
#ifndef TESSEL_KERNELS_GEMV_INTERNAL_DECODE_STREAMS_H_
#define TESSEL_KERNELS_GEMV_INTERNAL_DECODE_STREAMS_H_

#include <immintrin.h>

#include <cstdint>
#include <type_traits>

#include "kernels/gemv/gemv.h"
#include "kernels/gemv/internal/gemv_kernels.h"

namespace tessel {

// Runs the panels of rows [row_begin, row_end) (panel_bytes apart) as max_streams (4, 2 or 1) lockstep
// streams while each has at least two panels, then fewer: panels_fn(std::integral_constant<int, S>,
// panels, y, rows) with S panels, their y and their row counts. One core keeps S linear streams of DRAM
// requests in flight, as the read-bandwidth probe does.
template <typename PanelsFn>
void StreamPanels(const GemmQ8Args& a, int64_t row_begin, int64_t row_end, int64_t panel_bytes, int max_streams,
                  PanelsFn panels_fn) {
  const auto* w = static_cast<const uint8_t*>(a.w);
  const int64_t first = row_begin / kPanel16Rows;
  const int64_t count = (row_end - row_begin + kPanel16Rows - 1) / kPanel16Rows;
  int64_t done = 0;
  auto run = [&](auto streams_tag) {
    constexpr int S = decltype(streams_tag)::value;
    const int64_t per = (count - done) / S;
    if (S > max_streams || (S > 1 && per < 2)) return;
    for (int64_t i = 0; i < per; ++i) {
      const uint8_t* panels[S];
      float* y[S];
      int rows[S];
      for (int s = 0; s < S; ++s) {
        const int64_t p = done + s * per + i;
        const int64_t r = row_begin + p * kPanel16Rows;
        panels[s] = w + (first + p) * panel_bytes;
        y[s] = a.y + r;
        rows[s] = static_cast<int>(row_end - r < kPanel16Rows ? row_end - r : kPanel16Rows);
      }
      panels_fn(streams_tag, panels, y, rows);
    }
    done += per * S;
  };
  run(std::integral_constant<int, 4>());
  run(std::integral_constant<int, 2>());
  run(std::integral_constant<int, 1>());
}

// The Panel16 pair two pairs ahead of `pair` in its stream, line by line, into L1: the Q4_0 / Q8_0
// decode kernels' software prefetch, which keeps more DRAM requests in flight per stream than the
// hardware prefetcher. A prefetch past the matrix is harmless: it never faults.
//
// Both prefetch helpers are always_inline: GCC 12 takes a function whose only effect is prefetches for
// a const function and deletes its calls (a plain inline PrefetchAhead with loops was not inlined early
// and left the AVX2 k-quant and group decode kernels of 2026-11-27 without a single prefetch).
template <int64_t kPair>
__attribute__((always_inline)) inline void PrefetchTwoPairsAhead(const uint8_t* pair) {
  const char* ahead = reinterpret_cast<const char*>(pair) + 2 * kPair;
#pragma GCC unroll 9
  for (int l = 0; l < kPair / 64; ++l) _mm_prefetch(ahead + 64 * l, _MM_HINT_T0);
}

// The same for the k-quant and group layouts (Panel16KQuantGeometry, Panel16GroupGeometry: kUnitBytes,
// kMetaBytes, kVectors per block), read block by block in 256-column units: block i's vectors ahead,
// and with block 0 that unit's scales, so that the 8 blocks' calls cover the unit once. Two units ahead
// into L1 (CpuFeatures::stream_prefetch) or, with `l2` (CpuFeatures::stream_prefetch_l2), one unit
// ahead into L2. The AVX2 / AVX-VNNI kernels use it; the AVX-512 VNNI k-quant and group kernels write
// the same lines out in their loops (through this helper their 4-stream instances kept vector
// registers on the stack: gemv_gemm_avx512vnni_spill_test).
template <int64_t kUnitBytes, int64_t kMetaBytes, int64_t kVectors, _mm_hint kHint>
__attribute__((always_inline)) inline void PrefetchUnitBlock(const char* unit, int i) {
  const char* block = unit + kMetaBytes + 64 * kVectors * i;
#pragma GCC unroll 6
  for (int k = 0; k < kVectors; ++k) _mm_prefetch(block + 64 * k, kHint);
  if (i == 0) {
#pragma GCC unroll 8
    for (int l = 0; l < kMetaBytes / 64; ++l) _mm_prefetch(unit + 64 * l, kHint);
  }
}
template <int64_t kUnitBytes, int64_t kMetaBytes, int64_t kVectors>
__attribute__((always_inline)) inline void PrefetchBlockAhead(const uint8_t* unit, int i, bool l2) {
  const char* u = reinterpret_cast<const char*>(unit);
  if (l2) {
    PrefetchUnitBlock<kUnitBytes, kMetaBytes, kVectors, _MM_HINT_T1>(u + kUnitBytes, i);
  } else {
    PrefetchUnitBlock<kUnitBytes, kMetaBytes, kVectors, _MM_HINT_T0>(u + 2 * kUnitBytes, i);
  }
}

}  // namespace tessel

#endif  // TESSEL_KERNELS_GEMV_INTERNAL_DECODE_STREAMS_H_
