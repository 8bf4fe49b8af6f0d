// Partial ymm vectors for AVX2 kernels: the first n of 8 float lanes as vmaskmovps reads and writes them
// (masked-off lanes load as 0 and are never touched in memory). Include only from translation units
// compiled with AVX2.
#ifndef TESSEL_KERNELS_VECTOR_AVX2_TAIL_H_
#define TESSEL_KERNELS_VECTOR_AVX2_TAIL_H_

#include <immintrin.h>

#include <cstdint>

namespace tessel {
namespace avx2_tail {

// The first `count` lanes, as the sign bits vmaskmovps reads.
inline __m256i TailMask(int64_t count) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// The first n lanes (masked moves only for a partial vector: they are slow on AMD cores).
inline __m256 LoadN(const float* p, int64_t n) {
  return n >= 8 ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, TailMask(n));
}
inline void StoreN(float* p, __m256 v, int64_t n) {
  if (n >= 8) {
    _mm256_storeu_ps(p, v);
  } else {
    _mm256_maskstore_ps(p, TailMask(n), v);
  }
}

}  // namespace avx2_tail
}  // namespace tessel

#endif  // TESSEL_KERNELS_VECTOR_AVX2_TAIL_H_
