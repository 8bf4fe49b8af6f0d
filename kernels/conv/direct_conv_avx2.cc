// The direct stem convolution (direct_conv.h) on AVX2 + FMA: internal/direct_conv_rows.h over 8-lane
// ymm, the output channels in groups of 16 (2 ymm) x 6 pixels, or 8 (1 ymm) x 12, 12 accumulators of
// the 16 registers.
#if defined(__x86_64__)
#include <immintrin.h>

#include <cstdint>

#include "kernels/conv/direct_conv.h"
#include "kernels/conv/internal/direct_conv_rows.h"
#include "kernels/vector/avx2_tail.h"

namespace tessel {
namespace {

struct Ymm {
  using Vec = __m256;
  static constexpr int kLanes = 8;
  static constexpr int kMaxVecs = 2;
  static constexpr int kWide(int vecs) { return vecs == 1 ? 12 : 6; }
  static Vec Load(const float* p) { return _mm256_loadu_ps(p); }
  static Vec Set1(float v) { return _mm256_set1_ps(v); }
  static Vec Zero() { return _mm256_setzero_ps(); }
  static Vec Fma(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
  static Vec Add(Vec a, Vec b) { return _mm256_add_ps(a, b); }
  static Vec Clamp(Vec v, Vec lo, Vec hi) { return _mm256_min_ps(_mm256_max_ps(v, lo), hi); }
  static Vec LoadN(const float* p, int64_t n) { return avx2_tail::LoadN(p, n); }
  static void StoreN(float* p, Vec v, int64_t n) { avx2_tail::StoreN(p, v, n); }
};

}  // namespace

void DirectConvRows__avx2(const DirectConvParams& p, const float* x, int64_t row_begin, int64_t row_end, float* strip,
                          float* y) {
  direct_conv_internal::AllRows<Ymm>(p, x, row_begin, row_end, strip, y);
}

}  // namespace tessel
#endif  // defined(__x86_64__)
