// Every GEMV kernel and the GEMM path against the reference twin (dequantize + double accumulation)
// over awkward shapes: one row, rows below / across the 8-row panel and the 16-row GEMV step, token
// counts below and across the 4-token tile, odd column counts for the float types, several threads.
#include "llm/matmul/matmul.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/registry/registry.h"
#include "llm/matmul/row_dot.h"

namespace tessel::llm {
namespace {

struct Case {
  GgmlType type;
  int64_t rows, cols;
};

std::vector<uint8_t> RandomWeights(GgmlType type, int64_t rows, int64_t cols, std::mt19937& rng) {
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> row(cols);
  std::vector<uint8_t> data(GgmlRowBytes(type, cols) * rows);
  for (int64_t r = 0; r < rows; ++r) {
    for (float& v : row) v = dist(rng);
    QuantizeRow(type, row.data(), data.data() + r * GgmlRowBytes(type, cols), cols);
  }
  return data;
}

// Whether decode of `type` quantizes x to int8 on this CPU (kernels/gemv's int8-input kernels).
bool Int8Input(GgmlType type) {
  if (type == GgmlType::kQ4_0) return FastGemvQ8Kernel(GemvFormat::kQ4_0) != nullptr;
  if (type == GgmlType::kQ8_0) return FastGemvQ8Kernel(GemvFormat::kQ8_0) != nullptr;
  return false;
}

// Whether prefill (n > 1) of `type` quantizes x to int8 on this CPU (kernels/gemv's GemmQ8Kernels).
bool Int8PrefillInput(GgmlType type) {
  if (type == GgmlType::kQ4_0) return FastGemmQ8Kernel(GemvFormat::kQ4_0) != nullptr;
  if (type == GgmlType::kQ8_0) return FastGemmQ8Kernel(GemvFormat::kQ8_0) != nullptr;
  return false;
}

// Per 32-block factors of the activation rounding bound, for `count` vectors of `cols`: sum |v| of
// each block (weights) or max |v| (activations). The sweeps compute them once per matrix and input.
std::vector<double> BlockFactors(const float* v, int64_t count, int64_t cols, bool max) {
  const int64_t nb = cols / 32;
  std::vector<double> out(count * nb, 0.0);
  for (int64_t i = 0; i < count; ++i) {
    for (int64_t b = 0; b < nb; ++b) {
      double f = 0;
      for (int64_t k = b * 32; k < b * 32 + 32; ++k) {
        const float a = std::fabs(v[i * cols + k]);
        f = max ? std::max<double>(f, a) : f + a;
      }
      out[i * nb + b] = f;
    }
  }
  return out;
}

// Float rounding of a length-`cols` dot product, relative to sum |w| |x|, plus, when x is quantized
// to int8 per 32-block (scale max|x| / 127), the activation rounding bound of kernels/gemv/gemv.h:
// each x moves by at most half a step, so sum over blocks of max|x| / 254 * sum |w|.
// wabs and amax: BlockFactors of the row and of the token.
double RoundingBound(int64_t cols, const double* wabs, const double* amax, bool int8_x) {
  double rounding = 0;
  for (int64_t b = 0; int8_x && b < cols / 32; ++b) rounding += amax[b] / 254 * wabs[b];
  return rounding;
}

double Tolerance(const float* wrow, const float* x, int64_t cols, const double* wabs, const double* amax,
                 bool int8_x) {
  double mag = 0;
  for (int64_t k = 0; k < cols; ++k) mag += std::fabs(wrow[k] * x[k]);
  return 1e-6 * mag + 1e-6 + RoundingBound(cols, wabs, amax, int8_x);
}

// Tolerance() where it decides: an error within its other terms passes whatever sum |w| |x| is, so
// that O(cols) sum is formed only for the errors above them (under qemu it was a third of the run).
double ToleranceFor(double error, const float* wrow, const float* x, int64_t cols, const double* wabs,
                    const double* amax, bool int8_x) {
  const double floor = 1e-6 + RoundingBound(cols, wabs, amax, int8_x);
  return std::fabs(error) <= floor ? floor : Tolerance(wrow, x, cols, wabs, amax, int8_x);
}

double Tolerance(const float* wrow, const float* x, int64_t cols, bool int8_x) {
  const std::vector<double> wabs = BlockFactors(wrow, 1, cols, false), amax = BlockFactors(x, 1, cols, true);
  return Tolerance(wrow, x, cols, wabs.data(), amax.data(), int8_x);
}

class MatmulTest : public ::testing::TestWithParam<GgmlType> {};

TEST_P(MatmulTest, MatchesReference) {
  const GgmlType type = GetParam();
  const bool blocked = GetGgmlTypeInfo(type).block_size > 1;
  std::vector<int64_t> col_counts = {32, 64, 96, 352};
  if (!blocked) col_counts.insert(col_counts.end(), {1, 7, 33, 100});
  // Tessel group types: 1 to 3 groups (the group Panel16 layout's 256-column units whole and partial).
  if (TesselGroupFormat f; GetTesselGroupFormat(type, &f)) col_counts = {f.group, 2 * f.group, 3 * f.group};
  // k-quants: one and three 256-element super-blocks.
  if (GetGgmlTypeInfo(type).block_size == 256) col_counts = {256, 768};
  std::mt19937 rng(static_cast<uint32_t>(type) + 1);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  // Under qemu (the aarch64 test run) floating point is emulated a few hundred times slower: fewer
  // shapes, still one row, a partial 16-row step, several panels, and the 64-token block crossing.
  const bool emulated = std::getenv("TESSEL_UNDER_QEMU") != nullptr;
  const std::vector<int> thread_counts = emulated ? std::vector<int>{3} : std::vector<int>{1, 3};
  const std::vector<int64_t> row_counts =
      emulated ? std::vector<int64_t>{1, 17, 70} : std::vector<int64_t>{1, 3, 8, 17, 33, 70, 200};  // 200: 13 panels of 16, 4 streams
  const std::vector<int64_t> token_counts =
      emulated ? std::vector<int64_t>{1, 5, 67} : std::vector<int64_t>{1, 2, 3, 4, 5, 9, 67};
  for (int threads : thread_counts) {
    ThreadPool pool(threads);
    Matmul mm(768, &pool);
    for (int64_t rows : row_counts) {
      for (int64_t cols : col_counts) {
        const std::vector<uint8_t> data = RandomWeights(type, rows, cols, rng);
        const WeightMatrix w{type, rows, cols, data.data()};
        std::vector<float> deq(rows * cols);  // the tolerances' sum |w|, dequantized once
        for (int64_t r = 0; r < rows; ++r) DequantizeRow(type, w.row(r), deq.data() + r * cols, cols);
        const std::vector<double> wabs = BlockFactors(deq.data(), rows, cols, false);
        // Q4_0 / Q8_0 / INT4 groups: also repacked to Panel16 where this CPU has its kernels, as models load.
        std::vector<uint8_t> packed_storage;
        WeightMatrix packed;
        if (Panel16Available(type)) {
          packed_storage.resize(Panel16Bytes(w) + 64);
          uint8_t* p = packed_storage.data() + (64 - reinterpret_cast<uintptr_t>(packed_storage.data()) % 64) % 64;
          packed = RepackPanel16(w, p);
          // The reference reads a matrix only through its dequantized rows: the packed layout's rows
          // equal to the original's make the reference the same for both, whatever x.
          std::vector<uint8_t> blocks(packed.row_bytes());
          std::vector<float> row(cols);
          for (int64_t r = 0; r < rows; ++r) {
            DequantizeRow(type, packed.RowBlocks(r, blocks.data()), row.data(), cols);
            ASSERT_TRUE(std::equal(row.begin(), row.end(), deq.begin() + r * cols))
                << GgmlTypeName(type) << " Panel16 row " << r << " of " << rows << "x" << cols;
          }
        }
        // 67 tokens: across the f32 prefill path's 64-token GEMM blocks.
        for (int64_t n : token_counts) {
          std::vector<float> x(n * cols), y(n * rows, -1.0f), want(n * rows);
          for (float& v : x) v = dist(rng);
          MatmulReference(w, x.data(), n, want.data());
          const std::vector<double> amax = BlockFactors(x.data(), n, cols, true);
          for (const WeightMatrix* m : {&w, static_cast<const WeightMatrix*>(&packed)}) {
            if (m->data == nullptr) continue;
            std::fill(y.begin(), y.end(), -1.0f);
            mm.Run(*m, x.data(), n, y.data());
            // Panel16 matrices always run the int8 kernels.
            const bool int8_x = m == &packed || (n == 1 ? Int8Input(type) : Int8PrefillInput(type));
            for (int64_t t = 0; t < n; ++t) {
              for (int64_t r = 0; r < rows; ++r) {
                ASSERT_NEAR(y[t * rows + r], want[t * rows + r],
                            ToleranceFor(y[t * rows + r] - want[t * rows + r], deq.data() + r * cols,
                                         x.data() + t * cols, cols, wabs.data() + r * (cols / 32),
                                         amax.data() + t * (cols / 32), int8_x))
                    << GgmlTypeName(type) << (m == &packed ? " Panel16" : "") << " threads " << threads << " rows "
                    << rows << " cols " << cols << " n " << n << " at " << t << "," << r;
              }
            }
          }
        }
      }
    }
  }
}

TEST_P(MatmulTest, GroupEqualsSeparateRuns) {
  const GgmlType type = GetParam();
  std::mt19937 rng(99);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  ThreadPool pool(2);
  TesselGroupFormat f;
  const int64_t cols = GetTesselGroupFormat(type, &f) ? std::max(64, f.group)
                       : GetGgmlTypeInfo(type).block_size == 256 ? 512 : 64;
  Matmul mm(cols, &pool);
  const std::vector<uint8_t> a = RandomWeights(type, 24, cols, rng), b = RandomWeights(type, 5, cols, rng);
  const WeightMatrix wa{type, 24, cols, a.data()}, wb{type, 5, cols, b.data()};
  for (int64_t n : {1, 6}) {
    std::vector<float> x(n * cols);
    for (float& v : x) v = dist(rng);
    std::vector<float> ya(n * 24), yb(n * 5), ga(n * 24), gb(n * 5);
    mm.Run(wa, x.data(), n, ya.data());
    mm.Run(wb, x.data(), n, yb.data());
    const MatmulJob jobs[] = {{&wa, ga.data()}, {&wb, gb.data()}};
    mm.RunGroup(jobs, x.data(), n);
    EXPECT_EQ(ya, ga);
    EXPECT_EQ(yb, gb);
  }
}

// The int8 prefill path (Q4_0 / Q8_0 on VNNI CPUs) at model-like widths, token counts across the
// kernel's 4-token tile and rows across its 4-row tile and the 16-row tasks; the token count shrinks
// and grows again so the grown input buffers are reused. Tolerance: Tolerance() with int8 x.
TEST(MatmulPrefillTest, Int8PathMatchesReference) {
  for (GgmlType type : {GgmlType::kQ4_0, GgmlType::kQ8_0}) {
    if (!Int8PrefillInput(type)) {
      std::printf("%s: no int8 prefill kernel on this CPU\n", std::string(GgmlTypeName(type)).c_str());
      continue;
    }
    std::mt19937 rng(7);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    for (int threads : {1, 2}) {
      ThreadPool pool(threads);
      Matmul mm(2048, &pool);
      for (int64_t rows : {7, 37}) {
        for (int64_t cols : {32, 96, 2048}) {
          const std::vector<uint8_t> data = RandomWeights(type, rows, cols, rng);
          const WeightMatrix w{type, rows, cols, data.data()};
          std::vector<float> row(cols);
          for (int64_t n : {2, 9, 33, 3, 6}) {
            std::vector<float> x(n * cols), y(n * rows, -1.0f), want(n * rows);
            for (float& v : x) v = dist(rng);
            mm.Run(w, x.data(), n, y.data());
            MatmulReference(w, x.data(), n, want.data());
            for (int64_t r = 0; r < rows; ++r) {
              DequantizeRow(type, w.row(r), row.data(), cols);
              for (int64_t t = 0; t < n; ++t) {
                ASSERT_NEAR(y[t * rows + r], want[t * rows + r], Tolerance(row.data(), x.data() + t * cols, cols, true))
                    << GgmlTypeName(type) << " threads " << threads << " rows " << rows << " cols " << cols
                    << " n " << n << " at " << t << "," << r;
              }
            }
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllTypes, MatmulTest,
                         ::testing::Values(GgmlType::kF32, GgmlType::kF16, GgmlType::kBF16, GgmlType::kQ8_0,
                                           GgmlType::kQ4_0, GgmlType::kQ4_1, GgmlType::kTesselI4G32,
                                           GgmlType::kTesselI4G128, GgmlType::kTesselI4G64A,
                                           GgmlType::kTesselI4G128A, GgmlType::kTesselI3G128, GgmlType::kQ4_K,
                                           GgmlType::kQ5_K, GgmlType::kQ6_K, GgmlType::kQ5_0, GgmlType::kQ5_1,
                                           GgmlType::kQ2_K, GgmlType::kQ3_K, GgmlType::kIQ4_NL,
                                           GgmlType::kIQ4_XS),
                         [](const ::testing::TestParamInfo<GgmlType>& info) {
                           return std::string(GgmlTypeName(info.param));
                         });

// F16 / BF16 wider than kColumnBlockCols, repacked into column blocks as models load where the AVX-512
// row kernels read that layout: the layout holds the same rows (RowBlocks), and decode (the blocked row
// kernel, 1 and 3 threads, rows below and across the 4-stream split), a few tokens (per-token decode) and
// prefill (the f32 GEMM on rows gathered from the blocks) match the reference on the ggml rows. Widths: a
// 1-column last block, a whole number of blocks, and a narrow third block.
TEST(ColumnBlocksTest, MatchesReference) {
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (GgmlType type : {GgmlType::kF16, GgmlType::kBF16}) {
    for (int64_t cols : {kColumnBlockCols + 1, 2 * kColumnBlockCols, 2 * kColumnBlockCols + 96}) {
      for (int64_t rows : {1, 5, 37}) {
        const std::vector<uint8_t> data = RandomWeights(type, rows, cols, rng);
        const WeightMatrix w{type, rows, cols, data.data()};
        std::vector<float> deq(rows * cols);  // the tolerances' sum |w|, dequantized once
        for (int64_t r = 0; r < rows; ++r) DequantizeRow(type, w.row(r), deq.data() + r * cols, cols);
        std::vector<uint8_t> blocked_storage(w.bytes());
        const WeightMatrix blocked = RepackColumnBlocks(w, blocked_storage.data());
        ASSERT_EQ(blocked.column_blocks(), (cols + kColumnBlockCols - 1) / kColumnBlockCols);
        std::vector<uint8_t> scratch(w.row_bytes());
        for (int64_t r = 0; r < rows; ++r) {
          ASSERT_TRUE(std::equal(w.row(r), w.row(r) + w.row_bytes(), blocked.RowBlocks(r, scratch.data()))) << r;
        }
        if (!ColumnBlocksAvailable(type)) continue;  // the portable row kernels read ggml rows only
        for (int threads : {1, 3}) {
          ThreadPool pool(threads);
          Matmul mm(cols, &pool);
          for (int64_t n : {1, 3, 67}) {
            std::vector<float> x(n * cols), y(n * rows, -1.0f), want(n * rows);
            for (float& v : x) v = dist(rng);
            MatmulReference(w, x.data(), n, want.data());
            mm.Run(blocked, x.data(), n, y.data());
            for (int64_t t = 0; t < n; ++t) {
              for (int64_t r = 0; r < rows; ++r) {
                ASSERT_NEAR(y[t * rows + r], want[t * rows + r],
                            Tolerance(deq.data() + r * cols, x.data() + t * cols, cols, false))
                    << GgmlTypeName(type) << " threads " << threads << " rows " << rows << " cols " << cols << " n "
                    << n << " at " << t << "," << r;
              }
            }
          }
        }
      }
    }
  }
}

TEST(RowDotTest, EverySupportedTypeHasAKernel) {
  for (GgmlType t : {GgmlType::kF32, GgmlType::kF16, GgmlType::kBF16, GgmlType::kQ8_0, GgmlType::kQ4_0,
                     GgmlType::kQ4_1, GgmlType::kQ5_0, GgmlType::kQ5_1, GgmlType::kQ2_K, GgmlType::kQ3_K,
                     GgmlType::kQ4_K, GgmlType::kQ5_K, GgmlType::kQ6_K, GgmlType::kIQ4_NL, GgmlType::kIQ4_XS}) {
    EXPECT_NE(GetRowDot(t), nullptr) << GgmlTypeName(t);
  }
  EXPECT_EQ(GetRowDot(GgmlType::kIQ3_S), nullptr);
}

// Every registered row kernel this CPU runs, not only the selected one, against the reference: rows
// below and across the stream split, a range that starts past row 0, and odd widths for the float types.
TEST(RowDotTest, EveryRegisteredKernelMatchesReference) {
  std::mt19937 rng(11);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  int ran = 0;
  for (const RowDotKernel& e : GgmlRowDotKernels().entries()) {
    if (!CpuSupports(e.isa)) continue;
    const GgmlType type = *ParseGgmlType(e.dtypes);
    const bool float_type = type == GgmlType::kF32 || type == GgmlType::kF16 || type == GgmlType::kBF16;
    for (int64_t cols : float_type ? std::vector<int64_t>{1, 83, 512} : std::vector<int64_t>{512}) {
      for (int64_t rows : {1, 9, 37}) {
        const std::vector<uint8_t> data = RandomWeights(type, rows, cols, rng);
        const WeightMatrix w{type, rows, cols, data.data()};
        std::vector<float> x(cols), want(rows), deq(cols);
        for (float& v : x) v = dist(rng);
        MatmulReference(w, x.data(), 1, want.data());
        for (int64_t begin : {int64_t{0}, rows / 2}) {
          std::vector<float> y(rows - begin, -1.0f);
          e.fn(w.view(), x.data(), begin, rows, y.data());
          for (int64_t r = begin; r < rows; ++r) {
            DequantizeRow(type, w.row(r), deq.data(), cols);
            ASSERT_NEAR(y[r - begin], want[r], Tolerance(deq.data(), x.data(), cols, false))
                << e.name << " " << e.dtypes << " rows " << rows << " cols " << cols << " from " << begin << " at " << r;
          }
        }
      }
    }
    ++ran;
  }
  if (ran == 0) GTEST_SKIP() << "no row kernel runs on this CPU";
}

// The stream count tessel generate reports is the one the kernels use: CpuFeatures' row counts for
// F16 / BF16 on AVX-512 and AVX2, its Panel16 counts for repacked matrices (the 256-bit one on AVX2, two
// at most there for Q8_0 and IQ4_NL, the mins count for Q2_K, Q4_K and Q5_K), none for ggml rows of Q4_0
// or f32. Under TESSEL_FORCE_BACKEND=reference the portable row kernels run, which read one stream.
TEST(RowDotTest, DecodeStreamsFollowCpuFeatures) {
  const CpuFeatures& cpu = GetCpuFeatures();
  const bool vector = ForcedBackendFromEnv() != "reference";
  const bool avx512 = vector && CpuSupports(Isa::kAvx512);
  const bool avx2 = vector && !avx512 && cpu.avx2 && cpu.fma && cpu.f16c;
  const WeightMatrix f16{GgmlType::kF16, 64, 64, nullptr};
  EXPECT_EQ(DecodeStreams(f16, 1), avx512 || avx2 ? cpu.row_streams : 0);
  EXPECT_EQ(DecodeStreams(f16, 2), avx512 || avx2 ? cpu.row_streams_threaded : 0);
  WeightMatrix panel{GgmlType::kQ4_0, 64, 64, nullptr};
  panel.layout = WeightLayout::kPanel16;
  EXPECT_EQ(DecodeStreams(panel, 1), avx512 ? cpu.decode_streams : avx2 ? cpu.decode_streams_ymm : 0);
  WeightMatrix q8_panel{GgmlType::kQ8_0, 64, 64, nullptr};
  q8_panel.layout = WeightLayout::kPanel16;
  EXPECT_EQ(DecodeStreams(q8_panel, 1),
            avx512 ? cpu.decode_streams : avx2 ? std::min(cpu.decode_streams_ymm, 2) : 0);
  WeightMatrix q4k_panel{GgmlType::kQ4_K, 256, 256, nullptr};
  q4k_panel.layout = WeightLayout::kPanel16;
  EXPECT_EQ(DecodeStreams(q4k_panel, 1), avx512 ? cpu.decode_streams : avx2 ? cpu.decode_streams_ymm : 0);
  WeightMatrix q6k_panel{GgmlType::kQ6_K, 256, 256, nullptr};
  q6k_panel.layout = WeightLayout::kPanel16;
  EXPECT_EQ(DecodeStreams(q6k_panel, 1), avx512 ? cpu.decode_streams : avx2 ? cpu.decode_streams_ymm : 0);
  EXPECT_EQ(DecodeStreams(WeightMatrix{GgmlType::kQ4_0, 64, 64, nullptr}, 1), 0);
  EXPECT_EQ(DecodeStreams(WeightMatrix{GgmlType::kF32, 64, 64, nullptr}, 1), 0);
}

// No slow type: every type the loader accepts (GgmlTypeInfo::supported) runs decode (1 token) and prefill
// (64 tokens) on a vector kernel at the ISA level this process is capped at. The matmul_isa_*_test
// targets run this file under TESSEL_MAX_ISA=avx2, avx2vnni, avx512 and avx512vnni, simulating CPUs of
// those levels; a level this CPU lacks in part is skipped. On aarch64 the level is the dot-product
// extension (Armv8.2-A and later; skipped without it). What counts as a vector kernel:
//   quantized types  x quantized to int8 and integer dot products on an ISA-specific kernel
//                    (MatmulPath::kInt8): never an f32-input kernel, never portable code;
//   F32, F16, BF16   the f32-input row kernels of the ISA for decode (row_dot_avx2.cc / row_dot_avx512.cc:
//                    F16C / AVX-512 conversions in registers) and, for prefill, the ISA's f32 GEMM on rows
//                    converted by those kernels (MatmulPath::kF32Vector); never the portable row kernels.
// Each matrix is laid out as a model load lays it out (DecodeLayout) and its product is checked against
// the reference, so the kernel described is the one that runs and it is right.
// Every type the loader accepts, one test case each (so that the emulated aarch64 run spreads them
// over the shards).
std::vector<GgmlType> LoadableTypes() {
  std::vector<GgmlType> types;
  for (uint32_t id = 0; id < 256; ++id) {
    const GgmlTypeInfo* info = FindGgmlType(id);
    if (info != nullptr && info->supported) types.push_back(static_cast<GgmlType>(id));
  }
  return types;
}

TEST(NoSlowTypeCountTest, EveryLoadableTypeIsChecked) {
  EXPECT_GE(LoadableTypes().size(), 27u) << "F32, F16, BF16, 12 ggml quantized types and 12 Tessel group types";
}

class NoSlowTypeTest : public ::testing::TestWithParam<GgmlType> {};

TEST_P(NoSlowTypeTest, RunsAVectorKernel) {
  const CpuFeatures& cpu = GetCpuFeatures();
#if defined(__x86_64__)
  if (cpu.isa_cap == nullptr) GTEST_SKIP() << "run under TESSEL_MAX_ISA (the matmul_isa_*_test targets)";
  if (cpu.isa_cap_unmet) GTEST_SKIP() << "this CPU lacks part of " << cpu.isa_cap << ": " << cpu.ToString();
  const std::string level = cpu.isa_cap;
#elif defined(__aarch64__)
  if (!CpuSupports(Isa::kDotprod)) GTEST_SKIP() << "this CPU lacks the dot-product extension: " << cpu.ToString();
  const std::string level = "aarch64 dotprod";
#else
  GTEST_SKIP() << "the ISA levels of this test are x86's and aarch64's";
  const std::string level;
#endif
  std::printf("%s\n", cpu.ToString().c_str());
  const GgmlType type = GetParam();
  std::mt19937 rng(11 + static_cast<int>(type));
  std::normal_distribution<float> dist(0.0f, 1.0f);
  {
    const bool float_type = type == GgmlType::kF32 || type == GgmlType::kF16 || type == GgmlType::kBF16;
    const MatmulPath want = float_type ? MatmulPath::kF32Vector : MatmulPath::kInt8;
    // 40 rows: two and a half 16-row panels; 2304 columns: 9 k-quant super-blocks, wider than a column block.
    const int64_t rows = 40, cols = 2304;
    const std::vector<uint8_t> data = RandomWeights(type, rows, cols, rng);
    WeightMatrix w{type, rows, cols, data.data()};
    std::vector<uint8_t> storage;
    const std::optional<WeightLayout> layout = DecodeLayout(w);
    if (layout == WeightLayout::kPanel16) {
      storage.resize(Panel16Bytes(w) + 64);
      uint8_t* p = storage.data() + (64 - reinterpret_cast<uintptr_t>(storage.data()) % 64) % 64;
      w = RepackPanel16(w, p);
    } else if (layout == WeightLayout::kColumnBlocks) {
      storage.resize(w.bytes());
      w = RepackColumnBlocks(w, storage.data());
    }
    // The tolerances' sum |w| per block, from the rows dequantized once (as MatchesReference does).
    std::vector<float> deq(rows * cols);
    {
      std::vector<uint8_t> blocks(w.row_bytes());
      for (int64_t r = 0; r < rows; ++r) DequantizeRow(type, w.RowBlocks(r, blocks.data()), deq.data() + r * cols, cols);
    }
    const std::vector<double> wabs = BlockFactors(deq.data(), rows, cols, false);
    // One input and one double-precision reference per token count, checked on 1 and 2 threads (the
    // reference was most of the emulated time when each thread count drew its own).
    for (int64_t n : {int64_t{1}, int64_t{64}}) {
      std::vector<float> x(n * cols), ref(n * rows);
      for (float& v : x) v = dist(rng);
      MatmulReference(w, x.data(), n, ref.data());
      const std::vector<double> amax = BlockFactors(x.data(), n, cols, true);
      for (int threads : {1, 2}) {
        ThreadPool pool(threads);
        Matmul mm(cols, &pool);
        const MatmulKernel k = DescribeMatmul(w, n, threads);
        std::printf("%-14s %d thread(s) %s: %s (%s)\n", std::string(GgmlTypeName(type)).c_str(), threads,
                    n == 1 ? "decode " : "prefill", k.name.c_str(), MatmulPathName(k.path));
        EXPECT_EQ(k.path, want) << GgmlTypeName(type) << (n == 1 ? " decode" : " prefill") << " on " << threads
                                << " thread(s) at " << level << " runs " << k.name << " ("
                                << MatmulPathName(k.path) << ")";
        std::vector<float> y(n * rows);
        mm.Run(w, x.data(), n, y.data());
        const bool int8_x = k.path == MatmulPath::kInt8;
        for (int64_t r = 0; r < rows; ++r) {
          for (int64_t t = 0; t < n; ++t) {
            const double error = y[t * rows + r] - ref[t * rows + r];
            ASSERT_NEAR(y[t * rows + r], ref[t * rows + r],
                        ToleranceFor(error, deq.data() + r * cols, x.data() + t * cols, cols,
                                     wabs.data() + r * (cols / 32), amax.data() + t * (cols / 32), int8_x))
                << GgmlTypeName(type) << " n " << n << " threads " << threads << " at " << t << "," << r;
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllLoadableTypes, NoSlowTypeTest, ::testing::ValuesIn(LoadableTypes()),
                         [](const ::testing::TestParamInfo<GgmlType>& info) {
                           return std::string(GgmlTypeName(info.param));
                         });

}  // namespace
}  // namespace tessel::llm
