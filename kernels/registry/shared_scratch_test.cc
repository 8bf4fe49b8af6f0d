#include <cstdint>
#include <cstring>

#include "graph/graph.h"
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

// A kernel's scratch: its own buffer without a session (64-byte aligned per task, zero-filled, the
// whole size writable), the session's once there is one, its own again once the session allocated.
TEST(KernelScratchTest, OwnOrShared) {
  Graph graph;
  Node* node = graph.AddNode("Relu", {}, 1, "n");
  for (size_t bytes : {size_t{4}, size_t{60}, size_t{1000}, size_t{160000}, size_t{1200000}}) {
    KernelScratch own;
    own.Bind(OpKernelArgs{*node, {}, {}, nullptr, 3, false, nullptr}, 3, bytes);
    for (int t = 0; t < 3; ++t) {
      auto* p = static_cast<unsigned char*>(own.Get(t));
      ASSERT_NE(p, nullptr);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << bytes;
      for (size_t i = 0; i < bytes; ++i) ASSERT_EQ(p[i], 0) << bytes << " task " << t << " byte " << i;
      std::memset(p, 0x5a, bytes);  // tasks do not overlap: the next task's bytes are still zero
    }
  }
  SharedScratch session;
  KernelScratch a, b;
  a.Bind(OpKernelArgs{*node, {}, {}, nullptr, 2, false, &session}, 2, 1000);
  b.Bind(OpKernelArgs{*node, {}, {}, nullptr, 1, false, &session}, 1, 5000);
  session.Allocate();
  EXPECT_EQ(a.Get(0), session.Get(0));  // every kernel of the session on the same bytes
  EXPECT_EQ(b.Get(0), session.Get(0));
  EXPECT_EQ(a.Get(1), session.Get(1));
  EXPECT_GE(static_cast<unsigned char*>(session.Get(1)) - static_cast<unsigned char*>(session.Get(0)), 5000);
  KernelScratch late;  // created after the session allocated: keeps its own
  late.Bind(OpKernelArgs{*node, {}, {}, nullptr, 1, false, &session}, 1, 100);
  EXPECT_NE(late.Get(0), nullptr);
  EXPECT_NE(late.Get(0), session.Get(0));
}

}  // namespace
}  // namespace tessel
