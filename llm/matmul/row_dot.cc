// Portable GEMV microkernels. Each keeps 32 (or 16) independent lane accumulators so that the
// element-wise loops vectorize without reassociating floating-point sums.
#include "llm/matmul/row_dot.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <utility>

#include "kernels/cpu/cpu_features.h"
#include "kernels/gemv/gemv.h"
#include "kernels/registry/registry.h"
#include "support/fp16.h"
#include "llm/matmul/group_row_dot.h"

namespace tessel::llm {
namespace {

constexpr int kLanes = 16;

// Sums n (a power of two >= 4) lanes by folding halves element-wise, which vectorizes, instead of
// a serial chain of scalar adds: with short rows the reduction is a large share of the work.
inline float ReduceLanes(float* acc, int n) {
  for (int half = n / 2; half >= 4; half /= 2) {
    for (int j = 0; j < half; ++j) acc[j] += acc[j + half];
  }
  return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

template <typename Load>
float DotElementwise(int64_t k, const float* x, Load load) {
  float acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= k; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) acc[j] += load(i + j) * x[i + j];
  }
  float s = ReduceLanes(acc, kLanes);
  for (; i < k; ++i) s += load(i) * x[i];
  return s;
}

}  // namespace

void f32_rowdot__portable(const WeightMatrix& w, const float* x, int64_t row_begin, int64_t row_end, float* y) {
  const size_t stride = w.row_bytes();
  for (int64_t r = row_begin; r < row_end; ++r) {
    const float* wr = reinterpret_cast<const float*>(w.data + r * stride);
    y[r - row_begin] = DotElementwise(w.cols, x, [wr](int64_t i) { return wr[i]; });
  }
}

void f16_rowdot__portable(const WeightMatrix& w, const float* x, int64_t row_begin, int64_t row_end, float* y) {
  const size_t stride = w.row_bytes();
  for (int64_t r = row_begin; r < row_end; ++r) {
    const uint16_t* wr = reinterpret_cast<const uint16_t*>(w.data + r * stride);
    y[r - row_begin] = DotElementwise(w.cols, x, [wr](int64_t i) { return HalfToFloat(wr[i]); });
  }
}

void bf16_rowdot__portable(const WeightMatrix& w, const float* x, int64_t row_begin, int64_t row_end, float* y) {
  const size_t stride = w.row_bytes();
  for (int64_t r = row_begin; r < row_end; ++r) {
    const uint16_t* wr = reinterpret_cast<const uint16_t*>(w.data + r * stride);
    y[r - row_begin] = DotElementwise(w.cols, x, [wr](int64_t i) { return BF16ToFloat(wr[i]); });
  }
}

namespace {

// Q8_0 and Q4_0 run kernels/gemv's kernel for this CPU (the block layouts are ggml's in both).
template <GemvFormat kFormat>
void gemv_rowdot(const WeightMatrix& w, const float* x, int64_t row_begin, int64_t row_end, float* y) {
  static const GemvFn kernel = SelectedGemvKernel(kFormat).fn;
  GemvArgs args;
  args.w = w.row(row_begin);
  args.x = x;
  args.y = y;
  args.rows = row_end - row_begin;
  args.cols = w.cols;
  kernel(args, 0, args.rows);
}

}  // namespace

void q8_0_rowdot__gemv(const WeightMatrix& w, const float* x, int64_t row_begin, int64_t row_end, float* y) {
  gemv_rowdot<GemvFormat::kQ8_0>(w, x, row_begin, row_end, y);
}

void q4_0_rowdot__gemv(const WeightMatrix& w, const float* x, int64_t row_begin, int64_t row_end, float* y) {
  gemv_rowdot<GemvFormat::kQ4_0>(w, x, row_begin, row_end, y);
}

void q4_1_rowdot__portable(const WeightMatrix& w, const float* x, int64_t row_begin, int64_t row_end, float* y) {
  const int64_t nb = w.cols / kQuantBlock;
  const size_t stride = w.row_bytes();
  constexpr int kHalf = kQuantBlock / 2;
  for (int64_t r = row_begin; r < row_end; ++r) {
    const BlockQ4_1* b = reinterpret_cast<const BlockQ4_1*>(w.data + r * stride);
    float acc[kQuantBlock] = {};
    for (int64_t i = 0; i < nb; ++i) {
      const float d = HalfToFloat(b[i].d);
      const float m = HalfToFloat(b[i].m);
      const float* xb = x + i * kQuantBlock;
      for (int j = 0; j < kHalf; ++j) {
        acc[j] += ((b[i].qs[j] & 0x0F) * d + m) * xb[j];
        acc[j + kHalf] += ((b[i].qs[j] >> 4) * d + m) * xb[j + kHalf];
      }
    }
    y[r - row_begin] = ReduceLanes(acc, kQuantBlock);
  }
}

