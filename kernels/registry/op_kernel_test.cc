// ForceAllows: what TESSEL_FORCE_BACKEND admits at operator level.
#include "kernels/registry/op_kernel.h"

#include "gtest/gtest.h"

namespace tessel {
namespace {

TEST(ForceAllowsTest, EmptyAdmitsEverything) { EXPECT_TRUE(ForceAllows("", "xnnpack", "xnn_f32_conv2d_nhwc__xnnpack")); }

TEST(ForceAllowsTest, OneBackendOrKernelName) {
  EXPECT_TRUE(ForceAllows("xnnpack", "xnnpack", "xnn_f32_conv2d_nhwc__xnnpack"));
  EXPECT_FALSE(ForceAllows("xnnpack", "portable", "tessel_x32_transpose__portable"));
  EXPECT_TRUE(ForceAllows("tessel_x32_transpose__portable", "portable", "tessel_x32_transpose__portable"));
}

TEST(ForceAllowsTest, CommaSeparatedList) {
  EXPECT_TRUE(ForceAllows("xnnpack,portable", "portable", "tessel_x32_transpose__portable"));
  EXPECT_TRUE(ForceAllows("xnnpack,portable", "xnnpack", "xnn_f32_conv2d_nhwc__xnnpack"));
  EXPECT_FALSE(ForceAllows("xnnpack,portable", "fused", "tessel_f32_dwconv2d_3x3_pwconv2d_nhwc__fused"));
  EXPECT_FALSE(ForceAllows("xnnpack,", "portable", "p")) << "an empty item admits nothing";
}

}  // namespace
}  // namespace tessel
