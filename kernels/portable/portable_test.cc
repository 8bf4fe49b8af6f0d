// The portable kernels against plain double-precision loops written here (the independent reference),
// over awkward sizes: below the 4x32 GEMM tile, remainders, primes, single elements.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/portable/tessel_portable.h"

namespace tessel {
namespace {

std::vector<float> Random(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

// Float results vs a double reference: |got - want| <= 1e-5 * scale, where scale bounds the sum of
// absolute terms (so long dot products get a proportionally larger allowance).
void ExpectClose(const std::vector<float>& got, const std::vector<double>& want, const std::vector<double>& scale) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], 1e-5 * (scale[i] + 1e-30)) << "element " << i;
  }
}

double Clamp(double v, double lo, double hi) { return v < lo ? lo : (v > hi ? hi : v); }

TEST(PortableGemmTest, MatchesReferenceOverAwkwardShapes) {
  struct Shape {
    size_t m, n, k;
  };
  // 24, 44 and 4 columns: the NEON tile's 16-, 8- and 4-column passes on aarch64.
  for (const Shape s : {Shape{1, 1, 1}, Shape{3, 5, 7}, Shape{4, 32, 16}, Shape{5, 33, 17}, Shape{13, 70, 3},
                        Shape{8, 64, 300}, Shape{2, 31, 1}, Shape{0, 4, 4}, Shape{4, 0, 4}, Shape{4, 24, 9},
                        Shape{12, 44, 13}, Shape{8, 4, 6}}) {
    for (int variant = 0; variant < 4; ++variant) {
      const bool bias_n = variant & 1, bias_m = variant == 2, residual = variant >= 2;
      const float lo = variant == 3 ? 0.0f : -INFINITY, hi = variant == 3 ? 0.5f : INFINITY;
      const size_t lda = s.k + 3, ldb = s.n + 2, ldc = s.n + 1, ldr = s.n + 5;
      const std::vector<float> a = Random(s.m * lda, 1), b = Random(s.k * ldb, 2), bn = Random(s.n, 3),
                               bm = Random(s.m, 4), r = Random(s.m * ldr, 5);
      std::vector<float> c(s.m * ldc, 42.0f);
      tsl_f32_gemm_minmax__autovec(s.m, s.n, s.k, a.data(), lda, b.data(), ldb, bias_n ? bn.data() : nullptr,
                                   bias_m ? bm.data() : nullptr, residual ? r.data() : nullptr, ldr, c.data(), ldc,
                                   lo, hi);
      std::vector<double> want(c.size(), 42.0), scale(c.size(), 1.0);
      for (size_t i = 0; i < s.m; ++i) {
        for (size_t j = 0; j < s.n; ++j) {
          double sum = 0, abs = 1;
          for (size_t p = 0; p < s.k; ++p) {
            sum += double(a[i * lda + p]) * b[p * ldb + j];
            abs += std::fabs(double(a[i * lda + p]) * b[p * ldb + j]);
          }
          sum += (bias_n ? bn[j] : 0.0) + (bias_m ? bm[i] : 0.0) + (residual ? r[i * ldr + j] : 0.0);
          want[i * ldc + j] = Clamp(sum, lo, hi);
          scale[i * ldc + j] = abs + 3;
        }
      }
      SCOPED_TRACE(testing::Message() << "m=" << s.m << " n=" << s.n << " k=" << s.k << " variant " << variant);
      ExpectClose(c, want, scale);
    }
  }
}

struct ConvCase {
  size_t h, w, c, m, k, stride, pad, dilation;
};

tsl_window Window(const ConvCase& t) {
  tsl_window win = {};
  win.h = t.h;
  win.w = t.w;
  win.kh = win.kw = t.k;
  win.stride_h = win.stride_w = t.stride;
  win.dilation_h = win.dilation_w = t.dilation;
  win.pad_top = win.pad_left = win.pad_bottom = win.pad_right = t.pad;
  const size_t span = t.dilation * (t.k - 1) + 1;
  win.oh = (t.h + 2 * t.pad - span) / t.stride + 1;
  win.ow = (t.w + 2 * t.pad - span) / t.stride + 1;
  return win;
}

