// The depthwise u8 x s8 convolution microkernel on AVX2. Per two output pixels and group of 16 channels
// (two groups a step where they fit: eight independent accumulator chains), taps in pairs: two 16-byte
// loads (one per tap row pointer), a byte interleave that puts each channel's two tap bytes side by side,
// then either (7-bit weights) one vpmaddubsw and two widening vpmaddwd, or a zero extension to 16 bits and
// one vpmaddwd per 8 channels (ByteMac, WidenMac below), exact either way; the accumulators start at the
// bias. The output stage is requantize.h's f32 arithmetic in vector form (requantize_avx2.h), without the
// float clamp where the weights allow it (the saturating packs clamp then); the i32 -> i16 -> u8 packs
// work within 128-bit lanes, and one cross-lane permute restores their order. A last group of fewer than
// 16 channels is copied into 16-byte buffers, so nothing is read or written past c.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/int8/qdwconv.h"
#include "kernels/int8/requantize_avx2.h"

namespace tessel {
namespace {

inline __m256i Load(const int32_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }

// The output stage's constants: for the clamped form (requantize_avx2::RoundScaled), act_min and act_max
// less the zero point in f32 and the zero point in i32; for the unclamped one (kUnclamped, where the weights
// allow: PackedQDwConvAvx2Weights::scaled_fits_int32), the zero point in i16 and the bounds as bytes.
struct OutputStage {
  __m256i y_zp;
  __m256 lo, hi;
  __m256i zp16, lo8, hi8;
};

// kGroups (1 or 2) groups of 16 channels' accumulators (bias included) at c0, requantized as 16 or 32
// bytes in channel order (r2, r3: the second group's; with one group, pass r0, r1 again).
template <int kGroups, bool kUnclamped>
inline __m256i Requantize(const PackedQDwConvAvx2Weights& w, int64_t c0, const OutputStage& o, __m256i r0,
                          __m256i r1, __m256i r2, __m256i r3) {
  const float* s = w.scale.data() + c0;
  const float* s2 = kGroups == 2 ? s + 16 : s;
  if (kUnclamped) {
    using requantize_avx2::RoundScaledUnclamped;
    return requantize_avx2::PackRowsU8(
        RoundScaledUnclamped(r0, _mm256_loadu_ps(s)), RoundScaledUnclamped(r1, _mm256_loadu_ps(s + 8)),
        RoundScaledUnclamped(r2, _mm256_loadu_ps(s2)), RoundScaledUnclamped(r3, _mm256_loadu_ps(s2 + 8)),
        o.zp16, o.lo8, o.hi8);
  }
  using requantize_avx2::RoundScaled;
  r0 = _mm256_add_epi32(RoundScaled(r0, _mm256_loadu_ps(s), o.lo, o.hi), o.y_zp);
  r1 = _mm256_add_epi32(RoundScaled(r1, _mm256_loadu_ps(s + 8), o.lo, o.hi), o.y_zp);
  r2 = _mm256_add_epi32(RoundScaled(r2, _mm256_loadu_ps(s2), o.lo, o.hi), o.y_zp);
  r3 = _mm256_add_epi32(RoundScaled(r3, _mm256_loadu_ps(s2 + 8), o.lo, o.hi), o.y_zp);
  // Within [0, 255] after the clamp; the packs leave [r0 0..3, r1 0..3, r2 0..3, r3 0..3 | the same of
  // 4..7] as dwords.
  const __m256i bytes = _mm256_packus_epi16(_mm256_packus_epi32(r0, r1), _mm256_packus_epi32(r2, r3));
  return _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

// The two ways a pair of taps' 16 channels (a, b) meet the pair's weights `wp`, adding to two i32
// accumulators of 8 channels each.
//
// Widen: the taps' bytes interleaved and widened to 16 bits, one exact vpmaddwd per 8 channels against
// the pair's [16][2] int16 weights (w16): acc_lo holds channels 0..7, acc_hi 8..15. Any s8 weights; 4
// shuffles and 2 multiplies per 32 multiply-adds, bound by the shuffle pipes (llvm-mca, znver3: 4.0
// cycles).
struct WidenMac {
  using Elem = int16_t;
  static const int16_t* Weights(const PackedQDwConvAvx2Weights& w) { return w.w16.data(); }
  static void Pair(const uint8_t* a, const uint8_t* b, const int16_t* wp, __m256i& acc_lo, __m256i& acc_hi) {
    const __m128i xa = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a));
    const __m128i xb = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b));
    const __m256i lo = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(xa, xb));
    const __m256i hi = _mm256_cvtepu8_epi16(_mm_unpackhi_epi8(xa, xb));
    acc_lo = _mm256_add_epi32(acc_lo, _mm256_madd_epi16(lo, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wp))));
    acc_hi =
        _mm256_add_epi32(acc_hi, _mm256_madd_epi16(hi, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wp + 16))));
  }
  static __m256i ChannelOrder(__m256i bytes) { return bytes; }
};

