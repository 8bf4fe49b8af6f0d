// u8 x s8 VNNI GEMM (with its requantizing output stage) against our f32 GEMM on ResNet-18 convolution
// shapes as im2col GEMMs (M = output pixels, N = output channels, K = kernel area x input channels).
// Reports GOP/s (2 ops per multiply-add) for both, side by side.
#include <random>
#include <vector>

#include "benchmark/benchmark.h"
#include "kernels/gemm/gemm.h"
#include "kernels/int8/qgemm.h"
#include "kernels/int8/requantize.h"

namespace tessel {
namespace {

void BM_QGemmVnni(benchmark::State& state) {
  if (!HasQGemmVnni()) {
    state.SkipWithError("no AVX-512 VNNI");
    return;
  }
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  std::mt19937 rng(1);
  std::vector<uint8_t> a(m * k);
  std::vector<int8_t> w(n * k);
  for (auto& v : a) v = static_cast<uint8_t>(rng());
  for (auto& v : w) v = static_cast<int8_t>(rng() % 255 - 127);
  const QuantizedMultiplier q = QuantizeMultiplier(1.0 / (127.0 * 64 * k));
  const PackedQGemmWeights packed = PackQGemmWeights(w.data(), n, k, nullptr, 3, {q.multiplier}, {q.shift});
  std::vector<uint8_t> y(m * n);
  QGemmOutputStage stage;
  for (auto _ : state) {
#if defined(__x86_64__)  // only reached when HasQGemmVnni()
    QGemmU8S8__avx512vnni(a.data(), m, packed, stage, y.data(), n);
#endif
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["GOPS"] = benchmark::Counter(2.0 * m * n * k * state.iterations(), benchmark::Counter::kIsRate,
                                              benchmark::Counter::kIs1000);
}

// The same convolutions without im2col: 3x3, pad 1, channels-last, through per-tap row pointers
// (args: H = W, C, M).
void BM_QConvIndirectVnni(benchmark::State& state) {
  if (!HasQGemmVnni()) {
    state.SkipWithError("no AVX-512 VNNI");
    return;
  }
  const int64_t hw = state.range(0), c = state.range(1), n = state.range(2), k = 9 * c;
  std::mt19937 rng(1);
  std::vector<uint8_t> x(hw * hw * c), zero(c, 3);
  std::vector<int8_t> w(n * k);
  for (auto& v : x) v = static_cast<uint8_t>(rng());
  for (auto& v : w) v = static_cast<int8_t>(rng() % 255 - 127);
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
  const PackedQGemmWeights packed = PackQGemmWeights(w.data(), n, k, nullptr, 3, {q.multiplier}, {q.shift});
  const int64_t m = hw * hw;
  std::vector<uint8_t> y(m * n);
  QGemmOutputStage stage;
  for (auto _ : state) {
#if defined(__x86_64__)  // only reached when HasQGemmVnni()
    QGemmU8S8Indirect__avx512vnni(ind.data(), 9, c, m, packed, stage, y.data(), n);
#endif
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["GOPS"] = benchmark::Counter(2.0 * m * n * k * state.iterations(), benchmark::Counter::kIsRate,
                                              benchmark::Counter::kIs1000);
}
BENCHMARK(BM_QConvIndirectVnni)
    ->Args({56, 64, 64})
    ->Args({28, 128, 128})
    ->Args({14, 256, 256})
    ->Args({7, 512, 512})
    ->Unit(benchmark::kMicrosecond);

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
  state.counters["GOPS"] = benchmark::Counter(2.0 * m * n * k * state.iterations(), benchmark::Counter::kIsRate,
                                              benchmark::Counter::kIs1000);
  state.SetLabel(gemm->kernel().name);
}

// ResNet-18: layer1 3x3 (56x56, 64->64), layer2 3x3 (28x28, 128->128), layer3 3x3 (14x14, 256->256),
// layer4 3x3 (7x7, 512->512).
#define RESNET_SHAPES                                                                                 \
  Args({3136, 64, 576})->Args({784, 128, 1152})->Args({196, 256, 2304})->Args({49, 512, 4608})       \
      ->Unit(benchmark::kMicrosecond)
BENCHMARK(BM_QGemmVnni)->RESNET_SHAPES;
BENCHMARK(BM_GemmF32)->RESNET_SHAPES;

}  // namespace
}  // namespace tessel
