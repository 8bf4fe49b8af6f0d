// The multi-token int8-input family (GemmQ8Kernels): every registered kernel against an independent
// computation (x quantized here per 32-block, exact integer dot products, double accumulation) over
// awkward shapes (rows below and across the 16-row panel, 1..9 tokens and 13..17 across the token
// tiles, 1..7 blocks, long rows), and against the f32 product within the activation-rounding bound
// that gemv.h states. Outputs land in a strided y with guard values around them.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/gemv/gemv.h"
#include "kernels/gemv/internal/q8_test_matrix.h"
#include "kernels/registry/registry.h"

namespace tessel {
namespace {

using q8_test::DecodeHalf;
using q8_test::Lcg;
using q8_test::MakeMatrix;
using q8_test::Matrix;

bool IsGroup(const GemmQ8Kernel& e) { return e.dtypes.rfind("group_panel16", 0) == 0; }

std::vector<const GemmQ8Kernel*> AllGemmKernels() {
  std::vector<const GemmQ8Kernel*> out;
  for (const GemmQ8Kernel& e : GemmQ8Kernels().entries()) out.push_back(&e);
  for (const GemmQ8Kernel& e : GemmQ8Panel16Kernels().entries()) {
    // Group and single-k-quant kernels have their own tests below.
    if (!IsGroup(e) && e.dtypes != "kquant_panel16xq8") out.push_back(&e);
  }
  return out;
}

std::vector<const GemmQ8Kernel*> GroupKernels() {
  std::vector<const GemmQ8Kernel*> out;
  for (const GemmQ8Kernel& e : GemmQ8Panel16Kernels().entries()) {
    if (IsGroup(e)) out.push_back(&e);
  }
  return out;
}

bool IsPanel16(const GemmQ8Kernel& e) { return e.dtypes.find("panel16") != std::string::npos; }

// A 64-byte aligned buffer of `bytes` for a packed matrix.
struct Packed {
  std::vector<uint8_t> storage;
  uint8_t* data = nullptr;
};
Packed AlignedPacked(int64_t bytes) {
  Packed p;
  p.storage.resize(bytes + 64);
  p.data = p.storage.data() + (64 - reinterpret_cast<uintptr_t>(p.storage.data()) % 64) % 64;
  return p;
}
// A Panel16 copy of m.
Packed PackPanel16(GemvFormat f, const Matrix& m, int64_t rows, int64_t cols) {
  Packed p = AlignedPacked(GemvPanel16Bytes(f, rows, cols));
  PackGemvPanel16(f, m.bytes.data(), rows, cols, p.data);
  return p;
}

TEST(GemvPanel16Test, PackUnpackRoundTripsEveryRow) {
  Lcg rng(5);
  for (GemvFormat f : {GemvFormat::kQ4_0, GemvFormat::kQ8_0}) {
    for (int64_t rows : {1, 15, 16, 17, 40}) {
      for (int64_t blocks : {1, 2, 3, 7}) {
        const int64_t cols = 32 * blocks;
        const Matrix m = MakeMatrix(f, rows, cols, rng);
        const Packed p = PackPanel16(f, m, rows, cols);
        const int64_t row_bytes = GemvRowBytes(f, cols);
        EXPECT_EQ(GemvPanel16Bytes(f, rows, cols) % 64, 0);
        std::vector<uint8_t> row(row_bytes);
        for (int64_t r = 0; r < rows; ++r) {
          UnpackGemvPanel16Row(f, p.data, cols, r, row.data());
          ASSERT_EQ(0, std::memcmp(row.data(), m.bytes.data() + r * row_bytes, row_bytes))
              << "rows=" << rows << " blocks=" << blocks << " row " << r;
        }
      }
    }
  }
}

// n tokens x [n, cols] quantized for the kernels (QuantizeGemvInput + GemmQ8BlockTerms) at token
// strides past the padded sizes, so that kernels must honour the strides rather than assume packing;
// SetArgs fills the GemmQ8Args fields that describe them.
struct QuantizedTokens {
  int64_t xq_stride, lane_stride, block_stride, half_stride;
  std::vector<int8_t> xq;
  std::vector<int32_t> xbias, block_bias, half_bias;
  std::vector<float> xscale, block_scale;

