// Depthwise u8 x s8 convolution (channels-last, one filter per channel) with the quantized operators'
// output stage, bit-exact with the reference QConv for group == C_in == C_out. The microkernel walks
// output pixels through an indirection buffer (one row pointer per kernel tap, padding taps pointing at a
// row of the input zero point) and vectorizes over 64 channels: it interleaves four taps' bytes per
// channel so that one vpdpbusd adds four taps' products per i32 lane. PackQDwConvWeights prepares the
// weights and output-stage constants once, in the order that interleaving produces.
#ifndef TESSEL_KERNELS_INT8_QDWCONV_H_
#define TESSEL_KERNELS_INT8_QDWCONV_H_

#include <cstdint>
#include <vector>

namespace tessel {

inline constexpr int kQDwConvBlock = 64;  // channels per block (4 zmm of i32)

// Channel of lane `lane` (0..15) of accumulator `acc` (0..3) in a block: the per-128-bit-lane byte
// interleave puts channels 16 L + 4 acc + e (L = lane / 4, e = lane % 4) into one accumulator.
inline constexpr int QDwConvChannel(int acc, int lane) { return 16 * (lane / 4) + 4 * acc + lane % 4; }

// Depthwise weights W [C, taps] (s8) for the microkernel: taps padded to quads * 4 (zero weights),
// channels to whole blocks. Block b, quad g: [4 acc][16 lanes][4 taps] bytes at (b * quads + g) * 256.
// The output-stage constants are [blocks][4 acc][16 lanes] in the same channel order. A last block of at
// most 32 channels (half_tail) runs on 256-bit vectors, whose accumulators hold lanes 0..7 only: its quad
// g is [4 acc][8 lanes][4 taps] at b * quads * 256 + g * 128, and its constants are [acc 0, acc 2] then
// [acc 1, acc 3], 8 lanes each (the order in which the kernel joins them into two zmm): the bias with the
// input zero point folded in (bias - x_zp * sum_t W[c, t]) and the requantization scale (RequantizeScale);
// padding channels are zero.
struct PackedQDwConvWeights {
  int64_t c = 0, taps = 0, quads = 0, blocks = 0;
  bool half_tail = false;  // the last block has at most 32 channels and the 256-bit layout
  std::vector<int8_t> w;
  std::vector<int32_t> bias;
  std::vector<float> scale;
};

// `multiplier` / `shift` have 1 or c entries; `bias` may be null.
PackedQDwConvWeights PackQDwConvWeights(const int8_t* w, int64_t c, int64_t taps, const int32_t* bias,
                                        int32_t x_zero_point, const std::vector<int64_t>& multiplier,
                                        const std::vector<int64_t>& shift);

// Y[p, :c] (c bytes apart) for p < pixels, where pixel p's tap t (t < quads * 4) reads the c channels at
// indirection[p * quads * 4 + t]. y_zero_point, then the clamp to [act_min, act_max] (within [0, 255]).
// Needs AVX-512 VNNI (see HasQGemmVnni).
void QDwConvU8S8__avx512vnni(const uint8_t* const* indirection, int64_t pixels, const PackedQDwConvWeights& w,
                             int32_t y_zero_point, int32_t act_min, int32_t act_max, uint8_t* y);

// The aarch64 NEON form, 16 channels a step. Where no channel has two taps 2j, 2j + 1 both of weight
// -128 (`pairs`), inputs are read as s8 (x ^ 0x80 = x - 128; bias += 128 * sum_t W) and each pair of
// taps is multiplied in 16 bits (SMULL, SMLAL: two products of at most 128 x 128, one of them below, fit)
// and widened into the i32 accumulators once, with s8 weights `w8` [taps][cp]. Otherwise the u8 inputs
// are widened to 16 bits and multiplied into i32 (SMLAL) by weights widened at packing, `w16` [taps][cp].
// cp is c rounded up to 16 (padding channels zero); bias (with the input zero point folded in, as above)
// and scale have cp entries.
struct PackedQDwConvNeonWeights {
  int64_t c = 0, taps = 0, cp = 0;
  bool pairs = false;
  std::vector<int8_t> w8;
  std::vector<int16_t> w16;
  std::vector<int32_t> bias;
  std::vector<float> scale;
};

PackedQDwConvNeonWeights PackQDwConvNeonWeights(const int8_t* w, int64_t c, int64_t taps, const int32_t* bias,
                                                int32_t x_zero_point, const std::vector<int64_t>& multiplier,
                                                const std::vector<int64_t>& shift);

// As QDwConvU8S8__avx512vnni, pixel p's tap t (t < taps, no padding to quads) at
// indirection[p * taps + t]. Each pointer addresses at least c bytes. aarch64 only.
void QDwConvU8S8__neon(const uint8_t* const* indirection, int64_t pixels, const PackedQDwConvNeonWeights& w,
                       int32_t y_zero_point, int32_t act_min, int32_t act_max, uint8_t* y);

// The AVX2 form (no 8-bit dot product; vpmaddubsw's pair sums saturate): taps go in pairs, the two taps'
// bytes of a channel interleaved and widened to 16 bits, so that one exact vpmaddwd adds both products
// into the channel's i32 lane (a pair sums at most 2 x 255 x 128). Weights w16 are [pairs][cp][2] int16,
// tap 2j and 2j + 1 of channel ch at (j * cp + ch) * 2 (pairs = taps rounded up to even / 2, the odd
// tap's partner weight 0); cp is c rounded up to 16. The output-stage constants are as
// PackedQDwConvWeights' (bias with the input zero point folded in, scale) in channel order, cp entries
// each.
//
// Where every channel's pairs have |w0| + |w1| <= 128 (7-bit weights, as `tessel compile` writes them for
// AVX2 hosts), `byte_pairs` is set and the weights are `w8` instead, s8 in the same [pairs][cp][2] order,
// which the kernel multiplies as bytes (vpmaddubsw, whose 16-bit pair sums cannot saturate then); bias and
// scale are then stored per 16-channel group as its 8 even channels, then its 8 odd ones (the order in
// which that kernel's accumulators hold them).
struct PackedQDwConvAvx2Weights {
  int64_t c = 0, taps = 0, pairs = 0, cp = 0;
  bool byte_pairs = false;
  std::vector<int16_t> w16;
  std::vector<int8_t> w8;
  std::vector<int32_t> bias;
  std::vector<float> scale;
  // Every channel's accumulator times its scale stays within +-2^29 (ScaledAccumulatorsFitInt32): the
  // kernel then requantizes without the float clamp and clamps with saturating packs.
  bool scaled_fits_int32 = false;
};

PackedQDwConvAvx2Weights PackQDwConvAvx2Weights(const int8_t* w, int64_t c, int64_t taps, const int32_t* bias,
                                                int32_t x_zero_point, const std::vector<int64_t>& multiplier,
                                                const std::vector<int64_t>& shift);

// As QDwConvU8S8__avx512vnni, pixel p's tap t (t < pairs * 2; the last of an odd count is padding, pointing
// at any c readable bytes) at indirection[p * pairs * 2 + t]. Each pointer addresses at least c bytes (a
// last group of fewer than 16 channels is copied, never read past c). Needs AVX2 (see HasQGemmAvx2).
void QDwConvU8S8__avx2(const uint8_t* const* indirection, int64_t pixels, const PackedQDwConvAvx2Weights& w,
                       int32_t y_zero_point, int32_t act_min, int32_t act_max, uint8_t* y);

// The SVE form with i8mm (USDOT: u8 inputs times s8 weights, four taps a 32-bit lane), any vector length:
// per output pixel and svcntb() channels, each quad of taps' input vectors is interleaved by ZIP1 / ZIP2
// on bytes then halfwords into four vectors of svcntw() channels x 4 taps, in channel order. Weights `w`
// [quads][cp][4] (taps padded to quads with zero weights, cp = c rounded up to 16); bias (input zero
// point folded in) and scale in channel order, cp entries each.
struct PackedQDwConvSveWeights {
  int64_t c = 0, taps = 0, quads = 0, cp = 0;
  std::vector<int8_t> w;
  std::vector<int32_t> bias;
  std::vector<float> scale;
};

PackedQDwConvSveWeights PackQDwConvSveWeights(const int8_t* w, int64_t c, int64_t taps, const int32_t* bias,
                                              int32_t x_zero_point, const std::vector<int64_t>& multiplier,
                                              const std::vector<int64_t>& shift);

// As QDwConvU8S8__avx512vnni: pixel p's tap t (t < quads * 4; the padding taps point at any c readable
// bytes) at indirection[p * quads * 4 + t], each pointer addressing at least c bytes (loads are
// predicated to c). Needs SVE with i8mm (HWCAP2_SVEI8MM).
void QDwConvU8S8__svei8mm(const uint8_t* const* indirection, int64_t pixels, const PackedQDwConvSveWeights& w,
                          int32_t y_zero_point, int32_t act_min, int32_t act_max, uint8_t* y);

}  // namespace tessel

#endif  // TESSEL_KERNELS_INT8_QDWCONV_H_
