// Fixed kernel cases for the Arm performance lab: every f32 GEMM, weight-only GEMV and vector kernel
// that this CPU runs (from the registries benchmarks/kernels measures), each on a few fixed shapes, and
// every legal operator kernel of the layers the compiler chooses among: f32 convolutions
// (tessel.FusedConv: XNNPACK, GEMM, Winograd, NEON/SVE depthwise) on depthwise, dense 3x3, pointwise and
// stem (3 input channels) layers of MobileNetV2 and ResNet-18, the fused depthwise + pointwise op (tessel.DwPwConv: Tessel's and
// XNNPACK's) on MobileNetV2 blocks, and the u8 QConv / QGemm kernels (Tessel's int8 GEMMs and depthwise
// kernels, XNNPACK's qu8 and qc8 operators) on ResNet-18 and MobileNetV2 layers and classifiers.
// The same binary times a case natively and, under qemu with lab/tb_profile.c, marks it as a
// phase (lab_marks.h), so the lab's estimate and the host's time describe the same instructions:
//   - on x86-64 it validates the estimates (lab/validate_x86.sh: TESSEL_MAX_ISA=avx2 on both sides,
//     since qemu-x86_64 has no AVX-512);
//   - on aarch64 it gives the cycles per call behind the aarch64 cost table (lab/make_cost_table.py).
//
//   kernel_cases [--filter SUBSTRING[,SUBSTRING...]] [--reps R] [--list] [--clock]
//
// --filter runs the cases whose name contains any of the substrings; indexes stay those of the full list.
// --clock first prints {"clock_ghz": G}: the core's clock from a chain of dependent adds (one cycle
// each), which turns the host's times into cycles for the comparison.
// One JSON line per case: {"index", "case", "kernel", "op", "layer", "flops", "bytes", "calls", "reps",
// "median_ns", "min_ns", "model_s"}
// (ns of this thread's CPU time per call over R timed repetitions of `calls` calls, after one warm-up
// call; model_s: an operator kernel's own cost estimate for one call, seconds, 0 for the others). With TESSEL_LAB_MARKS=1
// every repetition of case i is phase i.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/graph.h"
#include "graph/op_registry.h"
#include "kernels/gemm/gemm.h"
#include "kernels/gemv/gemv.h"
#include "kernels/int8/requantize.h"
#include "kernels/op_kernels.h"
#include "kernels/registry/registry.h"
#include "kernels/vector/vector.h"
#include "runtime/lab_marks.h"

