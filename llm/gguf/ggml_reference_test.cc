// Tessel's ggml quantizers and dequantizers against ggml itself: the libggml-base.so that
// node-llama-cpp ships (installed into third_party/npm by ./setup.sh, the llama.cpp peer of the
// benchmarks), loaded with dlopen. QuantizeRow must write the bytes ggml_quantize_chunk writes without an
// importance matrix (llama.cpp's quantize without --imatrix), and DequantizeRow must read random blocks
// as ggml's dequantize_row_* does.
#include <dlfcn.h>

#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "support/fp16.h"
#include "llm/gguf/ggml_types.h"

namespace tessel::llm {
namespace {

using QuantizeChunkFn = size_t (*)(int type, const float* src, void* dst, int64_t start, int64_t nrows,
                                   int64_t n_per_row, const float* imatrix);
using QuantizeInitFn = void (*)(int type);
using DequantizeFn = void (*)(const void* x, float* y, int64_t k);

// The workspace root: this test's source, a runfile, is a link into it.
std::string WorkspaceRoot() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const std::string runfile = std::string(srcdir ? srcdir : ".") + "/tessel/llm/gguf/ggml_reference_test.cc";
  char real[PATH_MAX];
  if (realpath(runfile.c_str(), real) == nullptr) return "";
  std::string root = real;
  return root.substr(0, root.size() - std::string("/llm/gguf/ggml_reference_test.cc").size());
}

class Ggml {
 public:
  Ggml() {
    const std::string path =
        WorkspaceRoot() + "/third_party/npm/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libggml-base.so";
    handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    error_ = handle_ == nullptr ? std::string(dlerror()) + " (./setup.sh installs node-llama-cpp)" : "";
    if (handle_ == nullptr) return;
    quantize_ = reinterpret_cast<QuantizeChunkFn>(dlsym(handle_, "ggml_quantize_chunk"));
    init_ = reinterpret_cast<QuantizeInitFn>(dlsym(handle_, "ggml_quantize_init"));
  }
  ~Ggml() {
    if (handle_ != nullptr) dlclose(handle_);
  }
  const std::string& error() const { return error_; }
  bool ok() const { return quantize_ != nullptr && init_ != nullptr; }

  std::vector<uint8_t> Quantize(GgmlType t, const std::vector<float>& x, int64_t rows, int64_t cols,
                                const float* imatrix = nullptr) const {
    std::vector<uint8_t> out(rows * GgmlRowBytes(t, cols));
    init_(static_cast<int>(t));
    quantize_(static_cast<int>(t), x.data(), out.data(), 0, rows, cols, imatrix);
    return out;
  }
  DequantizeFn Dequantizer(const char* name) const {
    return reinterpret_cast<DequantizeFn>(dlsym(handle_, name));
  }