// Direct convolution in double over NCHW x [c][h][w] and weights [m][c][k][k]: y [m][oh][ow].
std::vector<double> ConvReference(const ConvCase& t, const tsl_window& win, const std::vector<float>& x,
                                  const std::vector<float>& w, std::vector<double>* scale) {
  std::vector<double> y(t.m * win.oh * win.ow, 0.0);
  scale->assign(y.size(), 1.0);
  for (size_t o = 0; o < t.m; ++o)
    for (size_t oy = 0; oy < win.oh; ++oy)
      for (size_t ox = 0; ox < win.ow; ++ox)
        for (size_t ci = 0; ci < t.c; ++ci)
          for (size_t ky = 0; ky < t.k; ++ky)
            for (size_t kx = 0; kx < t.k; ++kx) {
              const long iy = long(oy * t.stride + ky * t.dilation) - long(t.pad);
              const long ix = long(ox * t.stride + kx * t.dilation) - long(t.pad);
              if (iy < 0 || ix < 0 || iy >= long(t.h) || ix >= long(t.w)) continue;
              const double v = double(x[(ci * t.h + iy) * t.w + ix]) * w[((o * t.c + ci) * t.k + ky) * t.k + kx];
              y[(o * win.oh + oy) * win.ow + ox] += v;
              (*scale)[(o * win.oh + oy) * win.ow + ox] += std::fabs(v);
            }
  return y;
}

const ConvCase kConvCases[] = {{5, 7, 3, 4, 3, 1, 1, 1}, {8, 8, 1, 16, 3, 1, 1, 1}, {9, 11, 5, 33, 3, 2, 1, 1},
                               {7, 7, 2, 3, 1, 2, 0, 1}, {10, 9, 3, 5, 3, 1, 2, 2}, {12, 12, 3, 8, 7, 2, 3, 1},
                               // 9x9: more taps than the NEON depthwise path lists (64), so the loop path.
                               {11, 10, 2, 6, 9, 1, 4, 1}};

// im2col (either layout) + GEMM is the convolution, for the row-by-row use the C emitter makes of them.
TEST(PortableConvTest, Im2colGemmMatchesDirectConvolution) {
  for (const ConvCase& t : kConvCases) {
    const tsl_window win = Window(t);
    const std::vector<float> x = Random(t.c * t.h * t.w, 7), w = Random(t.m * t.c * t.k * t.k, 8);
    std::vector<double> scale;
    const std::vector<double> want = ConvReference(t, win, x, w, &scale);
    const size_t kk = t.c * t.k * t.k;
    // NCHW: weights [m][kk] on the left, the transposed im2col row [kk][ow] on the right.
    std::vector<float> y(want.size()), col(kk * win.ow);
    for (size_t oy = 0; oy < win.oh; ++oy) {
      tsl_f32_im2col_nchw_row__autovec(&win, x.data(), 0, t.c, oy, col.data());
      tsl_f32_gemm_minmax__autovec(t.m, win.ow, kk, w.data(), kk, col.data(), win.ow, nullptr, nullptr, nullptr, 0,
                                   y.data() + oy * win.ow, win.oh * win.ow, -INFINITY, INFINITY);
    }
    ExpectClose(y, want, scale);
    // NHWC: x [h][w][c], weights packed [ky][kx][c][m], output [oy][ox][m].
    std::vector<float> xh(x.size()), wp(w.size()), yh(want.size());
    for (size_t ci = 0; ci < t.c; ++ci)
      for (size_t i = 0; i < t.h * t.w; ++i) xh[i * t.c + ci] = x[ci * t.h * t.w + i];
    for (size_t o = 0; o < t.m; ++o)
      for (size_t ci = 0; ci < t.c; ++ci)
        for (size_t kq = 0; kq < t.k * t.k; ++kq) wp[(kq * t.c + ci) * t.m + o] = w[(o * t.c + ci) * t.k * t.k + kq];
    std::vector<float> row(win.ow * kk);
    for (size_t oy = 0; oy < win.oh; ++oy) {
      tsl_f32_im2col_nhwc_row__autovec(&win, xh.data(), t.c, 0, t.c, oy, row.data());
      tsl_f32_gemm_minmax__autovec(win.ow, t.m, kk, row.data(), kk, wp.data(), t.m, nullptr, nullptr, nullptr, 0,
                                   yh.data() + oy * win.ow * t.m, t.m, -INFINITY, INFINITY);
    }
    std::vector<float> back(yh.size());
    for (size_t o = 0; o < t.m; ++o)
      for (size_t i = 0; i < win.oh * win.ow; ++i) back[o * win.oh * win.ow + i] = yh[i * t.m + o];
    ExpectClose(back, want, scale);
  }
}

