// Panel16 Q4_0 / Q8_0 kernels (gemv.h) for SVE, on int8 x in the layouts QuantizeGemvInput writes: each
// token one at a time over the panel's 16 rows. A Panel16 vector (16 rows x 4 bytes) is 64 / VL-bytes
// loads: at 256 bits two (rows 0-7, 8-15), at 512 bits and wider one (the bytes past 64 predicated off).
// x is replicated into every 128-bit segment (LD1RQB), so that SDOT by element multiplies each segment's
// 4 rows x 4 weight bytes with the same 4 x bytes, as the NEON dotprod kernel does with one q register:
// twice the work per instruction at 256 bits. Codes and scales as in gemv_gemm_neondot_panel16.cc.
// At 128 bits a vector is what NEON has: the NEON dotprod kernel runs instead, as it does for IQ4_NL.
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
      for (int64_t b = 0; b < nb; ++b) {
        const BlockOffsets o = OffsetsOf<kQ4>(b);
        const uint8_t* vec = panel + o.vec;
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
      float out[kPanel];
      svst1_f32(pw, out, acc0);
      if constexpr (kParts == 2) svst1_f32(pw, out + kPartRows, acc1);
      std::memcpy(a.y + t * a.ldy + r, out, sizeof(float) * rows);
    }
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

}  // namespace tessel
