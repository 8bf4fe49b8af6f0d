// fp16 <-> f32 conversion: every finite half survives a round trip, and rounding is to nearest even
// (checked against hand-computed halves).
#include "kernels/gemv/internal/quant_blocks.h"

#include <cmath>

#include "gtest/gtest.h"

namespace tessel {
namespace {

TEST(QuantBlocksTest, EveryFiniteHalfRoundTrips) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7c00) == 0x7c00) continue;  // inf / NaN
    ASSERT_EQ(F32ToFp16(Fp16ToF32(static_cast<uint16_t>(h))), h) << std::hex << h;
  }
}

TEST(QuantBlocksTest, KnownValues) {
  EXPECT_EQ(Fp16ToF32(0x3c00), 1.0f);
  EXPECT_EQ(Fp16ToF32(0xc000), -2.0f);
  EXPECT_EQ(Fp16ToF32(0x7bff), 65504.0f);
  EXPECT_EQ(Fp16ToF32(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(F32ToFp16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);      // tie, rounds to even
  EXPECT_EQ(F32ToFp16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);  // tie, rounds up to even
  EXPECT_EQ(F32ToFp16(1e6f), 0x7c00);
  EXPECT_EQ(F32ToFp16(-0.0f), 0x8000);
}

}  // namespace
}  // namespace tessel
