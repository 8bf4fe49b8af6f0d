// The depthwise int8 kernels (PreparedQDwConv with AVX-512 VNNI or AVX2: indirection built once, then
// only the microkernel) against the reference QConv on MobileNetV2's 3x3 depthwise shapes (args: input
// H = W, C, stride; pad 1, ReLU6-style clamp). Reports GMAC/s.
#include <random>
#include <vector>

#include "benchmark/benchmark.h"
#include "graph/op_registry.h"
#include "kernels/int8/int8_kernels.h"
#include "kernels/int8/requantize.h"
#include "kernels/reference/reference.h"

namespace tessel {
namespace {

struct DwSetup {
  Graph g;
  Node* node = nullptr;
  Tensor x, w, b, y;
};

// Weights in [-weight_max, weight_max]: 127 (8 bits), or 64 (7 bits, what `tessel compile` writes for
// AVX2 hosts; the AVX2 kernel multiplies them as bytes).
void Setup(DwSetup& s, int64_t hw, int64_t c, int64_t stride, int weight_max = 127) {
  std::mt19937 rng(1);
  s.x = Tensor(DType::kU8, {1, hw, hw, c});
  s.w = Tensor(DType::kI8, {c, 3, 3, 1});
  s.b = Tensor(DType::kI32, {c});
  for (int64_t i = 0; i < s.x.num_elements(); ++i) s.x.data<uint8_t>()[i] = static_cast<uint8_t>(rng());
  for (int64_t i = 0; i < s.w.num_elements(); ++i) s.w.data<int8_t>()[i] = static_cast<int8_t>(static_cast<int>(rng() % (2 * weight_max + 1)) - weight_max);
  for (int64_t i = 0; i < c; ++i) s.b.data<int32_t>()[i] = static_cast<int32_t>(rng() % 20001) - 10000;
  const int64_t o = (hw + 2 - 3) / stride + 1;
  s.y = Tensor(DType::kU8, {1, o, o, c});
  s.node = s.g.AddNode("QConv", {s.g.AddInput("x", s.x.type()), s.g.AddConstant("w", s.w), s.g.AddConstant("b", s.b)},
                       1, "dw");
  s.node->set_domain(kTesselDomain);
  s.node->SetAttr("layout", Attribute::String("nhwc"));
  s.node->SetAttr("group", Attribute::Int(c));
  s.node->SetAttr("kernel_shape", Attribute::Ints({3, 3}));
  s.node->SetAttr("strides", Attribute::Ints({stride, stride}));
  s.node->SetAttr("pads", Attribute::Ints({1, 1, 1, 1}));
  s.node->SetAttr("x_zero_point", Attribute::Int(0));
  s.node->SetAttr("act_max", Attribute::Int(191));
  std::vector<int64_t> m, sh;
  for (int64_t i = 0; i < c; ++i) {
    const QuantizedMultiplier q = QuantizeMultiplier((0.5 + 0.01 * (i % 50)) / (127.0 * 64 * 9));
    m.push_back(q.multiplier);
    sh.push_back(q.shift);
  }
  s.node->SetAttr("multiplier", Attribute::Ints(m));
  s.node->SetAttr("shift", Attribute::Ints(sh));
}

void Report(benchmark::State& state, const DwSetup& s) {
  state.counters["GMACS"] = benchmark::Counter(9.0 * s.y.num_elements() * state.iterations(),
                                               benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
}

template <QDwConvKernel kKernel, int kWeightMax = 127>
void BM_QDwConv(benchmark::State& state) {
  if (!QDwConvKernelAvailable(kKernel)) {
    state.SkipWithError("CPU or build without this kernel");
    return;
  }
  DwSetup s;
  Setup(s, state.range(0), state.range(1), state.range(2), kWeightMax);
  const std::vector<const Tensor*> in = {&s.x, &s.w, &s.b};
  absl::StatusOr<std::unique_ptr<PreparedQDwConv>> p = PreparedQDwConv::Create(*s.node, in, s.y, kKernel);
  if (!p.ok()) {
    state.SkipWithError(std::string(p.status().message()).c_str());
    return;
  }
  for (auto _ : state) {
    (*p)->Run(in, s.y);
    benchmark::DoNotOptimize(s.y.raw_data());
  }
  Report(state, s);
}

void BM_QDwConvReference(benchmark::State& state) {
  DwSetup s;
  Setup(s, state.range(0), state.range(1), state.range(2));
  const std::vector<const Tensor*> in = {&s.x, &s.w, &s.b};
  std::vector<Tensor> out;
  for (auto _ : state) {
    out.clear();
    if (!RunReferenceNode(*s.node, in, &out).ok()) {
      state.SkipWithError("reference failed");
      return;
    }
    benchmark::DoNotOptimize(out[0].raw_data());
  }
  Report(state, s);
}

// MobileNetV2's depthwise layers (input side, channels, stride).
#define MOBILENET_V2_DW_SHAPES                                                                                  \
  Args({112, 32, 1})->Args({112, 96, 2})->Args({56, 144, 1})->Args({56, 144, 2})->Args({28, 192, 1})            \
      ->Args({28, 192, 2})->Args({14, 384, 1})->Args({14, 576, 1})->Args({14, 576, 2})->Args({7, 960, 1})       \
      ->Unit(benchmark::kMicrosecond)
BENCHMARK_TEMPLATE(BM_QDwConv, QDwConvKernel::kAvx512Vnni)->MOBILENET_V2_DW_SHAPES;
BENCHMARK_TEMPLATE(BM_QDwConv, QDwConvKernel::kAvx2)->MOBILENET_V2_DW_SHAPES;
BENCHMARK_TEMPLATE(BM_QDwConv, QDwConvKernel::kAvx2, 64)->MOBILENET_V2_DW_SHAPES;
BENCHMARK(BM_QDwConvReference)->MOBILENET_V2_DW_SHAPES;

}  // namespace
}  // namespace tessel
