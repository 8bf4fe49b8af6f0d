// The registry of every row kernel, keyed by ggml type: kernels/rowdot's float and quantized-format
// kernels, and the dequantize-then-dot loop for the other ggml types, which keeps 16 independent lane
// accumulators so that it vectorizes without reassociating floating-point sums.
#include "llm/matmul/row_dot.h"

#include <algorithm>
#include <array>
#include <string>
#include <utility>

#include "kernels/cpu/cpu_features.h"
#include "kernels/gemv/gemv.h"
#include "kernels/registry/registry.h"
#include "kernels/rowdot/rowdot_quant.h"

namespace tessel::llm {
namespace {

// Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS: 256 elements at a time dequantized (ggml's
// reference), then dotted.
constexpr int kLanes = 16;

// Dequantization is llm/gguf's reference (DequantizeRow), which kernels/ does not know, so this composed
// kernel stays beside the registry.
template <GgmlType kType>
void dequant_rowdot__portable(const RowMatrixView& w, const float* x, int64_t row_begin, int64_t row_end, float* y) {
  // Chunks of 256 elements (whole blocks of every blocked type: 32 or 256), the last one shorter.
  constexpr int64_t kChunk = kSuperBlock;
  const size_t stride = w.row_stride;
  alignas(64) float v[kChunk];
  for (int64_t r = row_begin; r < row_end; ++r) {
    const uint8_t* row = w.data + r * stride;
    float acc[kLanes] = {};
    for (int64_t c0 = 0; c0 < w.cols; c0 += kChunk) {
      const int64_t n = std::min(kChunk, w.cols - c0);  // a multiple of 32, hence of kLanes
      DequantizeRow(kType, row + GgmlRowBytes(kType, c0), v, n);
      const float* xb = x + c0;
      for (int64_t k = 0; k < n; k += kLanes) {
        for (int j = 0; j < kLanes; ++j) acc[j] += v[k + j] * xb[k + j];
      }
    }
    y[r - row_begin] = ReduceRowLanes(acc, kLanes);
  }
}

constexpr char kOp[] = "row_dot";
constexpr char kLayout[] = "rows";

// Tessel's group types.
constexpr GgmlType kGroupTypes[] = {
    GgmlType::kTesselI4G32, GgmlType::kTesselI4G32A, GgmlType::kTesselI4G64, GgmlType::kTesselI4G64A,
    GgmlType::kTesselI4G128, GgmlType::kTesselI4G128A, GgmlType::kTesselI3G32, GgmlType::kTesselI3G32A,
    GgmlType::kTesselI3G64, GgmlType::kTesselI3G64A, GgmlType::kTesselI3G128, GgmlType::kTesselI3G128A};
// Type ids run to the last group type.
constexpr int kTypeIds = static_cast<int>(GgmlType::kTesselI3G128A) + 1;

// The costs only rank the kernels: the widest vectors the CPU has first, the portable loops last.
template <int kRank>
double Rank(const ProblemShape&) {
  return kRank;
}

RowDotKernel Entry(const char* name, GgmlType type, Isa isa, const char* backend, bool (*legal)(const ProblemShape&),
                   double (*rank)(const ProblemShape&), RowDotFn fn) {
  return MakeKernelEntry<RowDotFn>(name, kOp, std::string(GgmlTypeName(type)), kLayout, isa, backend, legal, rank,
                                   fn);
}

KernelRegistry<RowDotFn>* BuildRowDotRegistry() {
  auto* r = new KernelRegistry<RowDotFn>(RowDotKernels());  // F32, F16, BF16
  // These run kernels/gemv's selected kernel, which honours TESSEL_FORCE_BACKEND itself.
  r->Register(Entry("q8_0_rowdot__gemv", GgmlType::kQ8_0, Isa::kPortable, "portable", nullptr, Rank<3>,
                    q8_0_rowdot__gemv));
  r->Register(Entry("q4_0_rowdot__gemv", GgmlType::kQ4_0, Isa::kPortable, "portable", nullptr, Rank<3>,
                    q4_0_rowdot__gemv));
  r->Register(Entry("q4_1_rowdot__portable", GgmlType::kQ4_1, Isa::kPortable, "portable", nullptr, Rank<3>,
                    q4_1_rowdot__portable));
  const std::pair<GgmlType, RowDotFn> dequant[] = {
      {GgmlType::kQ5_0, dequant_rowdot__portable<GgmlType::kQ5_0>},
      {GgmlType::kQ5_1, dequant_rowdot__portable<GgmlType::kQ5_1>},
      {GgmlType::kQ2_K, dequant_rowdot__portable<GgmlType::kQ2_K>},
      {GgmlType::kQ3_K, dequant_rowdot__portable<GgmlType::kQ3_K>},
      {GgmlType::kQ4_K, dequant_rowdot__portable<GgmlType::kQ4_K>},
      {GgmlType::kQ5_K, dequant_rowdot__portable<GgmlType::kQ5_K>},
      {GgmlType::kQ6_K, dequant_rowdot__portable<GgmlType::kQ6_K>},
      {GgmlType::kIQ4_NL, dequant_rowdot__portable<GgmlType::kIQ4_NL>},
      {GgmlType::kIQ4_XS, dequant_rowdot__portable<GgmlType::kIQ4_XS>},
  };
  for (const auto& [t, fn] : dequant) {
    r->Register(Entry("dequant_rowdot__portable", t, Isa::kPortable, "portable", nullptr, Rank<3>, fn));
  }
  for (GgmlType t : kGroupTypes) {
    TesselGroupFormat f;
    GetTesselGroupFormat(t, &f);
    r->Register(Entry(f.bits == 4 ? "i4g_rowdot__gemv" : "group_rowdot__portable", t, Isa::kPortable, "portable",
                      nullptr, Rank<3>, GroupRowDot(f.bits, f.group, f.asymmetric)));
  }
  return r;
}

// Streams per F16 / BF16 row-dot call (CpuFeatures::row_streams*).
int StreamsFor(int threads) {
  const CpuFeatures& cpu = GetCpuFeatures();
  return threads > 1 ? cpu.row_streams_threaded : cpu.row_streams;
}

// TESSEL_FORCE_BACKEND=reference runs the portable row kernels (Q4_0 / Q8_0 / INT4 then run kernels/gemv's
// reference kernel, which reads the same setting); other settings name no row kernel and are ignored here.
const RowDotKernel* SelectRowDot(GgmlType type, int threads) {
  const std::string force = ForcedBackendFromEnv() == "reference" ? "portable" : "";
  absl::StatusOr<const RowDotKernel*> e =
      GgmlRowDotKernels().Select(kOp, GgmlTypeName(type), kLayout, ProblemShape{0, StreamsFor(threads), 0, 0}, force);
  return e.ok() ? *e : nullptr;
}

// The kernel per type id, for one thread and for several, selected once: Matmul asks on every call.
const RowDotKernel* CachedRowDot(GgmlType type, int threads) {
  using Table = std::array<std::array<const RowDotKernel*, 2>, kTypeIds>;
  static const Table* table = [] {
    auto* t = new Table();  // leaked on purpose, like the registries
    for (const RowDotKernel& e : GgmlRowDotKernels().entries()) {
      const absl::StatusOr<GgmlType> type = ParseGgmlType(e.dtypes);
      if (!type.ok()) continue;
      const int id = static_cast<int>(*type);
      (*t)[id][0] = SelectRowDot(*type, 1);
      (*t)[id][1] = SelectRowDot(*type, 2);
    }
    return t;
  }();
  const int id = static_cast<int>(type);
  if (id < 0 || id >= kTypeIds) return nullptr;
  return (*table)[id][threads > 1 ? 1 : 0];
}

// The ISA of the F16 / BF16 row kernels: that of the conversions RowToF32 uses and of the column-block
// layout.
Isa FloatRowIsa() {
  const RowDotKernel* e = CachedRowDot(GgmlType::kF16, 1);
  return e ? e->isa : Isa::kPortable;
}

}  // namespace

const KernelRegistry<RowDotFn>& GgmlRowDotKernels() {
  // Leaked on purpose, like the other kernel registries.
  static const KernelRegistry<RowDotFn>* registry = BuildRowDotRegistry();
  return *registry;
}

void RowToF32(const WeightMatrix& w, int64_t r, float* dst) {
  if (w.layout == WeightLayout::kColumnBlocks) {
    for (int64_t b = 0; b < w.column_blocks(); ++b) RowToF32(w.ColumnBlock(b), r, dst + b * kColumnBlockCols);
    return;
  }
  const Isa isa = FloatRowIsa();
#if defined(__x86_64__)
  if (isa == Isa::kAvx512 && w.type == GgmlType::kF16) return f16_to_f32__avx512(w.row(r), dst, w.cols);
  if (isa == Isa::kAvx512 && w.type == GgmlType::kBF16) return bf16_to_f32__avx512(w.row(r), dst, w.cols);
  if (isa == Isa::kAvx2 && w.type == GgmlType::kF16) return f16_to_f32__avx2(w.row(r), dst, w.cols);
  if (isa == Isa::kAvx2 && w.type == GgmlType::kBF16) return bf16_to_f32__avx2(w.row(r), dst, w.cols);
#elif defined(__aarch64__)
  if (isa == Isa::kNeon && w.type == GgmlType::kF16) return f16_to_f32__neon(w.row(r), dst, w.cols);
  if (isa == Isa::kNeon && w.type == GgmlType::kBF16) return bf16_to_f32__neon(w.row(r), dst, w.cols);
#else
  (void)isa;
#endif
  DequantizeRow(w.type, w.row(r), dst, w.cols);
}

RowDotFn GetRowDot(GgmlType type, int threads) {
  const RowDotKernel* e = CachedRowDot(type, threads);
  return e ? e->fn : nullptr;
}

std::string RowDotName(GgmlType type, int threads) {
  const RowDotKernel* e = CachedRowDot(type, threads);
  if (e == nullptr) return "";
  // The kernels/gemv kernel a __gemv row kernel runs.
  if (e->name == "q4_0_rowdot__gemv") return e->name + "(" + SelectedGemvKernel(GemvFormat::kQ4_0).name + ")";
  if (e->name == "q8_0_rowdot__gemv") return e->name + "(" + SelectedGemvKernel(GemvFormat::kQ8_0).name + ")";
  if (e->name == "i4g_rowdot__gemv") return e->name + "(" + SelectedGemvKernel(GemvFormat::kInt4Group).name + ")";
  return e->name;
}

bool ColumnBlocksAvailable(GgmlType type) {
  return (type == GgmlType::kF16 || type == GgmlType::kBF16) && FloatRowIsa() == Isa::kAvx512;
}

int DecodeStreams(const WeightMatrix& w, int threads) {
  const Isa isa = FloatRowIsa();
  if (isa == Isa::kAvx2) {
    if (w.type == GgmlType::kF16 || w.type == GgmlType::kBF16) return StreamsFor(threads);
    // The 256-bit kernels run CpuFeatures' count for them, two streams at most for gemv_gemm_avx2.cc's
    // signed types (Q8_0, IQ4_NL).
    if (w.layout == WeightLayout::kPanel16) {
      const CpuFeatures& cpu = GetCpuFeatures();
      if (w.type == GgmlType::kQ8_0 || w.type == GgmlType::kIQ4_NL) return std::min(cpu.decode_streams_ymm, 2);
      return cpu.decode_streams_ymm;
    }
    return 0;
  }
  if (isa != Isa::kAvx512) return 0;
  if (w.type == GgmlType::kF16 || w.type == GgmlType::kBF16) return StreamsFor(threads);
  if (w.layout == WeightLayout::kPanel16) return GetCpuFeatures().decode_streams;
  return 0;
}

const char* DecodePrefetch(const WeightMatrix& w) {
  const CpuFeatures& cpu = GetCpuFeatures();
  if (cpu.stream_prefetch) return "software prefetch";
  // gemv_gemm_avx2.cc's Q4_0 / Q8_0 / IQ4_NL kernels follow stream_prefetch only.
  const bool kquant_or_group = w.type != GgmlType::kQ4_0 && w.type != GgmlType::kQ8_0 && w.type != GgmlType::kIQ4_NL;
  if (cpu.stream_prefetch_l2 && FloatRowIsa() == Isa::kAvx2 && w.layout == WeightLayout::kPanel16 && kquant_or_group) {
    return "software prefetch into L2";
  }
  return "no prefetch";
}

}  // namespace tessel::llm