namespace tessel {
namespace {

struct Case {
  std::string name;
  std::string kernel;
  std::string op;
  std::string layer;  // the layer's class for convolutions: depthwise, dense, pointwise
  double flops = 0;  // arithmetic per call (multiply-add = 2)
  double bytes = 0;  // operand bytes per call
  int calls = 1;     // per repetition: enough work to time natively
  double model_seconds = 0;  // an operator kernel's own cost model for the call (before the lab's table)
  std::function<void()> run;
};

// Deterministic values in [-scale, scale): no libm, so both sides of the lab run the same code.
std::vector<float> Fill(int64_t n, float scale) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>((i * 7919) % 1000 - 500) / 500.0f;
  return v;
}

// Calls per repetition for about `target` flops of work per repetition (at least one).
int CallsFor(double flops_per_call, double target = 2e7) {
  return static_cast<int>(std::max(1.0, std::min(1000.0, std::round(target / std::max(1.0, flops_per_call)))));
}

void AddGemmCases(std::vector<Case>& cases) {
  struct Shape {
    const char* name;
    int64_t m, n, k;
  };
  // Square, then ResNet-18's 14x14 3x3 layer and MobileNetV2's 14x14 pointwise layer as GEMMs.
  static const Shape kShapes[] = {{"sq128", 128, 128, 128}, {"r18_l3_3x3", 196, 256, 2304}, {"mbv2_14_pw", 196, 96, 576}};
  for (const auto& e : GemmKernels().entries()) {
    if (e.op != "gemm" || !CpuSupports(e.isa)) continue;
    for (const Shape& s : kShapes) {
      // The plain triple loop only on the small shape: it is the oracle, not a contender.
      if (e.backend == "reference" && s.m * s.n * s.k > 128 * 128 * 128) continue;
      auto a = std::make_shared<std::vector<float>>(Fill(s.m * s.k, 1.0f));
      auto b = std::make_shared<std::vector<float>>(Fill(s.k * s.n, 0.5f));
      auto c = std::make_shared<std::vector<float>>(s.m * s.n);
      auto ws = std::make_shared<std::vector<char>>(e.workspace_bytes);
      auto fn = e.fn;
      Case k;
      k.name = e.name + "/" + s.name;
      k.kernel = e.name;
      k.op = "gemm";
      k.flops = 2.0 * s.m * s.n * s.k;
      k.bytes = 4.0 * (s.m * s.k + s.k * s.n + s.m * s.n);
      k.calls = CallsFor(k.flops);
      k.run = [=] { fn(s.m, s.n, s.k, a->data(), s.k, b->data(), s.n, c->data(), s.n, ws->data()); };
      cases.push_back(std::move(k));
    }
  }
}

// Random-looking but valid ggml blocks: fp16 scale 2^-6 (0x2400), then code bytes.
std::vector<uint8_t> QuantBlocks(int64_t rows, int64_t cols, int block_bytes) {
  std::vector<uint8_t> w(rows * cols / 32 * block_bytes);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<uint8_t>((i * 2654435761u) >> 13);
  for (size_t i = 0; i < w.size(); i += block_bytes) {
    w[i] = 0x00;
    w[i + 1] = 0x24;
  }
  return w;
}

void AddGemvCases(std::vector<Case>& cases) {
  const int64_t rows = 1024, cols = 2048;  // a quarter of TinyLlama's attention output projection
  for (const auto& e : GemvKernels().entries()) {
    if (e.op != "gemv" || !CpuSupports(e.isa)) continue;
    const bool q4 = e.dtypes == "q4_0xf32", q8 = e.dtypes == "q8_0xf32";
    if (!q4 && !q8) continue;
    const int block_bytes = q4 ? 18 : 34;
    auto w = std::make_shared<std::vector<uint8_t>>(QuantBlocks(rows, cols, block_bytes));
    auto x = std::make_shared<std::vector<float>>(Fill(cols, 1.0f));
    auto y = std::make_shared<std::vector<float>>(rows);
    auto fn = e.fn;
    Case k;
    k.name = e.name + "/1024x2048";
    k.kernel = e.name;
    k.op = "gemv";
    k.flops = 2.0 * rows * cols;
    k.bytes = static_cast<double>(w->size()) + 4.0 * (cols + rows);
    k.calls = CallsFor(k.flops, 1e7);
    k.run = [=] {
      GemvArgs args;
      args.w = w->data();
      args.x = x->data();
      args.y = y->data();
      args.rows = rows;
      args.cols = cols;
      fn(args, 0, rows);
    };
    cases.push_back(std::move(k));
  }
}

void AddVectorCases(std::vector<Case>& cases) {
  const int64_t rows = 64, row = 2048, n = rows * row;  // 512 KiB per operand: L2-resident on the host
  auto a = std::make_shared<std::vector<float>>(Fill(n, 4.0f));
  auto b = std::make_shared<std::vector<float>>(Fill(n, 2.0f));
  auto gain = std::make_shared<std::vector<float>>(Fill(row, 1.0f));
  auto y = std::make_shared<std::vector<float>>(n);
  for (const auto& e : VectorKernels().entries()) {
    if (!CpuSupports(e.isa)) continue;
    Case k;
    k.name = e.name + "/64x2048";
    k.kernel = e.name;
    k.op = e.op;
    k.flops = static_cast<double>(n);
    k.bytes = 8.0 * n;
    if (e.op == "softmax") {
      auto fn = std::get<SoftmaxFn>(e.fn);
      k.run = [=] { fn(rows, row, a->data(), y->data()); };
    } else if (e.op == "rmsnorm") {
      auto fn = std::get<RmsNormFn>(e.fn);
      k.run = [=] { fn(rows, row, a->data(), gain->data(), 1e-5f, y->data()); };
    } else if (e.op == "clamp") {
      auto fn = std::get<ClampFn>(e.fn);
      k.run = [=] { fn(n, a->data(), y->data(), 0.0f, 6.0f); };
    } else if (e.op == "sigmoid" || e.op == "silu" || e.op == "hardswish") {
      auto fn = std::get<UnaryFn>(e.fn);
      k.run = [=] { fn(n, a->data(), y->data()); };
    } else if (e.op == "vadd" || e.op == "vmul") {
      auto fn = std::get<BinaryFn>(e.fn);
      k.bytes = 12.0 * n;
      k.run = [=] { fn(n, a->data(), b->data(), y->data(), -INFINITY, INFINITY); };
    } else {
      continue;
    }
    k.calls = CallsFor(20.0 * n);
    cases.push_back(std::move(k));
  }
}

// This thread's CPU time: on a shared host, time other processes hold the core is not counted.
double ThreadSeconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// Best of five runs of a chain of dependent 64-bit multiplies: 3 cycles each on every x86-64 core of the
// last decade (a chain of add-immediates is no clock: Golden Cove's renamer folds them, 4-5 a cycle).
double MeasureClockGhz() {
#if defined(__x86_64__)
  const int64_t iters = 10'000'000;
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    uint64_t x = 3;
    int64_t n = iters;
    const double t0 = ThreadSeconds();
    __asm__ volatile(
        "1:\n"
        "imul %0, %0\n imul %0, %0\n imul %0, %0\n imul %0, %0\n imul %0, %0\n"
        "imul %0, %0\n imul %0, %0\n imul %0, %0\n imul %0, %0\n imul %0, %0\n"
        "dec %1\n jnz 1b\n"
        : "+r"(x), "+r"(n));
    best = std::max(best, 30.0 * iters / (ThreadSeconds() - t0) / 1e9);
  }
  return best;
#else
  return 0;  // the lab runs aarch64 code under qemu only, where a clock means nothing
#endif
}

