// The weight-only GEMV family: kernel registration (one entry per format and ISA), validation, and
// the Gemv* entry points that select once per format and split rows across a ThreadPool.
#include "kernels/gemv/gemv.h"

#include <cassert>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "kernels/gemv/internal/gemv_kernels.h"

namespace tessel {
namespace {

bool BlockLegal(const ProblemShape& s) { return s.m >= 0 && s.n >= 0 && s.n % kQBlock == 0; }
bool GroupLegal(const ProblemShape& s) {
  return s.m >= 0 && s.n >= 0 && (s.group == 32 || s.group == 64 || s.group == 128) && s.n % s.group == 0;
}

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

void AddFamily(KernelRegistry& r, const char* isa_name, Isa isa, const char* backend,
               double (*cost)(const ProblemShape&), GemvFn q4, GemvFn q8, GemvFn i4g) {
  struct Item {
    GemvFormat format;
    const char* what;
    GemvFn fn;
    bool (*legal)(const ProblemShape&);
  };
  for (const Item& it : {Item{GemvFormat::kQ4_0, "q4_0", q4, BlockLegal}, Item{GemvFormat::kQ8_0, "q8_0", q8, BlockLegal},
                         Item{GemvFormat::kInt4Group, "i4g", i4g, GroupLegal}}) {
    KernelEntry e;
    e.name = absl::StrCat("tessel_", it.what, "_gemv__", isa_name);
    e.op = "gemv";
    e.dtypes = DtypesOf(it.format);
    e.layout = LayoutOf(it.format);
    e.isa = isa;
    e.backend = backend;
    e.legal = it.legal;
    e.cost = cost;
    e.fn = reinterpret_cast<const void*>(it.fn);
    r.Register(e);
  }
}

#define TESSEL_GEMV_FAMILY(r, isa, Isa, backend, cost) \
  AddFamily(r, #isa, Isa, backend, cost, tessel_q4_0_gemv__##isa, tessel_q8_0_gemv__##isa, tessel_i4g_gemv__##isa)

KernelRegistry* BuildGemvRegistry() {
  auto* r = new KernelRegistry;
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

const KernelEntry* SelectFor(GemvFormat format, const ProblemShape& shape) {
  absl::StatusOr<const KernelEntry*> e = GemvKernels().Select("gemv", DtypesOf(format), LayoutOf(format), shape);
  if (!e.ok()) {
    // Forcing a backend that has no GEMV: say so once and use the best available kernel.
    std::fprintf(stderr, "tessel: %s; ignoring TESSEL_FORCE_BACKEND for gemv\n", e.status().ToString().c_str());
    e = GemvKernels().Select("gemv", DtypesOf(format), LayoutOf(format), shape, "");
  }
  assert(e.ok());
  return *e;
}

const KernelEntry* Selected(GemvFormat format) {
  // Legality only depends on cols modulo the block or group, so one choice per format serves every call.
  static const KernelEntry* q4 = SelectFor(GemvFormat::kQ4_0, {1, kQBlock, 1, 0});
  static const KernelEntry* q8 = SelectFor(GemvFormat::kQ8_0, {1, kQBlock, 1, 0});
  static const KernelEntry* i4g = SelectFor(GemvFormat::kInt4Group, {1, 128, 1, 128});
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

const KernelRegistry& GemvKernels() {
  // Leaked on purpose: a registry must outlive every static that may still select kernels.
  static const KernelRegistry* registry = BuildGemvRegistry();
  return *registry;
}

int64_t GemvRowBytes(GemvFormat format, int64_t cols) {
  switch (format) {
    case GemvFormat::kQ4_0: return cols / kQBlock * int64_t{sizeof(BlockQ4_0)};
    case GemvFormat::kQ8_0: return cols / kQBlock * int64_t{sizeof(BlockQ8_0)};
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
  } else if (cols % kQBlock != 0) {
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

const KernelEntry& SelectedGemvKernel(GemvFormat format) { return *Selected(format); }

void GemvQ4_0(const void* w, const float* x, float* y, int64_t rows, int64_t cols, ThreadPool* pool) {
  assert(ValidateGemv(GemvFormat::kQ4_0, rows, cols, 0).ok());
  GemvArgs a;
  a.w = w;
  a.x = x;
  a.y = y;
  a.rows = rows;
  a.cols = cols;
  RunGemv(reinterpret_cast<GemvFn>(SelectedGemvKernel(GemvFormat::kQ4_0).fn), a, pool);
}

void GemvQ8_0(const void* w, const float* x, float* y, int64_t rows, int64_t cols, ThreadPool* pool) {
  assert(ValidateGemv(GemvFormat::kQ8_0, rows, cols, 0).ok());
  GemvArgs a;
  a.w = w;
  a.x = x;
  a.y = y;
  a.rows = rows;
  a.cols = cols;
  RunGemv(reinterpret_cast<GemvFn>(SelectedGemvKernel(GemvFormat::kQ8_0).fn), a, pool);
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
  RunGemv(reinterpret_cast<GemvFn>(SelectedGemvKernel(GemvFormat::kInt4Group).fn), a, pool);
}

}  // namespace tessel
