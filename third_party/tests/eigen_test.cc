// Eigen: the dense linear algebra GPTQ uses (Cholesky), checked against a hand computation.
#include "Eigen/Dense"
#include "gtest/gtest.h"

namespace {

TEST(EigenTest, CholeskySolvesSpdSystem) {
  // A = [[4,2],[2,3]] is SPD; A x = [2,1] has x = [0.5, 0].
  Eigen::Matrix2d a;
  a << 4, 2, 2, 3;
  Eigen::Vector2d b(2, 1);
  Eigen::LLT<Eigen::Matrix2d> llt(a);
  ASSERT_EQ(llt.info(), Eigen::Success);
  Eigen::Vector2d x = llt.solve(b);
  EXPECT_NEAR(x(0), 0.5, 1e-12);
  EXPECT_NEAR(x(1), 0.0, 1e-12);
  // L = [[2,0],[1,sqrt(2)]].
  Eigen::Matrix2d l = llt.matrixL();
  EXPECT_NEAR(l(0, 0), 2.0, 1e-12);
  EXPECT_NEAR(l(1, 0), 1.0, 1e-12);
  EXPECT_NEAR(l(1, 1), std::sqrt(2.0), 1e-12);
}

TEST(EigenTest, MatrixProductMatchesLoop) {
  Eigen::MatrixXf a = Eigen::MatrixXf::Random(7, 5);
  Eigen::MatrixXf b = Eigen::MatrixXf::Random(5, 3);
  Eigen::MatrixXf c = a * b;
  for (int i = 0; i < 7; ++i) {
    for (int j = 0; j < 3; ++j) {
      float acc = 0;
      for (int k = 0; k < 5; ++k) acc += a(i, k) * b(k, j);
      EXPECT_NEAR(c(i, j), acc, 1e-5f);
    }
  }
}

}  // namespace
