// Half and bfloat16 conversions against their definitions (ldexp arithmetic), exhaustively.
#include "support/fp16.h"

#include <cmath>
#include <limits>

#include "gtest/gtest.h"

namespace tessel {
namespace {

// IEEE binary16 by definition.
double HalfByDefinition(uint16_t h) {
  const int sign = h >> 15, exp = (h >> 10) & 0x1F, frac = h & 0x3FF;
  double v;
  if (exp == 0) {
    v = std::ldexp(frac, -24);
  } else if (exp == 31) {
    v = frac ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else {
    v = std::ldexp(1024 + frac, exp - 25);
  }
  return sign ? -v : v;
}

TEST(Fp16Test, HalfToFloatIsExactForEveryValue) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const double want = HalfByDefinition(static_cast<uint16_t>(h));
    const float got = HalfToFloat(static_cast<uint16_t>(h));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << h;
    } else {
      EXPECT_EQ(static_cast<double>(got), want) << h;
    }
  }
}

TEST(Fp16Test, FloatToHalfRoundsToNearestEven) {
  // Every half round-trips, and the midpoint between neighbours goes to the even one.
  for (uint32_t h = 0; h < 0x7C00; ++h) {
    const float f = HalfToFloat(static_cast<uint16_t>(h));
    ASSERT_EQ(FloatToHalf(f), h);
    ASSERT_EQ(FloatToHalf(-f), h | 0x8000);
    if (h + 1 < 0x7C00) {
      const float mid = static_cast<float>((HalfByDefinition(h) + HalfByDefinition(h + 1)) / 2);
      ASSERT_EQ(FloatToHalf(mid), (h % 2 == 0) ? h : h + 1) << h;
    }
  }
  EXPECT_EQ(FloatToHalf(1e6f), 0x7C00);  // overflow to infinity
  EXPECT_EQ(FloatToHalf(std::numeric_limits<float>::infinity()), 0x7C00);
  EXPECT_EQ(FloatToHalf(std::numeric_limits<float>::quiet_NaN()) & 0x7E00, 0x7E00);
  EXPECT_EQ(FloatToHalf(1e-9f), 0);  // below half the smallest subnormal
}

TEST(Fp16Test, BFloat16) {
  EXPECT_EQ(BF16ToFloat(0x3F80), 1.0f);
  EXPECT_EQ(BF16ToFloat(0xC040), -3.0f);
  EXPECT_EQ(FloatToBF16(1.0f), 0x3F80);
  // 1 + 2^-8 is halfway between bf16 1.0 and 1.0078125: ties to even (1.0).
  EXPECT_EQ(FloatToBF16(1.0f + std::ldexp(1.0f, -8)), 0x3F80);
  EXPECT_EQ(FloatToBF16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82);
  EXPECT_TRUE(std::isnan(BF16ToFloat(FloatToBF16(std::numeric_limits<float>::quiet_NaN()))));
}

}  // namespace
}  // namespace tessel
