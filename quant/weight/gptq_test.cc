// GPTQ against RTN on a synthetic layer with correlated inputs, and the streamed Hessian against a
// direct computation.
#include "quant/weight/gptq.h"

#include <cmath>
#include <optional>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "quant/weight/rtn.h"

namespace tessel::quant {
namespace {

// Inputs with a few large channels and strong correlations, as LLM activations have.
std::vector<float> Inputs(int64_t n, int64_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int64_t k = 8;  // latent factors
  std::vector<float> mix(k * cols);
  for (float& v : mix) v = normal(rng);
  std::vector<float> x(n * cols);
  for (int64_t t = 0; t < n; ++t) {
    float z[k];
    for (float& v : z) v = normal(rng);
    for (int64_t c = 0; c < cols; ++c) {
      float s = 0.3f * normal(rng);
      for (int64_t j = 0; j < k; ++j) s += z[j] * mix[j * cols + c];
      x[t * cols + c] = s * (c % 17 == 0 ? 4.0f : 1.0f);
    }
  }
  return x;
}

double OutputError(const std::vector<float>& x, int64_t n, const std::vector<float>& w, const std::vector<float>& q,
                   int64_t rows, int64_t cols) {
  double e = 0;
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t r = 0; r < rows; ++r) {
      double d = 0;
      for (int64_t c = 0; c < cols; ++c) d += static_cast<double>(x[t * cols + c]) * (w[r * cols + c] - q[r * cols + c]);
      e += d * d;
    }
  }
  return e;
}

TEST(GptqTest, HessianMatchesDirectSum) {
  const int64_t n = 100, cols = 16;
  const std::vector<float> x = Inputs(n, cols, 3);
  HessianAccumulator acc(cols);
  acc.Add(x.data(), 37);  // in two chunks
  acc.Add(x.data() + 37 * cols, n - 37);
  const Eigen::MatrixXd h = acc.Hessian();
  for (int64_t i = 0; i < cols; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      double s = 0;
      for (int64_t t = 0; t < n; ++t) s += static_cast<double>(x[t * cols + i]) * x[t * cols + j];
      EXPECT_NEAR(h(i, j), 2.0 * s / n, 1e-4 * (1 + std::abs(2.0 * s / n))) << i << "," << j;
    }
  }
}

// Against the reference's route (gptq.py: cholesky, cholesky_inverse, cholesky upper) with Eigen's
// LLT on a random, badly scaled SPD matrix. n = 96 is one of the 128-column blocks of the blocked
// Cholesky and of the block-wise inverse; n = 300, two whole blocks and a partial one.
TEST(GptqTest, UpperCholeskyOfInverseMatchesReferenceRoute) {
  for (int n : {96, 300}) {
    std::mt19937 rng(7);
    std::normal_distribution<double> normal(0.0, 1.0);
    Eigen::MatrixXd a(n, 2 * n);
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < 2 * n; ++j) a(i, j) = normal(rng) * (1.0 + 0.1 * i);
    }
    Eigen::MatrixXd h = a * a.transpose();
    h.diagonal().array() += 0.01 * h.diagonal().mean();
    const Eigen::MatrixXd hinv = h.llt().solve(Eigen::MatrixXd::Identity(n, n));
    const Eigen::MatrixXd expected = hinv.llt().matrixU();
    const std::optional<Eigen::MatrixXd> u = UpperCholeskyOfInverse(h);
    ASSERT_TRUE(u.has_value()) << n;
    EXPECT_LT((*u - expected).cwiseAbs().maxCoeff(), 1e-9 * expected.cwiseAbs().maxCoeff()) << n;
    EXPECT_LT((u->transpose() * *u - hinv).cwiseAbs().maxCoeff(), 1e-9 * hinv.cwiseAbs().maxCoeff()) << n;
    EXPECT_FALSE(UpperCholeskyOfInverse(-h).has_value()) << n;
    // Not positive definite only through input 0, which the order reversal puts in the Cholesky's last
    // block: the blocked factorization fails there too.
    Eigen::MatrixXd late = h;
    late(0, 0) = -1.0;
    EXPECT_FALSE(UpperCholeskyOfInverse(late).has_value()) << n;
  }
}

TEST(GptqTest, LowersOutputErrorAgainstRtn) {
  const int64_t n = 2048, rows = 48, cols = 256;
  const std::vector<float> x = Inputs(n, cols, 4);
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 0.1f);
  std::vector<float> w(rows * cols);
  for (float& v : w) v = normal(rng);
  HessianAccumulator acc(cols);
  acc.Add(x.data(), n);
  const Eigen::MatrixXd h = acc.Hessian();
  for (const QuantScheme& s : {QuantScheme{4, 128, false}, QuantScheme{3, 128, false}, QuantScheme{4, 32, true},
                               QuantScheme{3, 64, true}}) {
    const double rtn = OutputError(x, n, w, RtnQuantize(w.data(), rows, cols, s).Dequantize(), rows, cols);
    for (int variant = 0; variant < 4; ++variant) {
      const bool act_order = variant & 1;
      GptqOptions o;
      o.act_order = act_order;
      o.mse = variant & 2;
      absl::StatusOr<QuantizedMatrix> q = GptqQuantize(w.data(), rows, cols, h, s, o);
      ASSERT_TRUE(q.ok()) << q.status();
      // Every group keeps one scale across its columns (the stored format has no column index).
      const double gptq = OutputError(x, n, w, q->Dequantize(), rows, cols);
      EXPECT_LT(gptq, 0.75 * rtn) << s.ToString() << " act_order " << act_order << " mse " << o.mse << ": GPTQ "
                                  << gptq << ", RTN " << rtn;
    }
  }
}

TEST(GptqTest, DeadInputsAndShapeErrors) {
  const int64_t rows = 4, cols = 32;
  std::vector<float> w(rows * cols, 0.5f);
  Eigen::MatrixXd h = Eigen::MatrixXd::Identity(cols, cols);
  h(3, 3) = 0;  // an input that never fires
  GptqStats stats;
  absl::StatusOr<QuantizedMatrix> q = GptqQuantize(w.data(), rows, cols, h, QuantScheme{4, 32, false}, {}, &stats);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(stats.dead_columns, 1);
  EXPECT_EQ(GptqQuantize(w.data(), rows, cols, Eigen::MatrixXd::Identity(8, 8), QuantScheme{4, 32, false}, {})
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(GptqQuantize(w.data(), rows, cols, h, QuantScheme{4, 48, false}, {}).status().code(),
            absl::StatusCode::kInvalidArgument);
  // Damping that the search could never raise to 1 (it multiplies by 10) is refused up front.
  for (double damp : {0.0, -1.0, std::nan("")}) {
    GptqOptions o;
    o.damp = damp;
    EXPECT_EQ(GptqQuantize(w.data(), rows, cols, h, QuantScheme{4, 32, false}, o).status().code(),
              absl::StatusCode::kInvalidArgument)
        << damp;
  }
}

}  // namespace
}  // namespace tessel::quant
