#include "kernels/cpu/aligned_buffer.h"

#include <cstdint>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace tessel {
namespace {

TEST(AlignedBufferTest, StartsOnACacheLineAndReadsZero) {
  // Sizes around malloc's mmap threshold too, where std::vector's data sits 16 bytes past a page.
  for (size_t n : {size_t{1}, size_t{15}, size_t{16}, size_t{1000}, size_t{40000}, size_t{300000}}) {
    AlignedBuffer<float> b(n);
    ASSERT_NE(b.data(), nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % 64, 0u) << n;
    EXPECT_EQ(b.size(), n);
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(b[i], 0.0f) << i;
    b[n - 1] = 3.0f;  // the last element is writable
    EXPECT_EQ(b.data()[n - 1], 3.0f);
  }
}

TEST(AlignedBufferTest, EmptyAndMoved) {
  AlignedBuffer<float> empty;
  EXPECT_EQ(empty.data(), nullptr);
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_EQ(AlignedBuffer<float>(0).data(), nullptr);

  std::vector<AlignedBuffer<float>> buffers;
  for (int i = 0; i < 4; ++i) buffers.emplace_back(100);  // growing the vector moves the buffers
  buffers[0][7] = 1.5f;
  AlignedBuffer<float> moved = std::move(buffers[0]);
  EXPECT_EQ(moved[7], 1.5f);
  EXPECT_EQ(moved.size(), 100u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(moved.data()) % 64, 0u);
  EXPECT_EQ(buffers[0].data(), nullptr);  // NOLINT(bugprone-use-after-move): moved-from is empty
  EXPECT_EQ(buffers[0].size(), 0u);
}

}  // namespace
}  // namespace tessel
