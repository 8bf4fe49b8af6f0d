// AVX-512 batch-1 GEMV over 16-output panels (fc_gemv.h).
#if defined(__x86_64__)
#include <immintrin.h>

#include <cstdint>
#include <type_traits>

#include "kernels/conv/fc_gemv.h"

namespace tessel {
namespace {

// S panels in lockstep: S read streams; two accumulators per panel (even and odd k) halve the FMA
// latency chain.
template <int S>
void Panels(const float* const (&p)[S], int64_t k, const float* x, const float* bias, int64_t n,
            const int64_t (&panel)[S], float* y) {
  __m512 acc0[S], acc1[S];
#pragma GCC unroll 8
  for (int s = 0; s < S; ++s) acc0[s] = _mm512_load_ps(bias + 16 * panel[s]), acc1[s] = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 2 <= k; i += 2) {
    const __m512 x0 = _mm512_set1_ps(x[i]), x1 = _mm512_set1_ps(x[i + 1]);
#pragma GCC unroll 8
    for (int s = 0; s < S; ++s) {
      acc0[s] = _mm512_fmadd_ps(x0, _mm512_load_ps(p[s] + 16 * i), acc0[s]);
      acc1[s] = _mm512_fmadd_ps(x1, _mm512_load_ps(p[s] + 16 * i + 16), acc1[s]);
    }
  }
  if (i < k) {
    const __m512 x0 = _mm512_set1_ps(x[i]);
#pragma GCC unroll 8
    for (int s = 0; s < S; ++s) acc0[s] = _mm512_fmadd_ps(x0, _mm512_load_ps(p[s] + 16 * i), acc0[s]);
  }
#pragma GCC unroll 8
  for (int s = 0; s < S; ++s) {
    const int64_t j0 = 16 * panel[s];
    const __mmask16 mask = n - j0 >= 16 ? 0xffff : static_cast<__mmask16>((1u << (n - j0)) - 1);
    _mm512_mask_storeu_ps(y + j0, mask, _mm512_add_ps(acc0[s], acc1[s]));
  }
}

}  // namespace

void tessel_f32_gemv_panel16__avx512(const float* packed, int64_t k, const float* x, const float* bias, int64_t n,
                                     int64_t panel_begin, int64_t panel_end, float* y) {
  int64_t done = panel_begin;
  // 4 streams while each has a panel, then 2, then 1.
  auto run = [&](auto streams_tag) {
    constexpr int S = decltype(streams_tag)::value;
    const int64_t per = (panel_end - done) / S;
    for (int64_t i = 0; i < per; ++i) {
      const float* p[S];
      int64_t panel[S];
      for (int s = 0; s < S; ++s) {
        panel[s] = done + s * per + i;
        p[s] = packed + panel[s] * k * 16;
      }
      Panels<S>(p, k, x, bias, n, panel, y);
    }
    done += per * S;
  };
  run(std::integral_constant<int, 4>());
  run(std::integral_constant<int, 2>());
  run(std::integral_constant<int, 1>());
}

}  // namespace tessel
#endif  // defined(__x86_64__)