// With and without bias and residual (the emitted C passes NULL for either).
TEST(PortableConvTest, DepthwiseMatchesReference) {
  for (const ConvCase& base : kConvCases) {
    for (const bool extras : {true, false}) {
      ConvCase t = base;
      t.m = t.c = base.m;  // depthwise: one filter per channel
      const tsl_window win = Window(t);
      const std::vector<float> x = Random(t.h * t.w * t.c, 9), w = Random(t.k * t.k * t.c, 10),
                               bias = Random(t.c, 11), r = Random(win.oh * win.ow * t.c, 12);
      std::vector<float> y(win.oh * win.ow * t.c);
      tsl_f32_dwconv_nhwc_minmax__autovec(&win, t.c, x.data(), w.data(), extras ? bias.data() : nullptr,
                                          extras ? r.data() : nullptr, 0, win.oh, y.data(), -0.5f, 1.0f);
      std::vector<double> want(y.size()), scale(y.size(), 3.0);
      for (size_t oy = 0; oy < win.oh; ++oy)
        for (size_t ox = 0; ox < win.ow; ++ox)
          for (size_t ch = 0; ch < t.c; ++ch) {
            double sum = extras ? bias[ch] : 0.0;
            for (size_t ky = 0; ky < t.k; ++ky)
              for (size_t kx = 0; kx < t.k; ++kx) {
                const long iy = long(oy * t.stride + ky * t.dilation) - long(t.pad);
                const long ix = long(ox * t.stride + kx * t.dilation) - long(t.pad);
                if (iy < 0 || ix < 0 || iy >= long(t.h) || ix >= long(t.w)) continue;
                sum += double(x[(iy * t.w + ix) * t.c + ch]) * w[(ky * t.k + kx) * t.c + ch];
              }
            const size_t i = (oy * win.ow + ox) * t.c + ch;
            want[i] = Clamp(sum + (extras ? r[i] : 0.0), -0.5, 1.0);
            scale[i] += t.k * t.k;
          }
      ExpectClose(y, want, scale);
    }
  }
}

TEST(PortablePoolTest, MaxAndAveragePoolMatchReference) {
  for (const ConvCase& t : kConvCases) {
    tsl_window win = Window(t);
    if (t.pad * 2 >= t.k) continue;  // ONNX pooling needs pads smaller than the window
    const std::vector<float> x = Random(t.h * t.w * t.c, 13);
    std::vector<float> ymax(win.oh * win.ow * t.c), yavg(ymax.size()), yavg_pad(ymax.size());
    tsl_f32_maxpool_nhwc__autovec(&win, t.c, x.data(), ymax.data());
    tsl_f32_avgpool_nhwc__autovec(&win, t.c, 0, x.data(), yavg.data());
    tsl_f32_avgpool_nhwc__autovec(&win, t.c, 1, x.data(), yavg_pad.data());
    std::vector<double> want_max(ymax.size()), want_avg(ymax.size()), want_pad(ymax.size()), scale(ymax.size(), 1.0);
    for (size_t oy = 0; oy < win.oh; ++oy)
      for (size_t ox = 0; ox < win.ow; ++ox)
        for (size_t ch = 0; ch < t.c; ++ch) {
          double mx = -INFINITY, sum = 0;
          int count = 0, padded = 0;
          for (size_t ky = 0; ky < t.k; ++ky)
            for (size_t kx = 0; kx < t.k; ++kx) {
              const long iy = long(oy * t.stride + ky * t.dilation) - long(t.pad);
              const long ix = long(ox * t.stride + kx * t.dilation) - long(t.pad);
              padded += iy < long(t.h + t.pad) && ix < long(t.w + t.pad);
              if (iy < 0 || ix < 0 || iy >= long(t.h) || ix >= long(t.w)) continue;
              const double v = x[(iy * t.w + ix) * t.c + ch];
              mx = std::max(mx, v);
              sum += v;
              ++count;
            }
          const size_t i = (oy * win.ow + ox) * t.c + ch;
          want_max[i] = mx;
          want_avg[i] = sum / count;
          want_pad[i] = sum / padded;
        }
    ExpectClose(ymax, want_max, scale);
    ExpectClose(yavg, want_avg, scale);
    ExpectClose(yavg_pad, want_pad, scale);
  }
}