// One operator node with its operands, for the operator kernels that accept it (every legal entry of
// its op and dtypes runs the same node).
struct OpLayer {
  std::string name, layer;
  Graph graph;
  Node* node = nullptr;
  std::vector<Tensor> data;  // inputs in order; an empty Tensor for an omitted optional one
  std::vector<OperandInfo> in_info, out_info;
  std::vector<const Tensor*> inputs;
  Tensor output;
  double flops = 0;
  double bytes = 0;
};

// Every legal entry of `op` / `dtypes` on `l`, as cases of group `op_class`.
void AddOpCases(std::vector<Case>& cases, const std::vector<std::shared_ptr<OpLayer>>& layers, const char* op,
                const char* dtypes, const char* op_class) {
  for (const std::shared_ptr<OpLayer>& l : layers) {
    for (const Tensor& t : l->data) l->inputs.push_back(&t);
    const OpQuery q{*l->node, l->in_info, l->out_info};
    for (const OpKernelEntry& e : OpKernels().entries()) {
      if (e.op != op || e.dtypes != dtypes || !CpuSupports(e.isa) || (e.legal && !e.legal(q))) continue;
      absl::StatusOr<std::unique_ptr<OpKernel>> made =
          e.create(OpKernelArgs{*l->node, l->inputs, absl::MakeSpan(&l->output, 1), nullptr, 1});
      if (!made.ok()) continue;
      std::shared_ptr<OpKernel> kernel = std::move(*made);
      Case k;
      k.name = e.name + "/" + l->name;
      k.kernel = e.name;
      k.op = op_class;
      k.layer = l->layer;
      k.flops = l->flops;
      k.bytes = l->bytes;
      k.calls = CallsFor(k.flops, 4e7);
      k.model_seconds = e.cost ? e.cost(q) : 0.0;
      k.run = [kernel, l] { (void)kernel->Run(); };
      cases.push_back(std::move(k));
    }
  }
}

