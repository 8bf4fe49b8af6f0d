// SVE smoke test: a vector-length-agnostic (whilelt-predicated) saxpy and reduction against scalar,
// run at each emulated vector length (see tessel_sve_test in build_defs.bzl).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"

#if defined(__ARM_FEATURE_SVE)
#include <arm_sve.h>
#include <sys/auxv.h>
#endif

namespace {

#if defined(__ARM_FEATURE_SVE)
int RequestedVectorBits() {
  // The qemu wrapper consumes --tessel_sve_vl; it also arrives here when run without the wrapper.
  const char* v = std::getenv("TESSEL_SVE_VL");
  return v ? std::atoi(v) : 0;
}
#endif

TEST(SveSmokeTest, PredicatedSaxpyAndReductionMatchScalar) {
#if !defined(__ARM_FEATURE_SVE)
  GTEST_SKIP() << "SVE needs an aarch64 target built with +sve (bazel test --config=aarch64)";
#else
  if (!(getauxval(AT_HWCAP) & HWCAP_SVE)) GTEST_SKIP() << "CPU lacks SVE";
  const uint64_t lanes = svcntw();
  std::printf("SVE vector length: %llu bits\n", static_cast<unsigned long long>(lanes * 32));
  EXPECT_GE(lanes, 4u);
  if (RequestedVectorBits() > 0) EXPECT_EQ(lanes * 32, uint64_t(RequestedVectorBits()));
  for (size_t n : {size_t(1), size_t(3), size_t(16), size_t(37), size_t(130)}) {
    std::vector<float> x(n), y(n), want(n);
    for (size_t i = 0; i < n; ++i) {
      x[i] = 0.25f * i - 1.0f;
      y[i] = 2.0f - 0.5f * i;
      want[i] = 3.0f * x[i] + y[i];
    }
    svfloat32_t sum = svdup_f32(0.0f);
    for (size_t i = 0; i < n; i += lanes) {
      svbool_t pg = svwhilelt_b32(i, n);
      svfloat32_t vx = svld1(pg, &x[i]);
      svfloat32_t vy = svld1(pg, &y[i]);
      svfloat32_t r = svmla_x(pg, vy, vx, svdup_f32(3.0f));
      svst1(pg, &y[i], r);
      sum = svadd_m(pg, sum, r);
    }
    double want_sum = 0;
    for (size_t i = 0; i < n; ++i) {
      EXPECT_FLOAT_EQ(y[i], want[i]) << "n=" << n << " i=" << i;
      want_sum += want[i];
    }
    EXPECT_NEAR(svaddv(svptrue_b32(), sum), want_sum, 1e-3) << "n=" << n;
  }
#endif
}

}  // namespace
