// The portable row kernels (the reference twins) and the registry of every float row kernel. Each
// portable kernel keeps 16 independent lane accumulators so that the element-wise loops vectorize
// without reassociating floating-point sums.
#include "kernels/rowdot/rowdot.h"

#include "support/fp16.h"

namespace tessel {
namespace {

constexpr int kLanes = 16;

template <typename Load>
float DotElementwise(int64_t k, const float* x, Load load) {
  float acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= k; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) acc[j] += load(i + j) * x[i + j];
  }
  float s = ReduceRowLanes(acc, kLanes);
  for (; i < k; ++i) s += load(i) * x[i];
  return s;
}

}  // namespace

void f32_rowdot__portable(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end, float* y) {
  for (int64_t r = row_begin; r < row_end; ++r) {
    const float* wr = reinterpret_cast<const float*>(w.data + r * w.row_stride);
    y[r - row_begin] = DotElementwise(w.cols, x, [wr](int64_t i) { return wr[i]; });
  }
}

void f16_rowdot__portable(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end, float* y) {
  for (int64_t r = row_begin; r < row_end; ++r) {
    const uint16_t* wr = reinterpret_cast<const uint16_t*>(w.data + r * w.row_stride);
    y[r - row_begin] = DotElementwise(w.cols, x, [wr](int64_t i) { return HalfToFloat(wr[i]); });
  }
}

void bf16_rowdot__portable(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end, float* y) {
  for (int64_t r = row_begin; r < row_end; ++r) {
    const uint16_t* wr = reinterpret_cast<const uint16_t*>(w.data + r * w.row_stride);
    y[r - row_begin] = DotElementwise(w.cols, x, [wr](int64_t i) { return BF16ToFloat(wr[i]); });
  }
}

namespace {

// The costs only rank the kernels: the widest vectors the CPU has first, the portable loops last.
template <int kRank>
double Rank(const ProblemShape&) {
  return kRank;
}
// ProblemShape::n is the number of parallel streams one call should read (CpuFeatures::row_streams*):
// the 4-stream kernels serve 4, the 2-stream ones any other count.
bool FourStreams(const ProblemShape& s) { return s.n == 4; }
bool TwoStreams(const ProblemShape& s) { return s.n != 4; }

KernelRegistry<RowDotFn>* BuildRowDotRegistry() {
  struct Kernel {
    const char* name;
    const char* dtypes;
    Isa isa;
    bool (*legal)(const ProblemShape&);
    double (*rank)(const ProblemShape&);
    RowDotFn fn;
  };
  const Kernel kernels[] = {
      {"f32_rowdot__portable", "F32", Isa::kPortable, nullptr, Rank<3>, f32_rowdot__portable},
      {"f16_rowdot__portable", "F16", Isa::kPortable, nullptr, Rank<3>, f16_rowdot__portable},
      {"bf16_rowdot__portable", "BF16", Isa::kPortable, nullptr, Rank<3>, bf16_rowdot__portable},
#if defined(__x86_64__)
      {"f32_rowdot__avx512", "F32", Isa::kAvx512, FourStreams, Rank<1>, f32_rowdot__avx512},
      {"f16_rowdot__avx512", "F16", Isa::kAvx512, FourStreams, Rank<1>, f16_rowdot__avx512},
      {"bf16_rowdot__avx512", "BF16", Isa::kAvx512, FourStreams, Rank<1>, bf16_rowdot__avx512},
      {"f32_rowdot_2streams__avx512", "F32", Isa::kAvx512, TwoStreams, Rank<1>, f32_rowdot_2streams__avx512},
      {"f16_rowdot_2streams__avx512", "F16", Isa::kAvx512, TwoStreams, Rank<1>, f16_rowdot_2streams__avx512},
      {"bf16_rowdot_2streams__avx512", "BF16", Isa::kAvx512, TwoStreams, Rank<1>, bf16_rowdot_2streams__avx512},
      {"f32_rowdot__avx2", "F32", Isa::kAvx2, FourStreams, Rank<2>, f32_rowdot__avx2},
      {"f16_rowdot__avx2", "F16", Isa::kAvx2, FourStreams, Rank<2>, f16_rowdot__avx2},
      {"bf16_rowdot__avx2", "BF16", Isa::kAvx2, FourStreams, Rank<2>, bf16_rowdot__avx2},
      {"f32_rowdot_2streams__avx2", "F32", Isa::kAvx2, TwoStreams, Rank<2>, f32_rowdot_2streams__avx2},
      {"f16_rowdot_2streams__avx2", "F16", Isa::kAvx2, TwoStreams, Rank<2>, f16_rowdot_2streams__avx2},
      {"bf16_rowdot_2streams__avx2", "BF16", Isa::kAvx2, TwoStreams, Rank<2>, bf16_rowdot_2streams__avx2},
#endif
#if defined(__aarch64__)
      {"f32_rowdot__neon", "F32", Isa::kNeon, nullptr, Rank<2>, f32_rowdot__neon},
      {"f16_rowdot__neon", "F16", Isa::kNeon, nullptr, Rank<2>, f16_rowdot__neon},
      {"bf16_rowdot__neon", "BF16", Isa::kNeon, nullptr, Rank<2>, bf16_rowdot__neon},
#endif
  };
  auto* r = new KernelRegistry<RowDotFn>;
  for (const Kernel& k : kernels) {
    r->Register(MakeKernelEntry<RowDotFn>(k.name, "row_dot", k.dtypes, "rows", k.isa,
                                          k.isa == Isa::kPortable ? "portable"
                                          : k.isa == Isa::kNeon   ? "neon"
                                                                  : "x86",
                                          k.legal, k.rank, k.fn));
  }
  return r;
}

}  // namespace

const KernelRegistry<RowDotFn>& RowDotKernels() {
  // Leaked on purpose, like the other kernel registries.
  static const KernelRegistry<RowDotFn>* registry = BuildRowDotRegistry();
  return *registry;
}

}  // namespace tessel