void dequant_rowdot__portable(const WeightMatrix& w, const float* x, int64_t row_begin, int64_t row_end, float* y) {
  // Chunks of 256 elements (whole blocks of every blocked type: 32 or 256), the last one shorter.
  constexpr int64_t kChunk = kSuperBlock;
  const size_t stride = w.row_bytes();
  alignas(64) float v[kChunk];
  for (int64_t r = row_begin; r < row_end; ++r) {
    const uint8_t* row = w.data + r * stride;
    float acc[kLanes] = {};
    for (int64_t c0 = 0; c0 < w.cols; c0 += kChunk) {
      const int64_t n = std::min(kChunk, w.cols - c0);  // a multiple of 32, hence of kLanes
      DequantizeRow(w.type, row + GgmlRowBytes(w.type, c0), v, n);
      const float* xb = x + c0;
      for (int64_t k = 0; k < n; k += kLanes) {
        for (int j = 0; j < kLanes; ++j) acc[j] += v[k + j] * xb[k + j];
      }
    }
    y[r - row_begin] = ReduceLanes(acc, kLanes);
  }
}

namespace {

bool UseAvx512() {
#if defined(__x86_64__)
  static const bool use = [] {
    const char* force = std::getenv("TESSEL_FORCE_BACKEND");
    return CpuSupports(Isa::kAvx512) && (force == nullptr || std::string(force) != "reference");
  }();
  return use;
#else
  return false;
#endif
}

// AVX2 + FMA + F16C without AVX-512 (row_dot_avx2.cc), unless the reference backend is forced.
bool UseAvx2() {
#if defined(__x86_64__)
  static const bool use = [] {
    const char* force = std::getenv("TESSEL_FORCE_BACKEND");
    return !UseAvx512() && CpuSupports(Isa::kAvx2) && (force == nullptr || std::string(force) != "reference");
  }();
  return use;
#else
  return false;
#endif
}

#if defined(__x86_64__)
// Streams per F16 / BF16 row-dot call (CpuFeatures::row_streams*).
int StreamsFor(int threads) {
  const CpuFeatures& cpu = GetCpuFeatures();
  return threads > 1 ? cpu.row_streams_threaded : cpu.row_streams;
}
#endif

}  // namespace

void RowToF32(const WeightMatrix& w, int64_t r, float* dst) {
  if (w.layout == WeightLayout::kColumnBlocks) {
    for (int64_t b = 0; b < w.column_blocks(); ++b) RowToF32(w.ColumnBlock(b), r, dst + b * kColumnBlockCols);
    return;
  }
#if defined(__x86_64__)
  if (UseAvx512() && w.type == GgmlType::kF16) return f16_to_f32__avx512(w.row(r), dst, w.cols);
  if (UseAvx512() && w.type == GgmlType::kBF16) return bf16_to_f32__avx512(w.row(r), dst, w.cols);
  if (UseAvx2() && w.type == GgmlType::kF16) return f16_to_f32__avx2(w.row(r), dst, w.cols);
  if (UseAvx2() && w.type == GgmlType::kBF16) return bf16_to_f32__avx2(w.row(r), dst, w.cols);
#endif
  DequantizeRow(w.type, w.row(r), dst, w.cols);
}

