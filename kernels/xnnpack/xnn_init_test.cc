// XNNPACK's packed weights come from Tessel's allocator once InitXnnpack ran: a fully connected
// operator with 1 MiB of weights adds at least that much to the 2 MiB-page pool (support/memory.h), and
// deleting it gives it back.
#include "kernels/xnnpack/xnn_init.h"

#include <cmath>
#include <vector>

#include "support/memory.h"
#include "gtest/gtest.h"
#include "xnnpack.h"

namespace tessel {
namespace {

TEST(XnnInitTest, PackedWeightsUseTesselsAllocator) {
  ASSERT_TRUE(InitXnnpack().ok());
  const size_t before = PooledBytes();
  const size_t n = 512, k = 512;
  std::vector<float> w(n * k, 0.5f);
  xnn_operator_t op = nullptr;
  ASSERT_EQ(xnn_create_fully_connected_nc_f32(k, n, k, n, w.data(), nullptr, -INFINITY, INFINITY, 0, &op),
            xnn_status_success);
#if defined(__SANITIZE_ADDRESS__)
  // Under AddressSanitizer every buffer stays on the heap (PooledBytes() is 0).
  EXPECT_EQ(PooledBytes(), 0u);
#else
  EXPECT_GE(PooledBytes(), before + n * k * sizeof(float));
#endif
  xnn_delete_operator(op);
  EXPECT_EQ(PooledBytes(), before);
}

}  // namespace
}  // namespace tessel