// One convolution layer as a tessel.FusedConv node (NHWC, bias, ReLU6) with its tensors; shared by
// the cases of every kernel that accepts it.
std::shared_ptr<OpLayer> MakeConvLayer(const char* name, const char* layer, int64_t h, int64_t w, int64_t c,
                                       int64_t m, int64_t k, int64_t stride, int64_t groups) {
  auto l = std::make_shared<OpLayer>();
  l->name = name;
  l->layer = layer;
  const int64_t pad = k / 2, oh = (h + 2 * pad - k) / stride + 1, ow = (w + 2 * pad - k) / stride + 1;
  const std::vector<std::vector<int64_t>> shapes = {{1, h, w, c}, {m, k, k, c / groups}, {m}};
  l->data.reserve(3);
  std::vector<Value*> values;
  for (size_t i = 0; i < shapes.size(); ++i) {
    Tensor t(DType::kF32, shapes[i]);
    std::vector<float> v = Fill(t.num_elements(), i == 0 ? 1.0f : 0.1f);
    std::copy(v.begin(), v.end(), t.data<float>());
    l->data.push_back(std::move(t));
    const std::string vname = absl::StrCat("v", i);
    values.push_back(i == 0 ? l->graph.AddInput(vname, l->data.back().type()) : l->graph.AddConstant(vname, l->data.back()));
    l->in_info.push_back({true, i > 0, l->data.back().type()});
  }
  l->node = l->graph.AddNode("FusedConv", values, 1, name);
  l->node->set_domain("tessel");
  l->node->SetAttr("layout", Attribute::String("nhwc"));
  l->node->SetAttr("kernel_shape", Attribute::Ints({k, k}));
  l->node->SetAttr("strides", Attribute::Ints({stride, stride}));
  l->node->SetAttr("pads", Attribute::Ints({pad, pad, pad, pad}));
  l->node->SetAttr("group", Attribute::Int(groups));
  l->node->SetAttr("activation", Attribute::String("clip"));
  l->node->SetAttr("clip_min", Attribute::Float(0.0f));
  l->node->SetAttr("clip_max", Attribute::Float(6.0f));
  l->output = Tensor(DType::kF32, {1, oh, ow, m});
  l->out_info.push_back({true, false, l->output.type()});
  l->flops = 2.0 * oh * ow * m * k * k * (c / groups);
  l->bytes = 4.0 * (l->data[0].num_elements() + l->data[1].num_elements() + l->output.num_elements());
  return l;
}

void AddConvCases(std::vector<Case>& cases) {
  const std::vector<std::shared_ptr<OpLayer>> layers = {
      MakeConvLayer("mbv2_dw_56x56x144_s1", "depthwise", 56, 56, 144, 144, 3, 1, 144),
      MakeConvLayer("mbv2_dw_112x112x96_s2", "depthwise", 112, 112, 96, 96, 3, 2, 96),
      MakeConvLayer("mbv2_dw_14x14x576_s1", "depthwise", 14, 14, 576, 576, 3, 1, 576),
      MakeConvLayer("r18_3x3_56x56x64", "dense", 56, 56, 64, 64, 3, 1, 1),
      MakeConvLayer("r18_3x3_14x14x256", "dense", 14, 14, 256, 256, 3, 1, 1),
      MakeConvLayer("mbv2_pw_28x28x32_192", "pointwise", 28, 28, 32, 192, 1, 1, 1),
      MakeConvLayer("mbv2_pw_7x7x960_160", "pointwise", 7, 7, 960, 160, 1, 1, 1),
      MakeConvLayer("mbv2_stem_224x224x3_s2", "stem", 224, 224, 3, 32, 3, 2, 1),
      MakeConvLayer("r18_stem_224x224x3_7x7s2", "stem", 224, 224, 3, 64, 7, 2, 1),
  };
  AddOpCases(cases, layers, "tessel.FusedConv", "f32", "conv");
}


// Adds `t` as input `i` of the node under construction: the activation (i == 0) or a constant.
Value* AddOperand(OpLayer& l, Tensor t, int i) {
  l.data.push_back(std::move(t));
  const Tensor& d = l.data.back();
  l.in_info.push_back({true, i > 0, d.type()});
  const std::string vname = absl::StrCat("v", i);
  return i == 0 ? l.graph.AddInput(vname, d.type()) : l.graph.AddConstant(vname, d);
}


