// The ggml type table (ids, block sizes from gguf-py's GGML_QUANT_SIZES) and reference
// (de)quantization.
#include "llm/gguf/ggml_types.h"

#include <cmath>
#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "support/fp16.h"

namespace tessel::llm {
namespace {

constexpr GgmlTypeInfo kTypes[] = {
    {0, "F32", 1, 4, true},         {1, "F16", 1, 2, true},         {2, "Q4_0", 32, 18, true},
    {3, "Q4_1", 32, 20, true},      {6, "Q5_0", 32, 22, true},      {7, "Q5_1", 32, 24, true},
    {8, "Q8_0", 32, 34, true},      {9, "Q8_1", 32, 36, false},     {10, "Q2_K", 256, 84, true},
    {11, "Q3_K", 256, 110, true},  {12, "Q4_K", 256, 144, true},   {13, "Q5_K", 256, 176, true},
    {14, "Q6_K", 256, 210, true},  {15, "Q8_K", 256, 292, false},  {16, "IQ2_XXS", 256, 66, false},
    {17, "IQ2_XS", 256, 74, false}, {18, "IQ3_XXS", 256, 98, false}, {19, "IQ1_S", 256, 50, false},
    {20, "IQ4_NL", 32, 18, true},  {21, "IQ3_S", 256, 110, false}, {22, "IQ2_S", 256, 82, false},
    {23, "IQ4_XS", 256, 136, true}, {24, "I8", 1, 1, false},       {25, "I16", 1, 2, false},
    {26, "I32", 1, 4, false},       {27, "I64", 1, 8, false},       {28, "F64", 1, 8, false},
    {29, "IQ1_M", 256, 56, false},  {30, "BF16", 1, 2, true},       {34, "TQ1_0", 256, 54, false},
    {35, "TQ2_0", 256, 66, false},
    // Tessel group-wise: G elements take G * bits / 8 code bytes, a half scale and (asymmetric) a zero
    // byte plus a padding byte.
    {100, "TESSEL_I4G32", 32, 18, true},     {101, "TESSEL_I4G32_A", 32, 20, true},
    {102, "TESSEL_I4G64", 64, 34, true},     {103, "TESSEL_I4G64_A", 64, 36, true},
    {104, "TESSEL_I4G128", 128, 66, true},   {105, "TESSEL_I4G128_A", 128, 68, true},
    {106, "TESSEL_I3G32", 32, 14, true},     {107, "TESSEL_I3G32_A", 32, 16, true},
    {108, "TESSEL_I3G64", 64, 26, true},     {109, "TESSEL_I3G64_A", 64, 28, true},
    {110, "TESSEL_I3G128", 128, 50, true},   {111, "TESSEL_I3G128_A", 128, 52, true},
};

constexpr uint32_t kFirstTesselGroupId = 100;
constexpr uint32_t kLastTesselGroupId = 111;

// Nearest code, ties away from zero like ggml's roundf; clamped to the format's range.
int RoundCode(float v, int max_code) {
  const int q = static_cast<int>(std::round(v));
  return std::min(max_code, std::max(0, q));
}

void QuantizeTesselGroupRow(GgmlType t, const TesselGroupFormat& f, const float* x, void* dst, int64_t n) {
  const int64_t ng = n / f.group;
  std::vector<uint8_t> codes(n), zeros(ng);
  std::vector<float> scales(ng);
  for (int64_t g = 0; g < ng; ++g) {
    const float* xg = x + g * f.group;
    float lo = 0.0f, hi = 0.0f;
    for (int j = 0; j < f.group; ++j) {
      lo = std::fmin(lo, xg[j]);
      hi = std::fmax(hi, xg[j]);
    }
    float scale;
    int zero;
    if (f.asymmetric) {
      scale = HalfToFloat(FloatToHalf((hi - lo) / f.max_code()));
      zero = scale != 0.0f ? RoundCode(-lo / scale, f.max_code()) : 0;
    } else {
      scale = HalfToFloat(FloatToHalf(std::fmax(hi, -lo) / (f.zero_point() - 0.5f)));
      zero = f.zero_point();
    }
    const float inv = scale != 0.0f ? 1.0f / scale : 0.0f;
    for (int j = 0; j < f.group; ++j) codes[g * f.group + j] = RoundCode(xg[j] * inv + zero, f.max_code());
    scales[g] = scale;
    zeros[g] = static_cast<uint8_t>(zero);
  }
  PackTesselGroupRow(t, codes.data(), scales.data(), zeros.data(), n, dst);
}

int NearestInt(float v) { return static_cast<int>(std::nearbyint(v)); }

// --- k-quants -------------------------------------------------------------------------------------

// The element of x[n] with the largest magnitude, sign kept (the first of equal ones): ggml's choice
// for symmetric scales (Q4_0, Q5_0), which maps it to the most negative code.
float SignedAbsMax(const float* x, int n) {
  float amax = 0, max = 0;
  for (int j = 0; j < n; ++j) {
    if (amax < std::fabs(x[j])) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  return max;
}

// The k-quants follow ggml's reference quantizers (quantize_row_q{2..6}_K_ref, which llama.cpp's
// quantize runs without an importance matrix) operation for operation, so that the files are ggml's
// byte for byte (ggml_reference_test checks this against ggml's own library).

constexpr float kGroupMaxEps = 1e-15f;  // ggml's GROUP_MAX_EPS: blocks below it are all zero

// A symmetric scale for x[n] with codes -nmax .. nmax - 1 (stored as code + nmax in L), weighted by qw
// (null: x^2): the least-squares scale from the element of largest magnitude on -nmax, then from 18
// nearby starting points (-(nmax + 0.1 k) / max, k = -9 .. 9), keeping the best fit (ggml's
// make_qx_quants with rmse_type 1). Q6_K; with an importance matrix Q4_0, Q5_0, Q3_K.
float SymmetricScaleSearch(const float* x, int n, int nmax, int8_t* L, const float* qw = nullptr) {
  const float max = SignedAbsMax(x, n);
  if (std::fabs(max) < kGroupMaxEps) {
    std::fill(L, L + n, 0);
    return 0;
  }
  auto fit = [&](float iscale, float* sumlx, float* suml2, bool store) {
    *sumlx = *suml2 = 0;
    for (int i = 0; i < n; ++i) {
      const int l = std::clamp(NearestInt(iscale * x[i]), -nmax, nmax - 1);
      if (store) L[i] = static_cast<int8_t>(l + nmax);
      const float w = qw != nullptr ? qw[i] : x[i] * x[i];
      *sumlx += w * x[i] * l;
      *suml2 += w * l * l;
    }
  };
  float sumlx, suml2;
  fit(-nmax / max, &sumlx, &suml2, true);
  float scale = suml2 != 0 ? sumlx / suml2 : 0.0f;
  float best = scale * sumlx;
  for (int k = -9; k <= 9; ++k) {
    if (k == 0) continue;
    const float iscale = -(nmax + 0.1f * k) / max;
    fit(iscale, &sumlx, &suml2, false);
    if (suml2 > 0 && sumlx * sumlx > best * suml2) {
      fit(iscale, &sumlx, &suml2, true);
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

// Q3_K's symmetric scale for x[n] (codes -nmax .. nmax - 1, stored + nmax): from the element of largest
// magnitude on -nmax, up to 5 passes moving single codes while the x^2-weighted fit improves (ggml's
// make_q3_quants with do_rmse).
float Q3ScaleSearch(const float* x, int n, int nmax, int8_t* L) {
  const float max = SignedAbsMax(x, n);
  if (std::fabs(max) < kGroupMaxEps) {
    std::fill(L, L + n, 0);
    return 0;
  }
  const float iscale = -nmax / max;
  float sumlx = 0, suml2 = 0;
  for (int i = 0; i < n; ++i) {
    L[i] = static_cast<int8_t>(std::clamp(NearestInt(iscale * x[i]), -nmax, nmax - 1));
    const float w = x[i] * x[i];
    sumlx += w * x[i] * L[i];
    suml2 += w * L[i] * L[i];
  }
  for (int pass = 0; pass < 5; ++pass) {
    int changed = 0;
    for (int i = 0; i < n; ++i) {
      const float w = x[i] * x[i];
      float slx = sumlx - w * x[i] * L[i];
      if (slx <= 0) continue;
      float sl2 = suml2 - w * L[i] * L[i];
      const int l = std::clamp(NearestInt(x[i] * sl2 / slx), -nmax, nmax - 1);
      if (l == L[i]) continue;
      slx += w * x[i] * l;
      sl2 += w * l * l;
      if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
        L[i] = static_cast<int8_t>(l);
        sumlx = slx;
        suml2 = sl2;
        ++changed;
      }
    }
    if (changed == 0) break;
  }
  for (int i = 0; i < n; ++i) L[i] = static_cast<int8_t>(L[i] + nmax);
  return sumlx / suml2;
}

// A scale and min for x[n] with codes 0 .. nmax (value = scale x code - min, min >= 0 covering negative
// x): the range [min(0, min x), max x] first, then inverse scales (nmax + rmin + rdelta k) / range for
// k = 0 .. nstep, each refit by weighted least squares; the lowest weighted squared (use_abs: absolute)
// error wins (ggml's make_qkx2_quants). Returns the scale; *min_out = -min.
float ScaleMinSearch(const float* x, const float* weights, int n, int nmax, float rmin, float rdelta, int nstep,
                     bool use_abs, uint8_t* L, float* min_out) {
  float min = x[0], max = x[0];
  float sum_w = weights[0];
  float sum_x = sum_w * x[0];
  for (int i = 1; i < n; ++i) {
    min = std::min(min, x[i]);
    max = std::max(max, x[i]);
    sum_w += weights[i];
    sum_x += weights[i] * x[i];
  }
  if (min > 0) min = 0;
  if (max == min) {
    std::fill(L, L + n, 0);
    *min_out = -min;
    return 0;
  }
  auto error = [&](float scale, float offset, const uint8_t* codes) {
    float e = 0;
    for (int i = 0; i < n; ++i) {
      float diff = scale * codes[i] + offset - x[i];
      diff = use_abs ? std::fabs(diff) : diff * diff;
      e += weights[i] * diff;
    }
    return e;
  };
  float iscale = nmax / (max - min);
  float scale = 1 / iscale;
  for (int i = 0; i < n; ++i) L[i] = static_cast<uint8_t>(std::clamp(NearestInt(iscale * (x[i] - min)), 0, nmax));
  float best = error(scale, min, L);
  uint8_t trial[kSuperBlock];
  for (int k = 0; k <= nstep; ++k) {
    iscale = (rmin + rdelta * k + nmax) / (max - min);
    float sum_l = 0, sum_l2 = 0, sum_xl = 0;
    for (int i = 0; i < n; ++i) {
      const int l = std::clamp(NearestInt(iscale * (x[i] - min)), 0, nmax);
      trial[i] = static_cast<uint8_t>(l);
      const float w = weights[i];
      sum_l += w * l;
      sum_l2 += w * l * l;
      sum_xl += w * l * x[i];
    }
    const float det = sum_w * sum_l2 - sum_l * sum_l;
    if (det <= 0) continue;
    float this_scale = (sum_w * sum_xl - sum_x * sum_l) / det;
    float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / det;
    if (this_min > 0) {
      this_min = 0;
      this_scale = sum_xl / sum_l2;
    }
    const float e = error(this_scale, this_min, trial);
    if (e < best) {
      std::copy(trial, trial + n, L);
      best = e;
      scale = this_scale;
      min = this_min;
    }
  }
  *min_out = -min;
  return scale;
}

// The sum of x[n]^2, in order.
float SumSquares(const float* x, int64_t n) {
  float sum = 0;
  for (int64_t l = 0; l < n; ++l) sum += x[l] * x[l];
  return sum;
}

// The weights ggml derives from an importance matrix for x[n]: qw x sqrt(sigma2 + x^2) into w; returns
// their sum.
float ImportanceWeights(const float* x, const float* qw, int n, float sigma2, float* w) {
  float sum = 0;
  for (int l = 0; l < n; ++l) w[l] = qw[l] * std::sqrt(sigma2 + x[l] * x[l]);
  for (int l = 0; l < n; ++l) sum += w[l];
  return sum;
}

// A scale for the non-negative x[n] (sub-block scales or mins) with codes 0 .. nmax, weighted by w: the
// inverse scales (nmax + 0.1 k) / max for k = -4 .. 4 by weighted squared error, then up to 5 passes
// moving single codes while the weighted fit improves (ggml's make_qp_quants; with an importance
// matrix, the k-quants' super-block scales).
float PositiveScaleSearch(const float* x, int n, int nmax, uint8_t* L, const float* w) {
  float max = 0;
  for (int i = 0; i < n; ++i) max = std::max(max, x[i]);
  if (max == 0) {
    std::fill(L, L + n, 0);
    return 0;
  }
  float iscale = nmax / max;
  for (int i = 0; i < n; ++i) L[i] = static_cast<uint8_t>(NearestInt(iscale * x[i]));
  const float scale0 = 1 / iscale;
  float best = 0;
  for (int i = 0; i < n; ++i) {
    const float diff = x[i] - scale0 * L[i];
    best += w[i] * diff * diff;
  }
  for (int k = -4; k <= 4; ++k) {
    if (k == 0) continue;
    const float iscale_k = (0.1f * k + nmax) / max;
    const float scale_k = 1 / iscale_k;
    float mse = 0;
    for (int i = 0; i < n; ++i) {
      const int l = std::min(nmax, NearestInt(iscale_k * x[i]));
      const float diff = x[i] - scale_k * l;
      mse += w[i] * diff * diff;
    }
    if (mse < best) {
      best = mse;
      iscale = iscale_k;
    }
  }
  float sumlx = 0, suml2 = 0;
  for (int i = 0; i < n; ++i) {
    const int l = std::min(nmax, NearestInt(iscale * x[i]));
    L[i] = static_cast<uint8_t>(l);
    sumlx += w[i] * x[i] * l;
    suml2 += w[i] * l * l;
  }
  for (int pass = 0; pass < 5; ++pass) {
    int changed = 0;
    for (int i = 0; i < n; ++i) {
      float slx = sumlx - w[i] * x[i] * L[i];
      float sl2 = suml2 - w[i] * L[i] * L[i];
      if (!(slx > 0 && sl2 > 0)) continue;
      const int l = std::min(nmax, NearestInt(x[i] * sl2 / slx));
      if (l == L[i]) continue;
      slx += w[i] * x[i] * l;
      sl2 += w[i] * l * l;
      if (slx * slx * suml2 > sumlx * sumlx * sl2) {
        L[i] = static_cast<uint8_t>(l);
        sumlx = slx;
        suml2 = sl2;
        ++changed;
      }
    }
    if (changed == 0) break;
  }
  return sumlx / suml2;
}

// Q4_K / Q5_K sub-block scale and min bytes (6 bits each) into the 12 scale bytes.
void PackKScaleMin(const int* ls, const int* lm, uint8_t* scales) {
  std::memset(scales, 0, 12);
  for (int j = 0; j < 8; ++j) {
    if (j < 4) {
      scales[j] = static_cast<uint8_t>(ls[j]);
      scales[j + 4] = static_cast<uint8_t>(lm[j]);
    } else {
      scales[j + 4] = static_cast<uint8_t>((ls[j] & 0x0F) | ((lm[j] & 0x0F) << 4));
      scales[j - 4] |= static_cast<uint8_t>((ls[j] >> 4) << 6);
      scales[j] |= static_cast<uint8_t>((lm[j] >> 4) << 6);
    }
  }
}

// Every Q4_K / Q5_K code again under the rounded sub-block scales and mins (sub-blocks whose scale
// rounds to 0 keep the search's codes).
void RequantizeKScaleMin(const float* x, int nmax, uint16_t d, uint16_t dmin, const uint8_t* scales,
                         uint8_t* codes) {
  for (int j = 0; j < 8; ++j) {
    int sc, m;
    KQuantScaleMin(scales, j, &sc, &m);
    const float dd = HalfToFloat(d) * sc;
    if (dd == 0) continue;
    const float dm = HalfToFloat(dmin) * m;
    for (int l = 0; l < 32; ++l) {
      codes[32 * j + l] = static_cast<uint8_t>(std::clamp(NearestInt((x[32 * j + l] + dm) / dd), 0, nmax));
    }
  }
}

// Q4_K (nmax 15) / Q5_K (31): per sub-block of 32 a scale and min (ScaleMinSearch weighted by
// rms(x) + |x|), both as 6-bit multiples of fp16 d = max scale / 63 and dmin = max min / 63; then every
// code again under the rounded scales. Writes d, dmin, the 12 scale bytes and codes[256].
void QuantizeKScaleMin(const float* x, int nmax, uint16_t* d, uint16_t* dmin, uint8_t* scales, uint8_t* codes,
                       const float* qw) {
  constexpr int kSub = 8, kLen = 32;
  float sc_f[kSub], min_f[kSub], max_scale = 0, max_min = 0, sw[kSub];
  // With an importance matrix: weights qw x sqrt(sigma2 + x^2), sigma2 = 2 mean(x^2) over the
  // super-block, a finer search, and the super-block scales searched too.
  const float sigma2 = qw != nullptr ? 2 * SumSquares(x, kSuperBlock) / kSuperBlock : 0.0f;
  for (int j = 0; j < kSub; ++j) {
    const float* xj = x + kLen * j;
    float weights[kLen];
    if (qw != nullptr) {
      sw[j] = ImportanceWeights(xj, qw + kLen * j, kLen, sigma2, weights);
      sc_f[j] = ScaleMinSearch(xj, weights, kLen, nmax, -0.9f, 0.05f, 36, false, codes + kLen * j, &min_f[j]);
      continue;
    }
    const float av_x = std::sqrt(SumSquares(xj, kLen) / kLen);
    for (int l = 0; l < kLen; ++l) weights[l] = av_x + std::fabs(xj[l]);
    sc_f[j] = ScaleMinSearch(xj, weights, kLen, nmax, nmax == 15 ? -1.0f : -0.5f, 0.1f, nmax == 15 ? 20 : 15, false,
                             codes + kLen * j, &min_f[j]);
    max_scale = std::max(max_scale, sc_f[j]);
    max_min = std::max(max_min, min_f[j]);
  }
  int ls[kSub], lm[kSub];
  if (qw != nullptr) {
    uint8_t Ls[kSub], Lm[kSub];
    const float d_block = PositiveScaleSearch(sc_f, kSub, 63, Ls, sw);
    const float m_block = PositiveScaleSearch(min_f, kSub, 63, Lm, sw);
    for (int j = 0; j < kSub; ++j) {
      ls[j] = std::min<int>(63, Ls[j]);
      lm[j] = std::min<int>(63, Lm[j]);
    }
    *d = FloatToHalf(d_block);
    *dmin = FloatToHalf(m_block);
  } else {
    const float inv_scale = max_scale > 0 ? 63.0f / max_scale : 0.0f;
    const float inv_min = max_min > 0 ? 63.0f / max_min : 0.0f;
    for (int j = 0; j < kSub; ++j) {
      // As ggml: the nearest integer truncated to a byte, then capped at 63.
      ls[j] = std::min(63, static_cast<int>(static_cast<uint8_t>(NearestInt(inv_scale * sc_f[j]))));
      lm[j] = std::min(63, static_cast<int>(static_cast<uint8_t>(NearestInt(inv_min * min_f[j]))));
    }
    *d = FloatToHalf(max_scale / 63.0f);
    *dmin = FloatToHalf(max_min / 63.0f);
  }
  PackKScaleMin(ls, lm, scales);
  RequantizeKScaleMin(x, nmax, *d, *dmin, scales, codes);
}

void QuantizeQ4_K(const float* x, BlockQ4_K* b, const float* qw) {
  uint8_t q[kSuperBlock];
  QuantizeKScaleMin(x, 15, &b->d, &b->dmin, b->scales, q, qw);
  for (int c = 0; c < 4; ++c) {
    for (int l = 0; l < 32; ++l) {
      b->qs[32 * c + l] = static_cast<uint8_t>(q[64 * c + l] | (q[64 * c + 32 + l] << 4));
    }
  }
}

void QuantizeQ5_K(const float* x, BlockQ5_K* b, const float* qw) {
  uint8_t q[kSuperBlock];
  QuantizeKScaleMin(x, 31, &b->d, &b->dmin, b->scales, q, qw);
  std::memset(b->qh, 0, sizeof(b->qh));
  for (int c = 0; c < 4; ++c) {
    for (int l = 0; l < 32; ++l) {
      const int q1 = q[64 * c + l], q2 = q[64 * c + 32 + l];
      b->qs[32 * c + l] = static_cast<uint8_t>((q1 & 0x0F) | ((q2 & 0x0F) << 4));
      b->qh[l] |= static_cast<uint8_t>(((q1 >> 4) << (2 * c)) | ((q2 >> 4) << (2 * c + 1)));
    }
  }
}

// Q2_K / Q3_K code bytes: element 128n + 32j + l's 2 low bits at bits 2j of qs[32n + l].
void PackTwoBitCodes(const uint8_t* q, uint8_t* qs) {
  for (int n = 0; n < 2; ++n) {
    for (int l = 0; l < 32; ++l) {
      const uint8_t* e = q + 128 * n + l;
      qs[32 * n + l] = static_cast<uint8_t>((e[0] & 3) | (e[32] & 3) << 2 | (e[64] & 3) << 4 | (e[96] & 3) << 6);
    }
  }
}

// Q6_K: per sub-block of 16 a symmetric scale (SymmetricScaleSearch, codes -32 .. 31), stored as int8
// multiples of fp16 d with the largest one at -128; then every code again under the rounded scales.
void QuantizeQ6_K(const float* x, BlockQ6_K* b, const float* qw) {
  constexpr int kSub = 16, kLen = 16;
  int8_t L[kSuperBlock];
  float scale[kSub], max_scale = 0, max_abs = 0;
  for (int j = 0; j < kSub; ++j) {
    // With an importance matrix ggml weights Q6_K's search by it directly.
    scale[j] = SymmetricScaleSearch(x + kLen * j, kLen, 32, L + kLen * j, qw != nullptr ? qw + kLen * j : nullptr);
    if (std::fabs(scale[j]) > max_abs) {
      max_abs = std::fabs(scale[j]);
      max_scale = scale[j];
    }
  }
  if (max_abs < kGroupMaxEps) {
    std::memset(b, 0, sizeof(*b));
    return;
  }
  const float iscale = -128.0f / max_scale;
  b->d = FloatToHalf(1 / iscale);
  for (int j = 0; j < kSub; ++j) {
    b->scales[j] = static_cast<int8_t>(std::min(127, NearestInt(iscale * scale[j])));
    const float dd = HalfToFloat(b->d) * b->scales[j];
    if (dd == 0) continue;
    for (int l = 0; l < kLen; ++l) {
      L[kLen * j + l] = static_cast<int8_t>(std::clamp(NearestInt(x[kLen * j + l] / dd), -32, 31) + 32);
    }
  }
  for (int h = 0; h < 2; ++h) {
    const int8_t* qq = L + 128 * h;
    uint8_t* ql = b->ql + 64 * h;
    uint8_t* qh = b->qh + 32 * h;
    for (int l = 0; l < 32; ++l) {
      ql[l] = static_cast<uint8_t>((qq[l] & 0x0F) | ((qq[l + 64] & 0x0F) << 4));
      ql[l + 32] = static_cast<uint8_t>((qq[l + 32] & 0x0F) | ((qq[l + 96] & 0x0F) << 4));
      qh[l] = static_cast<uint8_t>((qq[l] >> 4) | ((qq[l + 32] >> 4) << 2) | ((qq[l + 64] >> 4) << 4) |
                                   ((qq[l + 96] >> 4) << 6));
    }
  }
}

// Q2_K: per sub-block of 16 a scale and min (ScaleMinSearch weighted by |x|, absolute error), as 4-bit
// multiples of fp16 d = max scale / 15 and dmin = max min / 15; then every code again.
void QuantizeQ2_K(const float* x, BlockQ2_K* b, const float* qw) {
  constexpr int kSub = 16, kLen = 16;
  uint8_t L[kSuperBlock];
  float sc_f[kSub], min_f[kSub], max_scale = 0, max_min = 0;
  if (qw != nullptr) {
    // With an importance matrix: weights qw x sqrt(sigma2 + x^2), sigma2 = mean(x^2) over the
    // super-block, a finer squared-error search, and the super-block scales searched too.
    const float sigma2 = SumSquares(x, kSuperBlock) / kSuperBlock;
    float sw[kSub];
    for (int j = 0; j < kSub; ++j) {
      const float* xj = x + kLen * j;
      float weights[kLen];
      sw[j] = ImportanceWeights(xj, qw + kLen * j, kLen, sigma2, weights);
      sc_f[j] = ScaleMinSearch(xj, weights, kLen, 3, -0.9f, 0.05f, 36, false, L + kLen * j, &min_f[j]);
    }
    uint8_t Ls[kSub], Lm[kSub];
    b->d = FloatToHalf(PositiveScaleSearch(sc_f, kSub, 15, Ls, sw));
    b->dmin = FloatToHalf(PositiveScaleSearch(min_f, kSub, 15, Lm, sw));
    for (int j = 0; j < kSub; ++j) b->scales[j] = static_cast<uint8_t>(Ls[j] | (Lm[j] << 4));
  } else {
    for (int j = 0; j < kSub; ++j) {
      const float* xj = x + kLen * j;
      float weights[kLen];
      for (int l = 0; l < kLen; ++l) weights[l] = std::fabs(xj[l]);
      sc_f[j] = ScaleMinSearch(xj, weights, kLen, 3, -0.5f, 0.1f, 15, true, L + kLen * j, &min_f[j]);
      max_scale = std::max(max_scale, sc_f[j]);
      max_min = std::max(max_min, min_f[j]);
    }
    const float inv_scale = max_scale > 0 ? 15.0f / max_scale : 0.0f;
    const float inv_min = max_min > 0 ? 15.0f / max_min : 0.0f;
    for (int j = 0; j < kSub; ++j) {
      const int ls = max_scale > 0 ? NearestInt(inv_scale * sc_f[j]) : 0;
      const int lm = max_min > 0 ? NearestInt(inv_min * min_f[j]) : 0;
      b->scales[j] = static_cast<uint8_t>(ls | (lm << 4));
    }
    b->d = FloatToHalf(max_scale > 0 ? max_scale / 15.0f : 0.0f);
    b->dmin = FloatToHalf(max_min > 0 ? max_min / 15.0f : 0.0f);
  }
  for (int j = 0; j < kSub; ++j) {
    const float dd = HalfToFloat(b->d) * (b->scales[j] & 0x0F);
    if (dd == 0) continue;
    const float dm = HalfToFloat(b->dmin) * (b->scales[j] >> 4);
    for (int l = 0; l < kLen; ++l) {
      L[kLen * j + l] = static_cast<uint8_t>(std::clamp(NearestInt((x[kLen * j + l] + dm) / dd), 0, 3));
    }
  }
  PackTwoBitCodes(L, b->qs);
}

// Q3_K: per sub-block of 16 a symmetric scale (Q3ScaleSearch, codes -4 .. 3), as 6-bit signed multiples
// (-32 .. 31) of fp16 d with the largest one at -32; then every code again under the rounded scales.
// Q3_K's 6-bit sub-block scale u (0 .. 63, meaning u - 32) of sub-block j into the 12 scale bytes.
void OrQ3Scale(int u, int j, uint8_t* scales) {
  scales[j % 8] |= static_cast<uint8_t>((u & 0x0F) << (j < 8 ? 0 : 4));
  scales[8 + j % 4] |= static_cast<uint8_t>((u >> 4) << (2 * (j / 4)));
}

void QuantizeQ3_K(const float* x, BlockQ3_K* b, const float* qw) {
  constexpr int kSub = 16, kLen = 16;
  int8_t L[kSuperBlock];
  float scale[kSub], max_scale = 0, max_abs = 0;
  std::memset(b->scales, 0, sizeof(b->scales));
  if (qw != nullptr) {
    // With an importance matrix: SymmetricScaleSearch per sub-block weighted by qw x sqrt(sigma2 + x^2),
    // sigma2 = 2 mean(x^2), and the sub-block scales' own search (codes -32 .. 31) for d.
    const float sigma2 = 2 * SumSquares(x, kSuperBlock) / kSuperBlock;
    float sw[kSub];
    for (int j = 0; j < kSub; ++j) {
      const float* xj = x + kLen * j;
      float weights[kLen];
      sw[j] = ImportanceWeights(xj, qw + kLen * j, kLen, sigma2, weights);
      scale[j] = SymmetricScaleSearch(xj, kLen, 4, L + kLen * j, weights);
    }
    int8_t Ls[kSub];
    const float d_block = SymmetricScaleSearch(scale, kSub, 32, Ls, sw);
    for (int j = 0; j < kSub; ++j) OrQ3Scale(Ls[j], j, b->scales);
    b->d = FloatToHalf(d_block);
  } else {
    for (int j = 0; j < kSub; ++j) {
      scale[j] = Q3ScaleSearch(x + kLen * j, kLen, 4, L + kLen * j);
      if (std::fabs(scale[j]) > max_abs) {
        max_abs = std::fabs(scale[j]);
        max_scale = scale[j];
      }
    }
    if (max_scale != 0) {
      const float iscale = -32.0f / max_scale;
      for (int j = 0; j < kSub; ++j) {
        OrQ3Scale(std::clamp(static_cast<int>(static_cast<int8_t>(NearestInt(iscale * scale[j]))), -32, 31) + 32, j,
                  b->scales);
      }
      b->d = FloatToHalf(1 / iscale);
    } else {
      b->d = FloatToHalf(0.0f);
    }
  }
  for (int j = 0; j < kSub; ++j) {
    const int sc =
        (((b->scales[j % 8] >> (j < 8 ? 0 : 4)) & 0x0F) | (((b->scales[8 + j % 4] >> (2 * (j / 4))) & 3) << 4)) - 32;
    const float dd = HalfToFloat(b->d) * sc;
    if (dd == 0) continue;
    for (int l = 0; l < kLen; ++l) {
      L[kLen * j + l] = static_cast<int8_t>(std::clamp(NearestInt(x[kLen * j + l] / dd), -4, 3) + 4);
    }
  }
  // The third bit of element e at bit e / 32 of hmask[e % 32]; the low 2 bits as Q2_K's.
  std::memset(b->hmask, 0, sizeof(b->hmask));
  uint8_t low[kSuperBlock];
  for (int e = 0; e < kSuperBlock; ++e) {
    if (L[e] > 3) b->hmask[e % 32] |= static_cast<uint8_t>(1 << (e / 32));
    low[e] = static_cast<uint8_t>(L[e] > 3 ? L[e] - 4 : L[e]);
  }
  PackTwoBitCodes(low, b->qs);
}

// ggml's dequantize_row_q2_K / q3_K, one super-block into y[256].
void DequantizeQ2_K(const BlockQ2_K& b, float* y) {
  const float d = HalfToFloat(b.d), min = HalfToFloat(b.dmin);
  for (int n = 0; n < 2; ++n) {
    const uint8_t* q = b.qs + 32 * n;
    for (int j = 0; j < 4; ++j) {
      for (int h = 0; h < 2; ++h) {
        const uint8_t sc = b.scales[8 * n + 2 * j + h];
        const float dl = d * (sc & 0x0F), ml = min * (sc >> 4);
        float* out = y + 128 * n + 32 * j + 16 * h;
        for (int l = 0; l < 16; ++l) out[l] = dl * ((q[16 * h + l] >> (2 * j)) & 3) - ml;
      }
    }
  }
}

void DequantizeQ3_K(const BlockQ3_K& b, float* y) {
  const float d = HalfToFloat(b.d);
  for (int n = 0; n < 2; ++n) {
    const uint8_t* q = b.qs + 32 * n;
    for (int j = 0; j < 4; ++j) {
      const int m = 1 << (4 * n + j);
      for (int h = 0; h < 2; ++h) {
        const int s = 8 * n + 2 * j + h;
        const int sc =
            ((b.scales[s % 8] >> (s < 8 ? 0 : 4)) & 0x0F) | (((b.scales[8 + s % 4] >> (2 * (s / 4))) & 3) << 4);
        const float dl = d * (sc - 32);
        float* out = y + 128 * n + 32 * j + 16 * h;
        for (int l = 0; l < 16; ++l) {
          const int i = 16 * h + l;
          out[l] = dl * (((q[i] >> (2 * j)) & 3) - ((b.hmask[i] & m) ? 0 : 4));
        }
      }
    }
  }
}

// ggml's dequantize_row_q{4,5,6}_K, one super-block into y[256]. Q4_K and Q5_K share the scale and min
// layout; qh (Q5_K's fifth bits) is null for Q4_K.
void DequantizeKScaleMin(uint16_t d_half, uint16_t dmin_half, const uint8_t* scales, const uint8_t* qs,
                         const uint8_t* qh, float* y) {
  const float d = HalfToFloat(d_half), min = HalfToFloat(dmin_half);
  for (int c = 0; c < 4; ++c) {
    int sc, m;
    KQuantScaleMin(scales, 2 * c, &sc, &m);
    const float d1 = d * sc, m1 = min * m;
    KQuantScaleMin(scales, 2 * c + 1, &sc, &m);
    const float d2 = d * sc, m2 = min * m;
    const uint8_t* q = qs + 32 * c;
    const int u1 = 1 << (2 * c), u2 = 2 << (2 * c);
    for (int l = 0; l < 32; ++l) y[64 * c + l] = d1 * ((q[l] & 0x0F) + (qh && (qh[l] & u1) ? 16 : 0)) - m1;
    for (int l = 0; l < 32; ++l) y[64 * c + 32 + l] = d2 * ((q[l] >> 4) + (qh && (qh[l] & u2) ? 16 : 0)) - m2;
  }
}

void DequantizeQ6_K(const BlockQ6_K& b, float* y) {
  const float d = HalfToFloat(b.d);
  for (int h = 0; h < 2; ++h) {
    const uint8_t* ql = b.ql + 64 * h;
    const uint8_t* qh = b.qh + 32 * h;
    const int8_t* sc = b.scales + 8 * h;
    float* yh = y + 128 * h;
    for (int l = 0; l < 32; ++l) {
      const int is = l / 16;
      const int q1 = ((ql[l] & 0x0F) | (((qh[l] >> 0) & 3) << 4)) - 32;
      const int q2 = ((ql[l + 32] & 0x0F) | (((qh[l] >> 2) & 3) << 4)) - 32;
      const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
      const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
      yh[l] = d * sc[is] * q1;
      yh[l + 32] = d * sc[is + 2] * q2;
      yh[l + 64] = d * sc[is + 4] * q3;
      yh[l + 96] = d * sc[is + 6] * q4;
    }
  }
}

// --- IQ4_NL / IQ4_XS ---------------------------------------------------------------------------------

// For each integer f in [-128, 127], the index of the largest level <= f (0 below the lowest level). The
// levels are integers, so level <= v exactly when level <= floor(v).
constexpr std::array<int8_t, 256> IQ4FloorLevels() {
  std::array<int8_t, 256> t{};
  for (int f = -128; f < 128; ++f) {
    int8_t i = 0;
    while (i < 15 && kIQ4NLValues[i + 1] <= f) ++i;
    t[f + 128] = i;
  }
  return t;
}
constexpr std::array<int8_t, 256> kIQ4FloorLevels = IQ4FloorLevels();

// The index of the kIQ4NLValues level nearest v (the upper one on a tie, as ggml's best_index_int8).
int NearestIQ4Level(float v) {
  if (!(v > kIQ4NLValues[0])) return 0;  // also NaN
  if (v >= kIQ4NLValues[15]) return 15;
  const int lo = kIQ4FloorLevels[static_cast<int>(std::floor(v)) + 128];
  return v - kIQ4NLValues[lo] < kIQ4NLValues[lo + 1] - v ? lo : lo + 1;
}

// The weighted least-squares scale of a 32-block x over the levels that `inv` (levels per unit of x)
// picks: sum(w q x) / sum(w q^2), with those two sums.
float IQ4Fit(const float* x, const float* w, float inv, float* sqx, float* sq2) {
  *sqx = *sq2 = 0;
  for (int j = 0; j < kQuantBlock; ++j) {
    const float q = kIQ4NLValues[NearestIQ4Level(inv * x[j])];
    *sqx += w[j] * q * x[j];
    *sq2 += w[j] * q * q;
  }
  return *sqx / *sq2;
}

// ggml's scale search for one 32-block (quantize_row_iq4_nl_impl): the element of largest magnitude at
// +127 (clamped to the top level), then at k - 127 for k = -7 .. 7; the best least-squares fit wins,
// compared as ggml compares (many candidates tie exactly, so the rounding of the comparison decides).
// 0 for an all-zero block. w: the fit's weights, x^2 without an importance matrix, else
// qw x sqrt(sigma2 + x^2).
float IQ4BlockScale(const float* x, const float* w) {
  const float max = SignedAbsMax(x, kQuantBlock);
  if (std::fabs(max) < 1e-15f) return 0;
  const float d0 = -max / kIQ4NLValues[0];
  float sqx, sq2;
  float d = IQ4Fit(x, w, 1 / d0, &sqx, &sq2);
  float best = d * sqx;
  for (int k = -7; k <= 7; ++k) {
    IQ4Fit(x, w, (k + kIQ4NLValues[0]) / max, &sqx, &sq2);
    if (sq2 > 0 && sqx * sqx > best * sq2) {
      d = sqx / sq2;
      best = d * sqx;
    }
  }
  return d;
}

// Codes of x[32] to the nearest levels under `scale`, packed as Q4_0's nibbles.
void PackIQ4Codes(const float* x, float scale, uint8_t* qs) {
  const float inv = scale != 0 ? 1 / scale : 0;
  for (int j = 0; j < kQuantBlock / 2; ++j) {
    qs[j] = static_cast<uint8_t>(NearestIQ4Level(inv * x[j]) | (NearestIQ4Level(inv * x[j + 16]) << 4));
  }
}

// IQ4's weights for the blocks of x[n] (a 256-element IQ4_XS super-block or a 32-element IQ4_NL block):
// x^2, or with an importance matrix qw x sqrt(sigma2 + x^2), sigma2 = 2 mean(x^2).
void IQ4Weights(const float* x, const float* qw, int n, float* w) {
  if (qw == nullptr) {
    for (int j = 0; j < n; ++j) w[j] = x[j] * x[j];
    return;
  }
  ImportanceWeights(x, qw, n, SumSquares(x, n) * (2.0f / n), w);
}

void QuantizeIQ4_XS(const float* x, BlockIQ4_XS* b, const float* qw) {
  constexpr int kSub = kSuperBlock / kQuantBlock;
  float scales[kSub], max_scale = 0, w[kSuperBlock];
  IQ4Weights(x, qw, kSuperBlock, w);
  for (int j = 0; j < kSub; ++j) {
    scales[j] = IQ4BlockScale(x + j * kQuantBlock, w + j * kQuantBlock);
    if (std::fabs(scales[j]) > std::fabs(max_scale)) max_scale = scales[j];
  }
  // The super-block scale puts the largest sub-block scale on -32; as ggml, the codes follow the
  // unrounded d (the file stores its fp16 rounding).
  const float d = max_scale / -32;
  b->d = FloatToHalf(d);
  const float inv = d != 0 ? 1 / d : 0;
  b->scales_h = 0;
  std::memset(b->scales_l, 0, sizeof(b->scales_l));
  for (int j = 0; j < kSub; ++j) {
    const int ls = std::clamp(NearestInt(inv * scales[j]), -32, 31);
    PackIQ4Codes(x + j * kQuantBlock, d * static_cast<float>(ls), b->qs + 16 * j);
    b->scales_l[j / 2] |= static_cast<uint8_t>(((ls + 32) & 0x0F) << (4 * (j % 2)));
    b->scales_h |= static_cast<uint16_t>(((ls + 32) >> 4) << (2 * j));
  }
}

// Runs fn over the n / 256 super-blocks of a row: fn(const float* x, Block* b, const float* qw) to quantize,
// fn(const Block& b, float* y) to dequantize.
// Quantizers take the super-block's importance weights too (qw: null, or n of them for the row).
template <typename Block, typename Fn>
void EachSuperBlock(const float* src, void* dst, int64_t n, Fn fn, const float* qw = nullptr) {
  for (int64_t i = 0; i < n / kSuperBlock; ++i) {
    fn(src + i * kSuperBlock, static_cast<Block*>(dst) + i, qw != nullptr ? qw + i * kSuperBlock : nullptr);
  }
}
template <typename Block, typename Fn>
void EachSuperBlock(const void* src, float* dst, int64_t n, Fn fn) {
  for (int64_t i = 0; i < n / kSuperBlock; ++i) fn(static_cast<const Block*>(src)[i], dst + i * kSuperBlock);
}

// Group by group with fixed strides (prefill dequantizes every weight row through here).
void DequantizeTesselGroupRow(const TesselGroupFormat& f, const void* src, float* dst, int64_t n) {
  const uint8_t* row = static_cast<const uint8_t*>(src);
  const uint16_t* scales = reinterpret_cast<const uint16_t*>(row + f.ScalesOffset(n));
  const uint8_t* zeros = row + f.ZerosOffset(n);
  const int gb = f.group * f.bits / 8;
  for (int64_t g = 0; g < n / f.group; ++g) {
    const float d = HalfToFloat(scales[g]);
    const int z = f.asymmetric ? zeros[g] : f.zero_point();
    const uint8_t* c = row + g * gb;
    float* y = dst + g * f.group;
    if (f.bits == 4) {
      const int half = f.group / 2;
      for (int j = 0; j < half; ++j) {
        y[j] = ((c[j] & 0x0F) - z) * d;
        y[j + half] = ((c[j] >> 4) - z) * d;
      }
    } else {
      const int quarter = f.group / 4, eighth = f.group / 8;
      for (int k = 0; k < 4; ++k) {
        for (int j = 0; j < quarter; ++j) {
          const int e = k * quarter + j;
          const int high = (c[quarter + e % eighth] >> (e / eighth)) & 1;
          y[e] = ((((c[j] >> (2 * k)) & 3) | (high << 2)) - z) * d;
        }
      }
    }
  }
}

}  // namespace

const GgmlTypeInfo* FindGgmlType(uint32_t id) {
  // Indexed by id: row sizes are computed in hot loops.
  static const std::array<const GgmlTypeInfo*, 128> by_id = [] {
    std::array<const GgmlTypeInfo*, 128> table{};
    for (const GgmlTypeInfo& t : kTypes) table[t.id] = &t;
    return table;
  }();
  return id < by_id.size() ? by_id[id] : nullptr;
}

const GgmlTypeInfo& GetGgmlTypeInfo(GgmlType t) { return *FindGgmlType(static_cast<uint32_t>(t)); }

absl::string_view GgmlTypeName(GgmlType t) { return GetGgmlTypeInfo(t).name; }

absl::StatusOr<GgmlType> ParseGgmlType(absl::string_view name) {
  for (const GgmlTypeInfo& t : kTypes) {
    if (t.supported && absl::EqualsIgnoreCase(name, t.name)) return static_cast<GgmlType>(t.id);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown weight type '", name, "' (supported: ", SupportedGgmlTypeNames(), ")"));
}

const char* SupportedGgmlTypeNames() {
  return "F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS, "
         "TESSEL_I{4,3}G{32,64,128}[_A]";
}

bool GetTesselGroupFormat(GgmlType t, TesselGroupFormat* format) {
  const uint32_t id = static_cast<uint32_t>(t);
  if (id < kFirstTesselGroupId || id > kLastTesselGroupId) return false;
  const uint32_t k = id - kFirstTesselGroupId;
  format->bits = k < 6 ? 4 : 3;
  format->group = 32 << ((k % 6) / 2);
  format->asymmetric = (k % 2) == 1;
  return true;
}

absl::StatusOr<GgmlType> TesselGroupType(int bits, int group, bool asymmetric) {
  if ((bits != 3 && bits != 4) || (group != 32 && group != 64 && group != 128)) {
    return absl::InvalidArgumentError(absl::StrCat("no Tessel group-wise type for ", bits, " bits, group ", group,
                                                   " (bits 3 or 4, group 32, 64 or 128)"));
  }
  const int group_index = group == 32 ? 0 : group == 64 ? 1 : 2;
  return static_cast<GgmlType>(kFirstTesselGroupId + (bits == 4 ? 0 : 6) + group_index * 2 + (asymmetric ? 1 : 0));
}

int TesselGroupCode(const TesselGroupFormat& f, const uint8_t* row, int64_t i) {
  const int64_t g = i / f.group;
  const int j = static_cast<int>(i % f.group);
  const uint8_t* codes = row + g * f.group * f.bits / 8;
  if (f.bits == 4) {
    const int half = f.group / 2;
    return j < half ? codes[j] & 0x0F : codes[j - half] >> 4;
  }
  const int quarter = f.group / 4, eighth = f.group / 8;
  const int low = (codes[j % quarter] >> (2 * (j / quarter))) & 3;
  const int high = (codes[quarter + j % eighth] >> (j / eighth)) & 1;
  return low | (high << 2);
}

void PackTesselGroupRow(GgmlType t, const uint8_t* codes, const float* scales, const uint8_t* zeros, int64_t n,
                        void* dst) {
  TesselGroupFormat f;
  GetTesselGroupFormat(t, &f);
  uint8_t* row = static_cast<uint8_t*>(dst);
  std::memset(row, 0, GgmlRowBytes(t, n));
  const int64_t ng = n / f.group;
  for (int64_t g = 0; g < ng; ++g) {
    uint8_t* out = row + g * f.group * f.bits / 8;
    const uint8_t* c = codes + g * f.group;
    if (f.bits == 4) {
      const int half = f.group / 2;
      for (int j = 0; j < half; ++j) out[j] = static_cast<uint8_t>((c[j] & 0x0F) | (c[j + half] << 4));
    } else {
      const int quarter = f.group / 4, eighth = f.group / 8;
      for (int j = 0; j < f.group; ++j) {
        out[j % quarter] |= static_cast<uint8_t>((c[j] & 3) << (2 * (j / quarter)));
        out[quarter + j % eighth] |= static_cast<uint8_t>(((c[j] >> 2) & 1) << (j / eighth));
      }
    }
  }
  uint16_t* s = reinterpret_cast<uint16_t*>(row + f.ScalesOffset(n));
  for (int64_t g = 0; g < ng; ++g) s[g] = FloatToHalf(scales[g]);
  if (f.asymmetric) std::memcpy(row + f.ZerosOffset(n), zeros, ng);
}

void DequantizeRow(GgmlType t, const void* src, float* dst, int64_t n) {
  switch (t) {
    case GgmlType::kF32:
      std::memcpy(dst, src, n * sizeof(float));
      return;
    case GgmlType::kF16: {
      const uint16_t* h = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = HalfToFloat(h[i]);
      return;
    }
    case GgmlType::kBF16: {
      const uint16_t* h = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = BF16ToFloat(h[i]);
      return;
    }
    case GgmlType::kQ8_0: {
      const BlockQ8_0* b = static_cast<const BlockQ8_0*>(src);
      for (int64_t i = 0; i < n / kQuantBlock; ++i) {
        const float d = HalfToFloat(b[i].d);
        for (int j = 0; j < kQuantBlock; ++j) dst[i * kQuantBlock + j] = b[i].qs[j] * d;
      }
      return;
    }
    case GgmlType::kQ4_0: {
      const BlockQ4_0* b = static_cast<const BlockQ4_0*>(src);
      for (int64_t i = 0; i < n / kQuantBlock; ++i) {
        const float d = HalfToFloat(b[i].d);
        float* y = dst + i * kQuantBlock;
        for (int j = 0; j < kQuantBlock / 2; ++j) {
          y[j] = ((b[i].qs[j] & 0x0F) - 8) * d;
          y[j + kQuantBlock / 2] = ((b[i].qs[j] >> 4) - 8) * d;
        }
      }
      return;
    }
    case GgmlType::kQ4_1: {
      const BlockQ4_1* b = static_cast<const BlockQ4_1*>(src);
      for (int64_t i = 0; i < n / kQuantBlock; ++i) {
        const float d = HalfToFloat(b[i].d);
        const float m = HalfToFloat(b[i].m);
        float* y = dst + i * kQuantBlock;
        for (int j = 0; j < kQuantBlock / 2; ++j) {
          y[j] = (b[i].qs[j] & 0x0F) * d + m;
          y[j + kQuantBlock / 2] = (b[i].qs[j] >> 4) * d + m;
        }
      }
      return;
    }
    case GgmlType::kQ5_0:
    case GgmlType::kQ5_1: {
      const bool q5_1 = t == GgmlType::kQ5_1;
      const size_t bb = q5_1 ? sizeof(BlockQ5_1) : sizeof(BlockQ5_0);
      for (int64_t i = 0; i < n / kQuantBlock; ++i) {
        const uint8_t* blk = static_cast<const uint8_t*>(src) + i * bb;
        uint16_t dh, mh = 0;
        uint32_t qh;
        std::memcpy(&dh, blk, 2);
        if (q5_1) std::memcpy(&mh, blk + 2, 2);
        const uint8_t* p = blk + (q5_1 ? 4 : 2);
        std::memcpy(&qh, p, 4);
        const uint8_t* qs = p + 4;
        const float d = HalfToFloat(dh), m = HalfToFloat(mh);
        float* y = dst + i * kQuantBlock;
        for (int j = 0; j < kQuantBlock / 2; ++j) {
          const int x0 = (qs[j] & 0x0F) | (((qh >> j) << 4) & 0x10);
          const int x1 = (qs[j] >> 4) | ((qh >> (j + 12)) & 0x10);
          if (q5_1) {
            y[j] = x0 * d + m;
            y[j + 16] = x1 * d + m;
          } else {
            y[j] = (x0 - 16) * d;
            y[j + 16] = (x1 - 16) * d;
          }
        }
      }
      return;
    }
    case GgmlType::kQ2_K: return EachSuperBlock<BlockQ2_K>(src, dst, n, DequantizeQ2_K);
    case GgmlType::kQ3_K: return EachSuperBlock<BlockQ3_K>(src, dst, n, DequantizeQ3_K);
    case GgmlType::kQ4_K:
      return EachSuperBlock<BlockQ4_K>(src, dst, n, [](const BlockQ4_K& b, float* y) {
        DequantizeKScaleMin(b.d, b.dmin, b.scales, b.qs, nullptr, y);
      });
    case GgmlType::kQ5_K:
      return EachSuperBlock<BlockQ5_K>(src, dst, n, [](const BlockQ5_K& b, float* y) {
        DequantizeKScaleMin(b.d, b.dmin, b.scales, b.qs, b.qh, y);
      });
    case GgmlType::kQ6_K: return EachSuperBlock<BlockQ6_K>(src, dst, n, DequantizeQ6_K);
    case GgmlType::kIQ4_NL: {
      const BlockIQ4_NL* b = static_cast<const BlockIQ4_NL*>(src);
      for (int64_t i = 0; i < n / kQuantBlock; ++i) {
        const float d = HalfToFloat(b[i].d);
        float* y = dst + i * kQuantBlock;
        for (int j = 0; j < kQuantBlock / 2; ++j) {
          y[j] = d * kIQ4NLValues[b[i].qs[j] & 0x0F];
          y[j + 16] = d * kIQ4NLValues[b[i].qs[j] >> 4];
        }
      }
      return;
    }
    case GgmlType::kIQ4_XS:
      return EachSuperBlock<BlockIQ4_XS>(src, dst, n, [](const BlockIQ4_XS& b, float* y) {
        const float d = HalfToFloat(b.d);
        for (int j = 0; j < kSuperBlock / kQuantBlock; ++j) {
          const float dl = d * static_cast<float>(IQ4XSScale(b, j));
          const uint8_t* qs = b.qs + 16 * j;
          for (int l = 0; l < 16; ++l) {
            y[32 * j + l] = dl * kIQ4NLValues[qs[l] & 0x0F];
            y[32 * j + l + 16] = dl * kIQ4NLValues[qs[l] >> 4];
          }
        }
      });
    default: {
      TesselGroupFormat f;
      if (GetTesselGroupFormat(t, &f)) {
        DequantizeTesselGroupRow(f, src, dst, n);
        return;
      }
      // Callers check IsSupported before reaching a kernel; unsupported types have no layout here.
      std::memset(dst, 0, n * sizeof(float));
      return;
    }
  }
}

namespace {

// Q4_0 / Q4_1 / Q5_0 / Q5_1 with an importance matrix (ggml's quantize_row_q{4,5}_{0,1}_impl): per block
// the weights qw x sqrt(sigma2 + x^2) with sigma2 the row's mean(x^2); Q4_0 / Q5_0 by SymmetricScaleSearch,
// Q4_1 / Q5_1 by ScaleMinSearch.
void QuantizeLegacyWeighted(GgmlType t, const float* src, const float* qw, void* dst, int64_t n) {
  const bool mins = t == GgmlType::kQ4_1 || t == GgmlType::kQ5_1;
  const bool five = t == GgmlType::kQ5_0 || t == GgmlType::kQ5_1;
  const int nmax = mins ? (five ? 31 : 15) : (five ? 16 : 8);
  const size_t bb = GetGgmlTypeInfo(t).block_bytes;
  const float sigma2 = SumSquares(src, n) / static_cast<float>(n);
  for (int64_t i = 0; i < n / kQuantBlock; ++i) {
    const float* x = src + i * kQuantBlock;
    const float* w_in = qw + i * kQuantBlock;
    float w[kQuantBlock];
    ImportanceWeights(x, w_in, kQuantBlock, sigma2, w);
    uint8_t L[kQuantBlock];
    uint8_t* blk = static_cast<uint8_t*>(dst) + i * bb;
    uint16_t dh, mh;
    if (mins) {
      float min;
      dh = FloatToHalf(ScaleMinSearch(x, w, kQuantBlock, nmax, -0.9f, 0.05f, 36, false, L, &min));
      mh = FloatToHalf(-min);
      std::memcpy(blk + 2, &mh, 2);
    } else {
      int8_t Ls[kQuantBlock];
      dh = FloatToHalf(SymmetricScaleSearch(x, kQuantBlock, nmax, Ls, w));
      for (int j = 0; j < kQuantBlock; ++j) L[j] = static_cast<uint8_t>(Ls[j]);
    }
    std::memcpy(blk, &dh, 2);
    uint8_t* p = blk + (mins ? 4 : 2);
    uint8_t* qs = five ? p + 4 : p;
    uint32_t qh = 0;
    for (int j = 0; j < kQuantBlock / 2; ++j) {
      qs[j] = static_cast<uint8_t>((L[j] & 0x0F) | ((L[j + 16] & 0x0F) << 4));
      qh |= ((L[j] & 0x10u) >> 4) << j;
      qh |= ((L[j + 16] & 0x10u) >> 4) << (j + 16);
    }
    if (five) std::memcpy(p, &qh, 4);
  }
}

}  // namespace

void QuantizeRow(GgmlType t, const float* src, void* dst, int64_t n, const float* importance) {
  // ggml's Q4_0 / Q4_1 / Q5_0 / Q5_1 take a different search with an importance matrix; the super-block
  // types and IQ4 weight theirs by it below; F32, F16, BF16, Q8_0 and Tessel's group types ignore it, as
  // ggml's Q8_0 does.
  const bool legacy =
      t == GgmlType::kQ4_0 || t == GgmlType::kQ4_1 || t == GgmlType::kQ5_0 || t == GgmlType::kQ5_1;
  if (importance != nullptr && legacy) return QuantizeLegacyWeighted(t, src, importance, dst, n);
  switch (t) {
    case GgmlType::kF32:
      std::memcpy(dst, src, n * sizeof(float));
      return;
    case GgmlType::kF16: {
      uint16_t* h = static_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; ++i) h[i] = FloatToHalf(src[i]);
      return;
    }
    case GgmlType::kBF16: {
      uint16_t* h = static_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; ++i) h[i] = FloatToBF16(src[i]);
      return;
    }
    case GgmlType::kQ8_0: {
      BlockQ8_0* b = static_cast<BlockQ8_0*>(dst);
      for (int64_t i = 0; i < n / kQuantBlock; ++i) {
        const float* x = src + i * kQuantBlock;
        float amax = 0.0f;
        for (int j = 0; j < kQuantBlock; ++j) amax = std::fmax(amax, std::fabs(x[j]));
        const float d = amax / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        b[i].d = FloatToHalf(d);
        for (int j = 0; j < kQuantBlock; ++j) b[i].qs[j] = static_cast<int8_t>(std::round(x[j] * id));
      }
      return;
    }
    case GgmlType::kQ4_0: {
      BlockQ4_0* b = static_cast<BlockQ4_0*>(dst);
      for (int64_t i = 0; i < n / kQuantBlock; ++i) {
        const float* x = src + i * kQuantBlock;
        const float d = SignedAbsMax(x, kQuantBlock) / -8.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        b[i].d = FloatToHalf(d);
        for (int j = 0; j < kQuantBlock / 2; ++j) {
          const int q0 = std::min(15, static_cast<int>(static_cast<int8_t>(x[j] * id + 8.5f)));
          const int q1 = std::min(15, static_cast<int>(static_cast<int8_t>(x[j + kQuantBlock / 2] * id + 8.5f)));
          b[i].qs[j] = static_cast<uint8_t>(q0 | (q1 << 4));
        }
      }
      return;
    }
    case GgmlType::kQ4_1: {
      BlockQ4_1* b = static_cast<BlockQ4_1*>(dst);
      for (int64_t i = 0; i < n / kQuantBlock; ++i) {
        const float* x = src + i * kQuantBlock;
        float min = x[0], max = x[0];
        for (int j = 1; j < kQuantBlock; ++j) {
          min = std::fmin(min, x[j]);
          max = std::fmax(max, x[j]);
        }
        const float d = (max - min) / 15.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        b[i].d = FloatToHalf(d);
        b[i].m = FloatToHalf(min);
        for (int j = 0; j < kQuantBlock / 2; ++j) {
          const int q0 = std::min(15, static_cast<int>(static_cast<int8_t>((x[j] - min) * id + 0.5f)));
          const int q1 =
              std::min(15, static_cast<int>(static_cast<int8_t>((x[j + kQuantBlock / 2] - min) * id + 0.5f)));
          b[i].qs[j] = static_cast<uint8_t>(q0 | (q1 << 4));
        }
      }
      return;
    }
    case GgmlType::kQ5_0:
    case GgmlType::kQ5_1: {
      // ggml's quantize_row_q5_{0,1}_ref.
      const bool q5_1 = t == GgmlType::kQ5_1;
      const size_t bb = q5_1 ? sizeof(BlockQ5_1) : sizeof(BlockQ5_0);
      for (int64_t i = 0; i < n / kQuantBlock; ++i) {
        const float* x = src + i * kQuantBlock;
        uint8_t* blk = static_cast<uint8_t*>(dst) + i * bb;
        float d, min = 0;
        if (q5_1) {
          float max = x[0];
          min = x[0];
          for (int j = 1; j < kQuantBlock; ++j) {
            min = std::fmin(min, x[j]);
            max = std::fmax(max, x[j]);
          }
          d = (max - min) / 31;
        } else {
          d = SignedAbsMax(x, kQuantBlock) / -16;
        }
        const float id = d != 0 ? 1 / d : 0;
        const uint16_t dh = FloatToHalf(d), mh = FloatToHalf(min);
        std::memcpy(blk, &dh, 2);
        if (q5_1) std::memcpy(blk + 2, &mh, 2);
        uint8_t* p = blk + (q5_1 ? 4 : 2);
        uint8_t* qs = p + 4;
        uint32_t qh = 0;
        for (int j = 0; j < kQuantBlock / 2; ++j) {
          const float x0 = q5_1 ? (x[j] - min) * id : x[j] * id;
          const float x1 = q5_1 ? (x[j + 16] - min) * id : x[j + 16] * id;
          const int xi0 = q5_1 ? static_cast<int8_t>(x0 + 0.5f)
                               : std::min(31, static_cast<int>(static_cast<int8_t>(x0 + 16.5f)));
          const int xi1 = q5_1 ? static_cast<int8_t>(x1 + 0.5f)
                               : std::min(31, static_cast<int>(static_cast<int8_t>(x1 + 16.5f)));
          qs[j] = static_cast<uint8_t>((xi0 & 0x0F) | ((xi1 & 0x0F) << 4));
          qh |= ((static_cast<uint32_t>(xi0) & 0x10u) >> 4) << j;
          qh |= ((static_cast<uint32_t>(xi1) & 0x10u) >> 4) << (j + 16);
        }
        std::memcpy(p, &qh, 4);
      }
      return;
    }
    case GgmlType::kQ2_K: return EachSuperBlock<BlockQ2_K>(src, dst, n, QuantizeQ2_K, importance);
    case GgmlType::kQ3_K: return EachSuperBlock<BlockQ3_K>(src, dst, n, QuantizeQ3_K, importance);
    case GgmlType::kQ4_K: return EachSuperBlock<BlockQ4_K>(src, dst, n, QuantizeQ4_K, importance);
    case GgmlType::kQ5_K: return EachSuperBlock<BlockQ5_K>(src, dst, n, QuantizeQ5_K, importance);
    case GgmlType::kQ6_K: return EachSuperBlock<BlockQ6_K>(src, dst, n, QuantizeQ6_K, importance);
    case GgmlType::kIQ4_NL: {
      BlockIQ4_NL* b = static_cast<BlockIQ4_NL*>(dst);
      for (int64_t i = 0; i < n / kQuantBlock; ++i) {
        const float* x = src + i * kQuantBlock;
        float w[kQuantBlock];
        IQ4Weights(x, importance != nullptr ? importance + i * kQuantBlock : nullptr, kQuantBlock, w);
        const float d = IQ4BlockScale(x, w);
        // As ggml, the codes follow the unrounded scale; the file stores its fp16 rounding.
        b[i].d = FloatToHalf(d);
        PackIQ4Codes(x, d, b[i].qs);
      }
      return;
    }
    case GgmlType::kIQ4_XS: return EachSuperBlock<BlockIQ4_XS>(src, dst, n, QuantizeIQ4_XS, importance);
    default: {
      TesselGroupFormat f;
      if (GetTesselGroupFormat(t, &f)) QuantizeTesselGroupRow(t, f, src, dst, n);
      return;
    }
  }
}

}  // namespace tessel::llm
