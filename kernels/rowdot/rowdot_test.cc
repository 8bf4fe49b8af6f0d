// Every registered row kernel this CPU runs against a double-precision dot of the same (rounded)
// weights: one row, rows below and across the 4- and 2-stream splits, a range that starts past row 0,
// widths below a vector, odd, and across a column block (AVX-512 kernels also on the column-block layout).
#include "kernels/rowdot/rowdot.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "support/fp16.h"

namespace tessel {
namespace {

// Weights of `dtypes` ("F32", "F16", "BF16"): their bytes (rows layout) and their values as floats.
struct Weights {
  std::vector<uint8_t> bytes;
  std::vector<float> values;
  size_t elem = 4;
};

Weights RandomWeights(const std::string& dtypes, int64_t rows, int64_t cols, std::mt19937& rng) {
  std::normal_distribution<float> dist(0.0f, 1.0f);
  Weights w;
  w.elem = dtypes == "F32" ? 4 : 2;
  w.bytes.resize(rows * cols * w.elem);
  w.values.resize(rows * cols);
  for (int64_t i = 0; i < rows * cols; ++i) {
    const float v = dist(rng);
    if (dtypes == "F32") {
      std::memcpy(w.bytes.data() + 4 * i, &v, 4);
      w.values[i] = v;
    } else {
      const uint16_t h = dtypes == "F16" ? FloatToHalf(v) : FloatToBF16(v);
      std::memcpy(w.bytes.data() + 2 * i, &h, 2);
      w.values[i] = dtypes == "F16" ? HalfToFloat(h) : BF16ToFloat(h);
    }
  }
  return w;
}

// The same matrix in the column-block layout.
std::vector<uint8_t> ColumnBlocks(const Weights& w, int64_t rows, int64_t cols) {
  std::vector<uint8_t> out(w.bytes.size());
  uint8_t* dst = out.data();
  for (int64_t c0 = 0; c0 < cols; c0 += kRowDotColumnBlockCols) {
    const int64_t width = std::min(kRowDotColumnBlockCols, cols - c0);
    for (int64_t r = 0; r < rows; ++r) {
      std::memcpy(dst, w.bytes.data() + (r * cols + c0) * w.elem, width * w.elem);
      dst += width * w.elem;
    }
  }
  return out;
}

TEST(RowDotTest, EveryKernelMatchesReference) {
  std::mt19937 rng(5);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  int ran = 0;
  for (const RowDotKernel& e : RowDotKernels().entries()) {
    if (!CpuSupports(e.isa)) continue;
    ++ran;
    for (int64_t cols : {int64_t{1}, int64_t{7}, int64_t{83}, int64_t{512}, kRowDotColumnBlockCols + 33}) {
      for (int64_t rows : {1, 5, 9, 37}) {
        const Weights w = RandomWeights(e.dtypes, rows, cols, rng);
        std::vector<float> x(cols);
        for (float& v : x) v = dist(rng);
        std::vector<uint8_t> blocked;
        std::vector<RowMatrixView> views = {{w.bytes.data(), rows, cols, cols * w.elem, false}};
        if (e.isa == Isa::kAvx512) {
          blocked = ColumnBlocks(w, rows, cols);
          views.push_back({blocked.data(), rows, cols, cols * w.elem, true});
        }
        for (const RowMatrixView& view : views) {
          for (int64_t begin : {int64_t{0}, rows / 2}) {
            std::vector<float> y(rows - begin, -1.0f);
            e.fn(view, x.data(), begin, rows, y.data());
            for (int64_t r = begin; r < rows; ++r) {
              double want = 0, mag = 0;
              for (int64_t k = 0; k < cols; ++k) {
                want += static_cast<double>(w.values[r * cols + k]) * x[k];
                mag += std::fabs(static_cast<double>(w.values[r * cols + k]) * x[k]);
              }
              ASSERT_NEAR(y[r - begin], want, 1e-6 * mag + 1e-6)
                  << e.name << " rows " << rows << " cols " << cols << " column blocks " << view.column_blocks
                  << " from " << begin << " at " << r;
            }
          }
        }
      }
    }
  }
  if (ran == 0) GTEST_SKIP() << "no row kernel runs on this CPU";
}

// Selection follows the stream count: 4 streams take the 4-stream kernel, other counts the 2-stream one
// (x86); on aarch64 the one NEON kernel serves every count.
TEST(RowDotTest, StreamCountSelectsTheVariant) {
  for (const char* dtypes : {"F32", "F16", "BF16"}) {
    for (int64_t streams : {1, 2, 4}) {
      absl::StatusOr<const RowDotKernel*> e = RowDotKernels().Select("row_dot", dtypes, "rows", {0, streams, 0, 0}, "");
      ASSERT_TRUE(e.ok()) << e.status();
      if ((*e)->isa == Isa::kPortable) continue;
      if ((*e)->isa == Isa::kNeon) {
        std::string type(dtypes);
        for (char& c : type) c = static_cast<char>(std::tolower(c));
        EXPECT_EQ((*e)->name, type + "_rowdot__neon");
        continue;
      }
      EXPECT_EQ((*e)->name.find("_2streams") == std::string::npos, streams == 4) << (*e)->name;
    }
  }
}

}  // namespace
}  // namespace tessel
