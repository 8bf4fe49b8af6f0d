// The depthwise u8 x s8 convolution microkernel on AVX-512 VNNI. Per output pixel and block of 64
// channels, four taps at a time: four 64-byte loads (one per tap row pointer), three byte/word unpack
// levels that put each channel's four tap bytes into one i32 lane (unpacks work within 128-bit lanes, so
// accumulator j holds channels 16 L + 4 j + e), and four vpdpbusd against weights packed in that order.
// The output stage is requantize.h's f32 arithmetic in vector form; the i32 -> u16 -> u8 packs, which also
// work within 128-bit lanes, undo the interleave, so the 64 bytes come out in channel order. A last block
// of at most 32 channels runs the same steps on 256-bit vectors (half the work of a masked 64-wide block).
#include <immintrin.h>

#include <cstdint>

#include "kernels/int8/qdwconv.h"
#include "kernels/int8/requantize_avx512.h"

namespace tessel {
namespace {

// The output stage for the 16 lanes at `i` of the packed constants: lo / hi are act_min and act_max less
// the zero point.
inline __m512i Requantize(__m512i acc, const PackedQDwConvWeights& w, int64_t i, __m512i y_zp, __m512 lo,
                          __m512 hi) {
  const __m512i v = _mm512_add_epi32(acc, _mm512_loadu_si512(w.bias.data() + i));
  return _mm512_add_epi32(requantize_avx512::RoundScaled(v, _mm512_loadu_ps(w.scale.data() + i), lo, hi), y_zp);
}

void Run(const uint8_t* const* indirection, int64_t pixels, const PackedQDwConvWeights& w, int32_t y_zero_point,
         int32_t act_min, int32_t act_max, uint8_t* y) {
  const __m512i y_zp = _mm512_set1_epi32(y_zero_point);
  const __m512 lo = _mm512_set1_ps(static_cast<float>(act_min - y_zero_point));
  const __m512 hi = _mm512_set1_ps(static_cast<float>(act_max - y_zero_point));
  const int64_t c = w.c, quads = w.quads;
  const int64_t full_blocks = w.blocks - (w.half_tail ? 1 : 0);
  for (int64_t p = 0; p < pixels; ++p) {
    const uint8_t* const* ind = indirection + p * quads * 4;
    uint8_t* out = y + p * c;
    for (int64_t b = 0; b < full_blocks; ++b) {
      const int64_t c0 = b * kQDwConvBlock;
      const int64_t left = c - c0;
      const __mmask64 valid = left >= 64 ? ~__mmask64{0} : (__mmask64{1} << left) - 1;
      const int8_t* wb = w.w.data() + b * quads * 256;
      __m512i acc0 = _mm512_setzero_si512(), acc1 = _mm512_setzero_si512();
      __m512i acc2 = _mm512_setzero_si512(), acc3 = _mm512_setzero_si512();
      for (int64_t g = 0; g < quads; ++g) {
        const uint8_t* const* t = ind + g * 4;
        const __m512i x0 = _mm512_maskz_loadu_epi8(valid, t[0] + c0);
        const __m512i x1 = _mm512_maskz_loadu_epi8(valid, t[1] + c0);
        const __m512i x2 = _mm512_maskz_loadu_epi8(valid, t[2] + c0);
        const __m512i x3 = _mm512_maskz_loadu_epi8(valid, t[3] + c0);
        const __m512i x01lo = _mm512_unpacklo_epi8(x0, x1), x01hi = _mm512_unpackhi_epi8(x0, x1);
        const __m512i x23lo = _mm512_unpacklo_epi8(x2, x3), x23hi = _mm512_unpackhi_epi8(x2, x3);
        const int8_t* wg = wb + g * 256;
        acc0 = _mm512_dpbusd_epi32(acc0, _mm512_unpacklo_epi16(x01lo, x23lo), _mm512_loadu_si512(wg));
        acc1 = _mm512_dpbusd_epi32(acc1, _mm512_unpackhi_epi16(x01lo, x23lo), _mm512_loadu_si512(wg + 64));
        acc2 = _mm512_dpbusd_epi32(acc2, _mm512_unpacklo_epi16(x01hi, x23hi), _mm512_loadu_si512(wg + 128));
        acc3 = _mm512_dpbusd_epi32(acc3, _mm512_unpackhi_epi16(x01hi, x23hi), _mm512_loadu_si512(wg + 192));
      }
      const int64_t i = b * kQDwConvBlock;
      const __m512i r0 = Requantize(acc0, w, i, y_zp, lo, hi);
      const __m512i r1 = Requantize(acc1, w, i + 16, y_zp, lo, hi);
      const __m512i r2 = Requantize(acc2, w, i + 32, y_zp, lo, hi);
      const __m512i r3 = Requantize(acc3, w, i + 48, y_zp, lo, hi);
      const __m512i bytes = _mm512_packus_epi16(_mm512_packus_epi32(r0, r1), _mm512_packus_epi32(r2, r3));
      _mm512_mask_storeu_epi8(out + c0, valid, bytes);
    }
    if (w.half_tail) {
      // At most 32 channels: the same on 256-bit vectors; the four accumulators join into two zmm for the
      // output stage, [acc0, acc2] and [acc1, acc3], so that the packs again yield channel order.
      const int64_t c0 = full_blocks * kQDwConvBlock;
      const __mmask32 valid = static_cast<__mmask32>((uint64_t{1} << (c - c0)) - 1);
      const int8_t* wb = w.w.data() + full_blocks * quads * 256;
      __m256i acc0 = _mm256_setzero_si256(), acc1 = _mm256_setzero_si256();
      __m256i acc2 = _mm256_setzero_si256(), acc3 = _mm256_setzero_si256();
      for (int64_t g = 0; g < quads; ++g) {
        const uint8_t* const* t = ind + g * 4;
        const __m256i x0 = _mm256_maskz_loadu_epi8(valid, t[0] + c0);
        const __m256i x1 = _mm256_maskz_loadu_epi8(valid, t[1] + c0);
        const __m256i x2 = _mm256_maskz_loadu_epi8(valid, t[2] + c0);
        const __m256i x3 = _mm256_maskz_loadu_epi8(valid, t[3] + c0);
        const __m256i x01lo = _mm256_unpacklo_epi8(x0, x1), x01hi = _mm256_unpackhi_epi8(x0, x1);
        const __m256i x23lo = _mm256_unpacklo_epi8(x2, x3), x23hi = _mm256_unpackhi_epi8(x2, x3);
        const int8_t* wg = wb + g * 128;
        acc0 = _mm256_dpbusd_epi32(acc0, _mm256_unpacklo_epi16(x01lo, x23lo), _mm256_loadu_si256((const __m256i*)wg));
        acc1 = _mm256_dpbusd_epi32(acc1, _mm256_unpackhi_epi16(x01lo, x23lo),
                                   _mm256_loadu_si256((const __m256i*)(wg + 32)));
        acc2 = _mm256_dpbusd_epi32(acc2, _mm256_unpacklo_epi16(x01hi, x23hi),
                                   _mm256_loadu_si256((const __m256i*)(wg + 64)));
        acc3 = _mm256_dpbusd_epi32(acc3, _mm256_unpackhi_epi16(x01hi, x23hi),
                                   _mm256_loadu_si256((const __m256i*)(wg + 96)));
      }
      const __m512i a02 = _mm512_inserti64x4(_mm512_castsi256_si512(acc0), acc2, 1);
      const __m512i a13 = _mm512_inserti64x4(_mm512_castsi256_si512(acc1), acc3, 1);
      const __m512i r02 = Requantize(a02, w, c0, y_zp, lo, hi);
      const __m512i r13 = Requantize(a13, w, c0 + 16, y_zp, lo, hi);
      // 128-bit lanes of the u16 pack: [acc0 acc1] of channels 0..15, then 16..31, then the same of acc2 acc3.
      const __m512i words = _mm512_packus_epi32(r02, r13);
      const __m256i bytes =
          _mm256_packus_epi16(_mm512_castsi512_si256(words), _mm512_extracti64x4_epi64(words, 1));
      _mm256_mask_storeu_epi8(out + c0, valid, bytes);
    }
  }
}

}  // namespace

void QDwConvU8S8__avx512vnni(const uint8_t* const* indirection, int64_t pixels, const PackedQDwConvWeights& w,
                             int32_t y_zero_point, int32_t act_min, int32_t act_max, uint8_t* y) {
  Run(indirection, pixels, w, y_zero_point, act_min, act_max, y);
}

}  // namespace tessel