// Bytes (PackedQDwConvAvx2Weights::byte_pairs, 7-bit weights): the taps' bytes interleaved into one ymm
// (two unpacks, an insert), one vpmaddubsw against the pair's [16][2] s8 weights (w8; its 16-bit pair
// sums cannot saturate: |w0| + |w1| <= 128), then vpmaddwd by (1, 0) and by (0, 1) to widen the even and
// the odd channels' sums into i32 lanes: acc_lo holds channels 0, 2, .., 14 and acc_hi 1, 3, .., 15 (bias
// and scale are packed in that order). 3 shuffles and 3 multiplies per 32 multiply-adds (llvm-mca: 2.7
// cycles); ChannelOrder puts each 16 output bytes back in channel order.
struct ByteMac {
  using Elem = int8_t;
  static const int8_t* Weights(const PackedQDwConvAvx2Weights& w) { return w.w8.data(); }
  static void Pair(const uint8_t* a, const uint8_t* b, const int8_t* wp, __m256i& acc_even, __m256i& acc_odd) {
    const __m128i xa = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a));
    const __m128i xb = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b));
    const __m256i x = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_unpacklo_epi8(xa, xb)),
                                              _mm_unpackhi_epi8(xa, xb), 1);
    const __m256i sums = _mm256_maddubs_epi16(x, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wp)));
    acc_even = _mm256_add_epi32(acc_even, _mm256_madd_epi16(sums, _mm256_set1_epi32(1)));
    acc_odd = _mm256_add_epi32(acc_odd, _mm256_madd_epi16(sums, _mm256_set1_epi32(1 << 16)));
  }
  // Each 128-bit lane's [even 8, odd 8] channel bytes interleaved back to 0..15.
  static __m256i ChannelOrder(__m256i bytes) {
    const __m256i interleave = _mm256_setr_epi8(0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15, 0, 8, 1, 9,
                                                2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15);
    return _mm256_shuffle_epi8(bytes, interleave);
  }
};

// kGroups (1 or 2) groups of 16 channels at c0 of kPixels (1 or 2) pixels: pixel x (0, 1) reads tap i at
// tx[i] + c0 and writes outx + c0 (t1, out1 unused for one pixel). Two pixels a step run about a quarter
// faster than one (MobileNetV2's 112x112x32 layer, 7-bit weights: 328-343 -> 233-253 us, Zen 3): one
// pixel's short accumulator chains and long output stage left the core waiting.
template <int kGroups, int kPixels, bool kUnclamped, class Mac>
inline void Channels(const uint8_t* const* t0, const uint8_t* const* t1, int64_t c0, const PackedQDwConvAvx2Weights& w,
                     const OutputStage& o, uint8_t* out0, uint8_t* out1) {
  const int64_t pairs = w.pairs, cp = w.cp;
  const int32_t* bias = w.bias.data() + c0;
  __m256i a0 = Load(bias), a1 = Load(bias + 8);
  __m256i a2 = kGroups == 2 ? Load(bias + 16) : a0, a3 = kGroups == 2 ? Load(bias + 24) : a1;
  __m256i b0 = a0, b1 = a1, b2 = a2, b3 = a3;
  const typename Mac::Elem* wp = Mac::Weights(w) + c0 * 2;
  for (int64_t j = 0; j < pairs; ++j, wp += cp * 2) {
    const uint8_t* x0 = t0[2 * j] + c0;
    const uint8_t* y0 = t0[2 * j + 1] + c0;
    Mac::Pair(x0, y0, wp, a0, a1);
    if (kPixels == 2) {
      const uint8_t* x1 = t1[2 * j] + c0;
      const uint8_t* y1 = t1[2 * j + 1] + c0;
      Mac::Pair(x1, y1, wp, b0, b1);
      if (kGroups == 2) Mac::Pair(x1 + 16, y1 + 16, wp + 32, b2, b3);
    }
    if (kGroups == 2) Mac::Pair(x0 + 16, y0 + 16, wp + 32, a2, a3);
  }
  if (kGroups == 2) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out0 + c0),
                        Mac::ChannelOrder(Requantize<2, kUnclamped>(w, c0, o, a0, a1, a2, a3)));
    if (kPixels == 2) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out1 + c0),
                          Mac::ChannelOrder(Requantize<2, kUnclamped>(w, c0, o, b0, b1, b2, b3)));
    }
  } else {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out0 + c0), _mm256_castsi256_si128(Mac::ChannelOrder(
                                                                Requantize<1, kUnclamped>(w, c0, o, a0, a1, a0, a1))));
    if (kPixels == 2) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out1 + c0), _mm256_castsi256_si128(Mac::ChannelOrder(
                                                                  Requantize<1, kUnclamped>(w, c0, o, b0, b1, b0, b1))));
    }
  }
}

