// Tests of Tensor's element conversions: GetAsDouble of each float type and SetFromDouble's rounding
// (values chosen by hand where float32, float16 and bfloat16 round differently).
#include "graph/tensor.h"

#include <cstdint>

#include "gtest/gtest.h"

namespace tessel {
namespace {

TEST(TensorTest, SetFromDoubleRoundsToEachFloatType) {
  // 1 + 2^-30: float32 keeps 1 (24-bit significand); double keeps it exactly.
  const double tiny_step = 1.0 + 1.0 / (1 << 30);
  Tensor f32(DType::kF32, {2});
  f32.SetFromDouble(0, tiny_step);
  f32.SetFromDouble(1, -2.5);
  EXPECT_EQ(f32.data<float>()[0], 1.0f);
  EXPECT_EQ(f32.GetAsDouble(1), -2.5);
  Tensor f64(DType::kF64, {1});
  f64.SetFromDouble(0, tiny_step);
  EXPECT_EQ(f64.GetAsDouble(0), tiny_step);
  // float16: 1 + 2^-11 is a tie between 1 and 1 + 2^-10 (nearest even: 1); 1 + 3 * 2^-12 rounds up.
  Tensor f16(DType::kF16, {3});
  f16.SetFromDouble(0, 1.0 + 1.0 / 2048);
  f16.SetFromDouble(1, 1.0 + 3.0 / 4096);
  f16.SetFromDouble(2, 65504.0);  // the largest float16
  EXPECT_EQ(f16.data<uint16_t>()[0], 0x3C00);
  EXPECT_EQ(f16.data<uint16_t>()[1], 0x3C01);
  EXPECT_EQ(f16.GetAsDouble(2), 65504.0);
  // bfloat16 (8-bit significand): 1 + 2^-8 ties to 1, 1 + 3 * 2^-9 rounds up to 1 + 2^-7.
  Tensor bf16(DType::kBF16, {2});
  bf16.SetFromDouble(0, 1.0 + 1.0 / 256);
  bf16.SetFromDouble(1, 1.0 + 3.0 / 512);
  EXPECT_EQ(bf16.data<uint16_t>()[0], 0x3F80);
  EXPECT_EQ(bf16.data<uint16_t>()[1], 0x3F81);
  EXPECT_EQ(bf16.GetAsDouble(1), 1.0 + 1.0 / 128);
}

}  // namespace
}  // namespace tessel