TEST(PortablePoolTest, GlobalAverageAndRowMean) {
  for (size_t pixels : {1, 7, 49}) {
    for (size_t channels : {1, 5, 64, 67}) {
      const std::vector<float> x = Random(pixels * channels, 14);
      std::vector<float> y(channels), rows(pixels);
      tsl_f32_global_avgpool_nhwc__autovec(pixels, channels, x.data(), y.data());
      tsl_f32_row_mean__autovec(pixels, channels, x.data(), rows.data());
      std::vector<double> want(channels, 0.0), want_rows(pixels, 0.0);
      for (size_t p = 0; p < pixels; ++p)
        for (size_t c = 0; c < channels; ++c) {
          want[c] += double(x[p * channels + c]) / pixels;
          want_rows[p] += double(x[p * channels + c]) / channels;
        }
      ExpectClose(y, want, std::vector<double>(channels, 1.0));
      ExpectClose(rows, want_rows, std::vector<double>(pixels, 1.0));
    }
  }
}

TEST(PortableActivationTest, MatchesLibm) {
  const std::vector<float> x = Random(1037, 15, -9.0f, 9.0f);
  std::vector<float> hs = x, sg = x, si = x, cl = x, e(x.size());
  tsl_f32_hardswish__autovec(x.size(), hs.data());
  tsl_f32_sigmoid__autovec(x.size(), sg.data());
  tsl_f32_silu__autovec(x.size(), si.data());
  tsl_f32_clamp__autovec(x.size(), cl.data(), 0.0f, 6.0f);
  for (size_t i = 0; i < x.size(); ++i) e[i] = tsl_expf(x[i]);
  std::vector<double> whs, wsg, wsi, wcl, we, one(x.size(), 1.0), escale;
  for (float v : x) {
    const double s = 1.0 / (1.0 + std::exp(-double(v)));
    whs.push_back(v * Clamp(v / 6.0 + 0.5, 0, 1));
    wsg.push_back(s);
    wsi.push_back(v * s);
    wcl.push_back(Clamp(v, 0, 6));
    we.push_back(std::exp(double(v)));
    escale.push_back(std::exp(double(v)) * 0.3);  // 3e-6 relative: about 25 ulp, well above the ~2 ulp seen
  }
  ExpectClose(hs, whs, one);
  ExpectClose(sg, wsg, one);
  ExpectClose(si, wsi, std::vector<double>(x.size(), 9.0));
  ExpectClose(cl, wcl, one);
  ExpectClose(e, we, escale);
  EXPECT_EQ(tsl_expf(-INFINITY) < 1e-37f, true);
  EXPECT_EQ(std::isinf(tsl_expf(1000.0f)) || tsl_expf(1000.0f) > 1e38f, true);
}

// Far into both tails the logistic function saturates; the small side keeps a small relative error
// down to exp(-87), the bottom of tsl_expf's range, below which an absolute error of FLT_MIN (times
// |x| for SiLU) is allowed; tiny inputs keep SiLU(x) ~ x / 2.
TEST(PortableActivationTest, SigmoidAndSiluTails) {
  const std::vector<float> x = {-120.0f, -88.0f, -80.0f, -30.0f, -1e-3f, -1e-30f, -0.0f, 0.0f,
                                1e-30f,  1e-3f,  30.0f,  80.0f,  88.0f,  120.0f, 3.0e38f};
  std::vector<float> sg = x, si = x;
  tsl_f32_sigmoid__autovec(x.size(), sg.data());
  tsl_f32_silu__autovec(x.size(), si.data());
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = x[i], s = 1.0 / (1.0 + std::exp(-v)), floor = 1.2e-38 * std::max(1.0, std::fabs(v));
    ASSERT_NEAR(sg[i], s, 2e-6 * s + 1.2e-38) << "sigmoid of " << v;
    ASSERT_NEAR(si[i], v * s, 2e-6 * std::fabs(v * s) + floor) << "silu of " << v;
  }
}

