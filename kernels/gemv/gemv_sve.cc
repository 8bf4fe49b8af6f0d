// SVE weight-only GEMV, vector-length agnostic: bytes are loaded straight into 32-bit lanes
// (ld1b / ld1sb with zero or sign extension) under a whilelt predicate, converted to f32 and
// accumulated by predicated FMA, so one code path serves 128..2048-bit vectors.
#include <arm_sve.h>

#include "kernels/gemv/internal/gemv_kernels.h"

namespace tessel {
namespace {

// acc += scale * sum_j (nibble_j - zero) * x_j over `bytes` bytes of nibbles (low nibbles against
// x_lo, high against x_hi).
inline svfloat32_t NibblesDot(svfloat32_t acc, const uint8_t* q, int64_t bytes, const float* x_lo,
                              const float* x_hi, int32_t zero, float scale) {
  const int64_t vl = static_cast<int64_t>(svcntw());
  for (int64_t i = 0; i < bytes; i += vl) {
    const svbool_t pg = svwhilelt_b32(i, bytes);
    const svuint32_t v = svld1ub_u32(pg, q + i);
    const svint32_t lo = svsub_n_s32_x(pg, svreinterpret_s32_u32(svand_n_u32_x(pg, v, 0xf)), zero);
    const svint32_t hi = svsub_n_s32_x(pg, svreinterpret_s32_u32(svlsr_n_u32_x(pg, v, 4)), zero);
    const svfloat32_t xs_lo = svmul_n_f32_x(pg, svld1_f32(pg, x_lo + i), scale);
    const svfloat32_t xs_hi = svmul_n_f32_x(pg, svld1_f32(pg, x_hi + i), scale);
    acc = svmla_f32_m(pg, acc, svcvt_f32_s32_x(pg, lo), xs_lo);
    acc = svmla_f32_m(pg, acc, svcvt_f32_s32_x(pg, hi), xs_hi);
  }
  return acc;
}

}  // namespace

void tessel_q4_0_gemv__sve(const GemvArgs& a, int64_t row_begin, int64_t row_end) {
  const int64_t nb = a.cols / kQuantBlock;
  const auto* blocks = static_cast<const BlockQ4_0*>(a.w);
  for (int64_t r = row_begin; r < row_end; ++r) {
    const BlockQ4_0* row = blocks + r * nb;
    svfloat32_t acc = svdup_n_f32(0.0f);
    for (int64_t b = 0; b < nb; ++b) {
      const float* x = a.x + b * kQuantBlock;
      acc = NibblesDot(acc, row[b].qs, 16, x, x + 16, 8, HalfToFloat(row[b].d));
    }
    a.y[r] = svaddv_f32(svptrue_b32(), acc);
  }
}

void tessel_q8_0_gemv__sve(const GemvArgs& a, int64_t row_begin, int64_t row_end) {
  const int64_t nb = a.cols / kQuantBlock;
  const int64_t vl = static_cast<int64_t>(svcntw());
  const auto* blocks = static_cast<const BlockQ8_0*>(a.w);
  for (int64_t r = row_begin; r < row_end; ++r) {
    const BlockQ8_0* row = blocks + r * nb;
    svfloat32_t acc = svdup_n_f32(0.0f);
    for (int64_t b = 0; b < nb; ++b) {
      const float* x = a.x + b * kQuantBlock;
      const float d = HalfToFloat(row[b].d);
      for (int64_t i = 0; i < kQuantBlock; i += vl) {
        const svbool_t pg = svwhilelt_b32(i, int64_t{kQuantBlock});
        const svfloat32_t v = svcvt_f32_s32_x(pg, svld1sb_s32(pg, row[b].qs + i));
        acc = svmla_f32_m(pg, acc, v, svmul_n_f32_x(pg, svld1_f32(pg, x + i), d));
      }
    }
    a.y[r] = svaddv_f32(svptrue_b32(), acc);
  }
}

void tessel_i4g_gemv__sve(const GemvArgs& a, int64_t row_begin, int64_t row_end) {
  const int64_t g = a.group_size;
  const int64_t ng = a.cols / g;
  const auto* q = static_cast<const uint8_t*>(a.w);
  for (int64_t r = row_begin; r < row_end; ++r) {
    svfloat32_t acc = svdup_n_f32(0.0f);
    for (int64_t gi = 0; gi < ng; ++gi) {
      const float* x = a.x + gi * g;
      acc = NibblesDot(acc, q + r * (a.cols / 2) + gi * (g / 2), g / 2, x, x + g / 2, GroupZero(a, r * ng + gi),
                       GroupScale(a, r * ng + gi));
    }
    a.y[r] = svaddv_f32(svptrue_b32(), acc);
  }
}

}  // namespace tessel