  QuantizedTokens(GemvFormat f, const std::vector<float>& x, int64_t n, int64_t cols)
      : xq_stride(GemvQ8PaddedCols(f, cols) + 64),
        lane_stride(GemvQ8Lanes(f, cols) + 16),
        block_stride(cols / 32 + 5),
        half_stride(cols / 16 + 7),
        xq(n * xq_stride, 99),
        xbias(n * lane_stride, 99),
        block_bias(n * block_stride, 99),
        half_bias(n * half_stride, 99),
        xscale(n * lane_stride, 99.0f),
        block_scale(n * block_stride, 99.0f) {
    for (int64_t t = 0; t < n; ++t) {
      const GemvQ8Input in{xq.data() + t * xq_stride, xbias.data() + t * lane_stride, xscale.data() + t * lane_stride};
      QuantizeGemvInput(f, x.data() + t * cols, cols, in);
      GemmQ8BlockTerms(f, in, cols, block_bias.data() + t * block_stride, block_scale.data() + t * block_stride);
      if (f == GemvFormat::kQ4_0) GemmQ8HalfBias(in, cols, half_bias.data() + t * half_stride);
    }
  }
  void SetArgs(GemmQ8Args& a) const {
    a.xq = xq.data();
    a.xbias = xbias.data();
    a.xscale = xscale.data();
    a.xq_stride = xq_stride;
    a.lane_stride = lane_stride;
    a.block_bias = block_bias.data();
    a.block_scale = block_scale.data();
    a.block_stride = block_stride;
    a.half_bias = half_bias.data();
    a.half_stride = half_stride;
  }
};

// One token quantized here, independently of the kernels: per 32-block dx = max|x| / 127 and
// xi = round-to-nearest-even(x / dx).
void ReferenceQuantize(const float* xt, int64_t cols, std::vector<int>* xi, std::vector<double>* dx) {
  xi->assign(cols, 0);
  dx->assign(cols / 32, 0.0);
  for (int64_t b = 0; b < cols / 32; ++b) {
    float amax = 0;
    for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(xt[b * 32 + j]));
    (*dx)[b] = amax / 127.0f;
    for (int j = 0; j < 32; ++j) {
      (*xi)[b * 32 + j] = amax > 0 ? static_cast<int>(std::nearbyint(xt[b * 32 + j] * (127 / amax))) : 0;
    }
  }
}

// Runs fn over rows [0, split) and [split, a.rows), as threads call kernels on sub-ranges, into a y of
// a.n rows of stride a.ldy = a.rows + 3 whose entries past the rows hold a guard value; fails if a
// kernel wrote one.
std::vector<float> RunSplit(GemmQ8Fn fn, GemmQ8Args& a, int64_t split) {
  a.ldy = a.rows + 3;
  std::vector<float> y(a.n * a.ldy + 1, -777.0f);
  a.y = y.data();
  fn(a, 0, split);
  fn(a, split, a.rows);
  for (int64_t t = 0; t < a.n; ++t) {
    for (int64_t r = a.rows; r < a.ldy; ++r) EXPECT_EQ(y[t * a.ldy + r], -777.0f) << "wrote outside the rows";
  }
  return y;
}

// Under qemu (the aarch64 test run, TESSEL_UNDER_QEMU) the plain C++ reference twins would repeat the
// host run's check at a few hundred times its cost (minutes of emulated floating point); the ISA
// kernels are what the emulated run is for.
bool SkipEmulatedPortable(const GemmQ8Kernel& e) {
  return e.isa == Isa::kPortable && std::getenv("TESSEL_UNDER_QEMU") != nullptr;
}

class GemmQ8KernelTest : public testing::TestWithParam<const GemmQ8Kernel*> {};

TEST_P(GemmQ8KernelTest, MatchesIntegerDotAndF32WithinRoundingBound) {
  const GemmQ8Kernel& e = *GetParam();
  if (!CpuSupports(e.isa)) GTEST_SKIP() << e.name << ": this CPU lacks " << IsaName(e.isa);
  if (SkipEmulatedPortable(e)) GTEST_SKIP() << e.name << ": plain C++, checked natively by the host run";
  const GemvFormat f = e.dtypes.rfind("q4_0", 0) == 0 ? GemvFormat::kQ4_0 : GemvFormat::kQ8_0;
  const bool panel16 = IsPanel16(e);
  auto fn = e.fn;
  Lcg rng(23);
  // 67, 120, 130: 5, 8 and 9 panels, so that the Panel16 decode kernel's 2- and 4-stream lockstep runs,
  // with a partial last panel inside a stream (120) and after the streams (130). qemu runs SVE's SDOT by
  // element and predicated instructions through helper calls, tens of times slower than NEON's: under
  // qemu the SVE kernels (one token at a time, no streams) get a subset: partial and whole panels,
  // fewer and more blocks than a quad with and without a tail, one to five tokens.
  const bool sve_emulated = e.isa == Isa::kSve && std::getenv("TESSEL_UNDER_QEMU") != nullptr;
  const std::vector<int64_t> row_counts =
      sve_emulated ? std::vector<int64_t>{0, 5, 16, 35} : std::vector<int64_t>{0, 1, 3, 4, 5, 8, 11, 16, 17, 35, 67, 120, 130, 200};
  const std::vector<int64_t> block_counts =
      sve_emulated ? std::vector<int64_t>{1, 3, 4, 7, 13} : std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 13, 128};
  const std::vector<int64_t> token_counts =
      sve_emulated ? std::vector<int64_t>{1, 2, 5} : std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 15, 17};
  for (int64_t rows : row_counts) {
    for (int64_t blocks : block_counts) {
      const int64_t cols = 32 * blocks, nb = blocks;
      ASSERT_TRUE(e.legal({rows, cols, 1, 0}));
      const Matrix m = MakeMatrix(f, rows, cols, rng);
      for (int64_t n : token_counts) {
        // 17 tokens (two groups of aarch64's eight-token tiles and a remainder) and 200 rows (a second call
        // of 136: two passes of those tiles, kTile8PassRows = 128) on few blocks only, which keeps the
        // emulated run short.
        if ((n == 17 || rows == 200) && (blocks > 5 || (rows == 200 && n != 17))) continue;
        std::vector<float> x(n * cols);
        for (float& v : x) v = rng.Uniform(-2, 2);
        if (blocks > 2) std::fill(x.begin() + 32, x.begin() + 64, 0.0f);  // an all-zero block: dx = 0
        const QuantizedTokens tokens(f, x, n, cols);
        GemmQ8Args a;
        const Packed packed = panel16 ? PackPanel16(f, m, rows, cols) : Packed();
        a.w = panel16 ? static_cast<const void*>(packed.data) : m.bytes.data();
        a.rows = rows;
        a.cols = cols;
        a.n = n;
        tokens.SetArgs(a);
        // Whole panels per call for the Panel16 layout.
        const std::vector<float> y = RunSplit(fn, a, panel16 ? rows / 3 / 16 * 16 : rows / 3);
        ASSERT_FALSE(HasFailure());
        for (int64_t t = 0; t < n; ++t) {
          const float* xt = x.data() + t * cols;
          std::vector<int> xi;
          std::vector<double> dx;
          ReferenceQuantize(xt, cols, &xi, &dx);
          for (int64_t r = 0; r < rows; ++r) {
            double want = 0, mag = 0, f32 = 0, bound = 0;
            for (int64_t b = 0; b < nb; ++b) {
              // Exact integer sums per block, then the block's scales in double (fewer emulated
              // floating-point operations than scaling every element; the same sums).
              int64_t dot = 0, magdot = 0, qabs = 0;
              double fdot = 0;
              for (int j = 0; j < 32; ++j) {
                const int64_t k = b * 32 + j;
                const int64_t q = m.q[r * cols + k];
                dot += q * xi[k];
                magdot += std::abs(q * xi[k]);
                fdot += static_cast<double>(q) * xt[k];
                qabs += std::abs(q);
              }
              const double sb = m.scale[r * nb + b];
              want += sb * dx[b] * static_cast<double>(dot);
              mag += std::fabs(sb * dx[b]) * static_cast<double>(magdot);
              f32 += sb * fdot;
              bound += dx[b] / 2 * std::fabs(sb) * static_cast<double>(qabs);
            }
            const float got = y[t * a.ldy + r];
            // float accumulation of the scaled lanes: a few ulps per block, relative to the magnitude.
            ASSERT_NEAR(got, want, 1e-6 * mag + 1e-30)
                << e.name << " rows=" << rows << " cols=" << cols << " n=" << n << " at " << t << "," << r;
            ASSERT_NEAR(got, f32, bound * 1.001 + 1e-6 * mag + 1e-30)
                << e.name << " rows=" << rows << " cols=" << cols << " n=" << n << " at " << t << "," << r;
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(GemmQ8, GemmQ8KernelTest, testing::ValuesIn(AllGemmKernels()),
                         [](const testing::TestParamInfo<const GemmQ8Kernel*>& info) { return info.param->name; });

// Group-wise INT4 / INT3 records (gemv.h Int4GroupRecords, laid out as llm's Tessel group types: codes,
// then fp16 scales, then zeros and as many padding bytes) with their codes, scales and zeros kept aside.
struct GroupMatrix {
  Int4GroupRecords format;
  std::vector<uint8_t> bytes;
  std::vector<int> code;      // rows x cols, 0 .. 2^bits - 1
  std::vector<double> scale;  // rows x groups
  std::vector<int> zero;      // rows x groups (2^(bits-1) when symmetric)
};

GroupMatrix MakeGroupMatrix(int64_t rows, int64_t cols, int64_t group, bool asym, int bits, Lcg& rng) {
  GroupMatrix m;
  const int64_t groups = cols / group;
  m.format.group_size = group;
  m.format.asymmetric = asym;
  m.format.bits = bits;
  m.format.scales_offset = cols * bits / 8;
  m.format.zeros_offset = cols * bits / 8 + 2 * groups;
  m.format.row_bytes = cols * bits / 8 + 2 * groups + (asym ? 2 * groups : 0);
  m.bytes.assign(rows * m.format.row_bytes, 0);  // exactly sized: reads past the last row show under ASan
  m.format.base = m.bytes.data();
  m.code.resize(rows * cols);
  m.scale.resize(rows * groups);
  m.zero.resize(rows * groups);
  for (int64_t r = 0; r < rows; ++r) {
    uint8_t* rec = m.bytes.data() + r * m.format.row_bytes;
    for (int64_t e = 0; e < cols; ++e) {
      const int c = static_cast<int>(rng.Next() % (1u << bits));
      m.code[r * cols + e] = c;
      const int64_t g = e / group, j = e % group;
      uint8_t* q = rec + g * group * bits / 8;
      if (bits == 4) {
        q[j % (group / 2)] |= static_cast<uint8_t>(c << (j < group / 2 ? 0 : 4));
      } else {  // ggml_types.h: G/4 bytes of 2-bit fields, then G/8 bytes of high bits
        q[j % (group / 4)] |= static_cast<uint8_t>((c & 3) << (2 * (j / (group / 4))));
        q[group / 4 + j % (group / 8)] |= static_cast<uint8_t>((c >> 2) << (j / (group / 8)));
      }
    }
    for (int64_t g = 0; g < groups; ++g) {
      const uint16_t d = static_cast<uint16_t>(((6 + rng.Next() % 9) << 10) | (rng.Next() & 0x3ff) |
                                               (rng.Next() % 4 == 0 ? 0x8000 : 0));
      std::memcpy(rec + m.format.scales_offset + 2 * g, &d, 2);
      m.scale[r * groups + g] = DecodeHalf(d);
      m.zero[r * groups + g] = asym ? static_cast<int>(rng.Next() % (1u << bits)) : 1 << (bits - 1);
      if (asym) rec[m.format.zeros_offset + g] = static_cast<uint8_t>(m.zero[r * groups + g]);
    }
  }
  return m;
}

Packed PackGroup(const GroupMatrix& m, int64_t rows, int64_t cols) {
  Packed p =
      AlignedPacked(GemvPanel16GroupBytes(rows, cols, m.format.group_size, m.format.asymmetric, m.format.bits));
  PackGemvPanel16Group(m.format, rows, cols, p.data);
  return p;
}

// Every layout the group kernels take: INT4 and INT3, symmetric and asymmetric, each group size.
struct GroupCase {
  int bits;
  bool asym;
  int64_t group;
};
std::vector<GroupCase> GroupCases() {
  std::vector<GroupCase> out;
  for (int bits : {4, 3}) {
    for (bool asym : {false, true}) {
      for (int64_t group : {32, 64, 128}) out.push_back({bits, asym, group});
    }
  }
  return out;
}

TEST(GemvPanel16GroupTest, PackUnpackRoundTripsEveryRowAtTheRowFormatsSize) {
  Lcg rng(7);
  for (const GroupCase& c : GroupCases()) {
    for (int64_t rows : {1, 15, 16, 17, 40}) {
      for (int64_t groups : {1, 2, 3, 9}) {
        const int64_t cols = c.group * groups;
        const GroupMatrix m = MakeGroupMatrix(rows, cols, c.group, c.asym, c.bits, rng);
        const Packed p = PackGroup(m, rows, cols);
        const int64_t bytes = GemvPanel16GroupBytes(rows, cols, c.group, c.asym, c.bits);
        EXPECT_EQ(bytes % 64, 0);
        if (rows % 16 == 0 && cols % 256 == 0 && !(c.asym && c.group == 128)) {
          // No padding: exactly the row format's codes, scales and zeros.
          EXPECT_EQ(bytes, rows * (cols * c.bits / 8 + 2 * groups + (c.asym ? groups : 0)));
        }
        std::vector<uint8_t> rec(m.format.row_bytes, 0xee);
        for (int64_t r = 0; r < rows; ++r) {
          UnpackGemvPanel16GroupRow(p.data, m.format, cols, r, rec.data());
          ASSERT_EQ(0, std::memcmp(rec.data(), m.bytes.data() + r * m.format.row_bytes, m.format.row_bytes))
              << "bits=" << c.bits << " asym=" << c.asym << " group=" << c.group << " rows=" << rows
              << " cols=" << cols << " row " << r;
        }
      }
    }
  }
}

class GemmQ8GroupKernelTest : public testing::TestWithParam<const GemmQ8Kernel*> {};

TEST_P(GemmQ8GroupKernelTest, MatchesIntegerDotAndF32WithinRoundingBound) {
  const GemmQ8Kernel& e = *GetParam();
  if (!CpuSupports(e.isa)) GTEST_SKIP() << e.name << ": this CPU lacks " << IsaName(e.isa);
  if (SkipEmulatedPortable(e)) GTEST_SKIP() << e.name << ": plain C++, checked natively by the host run";
  auto fn = e.fn;
  const GemvFormat f = GemvFormat::kQ4_0;  // x's layout
  Lcg rng(31);
  for (const GroupCase& c : GroupCases()) {
    // 67, 120, 130 rows: the decode kernel's 2- and 4-stream lockstep with partial panels (see above).
    for (int64_t rows : {1, 5, 16, 17, 67, 120, 130}) {
      // Whole units of 256 columns, and a partial last unit.
      for (int64_t cols : {c.group, int64_t{256}, int64_t{384}, 2048 + c.group}) {
        if (cols % c.group != 0) continue;
        ASSERT_TRUE(e.legal({rows, cols, 1, c.group}));
        const int64_t groups = cols / c.group;
        const GroupMatrix m = MakeGroupMatrix(rows, cols, c.group, c.asym, c.bits, rng);
        const Packed packed = PackGroup(m, rows, cols);
        // Token tiles of 4 (AVX2), 6 (AVX-VNNI) and 12 (AVX-512 VNNI) with every kind of remainder.
        for (int64_t n : {1, 2, 3, 4, 5, 7, 13}) {
          std::vector<float> x(n * cols);
          for (float& v : x) v = rng.Uniform(-2, 2);
          if (cols > 64) std::fill(x.begin() + 32, x.begin() + 64, 0.0f);  // an all-zero block: dx = 0
          const QuantizedTokens tokens(f, x, n, cols);
          GemmQ8Args a;
          a.w = packed.data;
          a.rows = rows;
          a.cols = cols;
          a.n = n;
          tokens.SetArgs(a);
          a.group_size = c.group;
          a.asymmetric = c.asym;
          a.group_bits = c.bits;
          const std::vector<float> y = RunSplit(fn, a, rows / 3 / 16 * 16);  // whole panels per call
          ASSERT_FALSE(HasFailure());
          for (int64_t t = 0; t < n; ++t) {
            const float* xt = x.data() + t * cols;
            std::vector<int> xi;
            std::vector<double> dx;
            ReferenceQuantize(xt, cols, &xi, &dx);
            for (int64_t r = 0; r < rows; ++r) {
              // Per 32-block (a group holds whole blocks): exact integer sums, then the block's scales in
              // double. The same sums as element by element, at a fraction of the emulated time.
              double want = 0, mag = 0, f32 = 0, bound = 0;
              for (int64_t b = 0; b < cols / 32; ++b) {
                const int64_t g = r * groups + b * 32 / c.group;
                const int z = m.zero[g];
                const int* code = m.code.data() + r * cols + b * 32;
                const int* xb = xi.data() + b * 32;
                const float* xf = xt + b * 32;
                int64_t dot = 0, magdot = 0, wabs = 0;
                double fdot = 0;
                for (int j = 0; j < 32; ++j) {
                  const int w = code[j] - z;
                  dot += int64_t{w} * xb[j];
                  // The kernel sums code x x and zero x x separately (asymmetric): both count.
                  magdot += int64_t{std::abs(xb[j])} * (code[j] + z);
                  wabs += std::abs(w);
                  fdot += w * static_cast<double>(xf[j]);
                }
                const double sg = m.scale[g];
                want += sg * dx[b] * static_cast<double>(dot);
                mag += std::fabs(sg * dx[b]) * static_cast<double>(magdot);
                f32 += sg * fdot;
                bound += dx[b] / 2 * std::fabs(sg) * static_cast<double>(wabs);
              }
              const float got = y[t * a.ldy + r];
              ASSERT_NEAR(got, want, 1e-6 * mag + 1e-30)
                  << e.name << " bits=" << c.bits << " asym=" << c.asym << " group=" << c.group << " rows=" << rows
                  << " cols=" << cols << " n=" << n << " at " << t << "," << r;
              ASSERT_NEAR(got, f32, bound * 1.001 + 1e-6 * mag + 1e-30)
                  << e.name << " bits=" << c.bits << " asym=" << c.asym << " group=" << c.group << " rows=" << rows
                  << " cols=" << cols << " n=" << n << " at " << t << "," << r;
            }
          }
        }
      }
    }
  }
}

// ggml Q4_1 blocks (gemv.h PackGemvPanel16Q4_1), codes, scales and mins kept aside.
struct Q4_1Matrix {
  std::vector<uint8_t> bytes;
  std::vector<int> code;               // rows x cols, 0..15
  std::vector<double> scale, min_val;  // rows x blocks
};

Q4_1Matrix MakeQ4_1Matrix(int64_t rows, int64_t cols, Lcg& rng) {
  Q4_1Matrix m;
  const int64_t nb = cols / 32;
  m.bytes.assign(rows * nb * 20, 0);
  m.code.resize(rows * cols);
  m.scale.resize(rows * nb);
  m.min_val.resize(rows * nb);
  auto half = [&](bool sign) {
    return static_cast<uint16_t>(((6 + rng.Next() % 9) << 10) | (rng.Next() & 0x3ff) | (sign ? 0x8000 : 0));
  };
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t b = 0; b < nb; ++b) {
      uint8_t* blk = m.bytes.data() + (r * nb + b) * 20;
      const uint16_t d = half(false), mn = half(true);
      std::memcpy(blk, &d, 2);
      std::memcpy(blk + 2, &mn, 2);
      m.scale[r * nb + b] = DecodeHalf(d);
      m.min_val[r * nb + b] = DecodeHalf(mn);
      for (int j = 0; j < 16; ++j) blk[4 + j] = static_cast<uint8_t>(rng.Next());
      for (int j = 0; j < 32; ++j) m.code[r * cols + b * 32 + j] = j < 16 ? blk[4 + j] & 15 : blk[4 + j - 16] >> 4;
    }
  }
  return m;
}

TEST_P(GemmQ8GroupKernelTest, Q4_1MatchesIntegerDotAndF32WithinRoundingBound) {
  const GemmQ8Kernel& e = *GetParam();
  if (!CpuSupports(e.isa)) GTEST_SKIP() << e.name << ": this CPU lacks " << IsaName(e.isa);
  if (SkipEmulatedPortable(e)) GTEST_SKIP() << e.name << ": plain C++, checked natively by the host run";
  auto fn = e.fn;
  Lcg rng(37);
  for (int64_t rows : {1, 17, 67, 130}) {
    for (int64_t cols : {32, 256, 352, 2080}) {
      const int64_t nb = cols / 32;
      const Q4_1Matrix m = MakeQ4_1Matrix(rows, cols, rng);
      Packed packed = AlignedPacked(GemvPanel16Q4_1Bytes(rows, cols));
      PackGemvPanel16Q4_1(m.bytes.data(), rows, cols, packed.data);
      std::vector<uint8_t> row(nb * 20);
      for (int64_t r = 0; r < rows; ++r) {
        UnpackGemvPanel16Q4_1Row(packed.data, cols, r, row.data());
        ASSERT_EQ(0, std::memcmp(row.data(), m.bytes.data() + r * nb * 20, nb * 20)) << "row " << r;
      }
      for (int64_t n : {1, 2, 3, 4, 5, 7, 13}) {
        std::vector<float> x(n * cols);
        for (float& v : x) v = rng.Uniform(-2, 2);
        const QuantizedTokens tokens(GemvFormat::kQ4_0, x, n, cols);
        GemmQ8Args a;
        a.w = packed.data;
        a.rows = rows;
        a.cols = cols;
        a.n = n;
        tokens.SetArgs(a);
        a.group_size = 32;
        a.group_mins = true;
        const std::vector<float> y = RunSplit(fn, a, rows / 3 / 16 * 16);  // whole panels per call
        ASSERT_FALSE(HasFailure());
        for (int64_t t = 0; t < n; ++t) {
          const float* xt = x.data() + t * cols;
          std::vector<int> xi;
          std::vector<double> dx;
          ReferenceQuantize(xt, cols, &xi, &dx);
          for (int64_t r = 0; r < rows; ++r) {
            double want = 0, mag = 0, f32 = 0, bound = 0;
            for (int64_t k = 0; k < cols; ++k) {
              const int64_t b = k / 32;
              const double d = m.scale[r * nb + b], mn = m.min_val[r * nb + b];
              const int code = m.code[r * cols + k];
              want += dx[b] * (d * code + mn) * xi[k];
              mag += std::fabs(dx[b] * xi[k]) * (std::fabs(d * code) + std::fabs(mn));
              f32 += (d * code + mn) * xt[k];
              bound += dx[b] / 2 * std::fabs(d * code + mn);
            }
            const float got = y[t * a.ldy + r];
            ASSERT_NEAR(got, want, 1e-6 * mag + 1e-30) << e.name << " Q4_1 rows=" << rows << " cols=" << cols
                                                        << " n=" << n << " at " << t << "," << r;
            ASSERT_NEAR(got, f32, bound * 1.001 + 1e-6 * mag + 1e-30)
                << e.name << " Q4_1 rows=" << rows << " cols=" << cols << " n=" << n << " at " << t << "," << r;
          }
        }
      }
    }
  }
}

// For n = 1, 2, 3, 4, 5, 7 and 13 tokens of random x (decode, and token tiles with remainders): runs fn
// on `shape` (w, rows, cols and the format fields set) in two sub-range calls and checks every output
// against the exact integer dot of the weights `value` (rows x cols) with the independently quantized
// x, and against the f32 dot within the activation-rounding bound. Stops at the first failure.
void ExpectMatchesValues(GemmQ8Fn fn, const GemmQ8Args& shape, const std::vector<double>& value, Lcg& rng,
                         const std::string& label) {
  const int64_t rows = shape.rows, cols = shape.cols;
  for (int64_t n : {1, 2, 3, 4, 5, 7, 13}) {
    std::vector<float> x(n * cols);
    for (float& v : x) v = rng.Uniform(-2, 2);
    const QuantizedTokens tokens(GemvFormat::kQ4_0, x, n, cols);
    GemmQ8Args a = shape;
    a.n = n;
    tokens.SetArgs(a);
    const std::vector<float> y = RunSplit(fn, a, rows / 3 / 16 * 16);  // whole panels per call
    if (::testing::Test::HasFailure()) return;
    for (int64_t t = 0; t < n; ++t) {
      const float* xt = x.data() + t * cols;
      std::vector<int> xi;
      std::vector<double> dx;
      ReferenceQuantize(xt, cols, &xi, &dx);
      for (int64_t r = 0; r < rows; ++r) {
        // Sums per 32-block, scaled once by the block's activation scale (>= 0): the same sums as element
        // by element, with fewer emulated floating-point operations.
        double want = 0, mag = 0, f32 = 0, bound = 0;
        for (int64_t b = 0; b < cols / 32; ++b) {
          const double* w = value.data() + r * cols + b * 32;
          double sw = 0, sm = 0, sb = 0;
          for (int j = 0; j < 32; ++j) {
            const double wx = w[j] * xi[b * 32 + j];
            sw += wx;
            sm += std::fabs(wx);
            f32 += w[j] * xt[b * 32 + j];
            sb += std::fabs(w[j]);
          }
          want += dx[b] * sw;
          mag += dx[b] * sm;
          bound += dx[b] / 2 * sb;
        }
        const float got = y[t * a.ldy + r];
        ASSERT_NEAR(got, want, 1e-6 * mag + 1e-30)
            << label << " rows=" << rows << " cols=" << cols << " n=" << n << " at " << t << "," << r;
        ASSERT_NEAR(got, f32, bound * 1.001 + 1e-6 * mag + 1e-30)
            << label << " rows=" << rows << " cols=" << cols << " n=" << n << " at " << t << "," << r;
      }
    }
  }
}

// ggml Q5_0 / Q5_1 blocks of random bytes (ordinary fp16 d and m), each element's value decoded here.
TEST_P(GemmQ8GroupKernelTest, Q5MatchesIntegerDotAndF32WithinRoundingBound) {
  const GemmQ8Kernel& e = *GetParam();
  if (!CpuSupports(e.isa)) GTEST_SKIP() << e.name << ": this CPU lacks " << IsaName(e.isa);
  if (SkipEmulatedPortable(e)) GTEST_SKIP() << e.name << ": plain C++, checked natively by the host run";
  auto fn = e.fn;
  Lcg rng(43);
  for (bool mins : {false, true}) {
    const int64_t bb = mins ? 24 : 22;
    for (int64_t rows : {1, 17, 67, 130}) {
      for (int64_t cols : {32, 256, 352, 2080}) {
        const int64_t nb = cols / 32;
        std::vector<uint8_t> bytes(rows * nb * bb);
        for (uint8_t& v : bytes) v = static_cast<uint8_t>(rng.Next());
        std::vector<double> value(rows * cols);
        for (int64_t blk_index = 0; blk_index < rows * nb; ++blk_index) {
          uint8_t* blk = bytes.data() + blk_index * bb;
          const uint16_t d = static_cast<uint16_t>(((6 + rng.Next() % 9) << 10) | (rng.Next() & 0x3ff));
          const uint16_t m = static_cast<uint16_t>(((6 + rng.Next() % 9) << 10) | (rng.Next() & 0x3ff) | 0x8000);
          std::memcpy(blk, &d, 2);
          if (mins) std::memcpy(blk + 2, &m, 2);
          const uint8_t* qh = blk + (mins ? 4 : 2);
          const uint8_t* qs = qh + 4;
          for (int j = 0; j < 32; ++j) {
            const int q = (j < 16 ? qs[j] % 16 : qs[j - 16] / 16) + 16 * ((qh[j / 8] >> (j % 8)) % 2);
            value[(blk_index / nb) * cols + (blk_index % nb) * 32 + j] =
                mins ? q * DecodeHalf(d) + DecodeHalf(m) : (q - 16) * DecodeHalf(d);
          }
        }
        Packed packed = AlignedPacked(GemvPanel16Q5Bytes(rows, cols, mins));
        PackGemvPanel16Q5(bytes.data(), rows, cols, mins, packed.data);
        std::vector<uint8_t> row(nb * bb);
        for (int64_t r = 0; r < rows; ++r) {
          UnpackGemvPanel16Q5Row(packed.data, cols, mins, r, row.data());
          ASSERT_EQ(0, std::memcmp(row.data(), bytes.data() + r * nb * bb, nb * bb)) << "row " << r;
        }
        GemmQ8Args a;
        a.w = packed.data;
        a.rows = rows;
        a.cols = cols;
        a.group_size = 32;
        a.group_bits = 5;
        a.group_mins = mins;
        ExpectMatchesValues(fn, a, value, rng, e.name + (mins ? " Q5_1" : " Q5_0"));
        ASSERT_FALSE(HasFailure());
      }
    }
  }
}

// ggml k-quant super-blocks of random bytes (fp16 d / dmin of ordinary magnitudes), with every element's
// value decoded here from ggml-common.h's layout (llm/gguf/ggml_types.h describes it).
struct KQuantMatrix {
  std::vector<uint8_t> bytes;
  std::vector<double> value;  // rows x cols
};

// ggml-common.h's kvalues_iq4nl, typed in again here.
constexpr int kIQ4NLLevels[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

int64_t KBlockBytes(int kquant) {
  return kquant == 2 ? 84 : kquant == 3 ? 110 : kquant == 4 ? 144 : kquant == 5 ? 176 : kquant == 6 ? 210 : 136;
}

KQuantMatrix MakeKQuantMatrix(int kquant, int64_t rows, int64_t cols, Lcg& rng) {
  const int64_t bb = KBlockBytes(kquant);
  const int64_t units = cols / 256;
  KQuantMatrix m;
  m.bytes.resize(rows * units * bb);
  m.value.resize(rows * cols);
  for (uint8_t& v : m.bytes) v = static_cast<uint8_t>(rng.Next());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t u = 0; u < units; ++u) {
      uint8_t* blk = m.bytes.data() + (r * units + u) * bb;
      const uint16_t d = static_cast<uint16_t>(((3 + rng.Next() % 6) << 10) | (rng.Next() & 0x3ff));
      const uint16_t dmin = static_cast<uint16_t>(((3 + rng.Next() % 6) << 10) | (rng.Next() & 0x3ff));
      if (kquant == 2) {
        std::memcpy(blk + 80, &d, 2);
        std::memcpy(blk + 82, &dmin, 2);
      } else if (kquant == 3) {
        std::memcpy(blk + 108, &d, 2);
      } else if (kquant == kKQuantIQ4_XS) {
        std::memcpy(blk, &d, 2);
      } else if (kquant != 6) {
        std::memcpy(blk, &d, 2);
        std::memcpy(blk + 2, &dmin, 2);
      } else {
        std::memcpy(blk + 208, &d, 2);
      }
      for (int e = 0; e < 256; ++e) {
        double v;
        if (kquant == 2) {
          // scales[16] (scale | min << 4), qs[64], d, dmin: element 128n + 32j + l, sub-block s = e / 16.
          const int n = e / 128, j = (e % 128) / 32, l = e % 32, s = e / 16;
          const int q = (blk[16 + 32 * n + l] >> (2 * j)) % 4;
          v = DecodeHalf(d) * (blk[s] % 16) * q - DecodeHalf(dmin) * (blk[s] / 16);
        } else if (kquant == 3) {
          // hmask[32], qs[64], scales[12], d: element 128n + 32j + l, sub-block s = e / 16.
          const int n = e / 128, j = (e % 128) / 32, l = e % 32, s = e / 16;
          const int low = (blk[32 + 32 * n + l] >> (2 * j)) % 4;
          const bool third = (blk[l] >> (4 * n + j)) % 2 == 1;
          const uint8_t* s12 = blk + 96;
          const int scale = (s < 8 ? s12[s] % 16 : s12[s - 8] / 16) + 16 * ((s12[8 + s % 4] >> (2 * (s / 4))) % 4);
          v = DecodeHalf(d) * (scale - 32) * (low - (third ? 0 : 4));
        } else if (kquant == kKQuantIQ4_XS) {
          // d, scales_h (2 bits per sub-block j at 2j), scales_l[4] (a nibble per j), qs[128]: sub-block j's
          // element l < 16 in the low nibble of qs[16j + l], l + 16 in its high nibble.
          const int j = e / 32, l = e % 32;
          const int scales_h = blk[2] | blk[3] << 8;
          const int scale = (j % 2 == 0 ? blk[4 + j / 2] % 16 : blk[4 + j / 2] / 16) + 16 * ((scales_h >> (2 * j)) % 4);
          const uint8_t q = blk[8 + 16 * j + l % 16];
          v = DecodeHalf(d) * (scale - 32) * kIQ4NLLevels[l < 16 ? q % 16 : q / 16];
        } else if (kquant != 6) {
          const uint8_t* s = blk + 4;
          const int j = e / 32, c = e / 64, l = e % 32;
          const int sc = j < 4 ? s[j] % 64 : s[j + 4] % 16 + 16 * (s[j - 4] / 64);
          const int mn = j < 4 ? s[j + 4] % 64 : s[j + 4] / 16 + 16 * (s[j] / 64);
          const uint8_t q = blk[(kquant == 4 ? 16 : 48) + 32 * c + l];
          int code = e % 64 < 32 ? q % 16 : q / 16;
          if (kquant == 5) code += 16 * ((blk[16 + l] >> j) % 2);  // bit 2c (low) or 2c + 1 (high nibbles) = j
          v = DecodeHalf(d) * sc * code - DecodeHalf(dmin) * mn;
        } else {
          const int h = e / 128, k = (e % 128) / 32, l = e % 32;
          const uint8_t low = blk[64 * h + 32 * (k % 2) + l];
          const int q = (k < 2 ? low % 16 : low / 16) + 16 * ((blk[128 + 32 * h + l] >> (2 * k)) % 4);
          v = DecodeHalf(d) * static_cast<int8_t>(blk[192 + 8 * h + 2 * k + l / 16]) * (q - 32);
        }
        m.value[r * cols + u * 256 + e] = v;
      }
    }
  }
  return m;
}

// One k-quant through kernel `e` over row counts across the 16-row panels and 1, 3 and 8 units: the
// packed matrix unpacks to the file's bytes, and the kernel matches the integer dot and f32.
void CheckKQuant(const GemmQ8Kernel& e, int kquant, Lcg& rng) {
  auto fn = e.fn;
  const int64_t bb = KBlockBytes(kquant);
  for (int64_t rows : {1, 17, 67, 130}) {
    for (int64_t cols : {256, 768, 2048}) {
      const KQuantMatrix m = MakeKQuantMatrix(kquant, rows, cols, rng);
      Packed packed = AlignedPacked(GemvPanel16KQuantBytes(kquant, rows, cols));
      PackGemvPanel16KQuant(kquant, m.bytes.data(), rows, cols, packed.data);
      std::vector<uint8_t> row(cols / 256 * bb);
      for (int64_t r = 0; r < rows; ++r) {
        UnpackGemvPanel16KQuantRow(kquant, packed.data, cols, r, row.data());
        ASSERT_EQ(0, std::memcmp(row.data(), m.bytes.data() + r * row.size(), row.size())) << "row " << r;
      }
      GemmQ8Args a;
      a.w = packed.data;
      a.rows = rows;
      a.cols = cols;
      a.kquant = kquant;
      ExpectMatchesValues(fn, a, m.value, rng,
                          e.name + (kquant == kKQuantIQ4_XS ? " IQ4_XS" : " Q" + std::to_string(kquant) + "_K"));
      ASSERT_FALSE(::testing::Test::HasFailure());
    }
  }
}

TEST_P(GemmQ8GroupKernelTest, KQuantsMatchIntegerDotAndF32WithinRoundingBound) {
  const GemmQ8Kernel& e = *GetParam();
  if (!CpuSupports(e.isa)) GTEST_SKIP() << e.name << ": this CPU lacks " << IsaName(e.isa);
  if (SkipEmulatedPortable(e)) GTEST_SKIP() << e.name << ": plain C++, checked natively by the host run";
  Lcg rng(41);
  for (int kquant : {2, 3, 4, 5, 6, kKQuantIQ4_XS}) {
    CheckKQuant(e, kquant, rng);
    if (HasFailure()) return;
  }
}

// Kernels of single k-quants ("kquant_panel16xq8": the k-quants and IQ4_XS on Arm dotprod), on the kinds their
// legality check accepts (at least one each), and the selection that routes those kinds to them.
TEST(GemmQ8KQuantKernelTest, SingleKQuantKernelsMatchIntegerDotAndF32WithinRoundingBound) {
  int ran = 0;
  for (const GemmQ8Kernel& e : GemmQ8Panel16Kernels().entries()) {
    if (e.dtypes != "kquant_panel16xq8") continue;
    if (!CpuSupports(e.isa)) continue;
    Lcg rng(43);
    int kinds = 0;
    for (int kquant : {2, 3, 4, 5, 6, kKQuantIQ4_XS}) {
      if (!e.legal(ProblemShape{1, 256, 1, kquant})) continue;
      ++kinds;
      CheckKQuant(e, kquant, rng);
      if (HasFailure()) return;
      EXPECT_EQ(FastGemmQ8Panel16KQuantKernel(kquant), &e) << e.name << " Q" << kquant << "_K";
    }
    EXPECT_GT(kinds, 0) << e.name;
    ++ran;
  }
  if (ran == 0) GTEST_SKIP() << "no single-k-quant kernel on this CPU";
}

INSTANTIATE_TEST_SUITE_P(GemmQ8Group, GemmQ8GroupKernelTest, testing::ValuesIn(GroupKernels()),
                         [](const testing::TestParamInfo<const GemmQ8Kernel*>& info) { return info.param->name; });

// ggml IQ4_NL blocks (Q4_0's bytes: fp16 d, 16 nibble bytes; value = d x level) of random bytes on the
// Q4_0 Panel16 layout, through every Q4_0 Panel16 kernel with GemmQ8Args::nonlinear.
TEST(GemmQ8Panel16Test, IQ4_NLMatchesIntegerDotAndF32WithinRoundingBound) {
  Lcg rng(47);
  for (const GemmQ8Kernel& e : GemmQ8Panel16Kernels().entries()) {
    if (e.dtypes.rfind("q4_0_panel16", 0) != 0) continue;
    if (!CpuSupports(e.isa)) continue;
    auto fn = e.fn;
    for (int64_t rows : {1, 17, 67, 130}) {
      for (int64_t cols : {32, 96, 2080}) {
        const int64_t nb = cols / 32;
        std::vector<uint8_t> bytes(rows * nb * 18);
        for (uint8_t& v : bytes) v = static_cast<uint8_t>(rng.Next());
        std::vector<double> value(rows * cols);
        for (int64_t bi = 0; bi < rows * nb; ++bi) {
          uint8_t* blk = bytes.data() + bi * 18;
          const uint16_t d = static_cast<uint16_t>(((3 + rng.Next() % 6) << 10) | (rng.Next() & 0x3ff));
          std::memcpy(blk, &d, 2);
          for (int j = 0; j < 32; ++j) {
            const int code = j < 16 ? blk[2 + j] % 16 : blk[2 + j - 16] / 16;
            value[(bi / nb) * cols + (bi % nb) * 32 + j] = DecodeHalf(d) * kIQ4NLLevels[code];
          }
        }
        Packed packed = AlignedPacked(GemvPanel16Bytes(GemvFormat::kQ4_0, rows, cols));
        PackGemvPanel16(GemvFormat::kQ4_0, bytes.data(), rows, cols, packed.data);
        GemmQ8Args a;
        a.w = packed.data;
        a.rows = rows;
        a.cols = cols;
        a.nonlinear = true;
        ExpectMatchesValues(fn, a, value, rng, e.name + " IQ4_NL");
        ASSERT_FALSE(HasFailure());
      }
    }
  }
}

TEST(GemmQ8SelectionTest, FastKernelIsNeverTheReference) {
  for (GemvFormat f : {GemvFormat::kQ4_0, GemvFormat::kQ8_0}) {
    const GemmQ8Kernel* e = FastGemmQ8Kernel(f);
    if (e == nullptr) continue;
    EXPECT_NE(e->backend, "reference");
    EXPECT_EQ(e->op, "gemm");
    EXPECT_TRUE(CpuSupports(e->isa));
  }
  EXPECT_EQ(FastGemmQ8Kernel(GemvFormat::kInt4Group), nullptr);
}

}  // namespace
}  // namespace tessel
