// SVE f32 depthwise 3x3 microkernels, vector-length agnostic: one vector of channels per tile (svcntw()
// of them, the last tile predicated by svwhilelt, so there is no scalar remainder) keeps its 9 taps of
// weights and its bias in registers while four output pixels per iteration sweep the row, loading the input
// columns their windows share once. The pixel kernel (image borders) reads its 9 taps through pointers.
#include <arm_sve.h>

#include "kernels/conv/internal/dwconv3x3_ukernels.h"

namespace tessel {
namespace {

// out = clamp(acc + residual) on the active channels.
inline void Store(svbool_t pg, svfloat32_t acc, const float* residual, float lo, float hi, float* out) {
  if (residual != nullptr) acc = svadd_f32_x(pg, acc, svld1_f32(pg, residual));
  svst1_f32(pg, out, svmin_n_f32_x(pg, svmax_n_f32_x(pg, acc, lo), hi));
}

// One input row's contribution to four output pixels whose windows start kStride columns apart: pixel q
// reads columns q * kStride + {0, 1, 2} of src (column j at src + j * c) with weights w0, w1, w2.
template <int kStride>
inline void RowTaps4(svbool_t pg, const float* src, int64_t c, svfloat32_t w0, svfloat32_t w1, svfloat32_t w2,
                     svfloat32_t& a0, svfloat32_t& a1, svfloat32_t& a2, svfloat32_t& a3) {
  const svfloat32_t x0 = svld1_f32(pg, src);
  const svfloat32_t x1 = svld1_f32(pg, src + c);
  const svfloat32_t x2 = svld1_f32(pg, src + 2 * c);
  const svfloat32_t x3 = svld1_f32(pg, src + 3 * c);
  const svfloat32_t x4 = svld1_f32(pg, src + 4 * c);
  a0 = svmla_f32_x(pg, a0, x0, w0);
  a0 = svmla_f32_x(pg, a0, x1, w1);
  a0 = svmla_f32_x(pg, a0, x2, w2);
  if constexpr (kStride == 1) {
    const svfloat32_t x5 = svld1_f32(pg, src + 5 * c);
    a1 = svmla_f32_x(pg, a1, x1, w0);
    a2 = svmla_f32_x(pg, a2, x2, w0);
    a3 = svmla_f32_x(pg, a3, x3, w0);
    a1 = svmla_f32_x(pg, a1, x2, w1);
    a2 = svmla_f32_x(pg, a2, x3, w1);
    a3 = svmla_f32_x(pg, a3, x4, w1);
    a1 = svmla_f32_x(pg, a1, x3, w2);
    a2 = svmla_f32_x(pg, a2, x4, w2);
    a3 = svmla_f32_x(pg, a3, x5, w2);
  } else {
    const svfloat32_t x5 = svld1_f32(pg, src + 5 * c);
    const svfloat32_t x6 = svld1_f32(pg, src + 6 * c);
    const svfloat32_t x7 = svld1_f32(pg, src + 7 * c);
    const svfloat32_t x8 = svld1_f32(pg, src + 8 * c);
    a1 = svmla_f32_x(pg, a1, x2, w0);
    a2 = svmla_f32_x(pg, a2, x4, w0);
    a3 = svmla_f32_x(pg, a3, x6, w0);
    a1 = svmla_f32_x(pg, a1, x3, w1);
    a2 = svmla_f32_x(pg, a2, x5, w1);
    a3 = svmla_f32_x(pg, a3, x7, w1);
    a1 = svmla_f32_x(pg, a1, x4, w2);
    a2 = svmla_f32_x(pg, a2, x6, w2);
    a3 = svmla_f32_x(pg, a3, x8, w2);
  }
}

// One input row's contribution to a single output pixel.
inline svfloat32_t RowTaps1(svbool_t pg, const float* src, int64_t c, svfloat32_t w0, svfloat32_t w1,
                            svfloat32_t w2, svfloat32_t a) {
  a = svmla_f32_x(pg, a, svld1_f32(pg, src), w0);
  a = svmla_f32_x(pg, a, svld1_f32(pg, src + c), w1);
  return svmla_f32_x(pg, a, svld1_f32(pg, src + 2 * c), w2);
}

template <int kStride>
void Row(const DwConv3x3Params& p, int64_t count, const float* const (&rows)[3], const float* residual, float* out) {
  const int64_t c = p.channels;
  const int64_t vl = static_cast<int64_t>(svcntw());
  const float* wt = p.weights;
  for (int64_t ch = 0; ch < c; ch += vl) {
    const svbool_t pg = svwhilelt_b32_s64(ch, c);
    const svfloat32_t w0 = svld1_f32(pg, wt + ch), w1 = svld1_f32(pg, wt + c + ch), w2 = svld1_f32(pg, wt + 2 * c + ch);
    const svfloat32_t w3 = svld1_f32(pg, wt + 3 * c + ch), w4 = svld1_f32(pg, wt + 4 * c + ch);
    const svfloat32_t w5 = svld1_f32(pg, wt + 5 * c + ch), w6 = svld1_f32(pg, wt + 6 * c + ch);
    const svfloat32_t w7 = svld1_f32(pg, wt + 7 * c + ch), w8 = svld1_f32(pg, wt + 8 * c + ch);
    const svfloat32_t bias = svld1_f32(pg, p.bias + ch);
    const float* r0 = rows[0] + ch;
    const float* r1 = rows[1] + ch;
    const float* r2 = rows[2] + ch;
    int64_t i = 0;
    for (; i + 4 <= count; i += 4) {
      svfloat32_t a0 = bias, a1 = bias, a2 = bias, a3 = bias;
      const int64_t in = i * kStride * c;
      RowTaps4<kStride>(pg, r0 + in, c, w0, w1, w2, a0, a1, a2, a3);
      RowTaps4<kStride>(pg, r1 + in, c, w3, w4, w5, a0, a1, a2, a3);
      RowTaps4<kStride>(pg, r2 + in, c, w6, w7, w8, a0, a1, a2, a3);
      const int64_t off = i * c + ch;
      const float* r = residual != nullptr ? residual + off : nullptr;
      Store(pg, a0, r, p.lo, p.hi, out + off);
      Store(pg, a1, r != nullptr ? r + c : nullptr, p.lo, p.hi, out + off + c);
      Store(pg, a2, r != nullptr ? r + 2 * c : nullptr, p.lo, p.hi, out + off + 2 * c);
      Store(pg, a3, r != nullptr ? r + 3 * c : nullptr, p.lo, p.hi, out + off + 3 * c);
    }
    for (; i < count; ++i) {
      const int64_t in = i * kStride * c;
      svfloat32_t a = RowTaps1(pg, r0 + in, c, w0, w1, w2, bias);
      a = RowTaps1(pg, r1 + in, c, w3, w4, w5, a);
      a = RowTaps1(pg, r2 + in, c, w6, w7, w8, a);
      const int64_t off = i * c + ch;
      Store(pg, a, residual != nullptr ? residual + off : nullptr, p.lo, p.hi, out + off);
    }
  }
}

}  // namespace

void tessel_f32_dwconv3x3_row__sve(const DwConv3x3Params& p, int64_t count, const float* const (&rows)[3],
                                   const float* residual, float* out) {
  if (p.stride == 1) {
    Row<1>(p, count, rows, residual, out);
  } else {
    Row<2>(p, count, rows, residual, out);
  }
}

void tessel_f32_dwconv3x3_pixel__sve(const DwConv3x3Params& p, const float* const (&taps)[9], const float* residual,
                                     float* out) {
  const int64_t c = p.channels;
  const int64_t vl = static_cast<int64_t>(svcntw());
  for (int64_t ch = 0; ch < c; ch += vl) {
    const svbool_t pg = svwhilelt_b32_s64(ch, c);
    svfloat32_t acc = svld1_f32(pg, p.bias + ch);
    for (int t = 0; t < 9; ++t) {
      acc = svmla_f32_x(pg, acc, svld1_f32(pg, taps[t] + ch), svld1_f32(pg, p.weights + t * c + ch));
    }
    Store(pg, acc, residual != nullptr ? residual + ch : nullptr, p.lo, p.hi, out + ch);
  }
}

}  // namespace tessel
