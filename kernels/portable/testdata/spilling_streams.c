/* Counter-example for check_register_spills.py: 40 accumulators cannot all live in the 32 zmm
   registers, so GCC keeps some on the stack. */
#include <immintrin.h>

void spilling_streams(const float* const* rows, const float* x, long n, float* y) {
  __m512 acc[40];
  for (int s = 0; s < 40; ++s) acc[s] = _mm512_setzero_ps();
  for (long k = 0; k < n; k += 16) {
    const __m512 xv = _mm512_loadu_ps(x + k);
#pragma GCC unroll 40
    for (int s = 0; s < 40; ++s) acc[s] = _mm512_fmadd_ps(_mm512_loadu_ps(rows[s] + k), xv, acc[s]);
  }
  for (int s = 0; s < 40; ++s) y[s] = _mm512_reduce_add_ps(acc[s]);
}
