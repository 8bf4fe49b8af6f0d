// Runs every registered vector kernel (every ISA built for this target) against an independent
// double-precision computation over awkward sizes (empty, below one vector, remainders, primes), on
// inputs 4 bytes off a 16-byte boundary between sentinel guards, out of place and in place. A kernel
// whose ISA this CPU lacks is skipped visibly. Tolerances, per element:
//   clamp, vadd, vmul         exact (one correctly rounded operation, then a clamp)
//   hardswish                 1e-6 x max(|want|, |x|): x + 3 cancels near x = -3, which the f32 formula
//                             cannot avoid, so the error scales with |x| there
//   sigmoid, silu, rmsnorm    2e-6 x |want| (the exponential is good to ~2 ulp; rmsnorm sums in f32)
//   softmax                   (2e-6 + 2^-24 |x - max|) x |want|: the f32 difference x - max rounds by up
//                             to half an ulp, which exp turns into that much relative error
// plus 1e-35 absolute everywhere: results under that (sigmoid of -100, softmax of a logit 160 below
// the row's max) are underflow, where the exponential clamps its input and no relative bound holds.
#include "kernels/vector/vector.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/registry/registry.h"

namespace tessel {
namespace {

constexpr int64_t kSizes[] = {0, 1, 3, 4, 5, 7, 15, 16, 17, 31, 33, 63, 64, 65, 127, 1000, 4099};
constexpr double kExpTolerance = 2e-6;
constexpr double kUnderflow = 1e-35;

// Deterministic pseudo-random numbers (the same on every platform and standard library).
class Lcg {
 public:
  explicit Lcg(uint64_t seed) : s_(seed * 6364136223846793005ull + 1442695040888963407ull) {}
  float Uniform(float lo, float hi) {
    s_ = s_ * 6364136223846793005ull + 1442695040888963407ull;
    return lo + (hi - lo) * static_cast<float>((s_ >> 40) & 0xffffff) / float(0x1000000);
  }

 private:
  uint64_t s_;
};

// `n` floats 4 bytes past a 16-byte boundary (no kernel may rely on alignment), between guards of
// sentinels that must survive the kernel.
class Guarded {
 public:
  static constexpr int64_t kGuard = 17;
  static constexpr float kSentinel = -7777.0f;

  explicit Guarded(int64_t n) : n_(n), storage_(n + 2 * kGuard, kSentinel) {}

  float* data() { return storage_.data() + kGuard; }
  const float* data() const { return storage_.data() + kGuard; }
  float operator[](int64_t i) const { return data()[i]; }
  void Fill(const std::function<float(int64_t)>& f) {
    for (int64_t i = 0; i < n_; ++i) data()[i] = f(i);
  }
  // Empty when both guards are intact, else where the first overwritten sentinel is.
  std::string GuardViolation() const {
    for (int64_t i = 0; i < kGuard; ++i) {
      if (storage_[i] != kSentinel) return "wrote " + std::to_string(kGuard - i) + " elements before the start";
      if (storage_[kGuard + n_ + i] != kSentinel) return "wrote at n + " + std::to_string(i);
    }
    return "";
  }