// A MobileNetV2 block's tail as one tessel.DwPwConv: depthwise 3x3 (stride s, ReLU6) over c expanded
// channels, then the linear 1x1 projection to m, no residual and no expansion (the form both Tessel's
// fused kernel and XNNPACK's pair of operators take).
std::shared_ptr<OpLayer> MakeDwPwLayer(const char* name, int64_t h, int64_t w, int64_t c, int64_t m, int64_t s) {
  auto l = std::make_shared<OpLayer>();
  l->name = name;
  l->layer = "dwpw";
  const int64_t oh = (h + 2 - 3) / s + 1, ow = (w + 2 - 3) / s + 1;
  const std::vector<std::vector<int64_t>> shapes = {{1, h, w, c}, {c, 3, 3, 1}, {c}, {m, 1, 1, c}, {m}};
  l->data.reserve(shapes.size());
  std::vector<Value*> values;
  for (size_t i = 0; i < shapes.size(); ++i) {
    Tensor t(DType::kF32, shapes[i]);
    std::vector<float> v = Fill(t.num_elements(), i == 0 ? 1.0f : 0.1f);
    std::copy(v.begin(), v.end(), t.data<float>());
    values.push_back(AddOperand(*l, std::move(t), static_cast<int>(i)));
  }
  l->node = l->graph.AddNode("DwPwConv", values, 1, name);
  l->node->set_domain(kTesselDomain);
  l->node->SetAttr("layout", Attribute::String("nhwc"));
  l->node->SetAttr("group", Attribute::Int(c));
  l->node->SetAttr("strides", Attribute::Ints({s, s}));
  l->node->SetAttr("pads", Attribute::Ints({1, 1, 1, 1}));
  l->node->SetAttr("dw_activation", Attribute::String("clip"));
  l->node->SetAttr("dw_clip_min", Attribute::Float(0.0f));
  l->node->SetAttr("dw_clip_max", Attribute::Float(6.0f));
  l->node->SetAttr("pw_activation", Attribute::String("none"));
  l->output = Tensor(DType::kF32, {1, oh, ow, m});
  l->out_info.push_back({true, false, l->output.type()});
  l->flops = 2.0 * oh * ow * c * (9 + m);
  l->bytes = 4.0 * (h * w * c + 9 * c + m * c + oh * ow * m);
  return l;
}

// A u8 tessel.QConv (NHWC, k x k, stride s, `groups` groups, ReLU range) or, with h == 0, a tessel.QGemm
// of `w` rows by c -> m, with one requantization multiplier for every channel so that XNNPACK's
// per-tensor (qu8) operators take it beside the per-channel (qc8) ones and Tessel's kernels.
std::shared_ptr<OpLayer> MakeInt8Layer(const char* name, const char* layer, int64_t h, int64_t w, int64_t c,
                                       int64_t m, int64_t k, int64_t s, int64_t groups = 1) {
  auto l = std::make_shared<OpLayer>();
  l->name = name;
  l->layer = layer;
  const bool gemm = h == 0;
  const int64_t pad = k / 2, oh = gemm ? 1 : (h + 2 * pad - k) / s + 1, ow = gemm ? w : (w + 2 * pad - k) / s + 1;
  Tensor x(DType::kU8, gemm ? std::vector<int64_t>{w, c} : std::vector<int64_t>{1, h, w, c});
  Tensor wt(DType::kI8, gemm ? std::vector<int64_t>{m, c} : std::vector<int64_t>{m, k, k, c / groups});
  Tensor b(DType::kI32, {m});
  for (int64_t i = 0; i < x.num_elements(); ++i) x.data<uint8_t>()[i] = static_cast<uint8_t>((i * 7919) % 251);
  for (int64_t i = 0; i < wt.num_elements(); ++i) wt.data<int8_t>()[i] = static_cast<int8_t>((i * 2654435761u) >> 24);
  for (int64_t i = 0; i < m; ++i) b.data<int32_t>()[i] = static_cast<int32_t>((i * 37) % 2001 - 1000);
  l->data.reserve(3);
  std::vector<Value*> values = {AddOperand(*l, std::move(x), 0), AddOperand(*l, std::move(wt), 1),
                                AddOperand(*l, std::move(b), 2)};
  l->node = l->graph.AddNode(gemm ? "QGemm" : "QConv", values, 1, name);
  l->node->set_domain(kTesselDomain);
  if (!gemm) {
    l->node->SetAttr("layout", Attribute::String("nhwc"));
    l->node->SetAttr("group", Attribute::Int(groups));
    l->node->SetAttr("kernel_shape", Attribute::Ints({k, k}));
    l->node->SetAttr("strides", Attribute::Ints({s, s}));
    l->node->SetAttr("pads", Attribute::Ints({pad, pad, pad, pad}));
  }
  const int64_t depth = (gemm ? 1 : k * k) * c / groups;
  const QuantizedMultiplier q = QuantizeMultiplier(0.005 / std::sqrt(static_cast<double>(depth)));
  l->node->SetAttr("multiplier", Attribute::Ints({q.multiplier}));
  l->node->SetAttr("shift", Attribute::Ints({q.shift}));
  l->node->SetAttr("x_zero_point", Attribute::Int(128));
  l->node->SetAttr("y_zero_point", Attribute::Int(100));
  l->node->SetAttr("act_min", Attribute::Int(100));
  l->node->SetAttr("act_max", Attribute::Int(255));
  l->output = Tensor(DType::kU8, gemm ? std::vector<int64_t>{w, m} : std::vector<int64_t>{1, oh, ow, m});
  l->out_info.push_back({true, false, l->output.type()});
  l->flops = 2.0 * oh * ow * m * depth;
  l->bytes = static_cast<double>(l->data[0].num_elements() + l->data[1].num_elements() + l->output.num_elements());
  return l;
}

