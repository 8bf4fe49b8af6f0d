// The depthwise u8 x s8 convolution microkernel on AVX2. Per output pixel and group of 16 channels (two
// groups a step where they fit, for four independent accumulator chains), taps in pairs: two 16-byte
// loads (one per tap row pointer), a byte interleave that puts each channel's two tap bytes side by side,
// a zero extension to 16 bits, and one vpmaddwd per 8 channels against weights packed as the same pairs,
// exact (no 16-bit saturation). The output stage is requantize.h's f32 arithmetic in vector form
// (requantize_avx2.h); the i32 -> u16 -> u8 packs work within 128-bit lanes, and one cross-lane permute
// restores channel order. A last group of fewer than 16 channels is copied into 16-byte buffers, so
// nothing is read or written past c.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/int8/qdwconv.h"
#include "kernels/int8/requantize_avx2.h"

namespace tessel {
namespace {

inline __m256i Load(const int32_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }

// The output stage for the 8 channels at `i`: lo / hi are act_min and act_max less the zero point.
inline __m256i Requantize(__m256i acc, const PackedQDwConvAvx2Weights& w, int64_t i, __m256i y_zp, __m256 lo,
                          __m256 hi) {
  const __m256i v = _mm256_add_epi32(acc, Load(w.bias.data() + i));
  return _mm256_add_epi32(requantize_avx2::RoundScaled(v, _mm256_loadu_ps(w.scale.data() + i), lo, hi), y_zp);
}

// Adds the products of taps a, b (16 channels at a and b) and weights `wp` (the pair's [16][2] int16) to
// acc_lo (channels 0..7) and acc_hi (8..15).
inline void MacPair(const uint8_t* a, const uint8_t* b, const int16_t* wp, __m256i& acc_lo, __m256i& acc_hi) {
  const __m128i xa = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a));
  const __m128i xb = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b));
  const __m256i lo = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(xa, xb));
  const __m256i hi = _mm256_cvtepu8_epi16(_mm_unpackhi_epi8(xa, xb));
  acc_lo = _mm256_add_epi32(acc_lo, _mm256_madd_epi16(lo, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wp))));
  acc_hi =
      _mm256_add_epi32(acc_hi, _mm256_madd_epi16(hi, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wp + 16))));
}

// Bytes of the four u8-range accumulators r0..r3 (channels 0..7, 8..15, 16..23, 24..31) in channel order:
// the packs leave [r0 0..3, r1 0..3, r2 0..3, r3 0..3 | the same of 4..7] as dwords.
inline __m256i PackBytes(__m256i r0, __m256i r1, __m256i r2, __m256i r3) {
  const __m256i bytes = _mm256_packus_epi16(_mm256_packus_epi32(r0, r1), _mm256_packus_epi32(r2, r3));
  return _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

// kGroups (1 or 2) groups of 16 channels at c0 of one pixel whose tap i reads t[i] + c0, into out.
template <int kGroups>
inline void Channels(const uint8_t* const* t, int64_t c0, const PackedQDwConvAvx2Weights& w,
                     __m256i y_zp, __m256 lo, __m256 hi, uint8_t* out) {
  const int64_t pairs = w.pairs, cp = w.cp;
  __m256i acc0 = _mm256_setzero_si256(), acc1 = _mm256_setzero_si256();
  __m256i acc2 = _mm256_setzero_si256(), acc3 = _mm256_setzero_si256();
  const int16_t* wc = w.w16.data() + c0 * 2;
  for (int64_t j = 0; j < pairs; ++j) {
    const uint8_t* a = t[2 * j] + c0;
    const uint8_t* b = t[2 * j + 1] + c0;
    const int16_t* wp = wc + j * cp * 2;
    MacPair(a, b, wp, acc0, acc1);
    if (kGroups == 2) MacPair(a + 16, b + 16, wp + 32, acc2, acc3);
  }
  const __m256i r0 = Requantize(acc0, w, c0, y_zp, lo, hi);
  const __m256i r1 = Requantize(acc1, w, c0 + 8, y_zp, lo, hi);
  if (kGroups == 2) {
    const __m256i r2 = Requantize(acc2, w, c0 + 16, y_zp, lo, hi);
    const __m256i r3 = Requantize(acc3, w, c0 + 24, y_zp, lo, hi);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), PackBytes(r0, r1, r2, r3));
  } else {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm256_castsi256_si128(PackBytes(r0, r1, r0, r1)));
  }
}

void Run(const uint8_t* const* indirection, int64_t pixels, const PackedQDwConvAvx2Weights& w, int32_t y_zero_point,
         int32_t act_min, int32_t act_max, uint8_t* y) {
  const __m256i y_zp = _mm256_set1_epi32(y_zero_point);
  const __m256 lo = _mm256_set1_ps(static_cast<float>(act_min - y_zero_point));
  const __m256 hi = _mm256_set1_ps(static_cast<float>(act_max - y_zero_point));
  const int64_t c = w.c, taps = w.pairs * 2;
  const int64_t tail = c % 16, body = c - tail;
  // One pair of taps of the last group, copied.
  alignas(16) uint8_t tail_x[2][16];
  const uint8_t* tail_ptrs[2] = {tail_x[0], tail_x[1]};
  for (int64_t p = 0; p < pixels; ++p) {
    const uint8_t* const* ind = indirection + p * taps;
    uint8_t* out = y + p * c;
    int64_t c0 = 0;
    for (; c0 + 32 <= body; c0 += 32) Channels<2>(ind, c0, w, y_zp, lo, hi, out + c0);
    if (c0 < body) {
      Channels<1>(ind, c0, w, y_zp, lo, hi, out + c0);
      c0 += 16;
    }
    if (tail != 0) {
      // Channels' steps for one group, a pair of taps at a time through the buffers.
      __m256i acc0 = _mm256_setzero_si256(), acc1 = _mm256_setzero_si256();
      const int16_t* wc = w.w16.data() + c0 * 2;
      for (int64_t j = 0; j < w.pairs; ++j) {
        std::memset(tail_x, 0, sizeof(tail_x));
        std::memcpy(tail_x[0], ind[2 * j] + c0, tail);
        std::memcpy(tail_x[1], ind[2 * j + 1] + c0, tail);
        MacPair(tail_ptrs[0], tail_ptrs[1], wc + j * w.cp * 2, acc0, acc1);
      }
      const __m256i r0 = Requantize(acc0, w, c0, y_zp, lo, hi);
      const __m256i r1 = Requantize(acc1, w, c0 + 8, y_zp, lo, hi);
      alignas(16) uint8_t bytes[16];
      _mm_store_si128(reinterpret_cast<__m128i*>(bytes), _mm256_castsi256_si128(PackBytes(r0, r1, r0, r1)));
      std::memcpy(out + c0, bytes, tail);
    }
  }
}

}  // namespace

void QDwConvU8S8__avx2(const uint8_t* const* indirection, int64_t pixels, const PackedQDwConvAvx2Weights& w,
                       int32_t y_zero_point, int32_t act_min, int32_t act_max, uint8_t* y) {
  Run(indirection, pixels, w, y_zero_point, act_min, act_max, y);
}

}  // namespace tessel
