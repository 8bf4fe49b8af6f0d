#include <cstdint>
#include <cstring>

#include "gtest/gtest.h"
#include "kernels/registry/op_kernel.h"

namespace tessel {
namespace {

TEST(SharedScratchTest, LargestReservationPerTaskAligned) {
  SharedScratch s;
  EXPECT_EQ(s.Get(0), nullptr);
  EXPECT_TRUE(s.Reserve(1, 1000));
  EXPECT_TRUE(s.Reserve(2, 100));   // more tasks, less per task
  EXPECT_TRUE(s.Reserve(1, 4097));  // the largest per-task size wins, rounded to 64 bytes
  s.Allocate();
  EXPECT_EQ(s.bytes(), 2u * 4160u);
  auto* t0 = static_cast<unsigned char*>(s.Get(0));
  auto* t1 = static_cast<unsigned char*>(s.Get(1));
  ASSERT_NE(t0, nullptr);
  ASSERT_NE(t1, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t0) % 64, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t1) % 64, 0u);
  EXPECT_GE(t1 - t0, 4097);  // task buffers do not overlap
  EXPECT_EQ(s.Get(2), nullptr);
  for (int i = 0; i < 4097; ++i) ASSERT_EQ(t0[i], 0) << i;  // zero-filled
  std::memset(t1, 0xff, 4097);                              // the whole reservation is writable
  EXPECT_EQ(t0[4096], 0);
  // Too late: the session has allocated; the kernel must keep buffers of its own.
  EXPECT_FALSE(s.Reserve(1, 1 << 20));
  EXPECT_EQ(s.bytes(), 2u * 4160u);
}

TEST(SharedScratchTest, NothingReserved) {
  SharedScratch s;
  s.Allocate();
  EXPECT_EQ(s.bytes(), 0u);
  EXPECT_EQ(s.Get(0), nullptr);
}

}  // namespace
}  // namespace tessel
