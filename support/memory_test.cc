// graph/memory: buffers are 64-byte aligned, writable end to end and disjoint whatever their size
// (pooled on 2 MiB pages or not, one larger than a pool chunk), survive the release of their
// neighbours, and a pool chunk can be filled again after every buffer in it was freed; MapHugePages
// gives zeroed, 2 MiB aligned memory. Each buffer is filled with its own byte pattern and checked
// after all allocations and frees, so overlapping or reused live memory shows as a wrong byte.
#include "support/memory.h"

#include <cstdint>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"

namespace tessel {
namespace {

struct Block {
  uint8_t* p;
  size_t bytes;
  uint8_t fill;
};

bool Holds(const Block& b) {
  for (size_t i = 0; i < b.bytes; ++i) {
    if (b.p[i] != b.fill) return false;
  }
  return true;
}

TEST(MemoryTest, BuffersAreAlignedDisjointAndKeepTheirContents) {
  const std::vector<size_t> sizes = {1,           100,        kPooledMinBytes - 1, kPooledMinBytes, 300000,
                                     3 << 20,     70000,      (9 << 20) + 5,       200,             1 << 20,
                                     (5 << 20) + 1, 65 << 10};
  std::vector<Block> blocks;
  for (size_t i = 0; i < sizes.size(); ++i) {
    auto* p = static_cast<uint8_t*>(AllocateBuffer(sizes[i]));
    ASSERT_NE(p, nullptr) << sizes[i];
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << sizes[i];
    blocks.push_back({p, sizes[i], static_cast<uint8_t>(i + 1)});
    std::memset(p, blocks.back().fill, sizes[i]);
  }
  // Free every other buffer, then allocate again into whatever was released.
  std::vector<Block> kept;
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (i % 2 == 0) {
      FreeBuffer(blocks[i].p);
    } else {
      kept.push_back(blocks[i]);
    }
  }
  for (size_t i = 0; i < 6; ++i) {
    const size_t bytes = (i + 1) * (1 << 20) / 3;
    auto* p = static_cast<uint8_t*>(AllocateBuffer(bytes));
    ASSERT_NE(p, nullptr);
    kept.push_back({p, bytes, static_cast<uint8_t>(100 + i)});
    std::memset(p, kept.back().fill, bytes);
  }
  for (const Block& b : kept) EXPECT_TRUE(Holds(b)) << b.bytes << " bytes, fill " << int{b.fill};
  for (const Block& b : kept) FreeBuffer(b.p);
  // With everything freed, a chunk's worth of new buffers still works.
  std::vector<Block> again;
  for (int i = 0; i < 40; ++i) {
    auto* p = static_cast<uint8_t*>(AllocateBuffer(256 << 10));
    ASSERT_NE(p, nullptr);
    again.push_back({p, 256 << 10, static_cast<uint8_t>(200 + i % 50)});
    std::memset(p, again.back().fill, again.back().bytes);
  }
  for (const Block& b : again) EXPECT_TRUE(Holds(b));
  for (const Block& b : again) FreeBuffer(b.p);
  FreeBuffer(nullptr);  // a no-op, like free(nullptr)
}

// Zeroed buffers read as zero even where earlier buffers of every size were written and freed (the
// pool skips the fill: its memory must never be handed out twice), while those earlier buffers and
// live neighbours keep their bytes.
TEST(MemoryTest, ZeroedBuffersAreZeroAfterReuse) {
  const std::vector<size_t> sizes = {1, 100, kPooledMinBytes - 1, kPooledMinBytes, 300000, 3 << 20, (9 << 20) + 5};
  for (int round = 0; round < 3; ++round) {
    std::vector<Block> dirty;
    for (size_t i = 0; i < sizes.size(); ++i) {
      auto* p = static_cast<uint8_t*>(AllocateBuffer(sizes[i]));
      ASSERT_NE(p, nullptr) << sizes[i];
      std::memset(p, 0xab, sizes[i]);
      dirty.push_back({p, sizes[i], 0xab});
    }
    // Free every other one, so that zeroed buffers land both next to live ones and in freed space.
    std::vector<Block> live;
    for (size_t i = 0; i < dirty.size(); ++i) {
      if (i % 2 == 0) {
        FreeBuffer(dirty[i].p);
      } else {
        live.push_back(dirty[i]);
      }
    }
    std::vector<Block> zeroed;
    for (size_t bytes : sizes) {
      auto* p = static_cast<uint8_t*>(AllocateZeroedBuffer(bytes));
      ASSERT_NE(p, nullptr) << bytes;
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << bytes;
      zeroed.push_back({p, bytes, 0});
      EXPECT_TRUE(Holds(zeroed.back())) << bytes << " bytes, round " << round;
      std::memset(p, 0xcd, bytes);  // dirty for the next round
    }
    for (const Block& b : live) EXPECT_TRUE(Holds(b));
    for (const Block& b : live) FreeBuffer(b.p);
    for (const Block& b : zeroed) FreeBuffer(b.p);
  }
}

TEST(MemoryTest, HugePageMappingsAreAlignedAndZeroed) {
  for (size_t bytes : {size_t{1}, kHugePageBytes, kHugePageBytes + 1, size_t{5} << 20}) {
    auto* p = static_cast<uint8_t*>(MapHugePages(bytes));
    ASSERT_NE(p, nullptr) << bytes;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % kHugePageBytes, 0u) << bytes;
    bool zero = true;
    for (size_t i = 0; i < bytes; ++i) zero = zero && p[i] == 0;
    EXPECT_TRUE(zero) << bytes;
    std::memset(p, 0x5a, bytes);
    UnmapHugePages(p, bytes);
  }
}

}  // namespace
}  // namespace tessel
