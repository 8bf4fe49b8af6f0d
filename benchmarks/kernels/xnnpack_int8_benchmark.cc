// Every u8 QConv / QGemm operator kernel that serves a shape on this CPU (Tessel's VNNI / NEON int8 kernels
// and XNNPACK's qu8 / qc8 ones) side by side, through the registry as the executor runs them, on ResNet-18
// and MobileNetV2 layers, a grouped (ResNeXt-style) layer and a classifier; GOP/s counts 2 ops per
// multiply-add. What the XNNPACK entries' costs (xnnpack_int8_kernels.cc) are checked against.
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "graph/graph.h"
#include "graph/op_registry.h"
#include "kernels/int8/int8_op_kernels.h"
#include "kernels/int8/requantize.h"
#include "kernels/registry/op_kernel.h"
#include "kernels/xnnpack/xnnpack_kernels.h"

namespace tessel {
namespace {

struct Shape {
  const char* name;
  int64_t rows_or_h, w, c, m, k, stride, groups;  // QGemm: w == 0, rows_or_h rows, c = K, m = N
};

constexpr Shape kShapes[] = {
    {"resnet18_3x3_64_56", 56, 56, 64, 64, 3, 1, 1},
    {"resnet18_3x3_256_14", 14, 14, 256, 256, 3, 1, 1},
    {"resnet18_1x1s2_128_256", 28, 28, 128, 256, 1, 2, 1},
    {"mobilenetv2_1x1_24_144_56", 56, 56, 24, 144, 1, 1, 1},
    {"mobilenetv2_1x1_16_96_112", 112, 112, 16, 96, 1, 1, 1},
    {"small_1x1_8_16_28", 28, 28, 8, 16, 1, 1, 1},
    {"mobilenetv2_dw3x3_144_56", 56, 56, 144, 144, 3, 1, 144},
    {"mobilenetv2_dw3x3s2_96_112", 112, 112, 96, 96, 3, 2, 96},
    {"resnext_3x3_g32_128_28", 28, 28, 128, 128, 3, 1, 32},
    {"classifier_1x512x1000", 1, 0, 512, 1000, 1, 1, 1},
    {"gemm_64x512x1000", 64, 0, 512, 1000, 1, 1, 1},
};

// One node with its operands and output, kept alive for the benchmark's runs.
struct Problem {
  Graph graph;
  Node* node = nullptr;
  std::vector<Tensor> in;
  Tensor out;
  std::vector<OperandInfo> in_info, out_info;
  double ops = 0;
};

std::unique_ptr<Problem> MakeProblem(const Shape& s) {
  auto p = std::make_unique<Problem>();
  std::mt19937 rng(1);
  auto fill = [&rng](Tensor& t) {
    for (int64_t i = 0; i < t.num_elements(); ++i) static_cast<uint8_t*>(t.raw_data())[i] = static_cast<uint8_t>(rng());
  };
  const bool gemm = s.w == 0;
  const int64_t cg = s.c / s.groups;
  p->in.emplace_back(DType::kU8,
                     gemm ? std::vector<int64_t>{s.rows_or_h, s.c} : std::vector<int64_t>{1, s.rows_or_h, s.w, s.c});
  p->in.emplace_back(DType::kI8, gemm ? std::vector<int64_t>{s.m, s.c} : std::vector<int64_t>{s.m, s.k, s.k, cg});
  p->in.emplace_back(DType::kI32, std::vector<int64_t>{s.m});
  fill(p->in[0]);
  fill(p->in[1]);
  Node* n = p->graph.AddNode(gemm ? "QGemm" : "QConv",
                             {p->graph.AddInput("x", p->in[0].type()), p->graph.AddConstant("w", p->in[1]),
                              p->graph.AddConstant("b", p->in[2])},
                             1, "n");
  n->set_domain(kTesselDomain);
  int64_t out_pixels = s.rows_or_h;
  if (gemm) {
    p->out = Tensor(DType::kU8, {s.rows_or_h, s.m});
  } else {
    const int64_t pad = s.k / 2, oh = (s.rows_or_h + 2 * pad - s.k) / s.stride + 1,
                  ow = (s.w + 2 * pad - s.k) / s.stride + 1;
    n->SetAttr("layout", Attribute::String("nhwc"));
    n->SetAttr("group", Attribute::Int(s.groups));
    n->SetAttr("kernel_shape", Attribute::Ints({s.k, s.k}));
    n->SetAttr("strides", Attribute::Ints({s.stride, s.stride}));
    n->SetAttr("pads", Attribute::Ints({pad, pad, pad, pad}));
    p->out = Tensor(DType::kU8, {1, oh, ow, s.m});
    out_pixels = oh * ow;
  }
  const int64_t k = (gemm ? 1 : s.k * s.k) * cg;
  // One multiplier for all channels, so that the per-tensor (qu8) kernels serve the node too.
  const QuantizedMultiplier q = QuantizeMultiplier(0.005 / std::sqrt(static_cast<double>(k)));
  n->SetAttr("multiplier", Attribute::Ints({q.multiplier}));
  n->SetAttr("shift", Attribute::Ints({q.shift}));
  n->SetAttr("x_zero_point", Attribute::Int(128));
  n->SetAttr("y_zero_point", Attribute::Int(100));
  p->node = n;
  for (size_t i = 0; i < p->in.size(); ++i) p->in_info.push_back({true, i != 0, p->in[i].type()});
  p->out_info.push_back({true, false, p->out.type()});
  p->ops = 2.0 * out_pixels * s.m * k;
  return p;
}

void Run(benchmark::State& state, const OpKernelEntry* e, const Shape* s) {
  std::unique_ptr<Problem> p = MakeProblem(*s);
  std::vector<const Tensor*> bound;
  for (const Tensor& t : p->in) bound.push_back(&t);
  absl::StatusOr<std::unique_ptr<OpKernel>> k = e->create(OpKernelArgs{*p->node, bound, absl::MakeSpan(&p->out, 1)});
  if (!k.ok()) {
    state.SkipWithError(std::string(k.status().message()).c_str());
    return;
  }
  for (auto _ : state) {
    if (!(*k)->Run().ok()) state.SkipWithError("run failed");
  }
  state.counters["GOPS"] =
      benchmark::Counter(p->ops * state.iterations(), benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
  state.counters["model_GOPS"] = p->ops / e->cost(OpQuery{*p->node, p->in_info, p->out_info}) / 1e9;
}

// Registers one benchmark per (shape, legal kernel on this CPU), the kernels of a shape next to each other.
const bool kRegistered = [] {
  auto* r = new OpKernelRegistry;
  RegisterInt8OpKernels(*r);
  RegisterXnnpackOpKernels(*r);
  for (const Shape& s : kShapes) {
    std::unique_ptr<Problem> p = MakeProblem(s);
    const OpQuery q{*p->node, p->in_info, p->out_info};
    for (const OpKernelEntry& e : r->entries()) {
      if (e.dtypes != "u8" || e.op != q.op() || !CpuSupports(e.isa) || (e.legal && !e.legal(q))) continue;
      benchmark::RegisterBenchmark(absl::StrCat(s.name, "/", e.name).c_str(), Run, &e, &s)
          ->Unit(benchmark::kMicrosecond);
    }
  }
  return true;
}();

}  // namespace
}  // namespace tessel
