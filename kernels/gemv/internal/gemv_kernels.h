// Declarations of the GEMV kernels (GemvFn), defined in per-ISA libraries; only those for the
// target's CPU family exist in a given build. Also the scalar accessors for Int4Group scales.
#ifndef TESSEL_KERNELS_GEMV_INTERNAL_GEMV_KERNELS_H_
#define TESSEL_KERNELS_GEMV_INTERNAL_GEMV_KERNELS_H_

#include <cstdint>

#include "kernels/gemv/gemv.h"
#include "kernels/gemv/internal/quant_blocks.h"

namespace tessel {

inline float GroupScale(const GemvArgs& a, int64_t index) {
  return a.f16_scales ? HalfToFloat(static_cast<const uint16_t*>(a.scales)[index])
                      : static_cast<const float*>(a.scales)[index];
}
inline int GroupZero(const GemvArgs& a, int64_t index) { return a.zeros ? a.zeros[index] : 8; }

// Offsets of the group-wise INT4 / INT3 Panel16 layout (gemv.h), shared by the packer and the kernels.
// Q4_0 / Q8_0 Panel16 (gemv.h): 16 rows per panel; a pair of blocks is 64 bytes of scales, then K
// 64-byte vectors per block (Q4_0: K = 4, Q8_0: K = 8).
inline constexpr int kPanel16Rows = 16;
constexpr int64_t Panel16PairBytes(bool q4) { return 64 + 2 * (q4 ? 4 : 8) * 64; }
// What the Q4_0 / Q8_0 Panel16 bytes are XORed with (gemv.h). x86's int8 instructions multiply unsigned
// by signed bytes (VPDPBUSD, VPMADDUBSW): there Q8_0's bytes are stored + 128 and Q4_0's nibbles are the
// codes 0..15 (a block bias of -8 x the sum of x makes them code - 8). Arm's SDOT multiplies signed by
// signed: on aarch64 Q8_0's bytes are the weights and Q4_0's nibbles code ^ 8, the 4-bit two's complement
// of code - 8, so that a nibble moved to the top of its byte is 16 x (code - 8) and no bias is needed.
#if defined(__aarch64__)
inline constexpr uint8_t kPanel16Q4Flip = 0x88;
inline constexpr uint8_t kPanel16Q8Flip = 0;
#else
inline constexpr uint8_t kPanel16Q4Flip = 0;
inline constexpr uint8_t kPanel16Q8Flip = 0x80;
#endif

// Where block b of a Q4_0 / Q8_0 panel lies: its first weight vector and its 16 rows' scales from the
// panel's start, its x from the token's x row (Q4_0: elements 0..15 at 16 (b % 4) of its 128-element
// group, 16..31 64 bytes on; Q8_0: the block's 32 bytes in order). For b = 4q + i (i < 4) each offset
// is q's plus i's.
struct BlockOffsets {
  int64_t vec, scales, x;
};
template <bool kQ4>
constexpr BlockOffsets OffsetsOf(int64_t b) {
  return {(b / 2) * Panel16PairBytes(kQ4) + 64 + (b % 2) * (kQ4 ? 4 : 8) * 64,
          (b / 2) * Panel16PairBytes(kQ4) + 32 * (b % 2), kQ4 ? (b / 4) * 128 + 16 * (b % 4) : b * 32};
}

struct Panel16GroupGeometry {
  static constexpr int64_t kUnitCols = 256;  // 8 blocks of 32
  int64_t vectors_per_block, groups_per_unit, scale_bytes, min_bytes, zero_bytes, meta_bytes, unit_bytes, units;
  constexpr Panel16GroupGeometry(int64_t cols, int64_t group, bool asymmetric, int bits = 4, bool mins = false)
      : vectors_per_block(bits == 5 ? 5 : bits == 4 ? 4 : 3),
        groups_per_unit(kUnitCols / group),
        scale_bytes(groups_per_unit * 32),
        min_bytes(mins ? groups_per_unit * 32 : 0),
        zero_bytes(asymmetric ? (groups_per_unit * 16 + 63) / 64 * 64 : 0),
        meta_bytes(scale_bytes + min_bytes + zero_bytes),
        unit_bytes(meta_bytes + 8 * vectors_per_block * 64),
        units((cols + kUnitCols - 1) / kUnitCols) {}
  constexpr int64_t panel_bytes() const { return units * unit_bytes; }
  // Within a unit: group i's 16 fp16 scales, its 16 fp16 mins (Q4_1), its 16 zeros, and block i's
  // vector k.
  static constexpr int64_t Scales(int64_t i) { return 32 * i; }
  constexpr int64_t Mins(int64_t i) const { return scale_bytes + 32 * i; }
  constexpr int64_t Zeros(int64_t i) const { return scale_bytes + min_bytes + 16 * i; }
  constexpr int64_t Vector(int64_t i, int k) const { return meta_bytes + (vectors_per_block * i + k) * 64; }
};

// Offsets of the k-quant Panel16 layouts (gemv.h), shared by the packers and the kernels. A unit is
// one 256-column super-block of 16 rows.
struct Panel16KQuantGeometry {
  static constexpr int64_t kUnitCols = 256;
  int kquant;
  int64_t vectors_per_block, meta_bytes, unit_bytes, units;
  constexpr Panel16KQuantGeometry(int64_t cols, int kq)
      : kquant(kq),
        vectors_per_block(kq == 2 ? 2 : kq == 3 ? 3 : kq == 4 || kq == kKQuantIQ4_XS ? 4 : kq == 5 ? 5 : 6),
        meta_bytes(kq == kKQuantIQ4_XS ? 192 : 320),
        unit_bytes(meta_bytes + 8 * vectors_per_block * 64),
        units((cols + kUnitCols - 1) / kUnitCols) {}
  constexpr int64_t panel_bytes() const { return units * unit_bytes; }
  // Within a unit: the 16 rows' fp16 d, fp16 dmin (Q2_K, Q4_K, Q5_K), the bytes of sub-block j's scales
  // (Q4_K, Q5_K: 6-bit scales, j < 8, each followed by its mins; Q6_K: int8 scales, j < 16; Q3_K: int8
  // scales and Q2_K: the file's scale | min << 4 bytes, j < 16, paired per block (ScalePair); IQ4_XS:
  // int8 scales, j < 8) and mins, and block i's
  // vector k. Block by block, the kernels read the unit in address order.
  static constexpr int64_t D() { return 0; }
  static constexpr int64_t Dmin() { return 32; }
  constexpr int64_t Scales(int64_t j) const { return kquant == 4 || kquant == 5 ? 64 + 32 * j : 64 + 16 * j; }
  // Q2_K and Q3_K keep block i's two sub-block scale bytes of each row together (row r's at +2r, +2r + 1),
  // so that one 32-byte load widened to int16 holds every row's pair in its int32 lane.
  constexpr bool paired_scales() const { return kquant == 2 || kquant == 3; }
  constexpr int64_t ScalePair(int64_t i) const { return 64 + 32 * i; }
  // The byte of sub-block j's scale (Q4_K, Q5_K: 6-bit scale; else the scale byte) for row lane r.
  constexpr int64_t ScaleByte(int64_t j, int r) const {
    return paired_scales() ? ScalePair(j / 2) + 2 * r + j % 2 : Scales(j) + r;
  }
  constexpr int64_t Mins(int64_t j) const { return 80 + 32 * j; }
  constexpr int64_t Vector(int64_t i, int k) const { return meta_bytes + (vectors_per_block * i + k) * 64; }
};

#define TESSEL_DECLARE_GEMV(isa)                                                       \
  void tessel_q4_0_gemv__##isa(const GemvArgs& args, int64_t row_begin, int64_t row_end); \
  void tessel_q8_0_gemv__##isa(const GemvArgs& args, int64_t row_begin, int64_t row_end); \
  void tessel_i4g_gemv__##isa(const GemvArgs& args, int64_t row_begin, int64_t row_end);

TESSEL_DECLARE_GEMV(reference)
#if defined(__x86_64__)
TESSEL_DECLARE_GEMV(avx2)
TESSEL_DECLARE_GEMV(avx512)
#endif
#if defined(__aarch64__)
TESSEL_DECLARE_GEMV(neon)
TESSEL_DECLARE_GEMV(sve)
#endif

#undef TESSEL_DECLARE_GEMV

// int8-input kernels (gemv.h, GemvQ8Input).
void tessel_q4_0_q8_gemv__reference(const GemvArgs& args, int64_t row_begin, int64_t row_end);
void tessel_q8_0_q8_gemv__reference(const GemvArgs& args, int64_t row_begin, int64_t row_end);
void tessel_q4_0_q8_gemm__reference(const GemmQ8Args& args, int64_t row_begin, int64_t row_end);
void tessel_q8_0_q8_gemm__reference(const GemmQ8Args& args, int64_t row_begin, int64_t row_end);
// Panel16 layout (gemv.h).
void tessel_q4_0_panel16_q8_gemm__reference(const GemmQ8Args& args, int64_t row_begin, int64_t row_end);
void tessel_q8_0_panel16_q8_gemm__reference(const GemmQ8Args& args, int64_t row_begin, int64_t row_end);
void tessel_group_panel16_q8_gemm__reference(const GemmQ8Args& args, int64_t row_begin, int64_t row_end);
#if defined(__x86_64__)
void tessel_q4_0_panel16_q8_gemm__avx2(const GemmQ8Args& args, int64_t row_begin, int64_t row_end);
void tessel_q8_0_panel16_q8_gemm__avx2(const GemmQ8Args& args, int64_t row_begin, int64_t row_end);
void tessel_group_panel16_q8_gemm__avx2(const GemmQ8Args& args, int64_t row_begin, int64_t row_end);
void tessel_group_panel16_q8_gemm__avxvnni(const GemmQ8Args& args, int64_t row_begin, int64_t row_end);
// QuantizeGemvInput with AVX2 (bit-identical to the portable version).
void tessel_quantize_gemv_input__avx2(GemvFormat format, const float* x, int64_t cols, const GemvQ8Input& out);
void tessel_q4_0_panel16_q8_gemm__avx512vnni(const GemmQ8Args& args, int64_t row_begin, int64_t row_end);
void tessel_q8_0_panel16_q8_gemm__avx512vnni(const GemmQ8Args& args, int64_t row_begin, int64_t row_end);
void tessel_group_panel16_q8_gemm__avx512vnni(const GemmQ8Args& args, int64_t row_begin, int64_t row_end);
void tessel_q4_0_q8_gemv__avx512vnni(const GemvArgs& args, int64_t row_begin, int64_t row_end);
void tessel_q8_0_q8_gemv__avx512vnni(const GemvArgs& args, int64_t row_begin, int64_t row_end);
void tessel_q4_0_q8_gemm__avx512vnni(const GemmQ8Args& args, int64_t row_begin, int64_t row_end);
void tessel_q8_0_q8_gemm__avx512vnni(const GemmQ8Args& args, int64_t row_begin, int64_t row_end);
// QuantizeGemvInput with AVX-512 (bit-identical to the portable version).
void tessel_quantize_gemv_input__avx512vnni(GemvFormat format, const float* x, int64_t cols, const GemvQ8Input& out);
#endif
#if defined(__aarch64__)
// QuantizeGemvInput with NEON (bit-identical to the portable version).
void tessel_quantize_gemv_input__neon(GemvFormat format, const float* x, int64_t cols, const GemvQ8Input& out);
void tessel_q4_0_panel16_q8_gemm__neondot(const GemmQ8Args& args, int64_t row_begin, int64_t row_end);
void tessel_q8_0_panel16_q8_gemm__neondot(const GemmQ8Args& args, int64_t row_begin, int64_t row_end);
// The k-quants and IQ4_XS (dtype "kquant_panel16xq8").
void tessel_kquant_panel16_q8_gemm__neondot(const GemmQ8Args& args, int64_t row_begin, int64_t row_end);
void tessel_group_panel16_q8_gemm__neondot(const GemmQ8Args& args, int64_t row_begin, int64_t row_end);
void tessel_q4_0_panel16_q8_gemm__sve(const GemmQ8Args& args, int64_t row_begin, int64_t row_end);
void tessel_q8_0_panel16_q8_gemm__sve(const GemmQ8Args& args, int64_t row_begin, int64_t row_end);
// Symmetric 4-bit groups (Tessel's INT4) at 256 bits and wider; other group types run the NEON one.
void tessel_group_panel16_q8_gemm__sve(const GemmQ8Args& args, int64_t row_begin, int64_t row_end);
#endif

}  // namespace tessel

#endif  // TESSEL_KERNELS_GEMV_INTERNAL_GEMV_KERNELS_H_
