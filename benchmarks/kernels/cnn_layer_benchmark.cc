// CNN layers one at a time through the operator kernels a compiled model runs: MobileNetV2's fused
// depthwise 3x3 + pointwise 1x1 blocks (tessel_f32_dwconv2d_3x3_pwconv2d_nhwc__fused, with the 112x112
// block's expansion and the residual adds where the network has them), its RGB stem
// (tessel_f32_conv2d_nhwc__direct_avx512) and ResNet-18's 3x3 stride-1 layers on the two Winograd kernels.
// Reports GFLOP/s (of the direct convolution's multiply-adds) and the fraction of the measured f32 FMA
// peak.
// warm: the layer runs again and again on the same buffers (what the kernel can do from cache); cold: a
// 64 MB buffer is read between runs (not timed), so inputs and weights come from memory.
//
//   bazel run -c opt //benchmarks/kernels:cnn_layer_benchmark -- --benchmark_filter=dwpw
#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "benchmarks/kernels/evict_caches.h"
#include "benchmarks/kernels/machine_limits.h"
#include "graph/graph.h"
#include "kernels/op_kernels.h"

namespace tessel {
namespace {

double PeakGflops() {
  static const double peak = MeasurePeakGflops();
  return peak;
}

Tensor Filled(std::vector<int64_t> shape, float scale, int seed) {
  Tensor t(DType::kF32, std::move(shape));
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    t.data<float>()[i] = scale * static_cast<float>((i * 7919 + seed * 104729) % 1000 - 500) / 500.0f;
  }
  return t;
}

// One layer: its graph node, input tensors (nullptr where an optional input is omitted) and output.
struct Layer {
  std::unique_ptr<Graph> graph = std::make_unique<Graph>();
  Node* node = nullptr;
  std::vector<std::unique_ptr<Tensor>> data;
  std::vector<const Tensor*> inputs;
  std::vector<Value*> values;
  Tensor output;
  double flops = 0;

