// The u8 x s8 GEMM on AVX-512 VNNI: vpdpbusd accumulates four u8*s8 products per i32 lane; a 4-row x
// 32-column tile keeps 8 accumulators in registers. The output stage is requantize.h's arithmetic in
// vector form (64-bit products for the rounding doubling high multiply; truncating division emulated).
#include <immintrin.h>

#include <cstring>

#include "kernels/int8/qgemm.h"

namespace tessel {
namespace {

// SaturatingRoundingDoublingHighMul for multipliers in [0, 2^31) (never the saturating case).
__m512i RoundingDoublingHighMul(__m512i a, __m512i b) {
  const __m512i zero = _mm512_setzero_si512();
  const __m512i pos_nudge = _mm512_set1_epi64(1LL << 30);
  const __m512i neg_nudge = _mm512_set1_epi64(1 - (1LL << 30));
  const __m512i trunc = _mm512_set1_epi64((1LL << 31) - 1);
  __m512i r[2];
  for (int half = 0; half < 2; ++half) {
    const __m512i x = half == 0 ? a : _mm512_srli_epi64(a, 32);
    const __m512i y = half == 0 ? b : _mm512_srli_epi64(b, 32);
    const __m512i ab = _mm512_mul_epi32(x, y);
    const __mmask8 neg = _mm512_cmplt_epi64_mask(ab, zero);
    __m512i v = _mm512_add_epi64(ab, _mm512_mask_blend_epi64(neg, pos_nudge, neg_nudge));
    // (v) / 2^31 truncating toward zero = (v + (v < 0 ? 2^31 - 1 : 0)) >> 31.
    v = _mm512_mask_add_epi64(v, _mm512_cmplt_epi64_mask(v, zero), v, trunc);
    r[half] = _mm512_srai_epi64(v, 31);
  }
  return _mm512_mask_blend_epi32(0xAAAA, r[0], _mm512_slli_epi64(r[1], 32));
}

// RoundingDivideByPOT with a per-lane exponent in [0, 31].
__m512i RoundingDivideByPOT(__m512i x, __m512i exponent) {
  const __m512i one = _mm512_set1_epi32(1);
  const __m512i mask = _mm512_sub_epi32(_mm512_sllv_epi32(one, exponent), one);
  const __m512i remainder = _mm512_and_si512(x, mask);
  const __mmask16 neg = _mm512_cmplt_epi32_mask(x, _mm512_setzero_si512());
  const __m512i threshold = _mm512_mask_add_epi32(_mm512_srai_epi32(mask, 1), neg, _mm512_srai_epi32(mask, 1), one);
  const __m512i q = _mm512_srav_epi32(x, exponent);
  return _mm512_mask_add_epi32(q, _mm512_cmpgt_epi32_mask(remainder, threshold), q, one);
}

__m512i MultiplyByQuantizedMultiplier(__m512i x, __m512i multiplier, __m512i left, __m512i right) {
  return RoundingDivideByPOT(RoundingDoublingHighMul(_mm512_sllv_epi32(x, left), multiplier), right);
}

struct Stage {
  __m512i mult, left, right, bias;
};

Stage LoadStage(const PackedQGemmWeights& w, int64_t col) {
  const __m512i zero = _mm512_setzero_si512();
  const __m512i shift = _mm512_loadu_si512(w.shift.data() + col);
  return {_mm512_loadu_si512(w.multiplier.data() + col), _mm512_max_epi32(shift, zero),
          _mm512_max_epi32(_mm512_sub_epi32(zero, shift), zero), _mm512_loadu_si512(w.bias.data() + col)};
}

// Requantizes 16 accumulators of row `row`, columns [col, col + 16), and stores the valid ones.
void Store(__m512i acc, const Stage& s, const QGemmOutputStage& out, int64_t row, int64_t col, int64_t n, uint8_t* y,
           int64_t ldy) {
  const __mmask16 valid = col + 16 <= n ? 0xFFFF : static_cast<__mmask16>((1u << (n - col)) - 1);
  __m512i v = MultiplyByQuantizedMultiplier(_mm512_add_epi32(acc, s.bias), s.mult, s.left, s.right);
  v = _mm512_add_epi32(v, _mm512_set1_epi32(out.y_zero_point));
  if (out.residual != nullptr) {
    const __m128i r8 = _mm_maskz_loadu_epi8(valid, out.residual + row * ldy + col);
    const __m512i r = _mm512_sub_epi32(_mm512_cvtepu8_epi32(r8), _mm512_set1_epi32(out.r_zero_point));
    const int32_t sh = out.r_shift;
    v = _mm512_add_epi32(v, MultiplyByQuantizedMultiplier(r, _mm512_set1_epi32(out.r_multiplier),
                                                          _mm512_set1_epi32(sh > 0 ? sh : 0),
                                                          _mm512_set1_epi32(sh > 0 ? 0 : -sh)));
  }
  v = _mm512_min_epi32(_mm512_max_epi32(v, _mm512_set1_epi32(out.act_min)), _mm512_set1_epi32(out.act_max));
  _mm512_mask_cvtepi32_storeu_epi8(y + row * ldy + col, valid, v);
}

template <int kRows>
void Tile(const uint8_t* a, int64_t row, const PackedQGemmWeights& w, int64_t panel, const QGemmOutputStage& out,
          uint8_t* y, int64_t ldy) {
  const int64_t k4 = w.kp / 4;
  const int64_t panels = (w.n + kQGemmNr - 1) / kQGemmNr;
  const bool two = panel + 1 < panels;
  const int8_t* b0 = w.panels.data() + panel * k4 * 64;
  const int8_t* b1 = two ? b0 + k4 * 64 : b0;
  __m512i acc[kRows][2];
  for (int r = 0; r < kRows; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_si512();
  for (int64_t kk = 0; kk < k4; ++kk) {
    const __m512i w0 = _mm512_loadu_si512(b0 + kk * 64);
    const __m512i w1 = _mm512_loadu_si512(b1 + kk * 64);
    for (int r = 0; r < kRows; ++r) {
      int32_t quad;
      std::memcpy(&quad, a + (row + r) * w.kp + kk * 4, 4);
      const __m512i x = _mm512_set1_epi32(quad);
      acc[r][0] = _mm512_dpbusd_epi32(acc[r][0], x, w0);
      acc[r][1] = _mm512_dpbusd_epi32(acc[r][1], x, w1);
    }
  }
  const Stage s0 = LoadStage(w, panel * kQGemmNr);
  for (int r = 0; r < kRows; ++r) Store(acc[r][0], s0, out, row + r, panel * kQGemmNr, w.n, y, ldy);
  if (!two) return;
  const Stage s1 = LoadStage(w, (panel + 1) * kQGemmNr);
  for (int r = 0; r < kRows; ++r) Store(acc[r][1], s1, out, row + r, (panel + 1) * kQGemmNr, w.n, y, ldy);
}

}  // namespace

void QGemmU8S8__avx512vnni(const uint8_t* a, int64_t rows, const PackedQGemmWeights& w, const QGemmOutputStage& stage,
                           uint8_t* y, int64_t ldy) {
  const int64_t panels = (w.n + kQGemmNr - 1) / kQGemmNr;
  for (int64_t panel = 0; panel < panels; panel += 2) {
    int64_t row = 0;
    for (; row + 4 <= rows; row += 4) Tile<4>(a, row, w, panel, stage, y, ldy);
    for (; row < rows; ++row) Tile<1>(a, row, w, panel, stage, y, ldy);
  }
}

}  // namespace tessel