// QuantizeLinear (f32 -> u8) or DequantizeLinear (u8 -> f32) of an h x w x c activation, per-tensor
// scale and zero point: what an int8 graph pays at each boundary with an f32 layer.
std::shared_ptr<OpLayer> MakeConvertLayer(const char* name, bool quantize, int64_t h, int64_t w, int64_t c) {
  auto l = std::make_shared<OpLayer>();
  l->name = name;
  l->layer = quantize ? "quantize" : "dequantize";
  Tensor x(quantize ? DType::kF32 : DType::kU8, {1, h, w, c});
  if (quantize) {
    std::vector<float> v = Fill(x.num_elements(), 4.0f);
    std::copy(v.begin(), v.end(), x.data<float>());
  } else {
    for (int64_t i = 0; i < x.num_elements(); ++i) x.data<uint8_t>()[i] = static_cast<uint8_t>((i * 7919) % 251);
  }
  Tensor scale(DType::kF32, {});
  scale.data<float>()[0] = 0.03125f;
  Tensor zp(DType::kU8, {});
  zp.data<uint8_t>()[0] = 128;
  l->data.reserve(3);
  std::vector<Value*> values = {AddOperand(*l, std::move(x), 0), AddOperand(*l, std::move(scale), 1),
                                AddOperand(*l, std::move(zp), 2)};
  l->node = l->graph.AddNode(quantize ? "QuantizeLinear" : "DequantizeLinear", values, 1, name);
  l->output = Tensor(quantize ? DType::kU8 : DType::kF32, {1, h, w, c});
  l->out_info.push_back({true, false, l->output.type()});
  l->flops = static_cast<double>(h * w * c);
  l->bytes = 5.0 * h * w * c;
  return l;
}

void AddConvertCases(std::vector<Case>& cases) {
  AddOpCases(cases, {MakeConvertLayer("mbv2_quantize_56x56x144", true, 56, 56, 144),
                     MakeConvertLayer("mbv2_quantize_14x14x576", true, 14, 14, 576)},
             "QuantizeLinear", "f32", "quantize");
  AddOpCases(cases, {MakeConvertLayer("mbv2_dequantize_56x56x144", false, 56, 56, 144),
                     MakeConvertLayer("mbv2_dequantize_14x14x576", false, 14, 14, 576)},
             "DequantizeLinear", "u8", "dequantize");
}

void AddDwPwCases(std::vector<Case>& cases) {
  const std::vector<std::shared_ptr<OpLayer>> layers = {
      MakeDwPwLayer("mbv2_dwpw_112x112x96_s2_24", 112, 112, 96, 24, 2),
      MakeDwPwLayer("mbv2_dwpw_56x56x144_24", 56, 56, 144, 24, 1),
      MakeDwPwLayer("mbv2_dwpw_14x14x576_96", 14, 14, 576, 96, 1),
  };
  AddOpCases(cases, layers, "tessel.DwPwConv", "f32", "dwpw");
}

