// The activation row kernels of every ISA against double-precision std::erf / std::tanh / std::exp over
// [-12, 12]
// (a fine grid, the ends of the exponential's range, zeros and huge values), in place and not, and
// with lengths that leave vector remainders. Tolerance: |got - want| <= 2e-6 max(1, |want|), A&S
// 7.1.26's 1.5e-7 on erf plus float rounding with room. A variant whose ISA the CPU lacks is skipped.
#include "kernels/activation/act_rows.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/registry/registry.h"

namespace tessel {
namespace {

struct Variant {
  std::string name;
  Isa isa;
  ActRowKernels (*rows)();
};

std::vector<Variant> Variants() {
  std::vector<Variant> v = {{"autovec", Isa::kPortable, ActRowsAutovec}};
#if defined(__x86_64__)
  v.push_back({"avx2", Isa::kAvx2, ActRowsAvx2});
  v.push_back({"avx512", Isa::kAvx512, ActRowsAvx512});
#endif
  return v;
}

std::vector<float> Inputs() {
  std::vector<float> x;
  for (int i = -24000; i <= 24000; i += 7) x.push_back(static_cast<float>(i) * 5e-4f);
  for (float v : {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-6f, -1e-6f, 9.3f, -9.3f, 30.0f, -30.0f, 1e10f, -1e10f, 3e38f,
                  -3e38f}) {
    x.push_back(v);
  }
  return x;
}

double GeluErf(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double GeluTanh(double x) {
  return 0.5 * x * (1.0 + std::tanh(0.79788456080286535588 * (x + 0.044715 * x * x * x)));
}

void Check(const std::string& label, ActRowFn fn, const std::function<double(double)>& ref) {
  const std::vector<float> x = Inputs();
  // Odd lengths and offsets: every vector remainder.
  for (size_t n : {x.size(), size_t{1}, size_t{7}, size_t{17}, size_t{33}}) {
    std::vector<float> y(n, NAN);
    fn(static_cast<int64_t>(n), x.data() + (x.size() - n), y.data());
    std::vector<float> inplace(x.end() - n, x.end());
    fn(static_cast<int64_t>(n), inplace.data(), inplace.data());
    for (size_t i = 0; i < n; ++i) {
      const float v = x[x.size() - n + i];
      const double want = ref(static_cast<double>(v));
      const double tol = 2e-6 * std::max(1.0, std::abs(want));
      ASSERT_NEAR(y[i], want, tol) << label << " x=" << v;
      ASSERT_EQ(inplace[i], y[i]) << label << " in place, x=" << v;
    }
  }
}

class ActRowsTest : public ::testing::TestWithParam<Variant> {};

TEST_P(ActRowsTest, MatchesDoublePrecision) {
  const Variant& v = GetParam();
  if (!CpuSupports(v.isa)) GTEST_SKIP() << v.name << " needs " << IsaName(v.isa) << ", which this CPU lacks";
  const ActRowKernels k = v.rows();
  Check(v.name + " gelu_erf", k.gelu_erf, GeluErf);
  Check(v.name + " gelu_tanh", k.gelu_tanh, GeluTanh);
  Check(v.name + " tanh", k.tanh, [](double x) { return std::tanh(x); });
  Check(v.name + " erf", k.erf, [](double x) { return std::erf(x); });
  Check(v.name + " sigmoid", k.sigmoid, [](double x) { return 1.0 / (1.0 + std::exp(-x)); });
  Check(v.name + " silu", k.silu, [](double x) { return x / (1.0 + std::exp(-x)); });
  Check(v.name + " hardswish", k.hardswish, [](double x) { return x * std::clamp(x + 3.0, 0.0, 6.0) / 6.0; });
}

// Rows of 1 to 300 elements (values spread over [-40, 40], and one row of equal values), in place and
// not, against log-softmax in double: |got - want| <= 2e-6 max(1, |want|).
TEST_P(ActRowsTest, LogSoftmaxMatchesDoublePrecision) {
  const Variant& v = GetParam();
  if (!CpuSupports(v.isa)) GTEST_SKIP() << v.name << " needs " << IsaName(v.isa) << ", which this CPU lacks";
  const LogSoftmaxFn fn = v.rows().log_softmax;
  for (int64_t n : {1, 2, 15, 16, 17, 300}) {
    for (int64_t rows : {1, 3}) {
      std::vector<float> x(rows * n);
      // Row 0 of the 3-row cases holds equal values.
      for (size_t i = 0; i < x.size(); ++i) {
        x[i] = rows == 3 && i < static_cast<size_t>(n) ? 2.5f : std::sin(i * 0.37f) * 40.0f;
      }
      std::vector<float> y(x.size(), NAN), inplace = x;
      fn(rows, n, x.data(), y.data());
      fn(rows, n, inplace.data(), inplace.data());
      for (int64_t r = 0; r < rows; ++r) {
        double mx = -1e300, sum = 0;
        for (int64_t i = 0; i < n; ++i) mx = std::max(mx, static_cast<double>(x[r * n + i]));
        for (int64_t i = 0; i < n; ++i) sum += std::exp(x[r * n + i] - mx);
        for (int64_t i = 0; i < n; ++i) {
          const double want = x[r * n + i] - mx - std::log(sum);
          ASSERT_NEAR(y[r * n + i], want, 2e-6 * std::max(1.0, std::abs(want))) << v.name << " n=" << n << " row " << r;
          ASSERT_EQ(inplace[r * n + i], y[r * n + i]) << v.name << " in place";
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllIsas, ActRowsTest, ::testing::ValuesIn(Variants()),
                         [](const ::testing::TestParamInfo<Variant>& info) { return info.param.name; });

TEST(ActRowsForCpuTest, IsOneOfTheVariants) {
  const ActRowKernels k = ActRowsForCpu();
  bool found = false;
  // A variant's table is built by code of its own ISA: only those this CPU runs are asked.
  for (const Variant& v : Variants()) found |= CpuSupports(v.isa) && v.rows().gelu_erf == k.gelu_erf;
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace tessel
