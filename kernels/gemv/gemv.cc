// The weight-only GEMV family: kernel registration (one entry per format and ISA), validation, and
// the Gemv* entry points that select once per format and split rows across a ThreadPool.
#include "kernels/gemv/gemv.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "kernels/gemv/internal/gemv_kernels.h"

namespace tessel {
namespace {

bool BlockLegal(const ProblemShape& s) { return s.m >= 0 && s.n >= 0 && s.n % kQuantBlock == 0; }
bool GroupLegal(const ProblemShape& s) {
  return s.m >= 0 && s.n >= 0 && (s.group == 32 || s.group == 64 || s.group == 128) && s.n % s.group == 0;
}
#if defined(__aarch64__)
// Kernels of some k-quants ("kquant_panel16xq8"): ProblemShape::group carries GemmQ8Args::kquant.
bool KQuantNeonLegal(const ProblemShape& s) {
  return ((s.group >= 2 && s.group <= 6) || s.group == kKQuantIQ4_XS) && s.n % 256 == 0;
}
#endif

// Seconds to stream the weights at a rough single-thread rate for the kernel (GB/s).
template <int kGBs>
double StreamCost(const ProblemShape& s) {
  return 0.5 * s.m * s.n / (kGBs * 1e9) + 1e-7;
}

const char* DtypesOf(GemvFormat f) {
  switch (f) {
    case GemvFormat::kQ4_0: return "q4_0xf32";
    case GemvFormat::kQ8_0: return "q8_0xf32";
    case GemvFormat::kInt4Group: return "i4gxf32";
  }
  return "";
}
const char* LayoutOf(GemvFormat f) {
  switch (f) {
    case GemvFormat::kQ4_0: return "q4_0_rows";
    case GemvFormat::kQ8_0: return "q8_0_rows";
    case GemvFormat::kInt4Group: return "i4g_rows";
  }
  return "";
}

void AddFamily(KernelRegistry<GemvFn>& r, const char* isa_name, Isa isa, const char* backend,
               double (*cost)(const ProblemShape&), GemvFn q4, GemvFn q8, GemvFn i4g) {
  struct Item {
    GemvFormat format;
    const char* what;
    GemvFn fn;
    bool (*legal)(const ProblemShape&);
  };
  for (const Item& it : {Item{GemvFormat::kQ4_0, "q4_0", q4, BlockLegal}, Item{GemvFormat::kQ8_0, "q8_0", q8, BlockLegal},
                         Item{GemvFormat::kInt4Group, "i4g", i4g, GroupLegal}}) {
    GemvKernel e;
    e.name = absl::StrCat("tessel_", it.what, "_gemv__", isa_name);
    e.op = "gemv";
    e.dtypes = DtypesOf(it.format);
    e.layout = LayoutOf(it.format);
    e.isa = isa;
    e.backend = backend;
    e.legal = it.legal;
    e.cost = cost;
    e.fn = it.fn;
    r.Register(e);
  }
}

#define TESSEL_GEMV_FAMILY(r, isa, Isa, backend, cost) \
  AddFamily(r, #isa, Isa, backend, cost, tessel_q4_0_gemv__##isa, tessel_q8_0_gemv__##isa, tessel_i4g_gemv__##isa)

KernelRegistry<GemvFn>* BuildGemvRegistry() {
  auto* r = new KernelRegistry<GemvFn>;
  TESSEL_GEMV_FAMILY(*r, reference, Isa::kPortable, "reference", StreamCost<1>);
#if defined(__x86_64__)
  TESSEL_GEMV_FAMILY(*r, avx2, Isa::kAvx2, "x86", StreamCost<10>);
  TESSEL_GEMV_FAMILY(*r, avx512, Isa::kAvx512, "x86", StreamCost<14>);
#endif
#if defined(__aarch64__)
  TESSEL_GEMV_FAMILY(*r, neon, Isa::kNeon, "neon", StreamCost<5>);
  TESSEL_GEMV_FAMILY(*r, sve, Isa::kSve, "sve", StreamCost<6>);
#endif
  return r;
}

#undef TESSEL_GEMV_FAMILY

void AddQ8Pair(KernelRegistry<GemvFn>& r, const char* isa_name, Isa isa, const char* backend,
               double (*cost)(const ProblemShape&), GemvFn q4, GemvFn q8) {
  for (const auto& [format, what, fn] : {std::tuple{GemvFormat::kQ4_0, "q4_0", q4},
                                         std::tuple{GemvFormat::kQ8_0, "q8_0", q8}}) {
    GemvKernel e;
    e.name = absl::StrCat("tessel_", what, "_q8_gemv__", isa_name);
    e.op = "gemv";
    e.dtypes = absl::StrCat(what, "xq8");
    e.layout = LayoutOf(format);
    e.isa = isa;
    e.backend = backend;
    e.legal = BlockLegal;
    e.cost = cost;
    e.fn = fn;
    r.Register(e);
  }
}

KernelRegistry<GemvFn>* BuildGemvQ8Registry() {
  auto* r = new KernelRegistry<GemvFn>;
  AddQ8Pair(*r, "reference", Isa::kPortable, "reference", StreamCost<1>, tessel_q4_0_q8_gemv__reference,
            tessel_q8_0_q8_gemv__reference);
#if defined(__x86_64__)
  AddQ8Pair(*r, "avx512vnni", Isa::kAvx512Vnni, "x86", StreamCost<30>, tessel_q4_0_q8_gemv__avx512vnni,
            tessel_q8_0_q8_gemv__avx512vnni);
#endif
  return r;
}

KernelRegistry<GemmQ8Fn>* BuildGemmQ8Registry(bool panel16) {
  auto* r = new KernelRegistry<GemmQ8Fn>;
  struct Item {
    const char* isa_name;
    Isa isa;
    const char* backend;
    GemmQ8Fn q4, q8;
  };
  const Item rows_items[] = {
      {"reference", Isa::kPortable, "reference", tessel_q4_0_q8_gemm__reference, tessel_q8_0_q8_gemm__reference},
#if defined(__x86_64__)
      {"avx512vnni", Isa::kAvx512Vnni, "x86", tessel_q4_0_q8_gemm__avx512vnni, tessel_q8_0_q8_gemm__avx512vnni},
#endif
  };
  const Item panel16_items[] = {
      {"reference", Isa::kPortable, "reference", tessel_q4_0_panel16_q8_gemm__reference,
       tessel_q8_0_panel16_q8_gemm__reference},
#if defined(__x86_64__)
      {"avx2", Isa::kAvx2, "x86", tessel_q4_0_panel16_q8_gemm__avx2, tessel_q8_0_panel16_q8_gemm__avx2},
      {"avx512vnni", Isa::kAvx512Vnni, "x86", tessel_q4_0_panel16_q8_gemm__avx512vnni,
       tessel_q8_0_panel16_q8_gemm__avx512vnni},
#endif
#if defined(__aarch64__)
      {"neondot", Isa::kDotprod, "neon", tessel_q4_0_panel16_q8_gemm__neondot, tessel_q8_0_panel16_q8_gemm__neondot},
      {"sve", Isa::kSve, "sve", tessel_q4_0_panel16_q8_gemm__sve, tessel_q8_0_panel16_q8_gemm__sve},
#endif
  };
  if (panel16) {
#if defined(__aarch64__)
    // The k-quants and IQ4_XS on Arm dotprod, named apart from the group kernel below.
    GemmQ8Kernel kq;
    kq.name = "tessel_kquant_panel16_q8_gemm__neondot";
    kq.op = "gemm";
    kq.dtypes = "kquant_panel16xq8";
    kq.layout = "kquant_panel16";
    kq.isa = Isa::kDotprod;
    kq.backend = "neon";
    kq.legal = KQuantNeonLegal;
    kq.cost = StreamCost<20>;
    kq.fn = tessel_kquant_panel16_q8_gemm__neondot;
    r->Register(kq);
#endif
    // Group-wise INT4 / INT3 on the Panel16 layout.
    struct GroupItem {
      const char* isa_name;
      Isa isa;
      const char* backend;
      GemmQ8Fn fn;
    };
    const GroupItem group_items[] = {
        {"reference", Isa::kPortable, "reference", tessel_group_panel16_q8_gemm__reference},
#if defined(__x86_64__)
        {"avx2", Isa::kAvx2, "x86", tessel_group_panel16_q8_gemm__avx2},
        {"avxvnni", Isa::kAvxVnni, "x86", tessel_group_panel16_q8_gemm__avxvnni},
        {"avx512vnni", Isa::kAvx512Vnni, "x86", tessel_group_panel16_q8_gemm__avx512vnni},
#endif
#if defined(__aarch64__)
        {"neondot", Isa::kDotprod, "neon", tessel_group_panel16_q8_gemm__neondot},
        {"sve", Isa::kSve, "sve", tessel_group_panel16_q8_gemm__sve},
#endif
    };
    for (const GroupItem& it : group_items) {
      GemmQ8Kernel e;
      e.name = absl::StrCat("tessel_group_panel16_q8_gemm__", it.isa_name);
      e.op = "gemm";
      e.dtypes = "group_panel16xq8";
      e.layout = "group_panel16";
      e.isa = it.isa;
      e.backend = it.backend;
      e.legal = GroupLegal;
      // Where a CPU has several: AVX-512 VNNI, then AVX-VNNI, then AVX2; SVE, then dotprod.
      e.cost = it.isa == Isa::kPortable                          ? StreamCost<1>
               : it.isa == Isa::kAvx2 || it.isa == Isa::kDotprod ? StreamCost<20>
               : it.isa == Isa::kAvxVnni || it.isa == Isa::kSve  ? StreamCost<25>
                                                                 : StreamCost<30>;
      e.fn = it.fn;
      r->Register(e);
    }
  }
  const absl::Span<const Item> items = panel16 ? absl::MakeConstSpan(panel16_items) : absl::MakeConstSpan(rows_items);
  for (const Item& it : items) {
    for (const auto& [format, what, fn] : {std::tuple{GemvFormat::kQ4_0, panel16 ? "q4_0_panel16" : "q4_0", it.q4},
                                           std::tuple{GemvFormat::kQ8_0, panel16 ? "q8_0_panel16" : "q8_0", it.q8}}) {
      GemmQ8Kernel e;
      e.name = absl::StrCat("tessel_", what, "_q8_gemm__", it.isa_name);
      e.op = "gemm";
      e.dtypes = absl::StrCat(what, "xq8");
      e.layout = panel16 ? (format == GemvFormat::kQ4_0 ? "q4_0_panel16" : "q8_0_panel16") : LayoutOf(format);
      e.isa = it.isa;
      e.backend = it.backend;
      e.legal = BlockLegal;
      // AVX2 (no VNNI) ranks below AVX-512 VNNI, dotprod below SVE, where a CPU has both.
      e.cost = it.isa == Isa::kPortable                          ? StreamCost<1>
               : it.isa == Isa::kAvx2 || it.isa == Isa::kDotprod ? StreamCost<20>
               : it.isa == Isa::kSve                             ? StreamCost<25>
                                                                 : StreamCost<30>;
      e.fn = fn;
      r->Register(e);
    }
  }
  return r;
}

const GemmQ8Kernel* SelectGemmQ8(GemvFormat format) {
  absl::StatusOr<const GemmQ8Kernel*> e =
      GemmQ8Kernels().Select("gemm", absl::StrCat(format == GemvFormat::kQ4_0 ? "q4_0" : "q8_0", "xq8"),
                             LayoutOf(format), {1, kQuantBlock, 1, 0});
  if (!e.ok() || (*e)->backend == "reference") return nullptr;
  return *e;
}

const GemmQ8Kernel* SelectGemmQ8Panel16(GemvFormat format) {
  absl::StatusOr<const GemmQ8Kernel*> e =
      format == GemvFormat::kInt4Group
          ? GemmQ8Panel16Kernels().Select("gemm", "group_panel16xq8", "group_panel16", {1, 128, 1, 128})
      : format == GemvFormat::kQ4_0
          ? GemmQ8Panel16Kernels().Select("gemm", "q4_0_panel16xq8", "q4_0_panel16", {1, kQuantBlock, 1, 0})
          : GemmQ8Panel16Kernels().Select("gemm", "q8_0_panel16xq8", "q8_0_panel16", {1, kQuantBlock, 1, 0});
  if (!e.ok() || (*e)->backend == "reference") return nullptr;
  return *e;
}

const GemmQ8Kernel* SelectGemmQ8Panel16KQuant(int kquant) {
  absl::StatusOr<const GemmQ8Kernel*> e =
      GemmQ8Panel16Kernels().Select("gemm", "kquant_panel16xq8", "kquant_panel16", {1, 256, 1, kquant});
  if (!e.ok() || (*e)->backend == "reference") return nullptr;
  return *e;
}

const GemvKernel* SelectQ8(GemvFormat format) {
  absl::StatusOr<const GemvKernel*> e =
      GemvQ8Kernels().Select("gemv", absl::StrCat(format == GemvFormat::kQ4_0 ? "q4_0" : "q8_0", "xq8"),
                             LayoutOf(format), {1, kQuantBlock, 1, 0});
  // The reference is the oracle, far slower than the f32-input kernels; a forced backend without an
  // int8-input kernel falls back to the f32-input family, which reports the forcing itself.
  if (!e.ok() || (*e)->backend == "reference") return nullptr;
  return *e;
}

const GemvKernel* SelectFor(GemvFormat format, const ProblemShape& shape) {
  absl::StatusOr<const GemvKernel*> e = GemvKernels().Select("gemv", DtypesOf(format), LayoutOf(format), shape);
  if (!e.ok()) {
    // Forcing a backend that has no GEMV: say so once and use the best available kernel.
    std::fprintf(stderr, "tessel: %s; ignoring TESSEL_FORCE_BACKEND for gemv\n", e.status().ToString().c_str());
    e = GemvKernels().Select("gemv", DtypesOf(format), LayoutOf(format), shape, "");
  }
  assert(e.ok());
  return *e;
}

const GemvKernel* Selected(GemvFormat format) {
  // Legality only depends on cols modulo the block or group, so one choice per format serves every call.
  static const GemvKernel* q4 = SelectFor(GemvFormat::kQ4_0, {1, kQuantBlock, 1, 0});
  static const GemvKernel* q8 = SelectFor(GemvFormat::kQ8_0, {1, kQuantBlock, 1, 0});
  static const GemvKernel* i4g = SelectFor(GemvFormat::kInt4Group, {1, 128, 1, 128});
  switch (format) {
    case GemvFormat::kQ4_0: return q4;
    case GemvFormat::kQ8_0: return q8;
    case GemvFormat::kInt4Group: return i4g;
  }
  return nullptr;
}

struct Job {
  GemvFn fn;
  const GemvArgs* args;
};

void RunRows(void* ctx, int64_t begin, int64_t end) {
  auto* job = static_cast<Job*>(ctx);
  job->fn(*job->args, begin, end);
}

}  // namespace

const KernelRegistry<GemvFn>& GemvKernels() {
  // Leaked on purpose: a registry must outlive every static that may still select kernels.
  static const KernelRegistry<GemvFn>* registry = BuildGemvRegistry();
  return *registry;
}

int64_t GemvRowBytes(GemvFormat format, int64_t cols) {
  switch (format) {
    case GemvFormat::kQ4_0: return cols / kQuantBlock * int64_t{sizeof(BlockQ4_0)};
    case GemvFormat::kQ8_0: return cols / kQuantBlock * int64_t{sizeof(BlockQ8_0)};
    case GemvFormat::kInt4Group: return cols / 2;
  }
  return 0;
}

absl::Status ValidateGemv(GemvFormat format, int64_t rows, int64_t cols, int64_t group_size) {
  if (rows < 0 || cols < 0) {
    return absl::InvalidArgumentError(absl::StrCat("gemv: negative shape ", rows, "x", cols));
  }
  if (format == GemvFormat::kInt4Group) {
    if (!GroupLegal({rows, cols, 1, group_size})) {
      return absl::InvalidArgumentError(absl::StrCat("gemv: INT4 group size ", group_size,
                                                     " must be 32, 64 or 128 and divide cols=", cols,
                                                     "; re-quantize with a supported group size"));
    }
  } else if (cols % kQuantBlock != 0) {
    return absl::InvalidArgumentError(absl::StrCat("gemv: ", DtypesOf(format), " needs cols (", cols,
                                                   ") to be a multiple of the 32-element block"));
  }
  return absl::OkStatus();
}

void RunGemv(GemvFn fn, const GemvArgs& args, ThreadPool* pool) {
  if (pool == nullptr || pool->num_threads() == 1) {
    fn(args, 0, args.rows);
    return;
  }
  Job job{fn, &args};
  // 16 rows = one 64-byte line of y per chunk boundary: no false sharing between threads.
  pool->ParallelFor(args.rows, 16, RunRows, &job);
}

const GemvKernel& SelectedGemvKernel(GemvFormat format) { return *Selected(format); }

const KernelRegistry<GemvFn>& GemvQ8Kernels() {
  static const KernelRegistry<GemvFn>* registry = BuildGemvQ8Registry();
  return *registry;
}

const GemvKernel* FastGemvQ8Kernel(GemvFormat format) {
  static const GemvKernel* q4 = SelectQ8(GemvFormat::kQ4_0);
  static const GemvKernel* q8 = SelectQ8(GemvFormat::kQ8_0);
  return format == GemvFormat::kQ4_0 ? q4 : format == GemvFormat::kQ8_0 ? q8 : nullptr;
}

const KernelRegistry<GemmQ8Fn>& GemmQ8Kernels() {
  static const KernelRegistry<GemmQ8Fn>* registry = BuildGemmQ8Registry(/*panel16=*/false);
  return *registry;
}

const KernelRegistry<GemmQ8Fn>& GemmQ8Panel16Kernels() {
  static const KernelRegistry<GemmQ8Fn>* registry = BuildGemmQ8Registry(/*panel16=*/true);
  return *registry;
}

const GemmQ8Kernel* FastGemmQ8Panel16Kernel(GemvFormat format) {
  static const GemmQ8Kernel* q4 = SelectGemmQ8Panel16(GemvFormat::kQ4_0);
  static const GemmQ8Kernel* q8 = SelectGemmQ8Panel16(GemvFormat::kQ8_0);
  static const GemmQ8Kernel* i4g = SelectGemmQ8Panel16(GemvFormat::kInt4Group);
  return format == GemvFormat::kQ4_0 ? q4 : format == GemvFormat::kQ8_0 ? q8 : i4g;
}

const GemmQ8Kernel* FastGemmQ8Panel16KQuantKernel(int kquant) {
  static const GemmQ8Kernel* const kBest[8] = {
      nullptr,
      nullptr,
      SelectGemmQ8Panel16KQuant(2),
      SelectGemmQ8Panel16KQuant(3),
      SelectGemmQ8Panel16KQuant(4),
      SelectGemmQ8Panel16KQuant(5),
      SelectGemmQ8Panel16KQuant(6),
      SelectGemmQ8Panel16KQuant(kKQuantIQ4_XS)};
  return kquant >= 0 && kquant < 8 ? kBest[kquant] : nullptr;
}

const GemmQ8Kernel* FastGemmQ8Kernel(GemvFormat format) {
  static const GemmQ8Kernel* q4 = SelectGemmQ8(GemvFormat::kQ4_0);
  static const GemmQ8Kernel* q8 = SelectGemmQ8(GemvFormat::kQ8_0);
  return format == GemvFormat::kQ4_0 ? q4 : format == GemvFormat::kQ8_0 ? q8 : nullptr;
}

void GemmQ8BlockTerms(GemvFormat format, const GemvQ8Input& in, int64_t cols, int32_t* block_bias,
                      float* block_scale) {
  const bool q4 = format == GemvFormat::kQ4_0;
  const int lanes = q4 ? 4 : 8;
  for (int64_t b = 0; b < cols / kQuantBlock; ++b) {
    const int64_t lane0 = q4 ? (b / 4) * 16 + 4 * (b % 4) : b * 8;
    int32_t sum = 0;
    for (int l = 0; l < lanes; ++l) sum += in.bias[lane0 + l];
    block_bias[b] = sum;
    block_scale[b] = in.scale[lane0];
  }
}

int64_t GemvQ8PaddedCols(GemvFormat format, int64_t cols) {
  const int64_t group = format == GemvFormat::kQ4_0 ? 4 * kQuantBlock : 2 * kQuantBlock;
  return (cols + group - 1) / group * group;
}

int64_t GemvQ8Lanes(GemvFormat format, int64_t cols) {
  // 16 lanes per group: 128 elements (Q4_0) or 64 (Q8_0).
  return GemvQ8PaddedCols(format, cols) / (format == GemvFormat::kQ4_0 ? 8 : 4);
}

namespace {

[[maybe_unused]] void QuantizeGemvInputPortable(GemvFormat format, const float* x, int64_t cols, const GemvQ8Input& out) {
  const bool q4 = format == GemvFormat::kQ4_0;
  const int64_t padded = GemvQ8PaddedCols(format, cols);
  const int lanes_per_block = q4 ? 4 : 8;
  for (int64_t b = 0; b < padded / kQuantBlock; ++b) {
    int8_t q[kQuantBlock] = {};
    float d = 0;
    if (b * kQuantBlock < cols) {
      const float* xb = x + b * kQuantBlock;
      float amax = 0;
      for (int j = 0; j < kQuantBlock; ++j) amax = std::max(amax, std::fabs(xb[j]));
      d = amax / 127;
      const float id = amax > 0 ? 127 / amax : 0.0f;
      for (int j = 0; j < kQuantBlock; ++j) q[j] = static_cast<int8_t>(std::nearbyint(xb[j] * id));
    }
    int8_t* dst_lo;  // where elements 0..15 and 16..31 of this block go
    int8_t* dst_hi;
    int64_t lane0;
    if (q4) {
      const int64_t g = b / 4, i = b % 4;
      dst_lo = out.q + g * 128 + 16 * i;
      dst_hi = dst_lo + 64;
      lane0 = g * 16 + 4 * i;
    } else {
      dst_lo = out.q + b * kQuantBlock;
      dst_hi = dst_lo + 16;
      lane0 = b * 8;
    }
    std::copy(q, q + 16, dst_lo);
    std::copy(q + 16, q + 32, dst_hi);
    for (int l = 0; l < lanes_per_block; ++l) {
      int32_t sum = 0;
      if (q4) {
        for (int k = 0; k < 4; ++k) sum += q[4 * l + k] + q[16 + 4 * l + k];
      } else {
        for (int k = 0; k < 4; ++k) sum += q[4 * l + k];
      }
      out.bias[lane0 + l] = -(q4 ? 8 : 128) * sum;
      out.scale[lane0 + l] = d;
    }
  }
}

}  // namespace

void QuantizeGemvInput(GemvFormat format, const float* x, int64_t cols, const GemvQ8Input& out) {
  assert(format != GemvFormat::kInt4Group && cols % kQuantBlock == 0);
  using QuantizeFn = void (*)(GemvFormat, const float*, int64_t, const GemvQ8Input&);
  // Per element, the portable loop costs about as much as the AVX-512 GEMV spends on a weight row.
  static const QuantizeFn quantize =
#if defined(__x86_64__)
      CpuSupports(Isa::kAvx512Vnni) ? tessel_quantize_gemv_input__avx512vnni
      : CpuSupports(Isa::kAvx2)     ? tessel_quantize_gemv_input__avx2
                                    :
                                    QuantizeGemvInputPortable;
#elif defined(__aarch64__)
      tessel_quantize_gemv_input__neon;
#else
      QuantizeGemvInputPortable;
#endif
  quantize(format, x, cols, out);
}

void SetGemvQ8Input(const GemvQ8Input& in, GemvArgs& args) {
  args.xq = in.q;
  args.xbias = in.bias;
  args.xscale = in.scale;
}

void GemvQ4_0(const void* w, const float* x, float* y, int64_t rows, int64_t cols, ThreadPool* pool) {
  assert(ValidateGemv(GemvFormat::kQ4_0, rows, cols, 0).ok());
  GemvArgs a;
  a.w = w;
  a.x = x;
  a.y = y;
  a.rows = rows;
  a.cols = cols;
  RunGemv(SelectedGemvKernel(GemvFormat::kQ4_0).fn, a, pool);
}

void GemvQ8_0(const void* w, const float* x, float* y, int64_t rows, int64_t cols, ThreadPool* pool) {
  assert(ValidateGemv(GemvFormat::kQ8_0, rows, cols, 0).ok());
  GemvArgs a;
  a.w = w;
  a.x = x;
  a.y = y;
  a.rows = rows;
  a.cols = cols;
  RunGemv(SelectedGemvKernel(GemvFormat::kQ8_0).fn, a, pool);
}

void GemvInt4Group(const Int4GroupWeights& w, const float* x, float* y, int64_t rows, int64_t cols,
                   ThreadPool* pool) {
  assert(ValidateGemv(GemvFormat::kInt4Group, rows, cols, w.group_size).ok());
  GemvArgs a;
  a.w = w.q;
  a.scales = w.scales;
  a.zeros = w.zeros;
  a.group_size = w.group_size;
  a.f16_scales = w.f16_scales;
  a.x = x;
  a.y = y;
  a.rows = rows;
  a.cols = cols;
  RunGemv(SelectedGemvKernel(GemvFormat::kInt4Group).fn, a, pool);
}

}  // namespace tessel