void AddInt8Cases(std::vector<Case>& cases) {
  AddOpCases(cases,
             {MakeInt8Layer("r18_q3x3_56x56x64", "dense", 56, 56, 64, 64, 3, 1),
              MakeInt8Layer("r18_q3x3_14x14x256", "dense", 14, 14, 256, 256, 3, 1),
              MakeInt8Layer("mbv2_q1x1_56x56x24_144", "pointwise", 56, 56, 24, 144, 1, 1),
              MakeInt8Layer("mbv2_q1x1_7x7x960_160", "pointwise", 7, 7, 960, 160, 1, 1),
              MakeInt8Layer("mbv2_qdw_112x112x96_s2", "depthwise", 112, 112, 96, 96, 3, 2, 96),
              MakeInt8Layer("mbv2_qdw_56x56x144_s1", "depthwise", 56, 56, 144, 144, 3, 1, 144),
              MakeInt8Layer("mbv2_qdw_14x14x576_s1", "depthwise", 14, 14, 576, 576, 3, 1, 576)},
             "tessel.QConv", "u8", "qconv");
  AddOpCases(cases,
             {MakeInt8Layer("r18_qfc_1x512_1000", "", 0, 1, 512, 1000, 1, 1),
              MakeInt8Layer("mbv2_qfc_1x1280_1000", "", 0, 1, 1280, 1000, 1, 1)},
             "tessel.QGemm", "u8", "qgemm");
}

// Whether `name` contains one of the comma-separated substrings of `filter` (empty: every name).
bool MatchesFilter(const std::string& name, const std::string& filter) {
  if (filter.empty()) return true;
  size_t begin = 0;
  while (begin <= filter.size()) {
    size_t end = filter.find(',', begin);
    if (end == std::string::npos) end = filter.size();
    if (end > begin && name.find(filter.substr(begin, end - begin)) != std::string::npos) return true;
    begin = end + 1;
  }
  return false;
}

int Main(int argc, char** argv) {
  std::string filter;
  int reps = 7;
  bool list = false, clock = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--filter" && i + 1 < argc) {
      filter = argv[++i];
    } else if (a == "--reps" && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
    } else if (a == "--list") {
      list = true;
    } else if (a == "--clock") {
      clock = true;
    } else {
      std::fprintf(stderr, "usage: kernel_cases [--filter SUBSTRING[,SUBSTRING...]] [--reps R] [--list] [--clock]\n");
      return 2;
    }
  }
  if (reps < 1) {
    std::fprintf(stderr, "kernel_cases: --reps must be >= 1\n");
    return 2;
  }
  if (clock) std::printf("{\"clock_ghz\": %.3f}\n", MeasureClockGhz());
  std::vector<Case> cases;
  AddGemmCases(cases);
  AddGemvCases(cases);
  AddVectorCases(cases);
  AddConvCases(cases);
  AddDwPwCases(cases);
  AddInt8Cases(cases);
  AddConvertCases(cases);
  const bool marks = LabMarksRequested();
  int index = -1;
  for (const Case& c : cases) {
    ++index;
    if (!MatchesFilter(c.name, filter)) continue;
    if (list) {
      std::printf("%d %s\n", index, c.name.c_str());
      continue;
    }
    c.run();  // warm-up: caches, page faults, lazy initialization
    std::vector<double> ns;
    for (int r = 0; r < reps; ++r) {
      if (marks) LabMark(index);
      const double t0 = ThreadSeconds();
      for (int i = 0; i < c.calls; ++i) c.run();
      const double t1 = ThreadSeconds();
      if (marks) LabMark(-1);
      ns.push_back((t1 - t0) * 1e9 / c.calls);
    }
    std::sort(ns.begin(), ns.end());
    std::printf("{\"index\": %d, \"case\": \"%s\", \"kernel\": \"%s\", \"op\": \"%s\", \"layer\": \"%s\", "
                "\"flops\": %.0f, \"bytes\": %.0f, \"calls\": %d, \"reps\": %d, \"median_ns\": %.1f, \"min_ns\": %.1f, "
                "\"model_s\": %.6g}\n",
                index, c.name.c_str(), c.kernel.c_str(), c.op.c_str(), c.layer.c_str(), c.flops, c.bytes, c.calls,
                reps, ns[ns.size() / 2], ns.front(), c.model_seconds);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace
}  // namespace tessel

int main(int argc, char** argv) { return tessel::Main(argc, argv); }