TEST(PortableElementwiseTest, BiasAddMul) {
  const size_t rows = 5, channels = 37;
  const std::vector<float> a = Random(rows * channels, 16), b = Random(rows * channels, 17), bias = Random(channels, 18);
  std::vector<float> y(a.size()), sum(a.size()), prod(a.size());
  tsl_f32_bias_minmax__autovec(rows, channels, a.data(), bias.data(), y.data(), 0.0f, 6.0f);
  tsl_f32_vadd__autovec(a.size(), a.data(), b.data(), sum.data());
  tsl_f32_vmul__autovec(a.size(), a.data(), b.data(), prod.data());
  std::vector<double> wy, ws, wp;
  for (size_t i = 0; i < a.size(); ++i) {
    wy.push_back(Clamp(double(a[i]) + bias[i % channels], 0, 6));
    ws.push_back(double(a[i]) + b[i]);
    wp.push_back(double(a[i]) * b[i]);
  }
  const std::vector<double> one(a.size(), 1.0);
  ExpectClose(y, wy, one);
  ExpectClose(sum, ws, one);
  ExpectClose(prod, wp, one);
}

TEST(PortableNormTest, SoftmaxAndRmsNorm) {
  for (size_t n : {1, 3, 10, 33, 1000}) {
    const size_t rows = 3;
    std::vector<float> x = Random(rows * n, 19, -20.0f, 20.0f);
    x[0] = -INFINITY;  // a masked logit
    if (n == 1) x[0] = 0.0f;
    const std::vector<float> gain = Random(n, 20);
    std::vector<float> sm(x.size()), rn(x.size());
    tsl_f32_softmax__autovec(rows, n, x.data(), sm.data());
    tsl_f32_rmsnorm__autovec(rows, n, x.data() + 0, gain.data(), 1e-5f, rn.data());
    std::vector<double> wsm(x.size()), wrn(x.size());
    for (size_t r = 0; r < rows; ++r) {
      double mx = -INFINITY, sum = 0, ss = 0;
      for (size_t i = 0; i < n; ++i) mx = std::max(mx, double(x[r * n + i]));
      for (size_t i = 0; i < n; ++i) sum += std::exp(double(x[r * n + i]) - mx);
      for (size_t i = 0; i < n; ++i) wsm[r * n + i] = std::exp(double(x[r * n + i]) - mx) / sum;
      for (size_t i = 0; i < n; ++i) ss += double(x[r * n + i]) * x[r * n + i];
      for (size_t i = 0; i < n; ++i) wrn[r * n + i] = x[r * n + i] / std::sqrt(ss / n + 1e-5) * gain[i];
    }
    if (n > 1) {  // RMSNorm of a row holding -inf is not a number; skip that row's comparison
      std::fill(rn.begin(), rn.begin() + n, 0.0f);
      std::fill(wrn.begin(), wrn.begin() + n, 0.0);
    }
    ExpectClose(sm, wsm, std::vector<double>(x.size(), 1.0));
    ExpectClose(rn, wrn, std::vector<double>(x.size(), 10.0));
  }
}

TEST(PortableTransposeTest, NchwToNhwcAndBack) {
  const size_t shape[4] = {2, 3, 4, 5}, to_last[4] = {0, 2, 3, 1};
  const std::vector<float> x = Random(120, 21);
  std::vector<float> y(120);
  tsl_f32_transpose__scalar(4, shape, to_last, x.data(), y.data());
  for (size_t n = 0; n < 2; ++n)
    for (size_t c = 0; c < 3; ++c)
      for (size_t h = 0; h < 4; ++h)
        for (size_t w = 0; w < 5; ++w) ASSERT_EQ(y[((n * 4 + h) * 5 + w) * 3 + c], x[((n * 3 + c) * 4 + h) * 5 + w]);
}

}  // namespace
}  // namespace tessel