// The last c % 16 channels of one pixel (taps t, output out), through 16-byte buffers.
template <bool kUnclamped, class Mac>
void TailChannels(const uint8_t* const* t, const PackedQDwConvAvx2Weights& w, const OutputStage& o, uint8_t* out) {
  const int64_t tail = w.c % 16, c0 = w.c - tail;
  alignas(16) uint8_t tail_x[2][16];
  const uint8_t* tail_ptrs[2] = {tail_x[0], tail_x[1]};
  __m256i acc0 = Load(w.bias.data() + c0), acc1 = Load(w.bias.data() + c0 + 8);
  const typename Mac::Elem* wc = Mac::Weights(w) + c0 * 2;
  for (int64_t j = 0; j < w.pairs; ++j) {
    std::memset(tail_x, 0, sizeof(tail_x));
    std::memcpy(tail_x[0], t[2 * j] + c0, tail);
    std::memcpy(tail_x[1], t[2 * j + 1] + c0, tail);
    Mac::Pair(tail_ptrs[0], tail_ptrs[1], wc + j * w.cp * 2, acc0, acc1);
  }
  alignas(16) uint8_t bytes[16];
  _mm_store_si128(reinterpret_cast<__m128i*>(bytes), _mm256_castsi256_si128(Mac::ChannelOrder(
                                                         Requantize<1, kUnclamped>(w, c0, o, acc0, acc1, acc0, acc1))));
  std::memcpy(out + c0, bytes, tail);
}

// kPixels (1 or 2) pixels' channels.
template <int kPixels, bool kUnclamped, class Mac>
void Pixels(const uint8_t* const* t0, const uint8_t* const* t1, const PackedQDwConvAvx2Weights& w,
            const OutputStage& o, uint8_t* out0, uint8_t* out1) {
  const int64_t body = w.c - w.c % 16;
  int64_t c0 = 0;
  for (; c0 + 32 <= body; c0 += 32) Channels<2, kPixels, kUnclamped, Mac>(t0, t1, c0, w, o, out0, out1);
  if (c0 < body) Channels<1, kPixels, kUnclamped, Mac>(t0, t1, c0, w, o, out0, out1);
  if (body == w.c) return;
  TailChannels<kUnclamped, Mac>(t0, w, o, out0);
  if (kPixels == 2) TailChannels<kUnclamped, Mac>(t1, w, o, out1);
}

template <bool kUnclamped, class Mac>
void Run(const uint8_t* const* indirection, int64_t pixels, const PackedQDwConvAvx2Weights& w, int32_t y_zero_point,
         int32_t act_min, int32_t act_max, uint8_t* y) {
  const OutputStage o = {_mm256_set1_epi32(y_zero_point),
                         _mm256_set1_ps(static_cast<float>(act_min - y_zero_point)),
                         _mm256_set1_ps(static_cast<float>(act_max - y_zero_point)),
                         _mm256_set1_epi16(static_cast<int16_t>(y_zero_point)),
                         _mm256_set1_epi8(static_cast<char>(act_min)),
                         _mm256_set1_epi8(static_cast<char>(act_max))};
  const int64_t c = w.c, taps = w.pairs * 2;
  int64_t p = 0;
  for (; p + 2 <= pixels; p += 2) {
    const uint8_t* const* t = indirection + p * taps;
    Pixels<2, kUnclamped, Mac>(t, t + taps, w, o, y + p * c, y + (p + 1) * c);
  }
  if (p < pixels) Pixels<1, kUnclamped, Mac>(indirection + p * taps, nullptr, w, o, y + p * c, nullptr);
}

}  // namespace

void QDwConvU8S8__avx2(const uint8_t* const* indirection, int64_t pixels, const PackedQDwConvAvx2Weights& w,
                       int32_t y_zero_point, int32_t act_min, int32_t act_max, uint8_t* y) {
  if (w.byte_pairs) {
    if (w.scaled_fits_int32) return Run<true, ByteMac>(indirection, pixels, w, y_zero_point, act_min, act_max, y);
    return Run<false, ByteMac>(indirection, pixels, w, y_zero_point, act_min, act_max, y);
  }
  if (w.scaled_fits_int32) return Run<true, WidenMac>(indirection, pixels, w, y_zero_point, act_min, act_max, y);
  Run<false, WidenMac>(indirection, pixels, w, y_zero_point, act_min, act_max, y);
}

}  // namespace tessel