RowDotFn GetRowDot(GgmlType type, int threads) {
  switch (type) {
#if defined(__x86_64__)
    case GgmlType::kF32:
      if (UseAvx2()) return StreamsFor(threads) == 4 ? f32_rowdot__avx2 : f32_rowdot_2streams__avx2;
      if (!UseAvx512()) return f32_rowdot__portable;
      return StreamsFor(threads) == 4 ? f32_rowdot__avx512 : f32_rowdot_2streams__avx512;
    case GgmlType::kF16:
      if (UseAvx2()) return StreamsFor(threads) == 4 ? f16_rowdot__avx2 : f16_rowdot_2streams__avx2;
      if (!UseAvx512()) return f16_rowdot__portable;
      return StreamsFor(threads) == 4 ? f16_rowdot__avx512 : f16_rowdot_2streams__avx512;
    case GgmlType::kBF16:
      if (UseAvx2()) return StreamsFor(threads) == 4 ? bf16_rowdot__avx2 : bf16_rowdot_2streams__avx2;
      if (!UseAvx512()) return bf16_rowdot__portable;
      return StreamsFor(threads) == 4 ? bf16_rowdot__avx512 : bf16_rowdot_2streams__avx512;
#else
    case GgmlType::kF32: return f32_rowdot__portable;
    case GgmlType::kF16: return f16_rowdot__portable;
    case GgmlType::kBF16: return bf16_rowdot__portable;
#endif
    case GgmlType::kQ8_0: return q8_0_rowdot__gemv;
    case GgmlType::kQ4_0: return q4_0_rowdot__gemv;
    case GgmlType::kQ4_1: return q4_1_rowdot__portable;
    case GgmlType::kQ5_0:
    case GgmlType::kQ5_1:
    case GgmlType::kQ2_K:
    case GgmlType::kQ3_K:
    case GgmlType::kQ4_K:
    case GgmlType::kQ5_K:
    case GgmlType::kQ6_K:
    case GgmlType::kIQ4_NL:
    case GgmlType::kIQ4_XS: return dequant_rowdot__portable;
    default: return GetGroupRowDot(type);  // Tessel group-wise INT4/INT3, or nullptr
  }
}

std::string RowDotName(GgmlType type, int threads) {
  const RowDotFn fn = GetRowDot(type, threads);
#define TESSEL_ROWDOT(f) {f, #f}
  static const std::pair<RowDotFn, const char*> kNames[] = {
      TESSEL_ROWDOT(f32_rowdot__portable), TESSEL_ROWDOT(f16_rowdot__portable), TESSEL_ROWDOT(bf16_rowdot__portable),
      TESSEL_ROWDOT(q4_1_rowdot__portable), TESSEL_ROWDOT(dequant_rowdot__portable),
#if defined(__x86_64__)
      TESSEL_ROWDOT(f32_rowdot__avx512), TESSEL_ROWDOT(f16_rowdot__avx512), TESSEL_ROWDOT(bf16_rowdot__avx512),
      TESSEL_ROWDOT(f32_rowdot_2streams__avx512), TESSEL_ROWDOT(f16_rowdot_2streams__avx512),
      TESSEL_ROWDOT(bf16_rowdot_2streams__avx512), TESSEL_ROWDOT(f32_rowdot__avx2), TESSEL_ROWDOT(f16_rowdot__avx2),
      TESSEL_ROWDOT(bf16_rowdot__avx2), TESSEL_ROWDOT(f32_rowdot_2streams__avx2),
      TESSEL_ROWDOT(f16_rowdot_2streams__avx2), TESSEL_ROWDOT(bf16_rowdot_2streams__avx2),
#endif
  };
#undef TESSEL_ROWDOT
  if (fn == nullptr) return "";
  if (fn == q4_0_rowdot__gemv) return "q4_0_rowdot__gemv(" + SelectedGemvKernel(GemvFormat::kQ4_0).name + ")";
  if (fn == q8_0_rowdot__gemv) return "q8_0_rowdot__gemv(" + SelectedGemvKernel(GemvFormat::kQ8_0).name + ")";
  for (const auto& [f, name] : kNames) {
    if (f == fn) return name;
  }
  return GroupRowDotName(type);
}

bool ColumnBlocksAvailable(GgmlType type) {
  return (type == GgmlType::kF16 || type == GgmlType::kBF16) && UseAvx512();
}

int DecodeStreams(const WeightMatrix& w, int threads) {
#if defined(__x86_64__)
  if (UseAvx2()) {
    if (w.type == GgmlType::kF16 || w.type == GgmlType::kBF16) return StreamsFor(threads);
    // gemv_gemm_avx2.cc runs two streams at most.
    if (w.layout == WeightLayout::kPanel16) return std::min(GetCpuFeatures().decode_streams, 2);
    return 0;
  }
  if (!UseAvx512()) return 0;
  if (w.type == GgmlType::kF16 || w.type == GgmlType::kBF16) return StreamsFor(threads);
  if (w.layout == WeightLayout::kPanel16) return GetCpuFeatures().decode_streams;
#endif
  return 0;
}

}  // namespace tessel::llm
