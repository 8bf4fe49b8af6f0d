// The u8 x s8 GEMMs (AVX-512 VNNI, AVX-VNNI, AVX2; with the requantizing output stage) against our f32
// GEMM on ResNet-18's 3x3 convolutions as im2col GEMMs and MobileNetV2's stem and pointwise convolutions
// (M = output pixels, N = output channels, K = kernel area x input channels). Reports GMAC/s for every
// one, side by side; TESSEL_MAX_ISA=avx2 caps both sides to what an AVX2 CPU runs. The AVX2 rows also run
// with 7-bit weights ([-64, 64], kWeightMax 64), which that kernel multiplies as bytes (qgemm_avx2.cc).
#include <random>
#include <vector>

#include "benchmark/benchmark.h"
#include "benchmarks/kernels/evict_caches.h"
#include "kernels/gemm/gemm.h"
#include "kernels/int8/int8_kernels.h"
#include "kernels/int8/qgemm.h"
#include "kernels/int8/requantize.h"

namespace tessel {
namespace {

// The registered microkernels of `kernel`; null where this build, CPU or TESSEL_MAX_ISA rules it out.
const QGemmUkernel* Ukernel(QGemmKernel kernel) {
  if (!QGemmKernelAvailable(kernel)) return nullptr;
  for (const QGemmKernelEntry& e : QGemmKernels().entries()) {
    if (e.fn.id == kernel) return &e.fn;
  }
  return nullptr;
}

// The u8 x s8 GEMM family member `kKernel` (skipped where this CPU or TESSEL_MAX_ISA rules it out), on
// M x N x K with K-padded rows, weights packed for every x86 layout.
template <QGemmKernel kKernel, int kWeightMax = 127>
void BM_QGemm(benchmark::State& state) {
  const QGemmUkernel* ukernel = Ukernel(kKernel);
  if (ukernel == nullptr) {
    state.SkipWithError("kernel not available on this CPU");
    return;
  }
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2), kp = (k + 3) / 4 * 4;
  std::mt19937 rng(1);
  std::vector<uint8_t> a(m * kp, 0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < k; ++j) a[i * kp + j] = static_cast<uint8_t>(rng());
  }
  std::vector<int8_t> w(n * k);
  for (auto& v : w) v = static_cast<int8_t>(static_cast<int>(rng() % (2 * kWeightMax + 1)) - kWeightMax);
  const QuantizedMultiplier q = QuantizeMultiplier(1.0 / (127.0 * 64 * k));
  const PackedQGemmWeights packed =
      PackQGemmWeights(w.data(), n, k, nullptr, 3, {q.multiplier}, {q.shift}, 0, kKernel == QGemmKernel::kAvx2);
  std::vector<uint8_t> y(m * n);
  QGemmOutputStage stage;
  for (auto _ : state) {
    ukernel->plain(a.data(), m, packed, stage, y.data(), n);
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["GMACS"] = benchmark::Counter(1.0 * m * n * k * state.iterations(), benchmark::Counter::kIsRate,
                                               benchmark::Counter::kIs1000);
}

// The same convolutions without im2col: 3x3, pad 1, channels-last, through per-tap row pointers
// (args: H = W, C, M). kCold: the caches are evicted before every run, so the weights come from memory as
// they do inside a whole network.
template <QGemmKernel kKernel, int kWeightMax = 127, bool kCold = false>
void BM_QConvIndirect(benchmark::State& state) {
  const QGemmUkernel* ukernel = Ukernel(kKernel);
  if (ukernel == nullptr) {
    state.SkipWithError("kernel not available on this CPU");
    return;
  }
  const int64_t hw = state.range(0), c = state.range(1), n = state.range(2), k = 9 * c;
  std::mt19937 rng(1);
  std::vector<uint8_t> x(hw * hw * c), zero(c, 3);
  std::vector<int8_t> w(n * k);
  for (auto& v : x) v = static_cast<uint8_t>(rng());
  for (auto& v : w) v = static_cast<int8_t>(static_cast<int>(rng() % (2 * kWeightMax + 1)) - kWeightMax);
  std::vector<const uint8_t*> ind;
  for (int64_t i = 0; i < hw; ++i) {
    for (int64_t j = 0; j < hw; ++j) {
      for (int64_t u = -1; u <= 1; ++u) {
        for (int64_t v = -1; v <= 1; ++v) {
          const bool inside = i + u >= 0 && i + u < hw && j + v >= 0 && j + v < hw;
          ind.push_back(inside ? x.data() + ((i + u) * hw + j + v) * c : zero.data());
        }
      }
    }
  }
  const QuantizedMultiplier q = QuantizeMultiplier(1.0 / (127.0 * 64 * k));
  const PackedQGemmWeights packed =
      PackQGemmWeights(w.data(), n, k, nullptr, 3, {q.multiplier}, {q.shift}, 0, kKernel == QGemmKernel::kAvx2);
  const int64_t m = hw * hw;
  std::vector<uint8_t> y(m * n);
  QGemmOutputStage stage;
  std::vector<float> flush(kCold ? (64 << 20) / 4 : 0);
  for (auto _ : state) {
    if (kCold) EvictCaches(state, flush);
    ukernel->indirect(ind.data(), 9, c, m, packed, stage, y.data(), n);
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["GMACS"] = benchmark::Counter(1.0 * m * n * k * state.iterations(), benchmark::Counter::kIsRate,
                                               benchmark::Counter::kIs1000);
}
#define RESNET_CONV_SHAPES \
  Args({56, 64, 64})->Args({28, 128, 128})->Args({14, 256, 256})->Args({7, 512, 512})->Unit(benchmark::kMicrosecond)
BENCHMARK(BM_QConvIndirect<QGemmKernel::kAvx512Vnni>)->RESNET_CONV_SHAPES;
BENCHMARK(BM_QConvIndirect<QGemmKernel::kAvxVnni>)->RESNET_CONV_SHAPES;
BENCHMARK(BM_QConvIndirect<QGemmKernel::kAvx2>)->RESNET_CONV_SHAPES;
BENCHMARK(BM_QConvIndirect<QGemmKernel::kAvx2, 64>)->RESNET_CONV_SHAPES;
BENCHMARK(BM_QConvIndirect<QGemmKernel::kAvx2, 64, true>)->RESNET_CONV_SHAPES;

void BM_GemmF32(benchmark::State& state) {
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  std::vector<float> a(m * k, 0.5f), b(k * n, 0.25f), c(m * n);
  auto gemm = GemmF32::Create(m, n, k);
  if (!gemm.ok()) {
    state.SkipWithError("no f32 GEMM");
    return;
  }
  for (auto _ : state) {
    gemm->Run(a.data(), k, b.data(), n, c.data(), n);
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GMACS"] = benchmark::Counter(1.0 * m * n * k * state.iterations(), benchmark::Counter::kIsRate,
                                               benchmark::Counter::kIs1000);
  state.SetLabel(gemm->kernel().name);
}

// ResNet-18: layer1 3x3 (56x56, 64->64), layer2 3x3 (28x28, 128->128), layer3 3x3 (14x14, 256->256),
// layer4 3x3 (7x7, 512->512).
#define RESNET_SHAPES                                                                                 \
  Args({3136, 64, 576})->Args({784, 128, 1152})->Args({196, 256, 2304})->Args({49, 512, 4608})       \
      ->Unit(benchmark::kMicrosecond)
// MobileNetV2 (224x224): the stem as its im2col GEMM (3x3x3 -> 32 at 112x112), then each distinct
// pointwise (1x1) convolution, expansions and projections.
#define MOBILENET_SHAPES                                                                                    \
  Args({12544, 32, 27})->Args({12544, 16, 32})->Args({12544, 96, 16})->Args({3136, 24, 96})                 \
      ->Args({3136, 144, 24})->Args({3136, 24, 144})->Args({784, 32, 144})->Args({784, 192, 32})           \
      ->Args({784, 32, 192})->Args({196, 64, 192})->Args({196, 384, 64})->Args({196, 64, 384})             \
      ->Args({196, 96, 384})->Args({196, 576, 96})->Args({196, 96, 576})->Args({49, 160, 576})             \
      ->Args({49, 960, 160})->Args({49, 160, 960})->Args({49, 320, 960})->Args({49, 1280, 320})            \
      ->Unit(benchmark::kMicrosecond)
BENCHMARK(BM_QGemm<QGemmKernel::kAvx512Vnni>)->RESNET_SHAPES;
BENCHMARK(BM_QGemm<QGemmKernel::kAvxVnni>)->RESNET_SHAPES;
BENCHMARK(BM_QGemm<QGemmKernel::kAvx2>)->RESNET_SHAPES;
BENCHMARK(BM_GemmF32)->RESNET_SHAPES;
BENCHMARK(BM_QGemm<QGemmKernel::kAvx512Vnni>)->MOBILENET_SHAPES;
BENCHMARK(BM_QGemm<QGemmKernel::kAvxVnni>)->MOBILENET_SHAPES;
BENCHMARK(BM_QGemm<QGemmKernel::kAvx2>)->MOBILENET_SHAPES;
BENCHMARK(BM_QGemm<QGemmKernel::kAvx2, 64>)->MOBILENET_SHAPES;
BENCHMARK(BM_GemmF32)->MOBILENET_SHAPES;

}  // namespace
}  // namespace tessel