  void Add(std::vector<int64_t> shape, bool constant, float scale) {
    if (shape.empty()) {
      inputs.push_back(nullptr);
      values.push_back(nullptr);
      return;
    }
    data.push_back(std::make_unique<Tensor>(Filled(std::move(shape), scale, static_cast<int>(data.size()))));
    const std::string name = absl::StrCat("v", values.size());
    values.push_back(constant ? graph->AddConstant(name, *data.back()) : graph->AddInput(name, data.back()->type()));
    inputs.push_back(data.back().get());
  }
};

void SetClip(Node* n, const std::string& prefix) {
  n->SetAttr(prefix + "activation", Attribute::String("clip"));
  n->SetAttr(prefix + "clip_min", Attribute::Float(0.0f));
  n->SetAttr(prefix + "clip_max", Attribute::Float(6.0f));
}

// A MobileNetV2 inverted-residual tail: depthwise 3x3 over h x w x c at `stride`, pointwise to m, the
// residual where stride 1 and m equal to the block's input channels (`residual`), and the expansion from
// c_in channels when c_in > 0.
std::unique_ptr<Layer> DwPwLayer(int64_t h, int64_t w, int64_t c, int64_t stride, int64_t m, bool residual,
                                 int64_t c_in) {
  auto l = std::make_unique<Layer>();
  const int64_t oh = (h + 2 - 3) / stride + 1, ow = (w + 2 - 3) / stride + 1;
  l->Add({1, h, w, c_in > 0 ? c_in : c}, false, 1.0f);
  l->Add({c, 3, 3, 1}, true, 0.3f);
  l->Add({c}, true, 0.1f);
  l->Add({m, 1, 1, c}, true, 0.1f);
  l->Add({m}, true, 0.1f);
  l->Add(residual ? std::vector<int64_t>{1, oh, ow, m} : std::vector<int64_t>{}, false, 1.0f);
  if (c_in > 0) {
    l->Add({c, 1, 1, c_in}, true, 0.2f);
    l->Add({c}, true, 0.1f);
  }
  l->node = l->graph->AddNode("DwPwConv", l->values, 1, "dwpw");
  l->node->set_domain("tessel");
  l->node->SetAttr("layout", Attribute::String("nhwc"));
  l->node->SetAttr("group", Attribute::Int(c));
  l->node->SetAttr("strides", Attribute::Ints({stride, stride}));
  l->node->SetAttr("pads", Attribute::Ints({1, 1, 1, 1}));
  SetClip(l->node, "dw_");
  if (c_in > 0) SetClip(l->node, "exp_");
  l->output = Tensor(DType::kF32, {1, oh, ow, m});
  l->flops = 2.0 * oh * ow * c * (9 + m) + 2.0 * h * w * c * c_in;
  return l;
}

// The RGB stem: 3x3 stride 2, pad 1, 3 -> m channels, ReLU6.
std::unique_ptr<Layer> StemLayer(int64_t h, int64_t w, int64_t m) {
  auto l = std::make_unique<Layer>();
  const int64_t oh = (h + 2 - 3) / 2 + 1, ow = (w + 2 - 3) / 2 + 1;
  l->Add({1, h, w, 3}, false, 1.0f);
  l->Add({m, 3, 3, 3}, true, 0.3f);
  l->Add({m}, true, 0.1f);
  l->node = l->graph->AddNode("FusedConv", l->values, 1, "stem");
  l->node->set_domain("tessel");
  l->node->SetAttr("layout", Attribute::String("nhwc"));
  l->node->SetAttr("kernel_shape", Attribute::Ints({3, 3}));
  l->node->SetAttr("strides", Attribute::Ints({2, 2}));
  l->node->SetAttr("pads", Attribute::Ints({1, 1, 1, 1}));
  SetClip(l->node, "");
  l->output = Tensor(DType::kF32, {1, oh, ow, m});
  l->flops = 2.0 * oh * ow * m * 27;
  return l;
}

// A ResNet basic block's 3x3 stride-1 convolution, h x w x c -> c, pad 1, bias and ReLU.
std::unique_ptr<Layer> Conv3x3Layer(int64_t h, int64_t w, int64_t c) {
  auto l = std::make_unique<Layer>();
  l->Add({1, h, w, c}, false, 1.0f);
  l->Add({c, 3, 3, c}, true, 0.05f);
  l->Add({c}, true, 0.1f);
  l->node = l->graph->AddNode("FusedConv", l->values, 1, "conv3x3");
  l->node->set_domain("tessel");
  l->node->SetAttr("layout", Attribute::String("nhwc"));
  l->node->SetAttr("kernel_shape", Attribute::Ints({3, 3}));
  l->node->SetAttr("pads", Attribute::Ints({1, 1, 1, 1}));
  l->node->SetAttr("activation", Attribute::String("relu"));
  l->output = Tensor(DType::kF32, {1, h, w, c});
  l->flops = 2.0 * h * w * c * c * 9;
  return l;
}

void BM_Layer(benchmark::State& state, const std::string& kernel, std::shared_ptr<Layer> l, bool cold) {
  const OpKernelEntry* e = OpKernels().FindByName(kernel);
  if (e == nullptr) {
    state.SkipWithError(("no kernel " + kernel).c_str());
    return;
  }
  if (!CpuSupports(e->isa)) {
    state.SkipWithError((kernel + " needs an ISA this CPU lacks").c_str());
    return;
  }
  absl::StatusOr<std::unique_ptr<OpKernel>> k =
      e->create(OpKernelArgs{*l->node, l->inputs, absl::MakeSpan(&l->output, 1), nullptr, 1, false});
  if (!k.ok()) {
    state.SkipWithError(std::string(k.status().message()).c_str());
    return;
  }
  std::vector<float> flush(cold ? (64 << 20) / 4 : 0);
  for (auto _ : state) {
    if (cold) EvictCaches(state, flush);
    if (!(*k)->Run().ok()) {
      state.SkipWithError("run failed");
      return;
    }
    benchmark::ClobberMemory();
  }
  state.counters["GFLOPs"] = benchmark::Counter(l->flops / 1e9 * state.iterations(), benchmark::Counter::kIsRate);
  state.counters["peak_frac"] =
      benchmark::Counter(l->flops / (PeakGflops() * 1e9) * state.iterations(), benchmark::Counter::kIsRate);
}

struct DwPwShape {
  const char* name;
  int64_t h, w, c, stride, m;
  bool residual;
  int64_t c_in;
};

// MobileNetV2 (torchvision, 224x224)'s fused blocks, in network order (one entry per distinct shape).
constexpr DwPwShape kDwPwShapes[] = {
    {"112x112x32_s1_16", 112, 112, 32, 1, 16, false, 0},  {"112x112x96_s2_24_exp16", 112, 112, 96, 2, 24, false, 16},
    {"56x56x144_s1_24_res", 56, 56, 144, 1, 24, true, 0}, {"56x56x144_s2_32", 56, 56, 144, 2, 32, false, 0},
    {"28x28x192_s1_32_res", 28, 28, 192, 1, 32, true, 0}, {"28x28x192_s2_64", 28, 28, 192, 2, 64, false, 0},
    {"14x14x384_s1_64_res", 14, 14, 384, 1, 64, true, 0}, {"14x14x384_s1_96", 14, 14, 384, 1, 96, false, 0},
    {"14x14x576_s1_96_res", 14, 14, 576, 1, 96, true, 0}, {"14x14x576_s2_160", 14, 14, 576, 2, 160, false, 0},
    {"7x7x960_s1_160_res", 7, 7, 960, 1, 160, true, 0},   {"7x7x960_s1_320", 7, 7, 960, 1, 320, false, 0},
};

int RegisterAll() {
  for (bool cold : {false, true}) {
    const char* heat = cold ? "cold" : "warm";
    for (const DwPwShape& s : kDwPwShapes) {
      std::shared_ptr<Layer> l = DwPwLayer(s.h, s.w, s.c, s.stride, s.m, s.residual, s.c_in);
      benchmark::RegisterBenchmark(absl::StrCat("dwpw/", s.name, "/", heat).c_str(), BM_Layer,
                                   "tessel_f32_dwconv2d_3x3_pwconv2d_nhwc__fused", l, cold)
          ->Unit(benchmark::kMicrosecond);
    }
    std::shared_ptr<Layer> stem = StemLayer(224, 224, 32);
    benchmark::RegisterBenchmark(absl::StrCat("stem/224x224x3_s2_32/", heat).c_str(), BM_Layer,
                                 "tessel_f32_conv2d_nhwc__direct_avx512", stem, cold)
        ->Unit(benchmark::kMicrosecond);
    for (int64_t hw_c : {56 * 1000 + 64, 28 * 1000 + 128, 14 * 1000 + 256, 7 * 1000 + 512}) {
      const int64_t hw = hw_c / 1000, c = hw_c % 1000;
      std::shared_ptr<Layer> l = Conv3x3Layer(hw, hw, c);
      for (const char* f : {"f2x2", "f4x4"}) {
        benchmark::RegisterBenchmark(absl::StrCat("winograd_", f, "/", hw, "x", hw, "x", c, "/", heat).c_str(),
                                     BM_Layer, absl::StrCat("tessel_f32_conv2d_3x3s1_nhwc__winograd_", f), l, cold)
            ->Unit(benchmark::kMicrosecond);
      }
    }
  }
  return 0;
}

const int registered = RegisterAll();

}  // namespace
}  // namespace tessel
