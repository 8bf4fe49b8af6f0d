// f32 GEMM: GFLOP/s and fraction of this core's f32 FMA peak for every registered kernel the CPU runs,
// on square sizes and the ResNet-18 im2col shapes, beside XNNPACK's f32 fully connected (same m, n, k;
// XNNPACK packs the weights once at creation, GemmF32 packs B on every call, which is counted; the
// prepacked rows pack once, like XNNPACK; "/cold" rows read the weights from memory).
// Rates are per CPU second of the benchmark thread (single-threaded kernels), so that preemption on a
// shared machine does not count against a kernel. Run with --benchmark_repetitions=5
// --benchmark_report_aggregates_only=true on a noisy machine and read the medians.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "benchmarks/kernels/evict_caches.h"
#include "benchmarks/kernels/machine_limits.h"
#include "kernels/conv/fc_gemv.h"
#include "kernels/gemm/gemm.h"
#include "kernels/gemm/gemm_direct.h"
#include "kernels/registry/registry.h"
#include "xnnpack.h"

namespace tessel {
namespace {

struct Shape {
  const char* name;
  int64_t m, n, k;
};

// im2col GEMMs of ResNet-18 at 224x224, batch 1: m = output pixels, n = output channels,
// k = input channels x kernel area.
const Shape kShapes[] = {
    {"sq256", 256, 256, 256},          {"sq512", 512, 512, 512},
    {"sq1024", 1024, 1024, 1024},      {"sq2048", 2048, 2048, 2048},
    {"r18_conv1", 12544, 64, 147},     {"r18_l1_3x3", 3136, 64, 576},
    {"r18_l2_3x3", 784, 128, 1152},    {"r18_l3_3x3", 196, 256, 2304},
    {"r18_l4_3x3", 49, 512, 4608},     {"r18_fc", 1, 1000, 512},
    // The stride-2 3x3 layers that open layers 3 and 4.
    {"r18_l3_3x3s2", 196, 256, 1152},  {"r18_l4_3x3s2", 49, 512, 2304},
    // MobileNetV2 pointwise (projection) layers: m = pixels, k = expanded channels, n = outputs.
    {"mbv2_112_pw", 12544, 16, 32},    {"mbv2_56_pw", 3136, 24, 144},
    {"mbv2_14_pw", 196, 96, 576},      {"mbv2_7_pw", 49, 160, 960},
    // MobileNetV2 expansions (1x1 convolutions over the whole image): k = input channels.
    {"mbv2_112_exp", 12544, 96, 16},   {"mbv2_28_exp", 784, 192, 32},
    {"mbv2_7_exp", 49, 960, 160},
    // MobileNetV2's classifier (batch 1, 5 MB of weights).
    {"mbv2_fc", 1, 1000, 1280},
    // One Winograd point's GEMM in ResNet-18's 3x3 layers (m = tiles, k = n = channels): F(2x2) at 7x7,
    // F(4x4) at 14x14 and 28x28.
    {"r18_l4_f2_point", 16, 512, 512},  {"r18_l3_f4_point", 16, 256, 256},
    {"r18_l2_f4_point", 49, 128, 128},
};

double PeakGflops() {
  static const double peak = [] {
    const double clock = MeasureClockGhz();
    const double theoretical = TheoreticalPeakGflops(clock);
    const double measured = MeasurePeakGflops();
    // The larger of the two, so that a fraction never flatters the kernel.
    const double peak = theoretical > measured ? theoretical : measured;
    benchmark::AddCustomContext("clock_ghz", std::to_string(clock));
    benchmark::AddCustomContext("peak_gflops_theoretical", std::to_string(theoretical) + " (2 FMA x " +
                                                              std::to_string(F32LanesPerFma()) +
                                                              " lanes x 2 x clock)");
    benchmark::AddCustomContext("peak_gflops_fma_loop", std::to_string(measured));
    return peak;
  }();
  return peak;
}

std::vector<float> Fill(int64_t n, float scale) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>((i * 7919) % 1000 - 500) / 500.0f;
  return v;
}

void SetRates(benchmark::State& state, const Shape& s) {
  const double flops = 2.0 * s.m * s.n * s.k;
  state.counters["GFLOPs"] = benchmark::Counter(flops / 1e9 * state.iterations(), benchmark::Counter::kIsRate);
  state.counters["peak_frac"] =
      benchmark::Counter(flops / (PeakGflops() * 1e9) * state.iterations(), benchmark::Counter::kIsRate);
}

void BM_TesselGemm(benchmark::State& state, const GemmKernel* entry, Shape s) {
  std::vector<float> a = Fill(s.m * s.k, 1.0f), b = Fill(s.k * s.n, 0.5f), c(s.m * s.n);
  std::vector<char> workspace(entry->workspace_bytes);
  auto fn = entry->fn;
  for (auto _ : state) {
    fn(s.m, s.n, s.k, a.data(), s.k, b.data(), s.n, c.data(), s.n, workspace.data());
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  SetRates(state, s);
}

// Prepacked weights (PackedGemmF32, packed once, as the convolution kernels use it). cold: a 64 MB buffer
// is read between runs (not timed), so the weights come from memory as they do inside a whole network.
void BM_TesselGemmPrepacked(benchmark::State& state, const KernelInfo* entry, Shape s, bool cold) {
  setenv("TESSEL_FORCE_BACKEND", entry->name.c_str(), 1);
  absl::StatusOr<PackedGemmF32> op = PackedGemmF32::Create(s.n, s.k, Fill(s.k * s.n, 0.5f).data(), s.n, s.m);
  unsetenv("TESSEL_FORCE_BACKEND");
  if (!op.ok()) {
    state.SkipWithError(std::string(op.status().message()).c_str());
    return;
  }
  std::vector<float> a = Fill(s.m * s.k, 1.0f), c(s.m * s.n);
  std::vector<char> workspace(op->workspace_bytes());
  std::vector<float> flush(cold ? (64 << 20) / 4 : 0);
  for (auto _ : state) {
    if (cold) EvictCaches(state, flush);
    op->Run(s.m, a.data(), s.k, c.data(), s.n, GemmEpilogue{}, 0, s.n, workspace.data());
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  SetRates(state, s);
}

// Direct-A GEMM (DirectGemmF32: prepacked weights, A read in place; MobileNetV2's 1x1 path).
void BM_TesselGemmDirect(benchmark::State& state, const KernelInfo* entry, Shape s, bool cold) {
  setenv("TESSEL_FORCE_BACKEND", entry->name.c_str(), 1);
  absl::StatusOr<DirectGemmF32> op = DirectGemmF32::Create(s.n, s.k, Fill(s.k * s.n, 0.5f).data(), s.n, nullptr, s.m);
  unsetenv("TESSEL_FORCE_BACKEND");
  if (!op.ok()) {
    state.SkipWithError(std::string(op.status().message()).c_str());
    return;
  }
  std::vector<float> a = Fill(s.m * s.k, 1.0f), c(s.m * s.n);
  std::vector<float> flush(cold ? (64 << 20) / 4 : 0);
  for (auto _ : state) {
    if (cold) EvictCaches(state, flush);
    op->Run(s.m, a.data(), s.k, c.data(), s.n, nullptr, 0, -INFINITY, INFINITY);
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  SetRates(state, s);
}

#if defined(__x86_64__)
// Batch-1 fully connected on the 4-stream GEMV (kernels/conv/fc_gemv.h), weights packed as the
// operator kernel packs them: 16-output panels, k-major, 64-byte aligned.
void BM_TesselFcGemv(benchmark::State& state, Shape s, bool cold) {
  const int64_t panels = (s.n + 15) / 16;
  // Panels, then the bias: both 64-byte aligned, as the kernel loads them.
  auto* packed = static_cast<float*>(std::aligned_alloc(64, panels * 16 * (s.k + 1) * sizeof(float)));
  float* bias = packed + panels * 16 * s.k;
  std::vector<float> w = Fill(s.n * s.k, 0.5f), x = Fill(s.k, 1.0f), y(s.n);
  for (int64_t i = 0; i < panels * 16 * (s.k + 1); ++i) packed[i] = 0.0f;
  PackFcGemvPanels(w.data(), s.n, s.k, /*weights_nk=*/true, packed);
  std::vector<float> flush(cold ? (64 << 20) / 4 : 0);
  for (auto _ : state) {
    if (cold) EvictCaches(state, flush);
    tessel_f32_gemv_panel16__avx512(packed, s.k, x.data(), bias, s.n, 0, panels, y.data());
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  std::free(packed);
  SetRates(state, s);
}
#endif

void BM_XnnpackFullyConnected(benchmark::State& state, Shape s, bool cold) {
  if (xnn_initialize(nullptr) != xnn_status_success) {
    state.SkipWithError("xnn_initialize failed");
    return;
  }
  // Fully connected: y[m x n] = x[m x k] * W^T with W stored [n x k].
  std::vector<float> x = Fill(s.m * s.k, 1.0f), w = Fill(s.n * s.k, 0.5f), y(s.m * s.n);
  xnn_operator_t op = nullptr;
  if (xnn_create_fully_connected_nc_f32(s.k, s.n, s.k, s.n, w.data(), nullptr, -INFINITY, INFINITY, 0, &op) !=
          xnn_status_success ||
      xnn_setup_fully_connected_nc_f32(op, s.m, x.data(), y.data(), nullptr) != xnn_status_success) {
    state.SkipWithError("XNNPACK fully connected setup failed");
    return;
  }
  std::vector<float> flush(cold ? (64 << 20) / 4 : 0);
  for (auto _ : state) {
    if (cold) EvictCaches(state, flush);
    xnn_run_operator(op, nullptr);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  xnn_delete_operator(op);
  SetRates(state, s);
}

const bool kRegistered = [] {
  PeakGflops();  // measured before the run so that the context header shows it
  for (const Shape& s : kShapes) {
    for (const auto& e : GemmKernels().entries()) {
      if (!CpuSupports(e.isa)) continue;
      if (e.backend == "reference" && 2.0 * s.m * s.n * s.k > 1e9) continue;  // minutes per run
      if (e.backend == "portable" && 2.0 * s.m * s.n * s.k > 4e9) continue;
      benchmark::RegisterBenchmark((std::string("gemm/") + s.name + "/" + e.name).c_str(), BM_TesselGemm, &e, s)
          ->Unit(benchmark::kMillisecond);
    }
    for (const auto& e : GemmPrepackedKernels().entries()) {
      if (!CpuSupports(e.isa) || e.backend == "portable") continue;
      for (bool cold : {false, true}) {
        benchmark::RegisterBenchmark(
            (std::string("gemm/") + s.name + "/prepacked_" + e.name + (cold ? "/cold" : "")).c_str(),
            BM_TesselGemmPrepacked, &e, s, cold)
            ->Unit(benchmark::kMillisecond);
      }
    }
    for (const auto& e : DirectGemmKernels().entries()) {
      if (!CpuSupports(e.isa) || e.backend == "portable") continue;
      for (bool cold : {false, true}) {
        benchmark::RegisterBenchmark(
            (std::string("gemm/") + s.name + "/direct_" + e.name + (cold ? "/cold" : "")).c_str(),
            BM_TesselGemmDirect, &e, s, cold)
            ->Unit(benchmark::kMillisecond);
      }
    }
#if defined(__x86_64__)
    if (s.m == 1 && CpuSupports(Isa::kAvx512)) {
      for (bool cold : {false, true}) {
        const std::string name = std::string("gemm/") + s.name + "/fc_gemv_4streams_avx512" + (cold ? "/cold" : "");
        benchmark::RegisterBenchmark(name.c_str(), BM_TesselFcGemv, s, cold)
            ->Unit(benchmark::kMillisecond);
      }
    }
#endif
    for (bool cold : {false, true}) {
      benchmark::RegisterBenchmark(
          (std::string("gemm/") + s.name + "/xnnpack_fully_connected_nc_f32" + (cold ? "/cold" : "")).c_str(),
          BM_XnnpackFullyConnected, s, cold)
          ->Unit(benchmark::kMillisecond);
    }
  }
  return true;
}();

}  // namespace
}  // namespace tessel
