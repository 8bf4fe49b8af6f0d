// XNNPACK (Debian's 2022-02 snapshot): a 3x3 NHWC convolution with padding and stride, run on a
// pthreadpool, compared with a naive loop.
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "pthreadpool.h"
#include "xnnpack.h"

namespace {

TEST(XnnpackTest, Conv3x3MatchesNaiveLoop) {
  ASSERT_EQ(xnn_initialize(nullptr), xnn_status_success);
  const int n = 1, h = 9, w = 7, ci = 5, co = 6, kh = 3, kw = 3, stride = 2, pad = 1;
  const int oh = (h + 2 * pad - kh) / stride + 1, ow = (w + 2 * pad - kw) / stride + 1;
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> input(n * h * w * ci), kernel(co * kh * kw * ci), bias(co);
  for (float& v : input) v = dist(rng);
  for (float& v : kernel) v = dist(rng);
  for (float& v : bias) v = dist(rng);

  xnn_operator_t op = nullptr;
  ASSERT_EQ(xnn_create_convolution2d_nhwc_f32(pad, pad, pad, pad, kh, kw, stride, stride, 1, 1, 1, ci, co,
                                              ci, co, kernel.data(), bias.data(),
                                              -std::numeric_limits<float>::infinity(),
                                              std::numeric_limits<float>::infinity(), 0, &op),
            xnn_status_success);
  pthreadpool_t pool = pthreadpool_create(2);
  std::vector<float> output(n * oh * ow * co, NAN);
  ASSERT_EQ(xnn_setup_convolution2d_nhwc_f32(op, n, h, w, input.data(), output.data(), pool),
            xnn_status_success);
  ASSERT_EQ(xnn_run_operator(op, pool), xnn_status_success);

  for (int y = 0; y < oh; ++y) {
    for (int x = 0; x < ow; ++x) {
      for (int o = 0; o < co; ++o) {
        double acc = bias[o];
        for (int ky = 0; ky < kh; ++ky) {
          for (int kx = 0; kx < kw; ++kx) {
            const int iy = y * stride - pad + ky, ix = x * stride - pad + kx;
            if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
            for (int c = 0; c < ci; ++c) {
              acc += double(input[(iy * w + ix) * ci + c]) * kernel[((o * kh + ky) * kw + kx) * ci + c];
            }
          }
        }
        EXPECT_NEAR(output[(y * ow + x) * co + o], acc, 1e-4) << "at y=" << y << " x=" << x << " o=" << o;
      }
    }
  }
  xnn_delete_operator(op);
  pthreadpool_destroy(pool);
}

}  // namespace
