// Panel16 Q4_0 / Q8_0 kernels (gemv.h) for SVE, on int8 x in the layouts QuantizeGemvInput writes: each
// token one at a time over the panel's 16 rows. A Panel16 vector (16 rows x 4 bytes) is 64 / VL-bytes
// loads: at 256 bits two (rows 0-7, 8-15), at 512 bits and wider one (the bytes past 64 predicated off).
// x is replicated into every 128-bit segment (LD1RQB), so that SDOT by element multiplies each segment's
// 4 rows x 4 weight bytes with the same 4 x bytes, as the NEON dotprod kernel does with one q register:
// twice the work per instruction at 256 bits. Codes and scales as in gemv_gemm_neondot_panel16.cc.
// At 128 bits a vector is what NEON has: the NEON dotprod kernel runs instead, as it does for IQ4_NL.
// The group layout's symmetric 4-bit groups (Tessel's INT4) have an SVE kernel of the same shape.
#include <arm_sve.h>

#include <cstdint>
#include <cstring>

#include "kernels/gemv/internal/gemv_kernels.h"

namespace tessel {
namespace {

constexpr int kPanel = kPanel16Rows;

// Step k of a block into the int32 sums of its rows (s0: part 0, s1: part 1 of 16 / kParts rows each):
// Q4_0 nibbles (x elements 4k.. low, 16 + 4k.. high), each code ^ 8 (kPanel16Q4Flip): LSL #4 and
// AND 0xF0 make them 16 x (code - 8) as s8, so the sums are 16 times the dots (Run takes the 16 back
// with dx); or Q8_0's signed bytes (elements 4k..).
template <bool kQ4, int kParts, int kStep>
__attribute__((always_inline)) inline void Step(const uint8_t* vec, svbool_t pb, svint8_t xa, svint8_t xb,
                                                svint32_t& s0, svint32_t& s1) {
  constexpr int kPartBytes = 64 / kParts;
  for (int p = 0; p < kParts; ++p) {
    svint32_t& sum = p == 0 ? s0 : s1;
    if constexpr (kQ4) {
      const svuint8_t v = svld1_u8(pb, vec + kStep * 64 + p * kPartBytes);
      static_assert(kPanel16Q4Flip == 0x88, "aarch64 packs Q4_0 Panel16 nibbles as code ^ 8");
      const svint8_t lo = svreinterpret_s8_u8(svlsl_n_u8_x(pb, v, 4));
      const svint8_t hi = svreinterpret_s8_u8(svand_n_u8_x(pb, v, 0xF0));
      sum = svdot_lane_s32(sum, lo, xa, kStep);
      sum = svdot_lane_s32(sum, hi, xb, kStep);
    } else {
      static_assert(kPanel16Q8Flip == 0, "aarch64 packs Q8_0 Panel16 bytes signed");
      const svint8_t w = svld1_s8(pb, reinterpret_cast<const int8_t*>(vec) + kStep * 64 + p * kPartBytes);
      sum = svdot_lane_s32(sum, w, kStep < 4 ? xa : xb, kStep % 4);
    }
  }
}

// Q4_0, one block of 16 rows x 1 token at exactly 256 bits (a part is a whole vector; pg all true), in
// assembly. llvm-mca-16's neoverse-v1 model (which has two vector pipes) priced GCC's code for Step at
// 53 vector-pipe cycles a block, 9 of them MOVPRFX copies (SVE's AND and SDOT are destructive, so GCC
// copied each loaded vector and the zero it started each sum from), a DUP of dx and a scalar multiply:
// 26.8 cycles a block. Here LSL writes the low nibbles to a new register before AND masks the loaded one
// in place, the sums start from a load of zeros and dx arrives by LD1RW (both on the load pipes), and the
// 1 / 16 of the nibbles' scale waits until the panel's end (Run): 44 vector-pipe cycles (16 SDOT, 8 LSL,
// 8 AND, 2 each of FCVT and SCVTF at 2 uops, 2 FMUL, 2 FMLA), 22.3 cycles a block. SDOT by element
// takes its x from z0-z7, hence z6 and z7. It reads its inputs through the pointers and declares no
// "memory" clobber, as the dotprod tiles do (panel16_neondot_tiles.inc): nothing writes them during a call.
alignas(32) constexpr int32_t kZeros[8] = {};
__attribute__((always_inline)) inline void Q4Block256(const uint8_t* vec, const int8_t* x, const uint8_t* scales,
                                                      const float* dx, svbool_t pg, svfloat32_t& acc0,
                                                      svfloat32_t& acc1) {
  asm("ld1b {z16.b}, %[pg]/z, [%[w]]\n"
      "ld1b {z17.b}, %[pg]/z, [%[w], #1, mul vl]\n"
      "ld1rqb {z6.b}, %[pg]/z, [%[x]]\n"
      "ld1rqb {z7.b}, %[pg]/z, [%[x], #64]\n"
      "ld1w {z30.s}, %[pg]/z, [%[zero]]\n"
      "ld1w {z31.s}, %[pg]/z, [%[zero]]\n"
      "ld1b {z18.b}, %[pg]/z, [%[w], #2, mul vl]\n"
      "ld1b {z19.b}, %[pg]/z, [%[w], #3, mul vl]\n"
      "lsl z24.b, z16.b, #4\n"
      "and z16.b, z16.b, #0xf0\n"
      "lsl z25.b, z17.b, #4\n"
      "and z17.b, z17.b, #0xf0\n"
      "sdot z30.s, z24.b, z6.b[0]\n"
      "sdot z31.s, z25.b, z6.b[0]\n"
      "sdot z30.s, z16.b, z7.b[0]\n"
      "sdot z31.s, z17.b, z7.b[0]\n"
      "ld1b {z20.b}, %[pg]/z, [%[w], #4, mul vl]\n"
      "ld1b {z21.b}, %[pg]/z, [%[w], #5, mul vl]\n"
      "lsl z26.b, z18.b, #4\n"
      "and z18.b, z18.b, #0xf0\n"
      "lsl z27.b, z19.b, #4\n"
      "and z19.b, z19.b, #0xf0\n"
      "sdot z30.s, z26.b, z6.b[1]\n"
      "sdot z31.s, z27.b, z6.b[1]\n"
      "sdot z30.s, z18.b, z7.b[1]\n"
      "sdot z31.s, z19.b, z7.b[1]\n"
      "ld1b {z22.b}, %[pg]/z, [%[w], #6, mul vl]\n"
      "ld1b {z23.b}, %[pg]/z, [%[w], #7, mul vl]\n"
      "lsl z24.b, z20.b, #4\n"
      "and z20.b, z20.b, #0xf0\n"
      "lsl z25.b, z21.b, #4\n"
      "and z21.b, z21.b, #0xf0\n"
      "sdot z30.s, z24.b, z6.b[2]\n"
      "sdot z31.s, z25.b, z6.b[2]\n"
      "sdot z30.s, z20.b, z7.b[2]\n"
      "sdot z31.s, z21.b, z7.b[2]\n"
      "lsl z26.b, z22.b, #4\n"
      "and z22.b, z22.b, #0xf0\n"
      "lsl z27.b, z23.b, #4\n"
      "and z23.b, z23.b, #0xf0\n"
      "sdot z30.s, z26.b, z6.b[3]\n"
      "sdot z31.s, z27.b, z6.b[3]\n"
      "sdot z30.s, z22.b, z7.b[3]\n"
      "sdot z31.s, z23.b, z7.b[3]\n"
      "ld1h {z16.s}, %[pg]/z, [%[s]]\n"
      "ld1h {z17.s}, %[pg]/z, [%[s], #1, mul vl]\n"
      "ld1rw {z18.s}, %[pg]/z, [%[dx]]\n"
      "fcvt z16.s, %[pg]/m, z16.h\n"
      "fcvt z17.s, %[pg]/m, z17.h\n"
      "fmul z16.s, z16.s, z18.s\n"
      "fmul z17.s, z17.s, z18.s\n"
      "scvtf z30.s, %[pg]/m, z30.s\n"
      "scvtf z31.s, %[pg]/m, z31.s\n"
      "fmla %[a0].s, %[pg]/m, z30.s, z16.s\n"
      "fmla %[a1].s, %[pg]/m, z31.s, z17.s\n"
      : [a0] "+w"(acc0), [a1] "+w"(acc1)
      : [pg] "Upl"(pg), [w] "r"(vec), [x] "r"(x), [s] "r"(scales), [dx] "r"(dx), [zero] "r"(kZeros)
      : "z6", "z7", "z16", "z17", "z18", "z19", "z20", "z21", "z22", "z23", "z24", "z25", "z26", "z27", "z30",
        "z31");
}

template <bool kQ4, int kParts>
void Run(const GemmQ8Args& a, int64_t row_begin, int64_t row_end) {
  constexpr int kPartRows = kPanel / kParts;
  const int64_t nb = a.cols / kQuantBlock;
  const int64_t panel_bytes = (nb + 1) / 2 * Panel16PairBytes(kQ4);
  const auto* w = static_cast<const uint8_t*>(a.w);
  const svbool_t pb = svwhilelt_b8(0, 4 * kPartRows);   // one part's weight bytes
  const svbool_t pw = svwhilelt_b32(0, kPartRows);      // one part's rows
  const svbool_t all = svptrue_b8();
  for (int64_t r = row_begin; r < row_end; r += kPanel) {
    const uint8_t* panel = w + (r / kPanel) * panel_bytes;
    const int rows = static_cast<int>(row_end - r < kPanel ? row_end - r : kPanel);
    for (int64_t t = 0; t < a.n; ++t) {
      const int8_t* xt = a.xq + t * a.xq_stride;
      const float* dt = a.block_scale + t * a.block_stride;
      svfloat32_t acc0 = svdup_n_f32(0), acc1 = svdup_n_f32(0);
      // The assembly block (Q4_0 at 256 bits) leaves Q4_0's sums 16 times the dots until the end.
      constexpr bool kAsm = kQ4 && kParts == 2;
      for (int64_t b = 0; b < nb; ++b) {
        const BlockOffsets o = OffsetsOf<kQ4>(b);
        const uint8_t* vec = panel + o.vec;
        if constexpr (kAsm) {
          Q4Block256(vec, xt + o.x, panel + o.scales, dt + b, all, acc0, acc1);
          continue;
        }
        const svint8_t xa = svld1rq_s8(all, xt + o.x);
        const svint8_t xb = svld1rq_s8(all, xt + o.x + (kQ4 ? 64 : 16));
        svint32_t s0 = svdup_n_s32(0), s1 = s0;
        Step<kQ4, kParts, 0>(vec, pb, xa, xb, s0, s1);
        Step<kQ4, kParts, 1>(vec, pb, xa, xb, s0, s1);
        Step<kQ4, kParts, 2>(vec, pb, xa, xb, s0, s1);
        Step<kQ4, kParts, 3>(vec, pb, xa, xb, s0, s1);
        if constexpr (!kQ4) {
          Step<kQ4, kParts, 4>(vec, pb, xa, xb, s0, s1);
          Step<kQ4, kParts, 5>(vec, pb, xa, xb, s0, s1);
          Step<kQ4, kParts, 6>(vec, pb, xa, xb, s0, s1);
          Step<kQ4, kParts, 7>(vec, pb, xa, xb, s0, s1);
        }
        // The rows' fp16 scales, one per 32-bit lane, as f32; times dx.
        const auto* sc = reinterpret_cast<const uint16_t*>(panel + o.scales);
        // Q4_0's sums are 16 x the dots: scaling dx by 1 / 16, a power of two, changes no rounding.
        const float dx = kQ4 ? dt[b] * 0.0625f : dt[b];
        const svfloat32_t d0 = svmul_n_f32_x(pw, svcvt_f32_f16_x(pw, svreinterpret_f16_u32(svld1uh_u32(pw, sc))), dx);
        acc0 = svmla_f32_x(pw, acc0, svcvt_f32_s32_x(pw, s0), d0);
        if constexpr (kParts == 2) {
          const svfloat32_t d1 =
              svmul_n_f32_x(pw, svcvt_f32_f16_x(pw, svreinterpret_f16_u32(svld1uh_u32(pw, sc + kPartRows))), dx);
          acc1 = svmla_f32_x(pw, acc1, svcvt_f32_s32_x(pw, s1), d1);
        }
      }
      if constexpr (kAsm) {
        acc0 = svmul_n_f32_x(pw, acc0, 0.0625f);
        acc1 = svmul_n_f32_x(pw, acc1, 0.0625f);
      }
      float out[kPanel];
      svst1_f32(pw, out, acc0);
      if constexpr (kParts == 2) svst1_f32(pw, out + kPartRows, acc1);
      std::memcpy(a.y + t * a.ldy + r, out, sizeof(float) * rows);
    }
  }
}

// Step k of a group-layout block of 4-bit codes (Panel16GroupGeometry: unsigned codes, elements 4k.. in
// the low nibbles, 16 + 4k.. in the high ones) into the int32 sums of its rows, started from the block
// bias (-8 sum(x_q)), as the NEON dotprod kernel's GroupStep.
// `low4` holds 0x0F in every byte, opaque to the compiler: AND of two registers has a separate
// destination, where AND with an immediate overwrites its input (GCC copied each loaded vector first).
template <int kParts, int kStep>
__attribute__((always_inline)) inline void GroupStep4(const uint8_t* vec, svbool_t pb, svuint8_t low4, svint8_t xa,
                                                      svint8_t xb, svint32_t& s0, svint32_t& s1) {
  constexpr int kPartBytes = 64 / kParts;
  for (int p = 0; p < kParts; ++p) {
    svint32_t& sum = p == 0 ? s0 : s1;
    const svuint8_t v = svld1_u8(pb, vec + kStep * 64 + p * kPartBytes);
    const svint8_t lo = svreinterpret_s8_u8(svand_u8_x(svptrue_b8(), v, low4));
    const svint8_t hi = svreinterpret_s8_u8(svlsr_n_u8_x(svptrue_b8(), v, 4));
    sum = svdot_lane_s32(sum, lo, xa, kStep);
    sum = svdot_lane_s32(sum, hi, xb, kStep);
  }
}

// Symmetric 4-bit groups of kG columns (Tessel's INT4 g32 / g64 / g128), one token at a time over the
// panel's 16 rows: per 32-column block the codes' dots with x times dx, accumulated in f32 with the
// group's scale (its fp16 scales converted once per group, not per block). Each instantiation starts a
// 4 KiB page, so that its block loop never crosses one: qemu ends a translation block at a page boundary
// and the Arm lab prices the halves of a split loop as two loops (the block loop crossed one in the
// first build: 43 estimated cycles a block on the V1 model against 22.3 for the whole loop).
template <int kG, int kParts>
__attribute__((noinline, aligned(4096))) void RunGroup4(const GemmQ8Args& a, int64_t row_begin, int64_t row_end) {
  constexpr int kPartRows = kPanel / kParts;
  constexpr int kBlocksPerGroup = kG / kQuantBlock;
  constexpr int kGroupsPerUnit = Panel16GroupGeometry::kUnitCols / kG;
  const Panel16GroupGeometry geo(a.cols, kG, false, 4, false);
  const int64_t groups = a.cols / kG;
  const auto* w = static_cast<const uint8_t*>(a.w);
  const svbool_t pb = svwhilelt_b8(0, 4 * kPartRows);  // one part's weight bytes
  const svbool_t pw = svwhilelt_b32(0, kPartRows);     // one part's rows
  const svbool_t all = svptrue_b8();
  svuint8_t low4 = svdup_n_u8(0x0F);
  __asm__("" : "+w"(low4));
  for (int64_t r = row_begin; r < row_end; r += kPanel) {
    const uint8_t* panel = w + (r / kPanel) * geo.panel_bytes();
    const int rows = static_cast<int>(row_end - r < kPanel ? row_end - r : kPanel);
    for (int64_t t = 0; t < a.n; ++t) {
      const int8_t* xt = a.xq + t * a.xq_stride;
      const float* dt = a.block_scale + t * a.block_stride;
      const int32_t* bt = a.block_bias + t * a.block_stride;
      svfloat32_t acc0 = svdup_n_f32(0), acc1 = svdup_n_f32(0);
      for (int64_t gg = 0; gg < groups; ++gg) {
        const uint8_t* unit = panel + gg / kGroupsPerUnit * geo.unit_bytes;
        const auto* sc = reinterpret_cast<const uint16_t*>(unit + Panel16GroupGeometry::Scales(gg % kGroupsPerUnit));
        const svfloat32_t d0 = svcvt_f32_f16_x(pw, svreinterpret_f16_u32(svld1uh_u32(pw, sc)));
        const svfloat32_t d1 =
            kParts == 2 ? svcvt_f32_f16_x(pw, svreinterpret_f16_u32(svld1uh_u32(pw, sc + kPartRows))) : d0;
        for (int bi = 0; bi < kBlocksPerGroup; ++bi) {
          const int64_t b = gg * kBlocksPerGroup + bi;
          const uint8_t* vec = unit + geo.Vector(b % 8, 0);
          // Block b's x: elements 0..15 at 16 (b % 4) of its 128-element group, 16..31 64 bytes on.
          const int8_t* xb_ptr = xt + (b / 4) * 128 + 16 * (b % 4);
          const svint8_t xa = svld1rq_s8(all, xb_ptr);
          const svint8_t xb = svld1rq_s8(all, xb_ptr + 64);
          svint32_t s0 = svdup_n_s32(bt[b]), s1 = s0;
          GroupStep4<kParts, 0>(vec, pb, low4, xa, xb, s0, s1);
          GroupStep4<kParts, 1>(vec, pb, low4, xa, xb, s0, s1);
          GroupStep4<kParts, 2>(vec, pb, low4, xa, xb, s0, s1);
          GroupStep4<kParts, 3>(vec, pb, low4, xa, xb, s0, s1);
          const float dx = dt[b];
          acc0 = svmla_f32_x(pw, acc0, svcvt_f32_s32_x(pw, s0), svmul_n_f32_x(pw, d0, dx));
          if constexpr (kParts == 2) acc1 = svmla_f32_x(pw, acc1, svcvt_f32_s32_x(pw, s1), svmul_n_f32_x(pw, d1, dx));
        }
      }
      float out[kPanel];
      svst1_f32(pw, out, acc0);
      if constexpr (kParts == 2) svst1_f32(pw, out + kPartRows, acc1);
      std::memcpy(a.y + t * a.ldy + r, out, sizeof(float) * rows);
    }
  }
}

template <int kParts>
void RunGroup4Sizes(const GemmQ8Args& a, int64_t row_begin, int64_t row_end) {
  switch (a.group_size) {
    case 32: return RunGroup4<32, kParts>(a, row_begin, row_end);
    case 64: return RunGroup4<64, kParts>(a, row_begin, row_end);
    default: return RunGroup4<128, kParts>(a, row_begin, row_end);
  }
}

template <bool kQ4>
void RunAnyLength(const GemmQ8Args& a, int64_t row_begin, int64_t row_end) {
  // IQ4_NL (Q4_0's layout with looked-up levels) stays on the NEON dotprod kernel.
  if (kQ4 && a.nonlinear) return tessel_q4_0_panel16_q8_gemm__neondot(a, row_begin, row_end);
  const uint64_t bytes = svcntb();
  if (bytes >= 64) return Run<kQ4, 1>(a, row_begin, row_end);
  if (bytes == 32) return Run<kQ4, 2>(a, row_begin, row_end);
  // 128 bits (and, were there one, any length that does not divide 64 bytes into halves): NEON's.
  kQ4 ? tessel_q4_0_panel16_q8_gemm__neondot(a, row_begin, row_end)
      : tessel_q8_0_panel16_q8_gemm__neondot(a, row_begin, row_end);
}

}  // namespace

void tessel_q4_0_panel16_q8_gemm__sve(const GemmQ8Args& a, int64_t row_begin, int64_t row_end) {
  RunAnyLength<true>(a, row_begin, row_end);
}

void tessel_q8_0_panel16_q8_gemm__sve(const GemmQ8Args& a, int64_t row_begin, int64_t row_end) {
  RunAnyLength<false>(a, row_begin, row_end);
}

void tessel_group_panel16_q8_gemm__sve(const GemmQ8Args& a, int64_t row_begin, int64_t row_end) {
  // Symmetric 4-bit groups at 256 bits and wider; every other group type (asymmetric, 3 and 5 bits, the
  // mins of Q4_1 / Q5_1) and 128-bit vectors on the NEON dotprod kernel.
  const bool int4 = a.group_bits == 4 && !a.asymmetric && !a.group_mins && !a.kquant;
  const uint64_t bytes = svcntb();
  if (int4 && bytes >= 64) return RunGroup4Sizes<1>(a, row_begin, row_end);
  if (int4 && bytes == 32) return RunGroup4Sizes<2>(a, row_begin, row_end);
  tessel_group_panel16_q8_gemm__neondot(a, row_begin, row_end);
}

}  // namespace tessel
