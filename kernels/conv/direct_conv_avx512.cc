// The direct stem convolution (direct_conv.h) on AVX-512: internal/direct_conv_rows.h over 16-lane zmm,
// 6-16 output pixels x up to 64 output channels (4 zmm) in up to 24 accumulators.
#if defined(__x86_64__)
#include <immintrin.h>

#include <cstdint>

#include "kernels/conv/direct_conv.h"
#include "kernels/conv/internal/direct_conv_rows.h"

namespace tessel {
namespace {

struct Zmm {
  using Vec = __m512;
  static constexpr int kLanes = 16;
  static constexpr int kMaxVecs = 4;
  // About 28 accumulators: MobileNetV2's 3x3/2 stem (32 output channels) takes 14 pixels, which divide
  // its 112-pixel rows.
  static constexpr int kWide(int vecs) { return vecs == 1 ? 16 : vecs == 2 ? 14 : 24 / vecs; }
  static Vec Load(const float* p) { return _mm512_loadu_ps(p); }
  static Vec Set1(float v) { return _mm512_set1_ps(v); }
  static Vec Zero() { return _mm512_setzero_ps(); }
  static Vec Fma(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
  static Vec Add(Vec a, Vec b) { return _mm512_add_ps(a, b); }
  static Vec Clamp(Vec v, Vec lo, Vec hi) { return _mm512_min_ps(_mm512_max_ps(v, lo), hi); }
  static __mmask16 Mask(int64_t n) { return n >= 16 ? 0xffff : static_cast<__mmask16>((1u << n) - 1); }
  static Vec LoadN(const float* p, int64_t n) { return _mm512_maskz_loadu_ps(Mask(n), p); }
  static void StoreN(float* p, Vec v, int64_t n) { _mm512_mask_storeu_ps(p, Mask(n), v); }
};

}  // namespace

void DirectConvRows__avx512(const DirectConvParams& p, const float* x, int64_t row_begin, int64_t row_end,
                            float* strip, float* y) {
  direct_conv_internal::AllRows<Zmm>(p, x, row_begin, row_end, strip, y);
}

}  // namespace tessel
#endif  // defined(__x86_64__)