 private:
  int64_t n_;
  std::vector<float> storage_;
};

std::string TestName(const testing::TestParamInfo<const VectorKernel*>& info) { return info.param->name; }

std::vector<const VectorKernel*> AllVectorKernels() {
  std::vector<const VectorKernel*> out;
  for (const VectorKernel& e : VectorKernels().entries()) out.push_back(&e);
  return out;
}

#define SKIP_IF_CPU_LACKS(entry)                                                                     \
  if (!CpuSupports((entry).isa)) {                                                                   \
    GTEST_SKIP() << (entry).name << ": this CPU lacks " << IsaName((entry).isa) << " ("             \
                 << GetCpuFeatures().ToString() << ")";                                              \
  }

// Compares one output array with the double-precision answer: each element within bound[i] (+ the
// underflow slack), or exactly equal to want rounded to f32 when `exact`. Returns the worst relative
// error over the elements whose magnitude makes one meaningful.
double ExpectClose(const std::string& label, const Guarded& got, const std::vector<double>& want,
                   const std::vector<double>& bound, bool exact) {
  EXPECT_EQ(got.GuardViolation(), "") << label;
  double worst = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (exact) {
      if (got[i] != static_cast<float>(want[i])) {
        ADD_FAILURE() << label << " at " << i << ": got " << got[i] << ", want exactly " << want[i];
        return 1;
      }
      continue;
    }
    const double err = std::fabs(got[i] - want[i]);
    if (!(err <= bound[i] + kUnderflow)) {
      ADD_FAILURE() << label << " at " << i << ": got " << got[i] << ", want " << want[i] << " (error " << err
                    << ", bound " << bound[i] << ")";
      return err / std::fabs(want[i]);
    }
    if (std::fabs(want[i]) > 1e-30) worst = std::max(worst, err / std::fabs(want[i]));
  }
  return worst;
}

// tolerance x |want[i]|.
std::vector<double> RelativeBounds(const std::vector<double>& want, double tolerance) {
  std::vector<double> b(want.size());
  for (size_t i = 0; i < want.size(); ++i) b[i] = tolerance * std::fabs(want[i]);
  return b;
}

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// Sigmoid-style inputs: alternately within [-10, 10] (the curved part) and [-100, 100] (saturation and
// underflow), plus fixed hard cases at the front.
float ActivationInput(Lcg& rng, int64_t i) {
  static const float kHard[] = {-100.0f, -88.5f, -87.0f, -20.0f, -3.0f, -1e-3f, 0.0f, 1e-3f, 3.0f, 20.0f, 88.5f};
  if (i < static_cast<int64_t>(std::size(kHard))) return kHard[i];
  return i % 2 ? rng.Uniform(-10, 10) : rng.Uniform(-100, 100);
}

class VectorKernelTest : public testing::TestWithParam<const VectorKernel*> {};

void CheckUnary(const VectorKernel& e) {
  Lcg rng(1);
  double worst = 0;
  for (int64_t n : kSizes) {
    Guarded x(n), y(n);
    x.Fill([&](int64_t i) { return ActivationInput(rng, i); });
    std::vector<double> want(n), bound(n);
    const float lo = -0.5f, hi = 6.0f;
    for (int64_t i = 0; i < n; ++i) {
      const double v = x[i];
      if (e.op == "clamp") want[i] = std::min<double>(std::max<double>(v, lo), hi);
      if (e.op == "sigmoid") want[i] = Sigmoid(v);
      if (e.op == "silu") want[i] = v * Sigmoid(v);
      if (e.op == "hardswish") want[i] = v * std::min(std::max(v + 3, 0.0), 6.0) / 6;
      bound[i] = e.op == "hardswish" ? 1e-6 * std::max(std::fabs(want[i]), std::fabs(v)) : kExpTolerance * std::fabs(want[i]);
    }
    const bool exact = e.op == "clamp";
    Guarded in_place = x;
    if (e.op == "clamp") {
      std::get<ClampFn>(e.fn)(n, x.data(), y.data(), lo, hi);
      std::get<ClampFn>(e.fn)(n, in_place.data(), in_place.data(), lo, hi);
    } else {
      std::get<UnaryFn>(e.fn)(n, x.data(), y.data());
      std::get<UnaryFn>(e.fn)(n, in_place.data(), in_place.data());
    }
    const std::string label = e.name + " n=" + std::to_string(n);
    worst = std::max(worst, ExpectClose(label, y, want, bound, exact));
    ExpectClose(label + " in place", in_place, want, bound, exact);
  }
  std::printf("%s: worst relative error %.2e\n", e.name.c_str(), worst);
}

void CheckBinary(const VectorKernel& e) {
  Lcg rng(2);
  struct Bounds {
    float lo, hi;
  };
  const float inf = std::numeric_limits<float>::infinity();
  for (const Bounds& b : {Bounds{-inf, inf}, Bounds{0.0f, inf}, Bounds{0.0f, 6.0f}, Bounds{-2.5f, 1.5f}}) {
    for (int64_t n : kSizes) {
      Guarded a(n), c(n), y(n);
      a.Fill([&](int64_t) { return rng.Uniform(-10, 10); });
      c.Fill([&](int64_t) { return rng.Uniform(-10, 10); });
      // Exact: a + b and a * b of these floats are exact in double, so rounding once gives the f32 result.
      std::vector<double> want(n);
      for (int64_t i = 0; i < n; ++i) {
        const float v = static_cast<float>(e.op == "vadd" ? double(a[i]) + c[i] : double(a[i]) * c[i]);
        want[i] = std::min(std::max(v, b.lo), b.hi);
      }
      auto fn = std::get<BinaryFn>(e.fn);
      Guarded in_a = a, in_b = c;
      fn(n, a.data(), c.data(), y.data(), b.lo, b.hi);
      fn(n, in_a.data(), c.data(), in_a.data(), b.lo, b.hi);
      fn(n, a.data(), in_b.data(), in_b.data(), b.lo, b.hi);
      const std::string label = e.name + " n=" + std::to_string(n) + " clamp [" + std::to_string(b.lo) + ", " +
                                std::to_string(b.hi) + "]";
      ExpectClose(label, y, want, {}, true);
      ExpectClose(label + " in place (a)", in_a, want, {}, true);
      ExpectClose(label + " in place (b)", in_b, want, {}, true);
    }
  }
}

// Rows of logits: moderate ([-10, 10]), far apart ([-80, 80]: most exponentials underflow), and all
// near +80, where exp without the max subtraction overflows f32.
void CheckSoftmax(const VectorKernel& e) {
  Lcg rng(3);
  auto fn = std::get<SoftmaxFn>(e.fn);
  double worst = 0;
  struct Range {
    float lo, hi;
  };
  for (const Range& range : {Range{-10, 10}, Range{-80, 80}, Range{79, 81}}) {
    for (int64_t rows : {1, 3}) {
      for (int64_t n : kSizes) {
        Guarded x(rows * n), y(rows * n);
        x.Fill([&](int64_t) { return rng.Uniform(range.lo, range.hi); });
        std::vector<double> want(rows * n), bound(rows * n);
        for (int64_t r = 0; r < rows; ++r) {
          double max = -INFINITY, sum = 0;
          for (int64_t i = 0; i < n; ++i) max = std::max(max, double(x[r * n + i]));
          for (int64_t i = 0; i < n; ++i) sum += std::exp(x[r * n + i] - max);
          for (int64_t i = 0; i < n; ++i) {
            want[r * n + i] = std::exp(x[r * n + i] - max) / sum;
            bound[r * n + i] = (kExpTolerance + std::ldexp(1.0, -24) * (max - x[r * n + i])) * want[r * n + i];
          }
        }
        Guarded in_place = x;
        fn(rows, n, x.data(), y.data());
        fn(rows, n, in_place.data(), in_place.data());
        const std::string label = e.name + " rows=" + std::to_string(rows) + " n=" + std::to_string(n) + " x in [" +
                                  std::to_string(range.lo) + ", " + std::to_string(range.hi) + "]";
        worst = std::max(worst, ExpectClose(label, y, want, bound, false));
        ExpectClose(label + " in place", in_place, want, bound, false);
      }
    }
  }
  // Empty shapes write nothing.
  Guarded y(0);
  fn(0, 5, y.data(), y.data());
  fn(4, 0, y.data(), y.data());
  EXPECT_EQ(y.GuardViolation(), "");
  std::printf("%s: worst relative error %.2e\n", e.name.c_str(), worst);
}

// Rows of moderate, large (~1e3) and small (~1e-3, where eps matters) values, with and without a gain.
void CheckRmsNorm(const VectorKernel& e) {
  Lcg rng(4);
  auto fn = std::get<RmsNormFn>(e.fn);
  double worst = 0;
  for (float magnitude : {1.0f, 1e3f, 1e-3f}) {
    for (bool with_gain : {true, false}) {
      for (int64_t rows : {1, 3}) {
        for (int64_t n : kSizes) {
          const float eps = magnitude < 1 ? 1e-6f : 1e-5f;
          Guarded x(rows * n), gain(n), y(rows * n);
          x.Fill([&](int64_t) { return magnitude * rng.Uniform(-2, 2); });
          gain.Fill([&](int64_t) { return rng.Uniform(-1.5f, 1.5f); });
          std::vector<double> want(rows * n);
          for (int64_t r = 0; r < rows; ++r) {
            double ss = 0;
            for (int64_t i = 0; i < n; ++i) ss += double(x[r * n + i]) * x[r * n + i];
            const double inv_rms = 1.0 / std::sqrt(ss / n + eps);
            for (int64_t i = 0; i < n; ++i) want[r * n + i] = x[r * n + i] * inv_rms * (with_gain ? gain[i] : 1.0);
          }
          const float* g = with_gain ? gain.data() : nullptr;
          Guarded in_place = x;
          fn(rows, n, x.data(), g, eps, y.data());
          fn(rows, n, in_place.data(), g, eps, in_place.data());
          const std::string label = e.name + " rows=" + std::to_string(rows) + " n=" + std::to_string(n) +
                                    " magnitude " + std::to_string(magnitude) + (with_gain ? " gain" : "");
          const std::vector<double> bound = RelativeBounds(want, kExpTolerance);
          worst = std::max(worst, ExpectClose(label, y, want, bound, false));
          ExpectClose(label + " in place", in_place, want, bound, false);
        }
      }
    }
  }
  std::printf("%s: worst relative error %.2e\n", e.name.c_str(), worst);
}

TEST_P(VectorKernelTest, MatchesDoublePrecision) {
  const VectorKernel& e = *GetParam();
  SKIP_IF_CPU_LACKS(e);
  if (e.op == "softmax") {
    CheckSoftmax(e);
  } else if (e.op == "rmsnorm") {
    CheckRmsNorm(e);
  } else if (e.op == "vadd" || e.op == "vmul") {
    CheckBinary(e);
  } else {
    ASSERT_TRUE(e.op == "clamp" || e.op == "sigmoid" || e.op == "silu" || e.op == "hardswish") << e.op;
    CheckUnary(e);
  }
}

INSTANTIATE_TEST_SUITE_P(Vector, VectorKernelTest, testing::ValuesIn(AllVectorKernels()), TestName);

// Every op has a kernel of every ISA built for this target.
TEST(VectorKernelsTest, EveryOpOnEveryIsa) {
  struct Built {
    std::string backend;
    Isa isa;
  };
  std::vector<Built> built = {{"reference", Isa::kPortable}, {"portable", Isa::kPortable}};
#if defined(__x86_64__)
  built.push_back({"x86", Isa::kAvx2});
  built.push_back({"x86", Isa::kAvx512});
#endif
#if defined(__aarch64__)
  built.push_back({"neon", Isa::kNeon});
  built.push_back({"sve", Isa::kSve});
#endif
  for (const char* op : {"softmax", "rmsnorm", "clamp", "sigmoid", "silu", "hardswish", "vadd", "vmul"}) {
    for (const Built& b : built) {
      int found = 0;
      for (const VectorKernel* e : VectorKernels().Find(op, "f32", "contiguous")) {
        found += e->backend == b.backend && e->isa == b.isa;
      }
      EXPECT_EQ(found, 1) << op << " on " << b.backend << " " << IsaName(b.isa);
    }
  }
}

// Where both run, AVX-512 beats AVX2, which beats the portable C.
TEST(VectorKernelsTest, X86CostsOrderByIsa) {
#if defined(__x86_64__)
  const ProblemShape row = {1, 2048, 0, 0};
  for (const char* op : {"softmax", "rmsnorm", "clamp", "sigmoid", "silu", "hardswish", "vadd", "vmul"}) {
    double portable = 0, avx2 = 0, avx512 = 0;
    for (const VectorKernel* e : VectorKernels().Find(op, "f32", "contiguous")) {
      if (e->backend == "portable") portable = e->cost(row);
      if (e->isa == Isa::kAvx2) avx2 = e->cost(row);
      if (e->isa == Isa::kAvx512) avx512 = e->cost(row);
    }
    EXPECT_LT(avx512, avx2) << op;
    EXPECT_LT(avx2, portable) << op;
  }
#else
  GTEST_SKIP() << "x86 only";
#endif
}

// Sets TESSEL_FORCE_BACKEND for a scope (also when an assertion returns early).
class ScopedForce {
 public:
  explicit ScopedForce(const std::string& backend) { setenv("TESSEL_FORCE_BACKEND", backend.c_str(), 1); }
  ~ScopedForce() { unsetenv("TESSEL_FORCE_BACKEND"); }
};

TEST(SelectVectorKernelTest, PicksTheFastestAndHonoursForcing) {
  absl::StatusOr<const VectorKernel*> best = SelectVectorKernel("rmsnorm");
  ASSERT_TRUE(best.ok()) << best.status();
  std::printf("selected rmsnorm kernel: %s\n", (*best)->name.c_str());
  EXPECT_EQ((*best)->op, "rmsnorm");
  if (CpuSupports(Isa::kAvx2) || CpuSupports(Isa::kNeon)) {
    EXPECT_NE((*best)->backend, "portable") << "a hand-written kernel should win where the CPU has one";
  }
  EXPECT_NE((*best)->backend, "reference");
  {
    ScopedForce force("reference");
    absl::StatusOr<const VectorKernel*> ref = SelectVectorKernel("softmax");
    ASSERT_TRUE(ref.ok()) << ref.status();
    EXPECT_EQ((*ref)->name, "tessel_f32_softmax__reference");
  }
  {
    ScopedForce force("tessel_f32_silu__avx2");
    absl::StatusOr<const VectorKernel*> named = SelectVectorKernel("silu");
    if (CpuSupports(Isa::kAvx2)) {
      ASSERT_TRUE(named.ok()) << named.status();
      EXPECT_EQ((*named)->name, "tessel_f32_silu__avx2");
    }
  }
  {
    ScopedForce force("tessel_f32_silu__autovec");
    absl::StatusOr<const VectorKernel*> named = SelectVectorKernel("silu");
    ASSERT_TRUE(named.ok()) << named.status();
    EXPECT_EQ((*named)->name, "tessel_f32_silu__autovec");
  }
  {
    ScopedForce force("no_such_backend");
    EXPECT_EQ(SelectVectorKernel("vadd").status().code(), absl::StatusCode::kNotFound);
  }
  EXPECT_EQ(SelectVectorKernel("no_such_op").status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace tessel
