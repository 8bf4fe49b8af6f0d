// NEON smoke test: a fused multiply-add dot product with intrinsics against the scalar loop.
#include <cstddef>
#include <vector>

#include "gtest/gtest.h"

#if defined(__aarch64__)
#include <arm_neon.h>
#endif

namespace {

TEST(NeonSmokeTest, DotProductMatchesScalar) {
#if !defined(__aarch64__)
  GTEST_SKIP() << "NEON needs an aarch64 target (bazel test --config=aarch64)";
#else
  const size_t n = 37;  // not a multiple of 4: exercises the tail
  std::vector<float> a(n), b(n);
  for (size_t i = 0; i < n; ++i) {
    a[i] = 0.5f * static_cast<float>(i) - 3.0f;
    b[i] = 1.0f / static_cast<float>(i + 1);
  }
  float32x4_t acc = vdupq_n_f32(0.0f);
  size_t i = 0;
  for (; i + 4 <= n; i += 4) acc = vfmaq_f32(acc, vld1q_f32(&a[i]), vld1q_f32(&b[i]));
  float got = vaddvq_f32(acc);
  for (; i < n; ++i) got += a[i] * b[i];
  double want = 0;
  for (size_t j = 0; j < n; ++j) want += double(a[j]) * b[j];
  EXPECT_NEAR(got, want, 1e-4);

  // Integer widening multiply: int8 x int8 -> int16 lanes.
  int8x8_t x = vcreate_s8(0x80FF017F02FE0304ull);
  int16x8_t p = vmull_s8(x, x);
  int8_t xs[8];
  vst1_s8(xs, x);
  int16_t ps[8];
  vst1q_s16(ps, p);
  for (int k = 0; k < 8; ++k) EXPECT_EQ(ps[k], int16_t(xs[k]) * int16_t(xs[k]));
#endif
}

}  // namespace