 private:
  void* handle_ = nullptr;
  std::string error_;
  QuantizeChunkFn quantize_ = nullptr;
  QuantizeInitFn init_ = nullptr;
};

struct TypeCase {
  GgmlType type;
  const char* dequantizer;  // ggml's dequantize_row_* symbol
};
constexpr TypeCase kTypes[] = {
    {GgmlType::kQ8_0, "dequantize_row_q8_0"},     {GgmlType::kQ4_0, "dequantize_row_q4_0"},
    {GgmlType::kQ4_1, "dequantize_row_q4_1"},     {GgmlType::kQ5_0, "dequantize_row_q5_0"},
    {GgmlType::kQ5_1, "dequantize_row_q5_1"},     {GgmlType::kQ2_K, "dequantize_row_q2_K"},
    {GgmlType::kQ3_K, "dequantize_row_q3_K"},     {GgmlType::kQ4_K, "dequantize_row_q4_K"},
    {GgmlType::kQ5_K, "dequantize_row_q5_K"},     {GgmlType::kQ6_K, "dequantize_row_q6_K"},
    {GgmlType::kIQ4_NL, "dequantize_row_iq4_nl"}, {GgmlType::kIQ4_XS, "dequantize_row_iq4_xs"},
};

// Rows of weights as models have them: normal with a per-row spread, a few outliers, a run of zeros
// (an all-zero block) and one row of identical values.
std::vector<float> Weights(int64_t rows, int64_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::uniform_real_distribution<float> spread(0.005f, 0.05f);
  std::vector<float> x(rows * cols);
  for (int64_t r = 0; r < rows; ++r) {
    const float s = spread(rng);
    for (int64_t c = 0; c < cols; ++c) x[r * cols + c] = s * g(rng);
    x[r * cols + (r * 37) % cols] *= 8.0f;  // an outlier
  }
  for (int64_t c = 0; c < 256; ++c) x[c] = 0.0f;
  if (rows > 1) {
    for (int64_t c = 0; c < cols; ++c) x[cols + c] = 0.01f;
  }
  return x;
}

// Without an importance matrix (llama.cpp's quantize without --imatrix), and with one: per column the
// mean square of log-normal activations, as llama.cpp's imatrix holds.
void ExpectGgmlsBytes(bool with_imatrix) {
  const Ggml ggml;
  ASSERT_TRUE(ggml.ok()) << ggml.error();
  constexpr int64_t rows = 24, cols = 1024;
  const std::vector<float> x = Weights(rows, cols, 3);
  std::vector<float> imatrix(cols);
  std::mt19937 rng(11);
  std::lognormal_distribution<float> act(0.0f, 1.0f);
  for (float& v : imatrix) v = act(rng) * act(rng);
  const float* qw = with_imatrix ? imatrix.data() : nullptr;
  for (const TypeCase& c : kTypes) {
    const std::vector<uint8_t> want = ggml.Quantize(c.type, x, rows, cols, qw);
    std::vector<uint8_t> got(want.size());
    const size_t row_bytes = GgmlRowBytes(c.type, cols);
    for (int64_t r = 0; r < rows; ++r) QuantizeRow(c.type, &x[r * cols], got.data() + r * row_bytes, cols, qw);
    int64_t differing = 0, first = -1;
    for (size_t i = 0; i < got.size(); ++i) {
      if (got[i] != want[i]) {
        if (first < 0) first = static_cast<int64_t>(i);
        ++differing;
      }
    }
    EXPECT_EQ(differing, 0) << GgmlTypeName(c.type) << (with_imatrix ? " with an imatrix" : "") << ": " << differing
                            << " of " << got.size()
                            << " bytes differ from ggml's, the first at byte " << first << " (row "
                            << first / static_cast<int64_t>(row_bytes) << ")";
  }
}

TEST(GgmlReferenceTest, QuantizeRowWritesGgmlsBytes) { ExpectGgmlsBytes(false); }

TEST(GgmlReferenceTest, QuantizeRowWithAnImportanceMatrixWritesGgmlsBytes) { ExpectGgmlsBytes(true); }

TEST(GgmlReferenceTest, DequantizeRowReadsBlocksAsGgml) {
  const Ggml ggml;
  ASSERT_TRUE(ggml.ok()) << ggml.error();
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> byte(0, 255);
  constexpr int64_t n = 8 * kSuperBlock;
  for (const TypeCase& c : kTypes) {
    DequantizeFn dequantize = ggml.Dequantizer(c.dequantizer);
    ASSERT_NE(dequantize, nullptr) << c.dequantizer;
    // Random bytes, then every fp16 field set to an ordinary value: ggml's quantizer of random weights
    // writes the scales, random bytes elsewhere.
    const std::vector<float> x = Weights(1, n, byte(rng));
    std::vector<uint8_t> blocks(GgmlRowBytes(c.type, n));
    QuantizeRow(c.type, x.data(), blocks.data(), n);
    // Then every byte but the fp16 scales (the first 2 or 4 bytes of each block; Q2_K's last 4, Q3_K's and
    // Q6_K's last 2) random: codes and sub-block scales of every value.
    const GgmlTypeInfo& info = GetGgmlTypeInfo(c.type);
    const size_t bb = static_cast<size_t>(info.block_bytes);
    const size_t head = c.type == GgmlType::kQ4_1 || c.type == GgmlType::kQ5_1 || c.type == GgmlType::kQ4_K ||
                                c.type == GgmlType::kQ5_K
                            ? 4
                        : c.type == GgmlType::kQ2_K || c.type == GgmlType::kQ3_K || c.type == GgmlType::kQ6_K ? 0
                                                                                                              : 2;
    const size_t tail = c.type == GgmlType::kQ2_K ? 4 : c.type == GgmlType::kQ3_K || c.type == GgmlType::kQ6_K ? 2 : 0;
    for (size_t b = 0; b < blocks.size(); ++b) {
      const size_t in_block = b % bb;
      if (in_block >= head && in_block < bb - tail) blocks[b] = static_cast<uint8_t>(byte(rng));
    }
    std::vector<float> got(n), want(n);
    DequantizeRow(c.type, blocks.data(), got.data(), n);
    dequantize(blocks.data(), want.data(), n);
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(got[i], want[i]) << GgmlTypeName(c.type) << " element " << i;
  }
}

}  // namespace
}  // namespace tessel::llm
