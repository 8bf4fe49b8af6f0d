// An XNNPACK operator call on the target: f32 fully connected (with clamp) against a naive loop.
#include <algorithm>
#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "xnnpack.h"

namespace {

TEST(XnnpackCallTest, FullyConnectedMatchesLoop) {
  ASSERT_EQ(xnn_initialize(nullptr), xnn_status_success);
  const size_t batch = 3, in = 13, out = 7;
  std::vector<float> x(batch * in), w(out * in), b(out), y(batch * out, NAN);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * i);
  for (size_t i = 0; i < w.size(); ++i) w[i] = std::cos(0.11f * i);
  for (size_t i = 0; i < b.size(); ++i) b[i] = 0.1f * i - 0.3f;
  xnn_operator_t op = nullptr;
  ASSERT_EQ(xnn_create_fully_connected_nc_f32(in, out, in, out, w.data(), b.data(), -1.0f, 2.5f, 0, &op),
            xnn_status_success);
  ASSERT_EQ(xnn_setup_fully_connected_nc_f32(op, batch, x.data(), y.data(), nullptr), xnn_status_success);
  ASSERT_EQ(xnn_run_operator(op, nullptr), xnn_status_success);
  for (size_t r = 0; r < batch; ++r) {
    for (size_t o = 0; o < out; ++o) {
      double acc = b[o];
      for (size_t i = 0; i < in; ++i) acc += double(x[r * in + i]) * w[o * in + i];
      acc = std::min(2.5, std::max(-1.0, acc));
      EXPECT_NEAR(y[r * out + o], acc, 1e-5);
    }
  }
  xnn_delete_operator(op);
}

}  // namespace
