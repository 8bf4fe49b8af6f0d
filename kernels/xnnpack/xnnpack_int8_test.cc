// The XNNPACK int8 kernels (xnnpack_int8_kernels.h) against the reference QConv / QGemm kernels over
// awkward shapes: 1x1, 3x3 at strides 1 and 2 with symmetric and asymmetric padding, 5x5 dilated, a 7x7
// stem, depthwise (with and without a channel multiplier), grouped, single pixels and channels; per-tensor
// and per-channel multipliers, some above 1; ReLU-style clamps; with and without bias; 1 and 2 threads.
// XNNPACK rounds differently from the reference's f32 requantization, so every output must be within 1
// (u8 units) of the reference; the maximum difference and the fraction of exact matches are printed per
// kernel. Legality must accept exactly the expected nodes (qu8: per-tensor multipliers only) and refuse
// residuals, empty clamp ranges and multipliers XNNPACK cannot represent; selection must keep Tessel's own
// int8 kernels wherever one serves the node. QMaxPool (exact), QAvgPool, QGlobalAvgPool and QAdd (within
// 1) run against their reference kernels over 1, 3, 16, 17 and 64 channels, 1x1 to 14x14 inputs, 2x2 and
// 3x3 windows at strides 1 and 2, padded and not, varied zero points, scales and clamps; what XNNPACK
// computes differently must be refused by legality, and creating a refused node is an error, not a crash.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/graph.h"
#include "graph/op_registry.h"
#include "graph/ops/quant_ops.h"
#include "gtest/gtest.h"
#include "kernels/int8/int8_op_kernels.h"
#include "kernels/int8/requantize.h"
#include "kernels/int8/internal/int8_test_util.h"
#include "kernels/reference/quantized.h"
#include "kernels/reference/reference.h"
#include "kernels/registry/op_kernel.h"
#include "kernels/xnnpack/xnnpack_kernels.h"
#include "pthreadpool.h"

namespace tessel {
namespace {

constexpr int kTolerance = 1;  // u8 units

using int8_test::Random;

// Multipliers log-uniform in [lo, hi]: one per channel, or one for all.
void SetRequant(Node* n, int64_t channels, bool per_channel, std::mt19937& rng, double lo, double hi) {
  std::uniform_real_distribution<double> d(std::log(lo), std::log(hi));
  std::vector<int64_t> m, s;
  for (int64_t c = 0; c < (per_channel ? channels : 1); ++c) {
    const QuantizedMultiplier q = QuantizeMultiplier(std::exp(d(rng)));
    m.push_back(q.multiplier);
    s.push_back(q.shift);
  }
  n->SetAttr("multiplier", Attribute::Ints(m));
  n->SetAttr("shift", Attribute::Ints(s));
}

// A node with its operands; weights and bias are constants.
struct Case {
  std::unique_ptr<Graph> graph = std::make_unique<Graph>();
  Node* node = nullptr;
  std::vector<Tensor> data;  // per input
  std::vector<OperandInfo> inputs, outputs;
  Tensor want;
  std::string label;

  OpQuery query() const { return OpQuery{*node, inputs, outputs}; }
  std::vector<const Tensor*> bound() const {
    std::vector<const Tensor*> b;
    for (const Tensor& t : data) b.push_back(&t);
    return b;
  }
  // Runs the reference and records the operand view selection sees.
  void Finish() {
    std::vector<Tensor> out;
    const absl::Status s = RunReferenceNode(*node, bound(), &out);
    ASSERT_TRUE(s.ok()) << label << ": " << s;
    want = std::move(out[0]);
    for (size_t i = 0; i < data.size(); ++i) inputs.push_back({true, i != 0 && i != 3, data[i].type()});
    outputs = {{true, false, want.type()}};
  }
};

struct ConvCase {
  int64_t n, h, w, c, m, kh, kw, stride;
  std::vector<int64_t> pads;  // top, left, bottom, right
  int64_t dilation, groups;   // groups 0: depthwise (group = c)
  bool per_channel, relu, bias;
};

std::string Describe(const ConvCase& p) {
  return absl::StrCat("QConv n", p.n, " ", p.h, "x", p.w, "x", p.c, " -> m", p.m, " k", p.kh, "x", p.kw, " s", p.stride,
                      " pads ", p.pads[0], ",", p.pads[1], ",", p.pads[2], ",", p.pads[3], " d", p.dilation, " g",
                      p.groups == 0 ? p.c : p.groups, p.per_channel ? " per-channel" : " per-tensor",
                      p.relu ? " relu" : "", p.bias ? "" : " no-bias");
}

void MakeConv(const ConvCase& p, std::mt19937& rng, Case* c, bool residual = false) {
  c->label = Describe(p);
  const int64_t groups = p.groups == 0 ? p.c : p.groups;
  const int64_t cg = p.c / groups, k = p.kh * p.kw * cg;
  c->data.push_back(Random(DType::kU8, {p.n, p.h, p.w, p.c}, rng, 0, 255));
  c->data.push_back(Random(DType::kI8, {p.m, p.kh, p.kw, cg}, rng, -128, 127));
  std::vector<Value*> ins = {c->graph->AddInput("x", c->data[0].type()), c->graph->AddConstant("w", c->data[1])};
  const int bias_range = static_cast<int>(3000 * std::sqrt(static_cast<double>(k)));
  if (p.bias || residual) {
    c->data.push_back(Random(DType::kI32, {p.m}, rng, -bias_range, bias_range));
    if (!p.bias) std::fill(c->data[2].data<int32_t>(), c->data[2].data<int32_t>() + p.m, 0);
    ins.push_back(c->graph->AddConstant("b", c->data[2]));
  }
  if (residual) {
    const int64_t oh = (p.h + p.pads[0] + p.pads[2] - p.dilation * (p.kh - 1) - 1) / p.stride + 1;
    const int64_t ow = (p.w + p.pads[1] + p.pads[3] - p.dilation * (p.kw - 1) - 1) / p.stride + 1;
    c->data.push_back(Random(DType::kU8, {p.n, oh, ow, p.m}, rng, 0, 255));
    ins.push_back(c->graph->AddInput("r", c->data[3].type()));
  }
  Node* n = c->graph->AddNode("QConv", ins, 1, "qconv");
  n->set_domain(kTesselDomain);
  n->SetAttr("layout", Attribute::String("nhwc"));
  n->SetAttr("group", Attribute::Int(groups));
  n->SetAttr("kernel_shape", Attribute::Ints({p.kh, p.kw}));
  n->SetAttr("strides", Attribute::Ints({p.stride, p.stride}));
  n->SetAttr("dilations", Attribute::Ints({p.dilation, p.dilation}));
  n->SetAttr("pads", Attribute::Ints({p.pads[0], p.pads[1], p.pads[2], p.pads[3]}));
  n->SetAttr("x_zero_point", Attribute::Int(p.relu ? 0 : 131));
  n->SetAttr("y_zero_point", Attribute::Int(p.relu ? 0 : 117));
  n->SetAttr("act_min", Attribute::Int(p.relu ? 0 : 2));
  n->SetAttr("act_max", Attribute::Int(p.relu ? 191 : 255));
  // Accumulators (and biases) have a spread of about 74 * 74 * sqrt(K); these multipliers spread the
  // outputs over some 15 to 60 u8 steps around the zero point.
  const double base = 0.005 / std::sqrt(static_cast<double>(k));
  SetRequant(n, p.m, p.per_channel, rng, base / 2, base * 2);
  if (residual) {
    n->SetAttr("r_zero_point", Attribute::Int(90));
    n->SetAttr("r_multiplier", Attribute::Ints({QuantizeMultiplier(0.7).multiplier}));
    n->SetAttr("r_shift", Attribute::Ints({QuantizeMultiplier(0.7).shift}));
  }
  c->node = n;
  c->Finish();
}

void MakeGemm(int64_t rows, int64_t k, int64_t cols, bool per_channel, bool bias, std::mt19937& rng, Case* c) {
  c->label = absl::StrCat("QGemm ", rows, "x", k, " * ", k, "x", cols, per_channel ? " per-channel" : " per-tensor",
                          bias ? "" : " no-bias");
  c->data.push_back(Random(DType::kU8, {rows, k}, rng, 0, 255));
  c->data.push_back(Random(DType::kI8, {cols, k}, rng, -127, 127));
  std::vector<Value*> ins = {c->graph->AddInput("a", c->data[0].type()), c->graph->AddConstant("w", c->data[1])};
  const int bias_range = static_cast<int>(3000 * std::sqrt(static_cast<double>(k)));
  if (bias) {
    c->data.push_back(Random(DType::kI32, {cols}, rng, -bias_range, bias_range));
    ins.push_back(c->graph->AddConstant("b", c->data[2]));
  }
  Node* n = c->graph->AddNode("QGemm", ins, 1, "qgemm");
  n->set_domain(kTesselDomain);
  n->SetAttr("x_zero_point", Attribute::Int(128));
  n->SetAttr("y_zero_point", Attribute::Int(100));
  const double base = 0.005 / std::sqrt(static_cast<double>(k));
  SetRequant(n, cols, per_channel, rng, base / 2, base * 2);
  c->node = n;
  c->Finish();
}

// Agreement of one kernel with the reference over every case it ran.
struct Stats {
  int cases = 0;
  int64_t outputs = 0, exact = 0, saturated = 0, exact_saturated = 0;
  int max_diff = 0;
};

const std::vector<const OpKernelEntry*>& Int8Entries() {
  static const auto* entries = [] {
    static auto* r = new OpKernelRegistry;  // kept reachable: the entries point into it
    RegisterXnnpackOpKernels(*r);
    auto* e = new std::vector<const OpKernelEntry*>;
    for (const OpKernelEntry& k : r->entries()) {
      if (k.dtypes == "u8") e->push_back(&k);
    }
    return e;
  }();
  return *entries;
}

// Creates `e` for the case with 1 and 2 threads, runs each twice (the second run reuses the bound
// operator) and compares with the reference.
void RunAndCompare(const OpKernelEntry& e, const Case& c, int tolerance, Stats* stats) {
  SCOPED_TRACE(e.name);
  const std::vector<const Tensor*> bound = c.bound();
  for (int threads : {1, 2}) {
    pthreadpool_t pool = threads > 1 ? pthreadpool_create(threads) : nullptr;
    Tensor got(DType::kU8, c.want.shape());
    absl::StatusOr<std::unique_ptr<OpKernel>> k =
        e.create(OpKernelArgs{*c.node, bound, absl::MakeSpan(&got, 1), pool, threads, false});
    ASSERT_TRUE(k.ok()) << k.status();
    for (int run = 0; run < 2; ++run) {
      std::fill(got.data<uint8_t>(), got.data<uint8_t>() + got.num_elements(), uint8_t{77});
      ASSERT_TRUE((*k)->Run().ok());
      int max_diff = 0;
      int64_t exact = 0, saturated = 0, exact_saturated = 0;
      for (int64_t i = 0; i < got.num_elements(); ++i) {
        const int want = c.want.data<uint8_t>()[i], diff = std::abs(got.data<uint8_t>()[i] - want);
        const bool at_clamp = want == c.node->GetInt("act_min", 0) || want == c.node->GetInt("act_max", 255);
        max_diff = std::max(max_diff, diff);
        exact += diff == 0;
        saturated += at_clamp;
        exact_saturated += at_clamp && diff == 0;
      }
      EXPECT_LE(max_diff, tolerance) << threads << " threads, run " << run;
      if (threads == 1 && run == 0) {
        ++stats->cases;
        stats->outputs += got.num_elements();
        stats->exact += exact;
        stats->saturated += saturated;
        stats->exact_saturated += exact_saturated;
      }
      stats->max_diff = std::max(stats->max_diff, max_diff);
    }
    k->reset();
    if (pool) pthreadpool_destroy(pool);
  }
}

// Runs every int8 entry for `op` that is legal on each case; `expect_legal(entry name, per-channel)`
// says which must be. Prints the agreement per kernel; every entry must have run at least one case.
void CheckEntries(const std::string& op, const std::vector<Case>& cases,
                  bool (*expect_legal)(const std::string& name, bool per_channel), int tolerance = kTolerance) {
  std::map<std::string, Stats> stats;
  for (const OpKernelEntry* e : Int8Entries()) {
    if (e->op != op) continue;
    Stats& s = stats[e->name];
    for (const Case& c : cases) {
      SCOPED_TRACE(c.label);
      const bool per_channel = c.node->GetInts("multiplier").size() > 1;
      const bool legal = e->legal(c.query());
      EXPECT_EQ(legal, expect_legal(e->name, per_channel)) << e->name;
      if (legal) RunAndCompare(*e, c, tolerance, &s);
    }
  }
  for (const auto& [name, s] : stats) {
    const int64_t inside = s.outputs - s.saturated;
    std::printf(
        "%-34s %2d cases, %6lld outputs: max |got - want| %d, exact %.4f; %lld inside the clamp range, "
        "exact %.4f\n",
        name.c_str(), s.cases, static_cast<long long>(s.outputs), s.max_diff,
        s.outputs ? static_cast<double>(s.exact) / s.outputs : 0.0, static_cast<long long>(inside),
        inside ? static_cast<double>(s.exact - s.exact_saturated) / inside : 0.0);
    EXPECT_GT(s.cases, 0) << name << " ran no case";
  }
}

// qu8 entries take per-tensor multipliers only; qc8 entries take both.
bool ExpectLegal(const std::string& name, bool per_channel) {
  return name.find("_qc8_") != std::string::npos || !per_channel;
}

std::vector<ConvCase> ConvCases() {
  const std::vector<int64_t> p0 = {0, 0, 0, 0}, p1 = {1, 1, 1, 1};
  return {
      // 1x1 (XNNPACK's GEMM path), below and past its 8/16-channel tiles.
      {1, 7, 5, 13, 17, 1, 1, 1, p0, 1, 1, true, false, true},
      {2, 4, 4, 64, 48, 1, 1, 1, p0, 1, 1, false, true, true},
      {1, 1, 1, 1, 1, 1, 1, 1, p0, 1, 1, false, false, true},
      {1, 3, 3, 7, 2, 1, 1, 2, p0, 1, 1, true, false, false},  // strided 1x1: indirect GEMM
      // 3x3 at strides 1 and 2, symmetric and asymmetric padding.
      {1, 9, 7, 3, 16, 3, 3, 1, p1, 1, 1, true, true, true},
      {1, 10, 9, 16, 33, 3, 3, 2, p1, 1, 1, false, false, true},
      {1, 8, 8, 5, 7, 3, 3, 2, {0, 1, 1, 0}, 1, 1, true, false, true},
      {2, 6, 11, 24, 40, 3, 3, 1, p1, 1, 1, true, true, false},
      {1, 5, 5, 64, 72, 3, 3, 1, {2, 0, 0, 2}, 1, 1, true, false, true},
      // 5x5 dilated, a 7x7 stride-2 stem on 3 channels.
      {1, 11, 11, 8, 9, 5, 5, 1, {2, 2, 2, 2}, 2, 1, true, false, true},
      {1, 15, 15, 3, 24, 7, 7, 2, {3, 3, 3, 3}, 1, 1, true, true, true},
      // Depthwise: 3x3 strides 1 and 2, 5x5, odd channel counts, a channel multiplier of 2.
      {1, 9, 8, 13, 13, 3, 3, 1, p1, 1, 0, true, true, true},
      {1, 10, 10, 32, 32, 3, 3, 2, p1, 1, 0, false, true, true},
      {2, 7, 6, 24, 24, 5, 5, 1, {2, 2, 2, 2}, 1, 0, true, false, true},
      {1, 12, 9, 17, 17, 3, 3, 2, {0, 0, 1, 1}, 1, 0, true, false, false},
      {1, 6, 6, 8, 16, 3, 3, 1, p1, 1, 0, true, false, true},
      {1, 5, 7, 40, 40, 3, 3, 1, p1, 2, 0, true, true, true},
      // Grouped.
      {1, 6, 7, 8, 6, 3, 3, 1, p1, 1, 2, true, false, true},
      {1, 5, 5, 9, 12, 1, 1, 1, p0, 1, 3, false, false, true},
      {2, 9, 9, 16, 32, 3, 3, 2, p1, 1, 4, true, true, true},
  };
}

TEST(XnnpackInt8Test, QConvWithinOneOfReference) {
  std::mt19937 rng(7);
  std::vector<Case> cases;
  for (ConvCase p : ConvCases()) {
    for (bool per_channel : {true, false}) {
      p.per_channel = per_channel;
      cases.emplace_back();
      MakeConv(p, rng, &cases.back());
    }
  }
  // Multipliers above 1: small accumulators (one channel, weights in [-3, 3], inputs near the zero point).
  cases.emplace_back();
  {
    Case& c = cases.back();
    MakeConv({1, 6, 5, 1, 4, 1, 1, 1, {0, 0, 0, 0}, 1, 1, true, false, false}, rng, &c);
    for (int64_t i = 0; i < c.data[0].num_elements(); ++i) c.data[0].data<uint8_t>()[i] = 131 - 20 + i % 41;
    for (int64_t i = 0; i < c.data[1].num_elements(); ++i) c.data[1].data<int8_t>()[i] = static_cast<int8_t>(i % 7 - 3);
    SetRequant(c.node, 4, true, rng, 1.0, 2.9);
    c.label += " multipliers > 1";
    c.inputs.clear();
    c.Finish();
  }
  CheckEntries("tessel.QConv", cases, ExpectLegal);
}

TEST(XnnpackInt8Test, QGemmWithinOneOfReference) {
  std::mt19937 rng(11);
  std::vector<Case> cases;
  for (bool per_channel : {false, true}) {
    for (const auto& [rows, k, cols] : std::vector<std::array<int64_t, 3>>{
             {1, 1, 1}, {1, 64, 10}, {3, 17, 33}, {8, 128, 100}, {13, 300, 7}, {16, 512, 257}, {5, 3, 16}}) {
      cases.emplace_back();
      MakeGemm(rows, k, cols, per_channel, /*bias=*/cols != 33, rng, &cases.back());
    }
  }
  CheckEntries("tessel.QGemm", cases, ExpectLegal);
}

// Nodes no XNNPACK int8 entry may take: the residual input, an empty clamp range, a multiplier XNNPACK
// cannot represent (below 2^-32 or from 256), i8 activations, channels-first layout.
TEST(XnnpackInt8Test, LegalityRefusesWhatXnnpackCannotRun) {
  std::mt19937 rng(5);
  const ConvCase plain = {1, 6, 6, 8, 8, 3, 3, 1, {1, 1, 1, 1}, 1, 1, false, false, true};
  std::vector<std::pair<std::string, Case>> refused;
  refused.emplace_back("residual", Case());
  MakeConv(plain, rng, &refused.back().second, /*residual=*/true);
  refused.emplace_back("act_min == act_max", Case());
  MakeConv(plain, rng, &refused.back().second);
  refused.back().second.node->SetAttr("act_min", Attribute::Int(200));
  refused.back().second.node->SetAttr("act_max", Attribute::Int(200));
  refused.emplace_back("multiplier 0", Case());
  MakeConv(plain, rng, &refused.back().second);
  refused.back().second.node->SetAttr("multiplier", Attribute::Ints({0}));
  refused.back().second.node->SetAttr("shift", Attribute::Ints({0}));
  refused.emplace_back("multiplier 256", Case());
  MakeConv(plain, rng, &refused.back().second);
  refused.back().second.node->SetAttr("multiplier", Attribute::Ints({1 << 30}));
  refused.back().second.node->SetAttr("shift", Attribute::Ints({9}));
  refused.emplace_back("i8 activations", Case());
  MakeConv(plain, rng, &refused.back().second);
  refused.back().second.inputs[0].type.dtype = DType::kI8;
  refused.emplace_back("nchw", Case());
  MakeConv(plain, rng, &refused.back().second);
  refused.back().second.node->SetAttr("layout", Attribute::String("nchw"));
  int checked = 0;
  for (const auto& [why, c] : refused) {
    for (const OpKernelEntry* e : Int8Entries()) {
      if (e->op != "tessel.QConv") continue;
      EXPECT_FALSE(e->legal(c.query())) << e->name << " accepted a QConv with " << why;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 2 * static_cast<int>(refused.size()));
  // The same node without the defect is accepted (the refusals above are for the stated reason).
  Case ok;
  MakeConv(plain, rng, &ok);
  for (const OpKernelEntry* e : Int8Entries()) {
    if (e->op == "tessel.QConv") {
      EXPECT_TRUE(e->legal(ok.query())) << e->name;
    }
  }
}

// With Tessel's int8 kernels registered beside these, selection picks an XNNPACK entry only where no
// Tessel int8 kernel serves the node on this CPU (grouped convolutions everywhere; depthwise without VNNI).
// On aarch64 the Arm lab's cost table ranks the two per core model instead (lab_costs_test checks that
// choice), so there only the nodes Tessel does not serve are checked.
TEST(XnnpackInt8Test, SelectionPrefersTesselInt8Kernels) {
  OpKernelRegistry r;
  RegisterInt8OpKernels(r);
  RegisterXnnpackOpKernels(r);
  std::mt19937 rng(9);
  int xnnpack_selected = 0;
  for (const ConvCase& p : ConvCases()) {
    Case c;
    MakeConv(p, rng, &c);
    const OpQuery q = c.query();
    bool tessel_serves = false;
    for (const OpKernelEntry& e : r.entries()) {
      tessel_serves |= e.op == "tessel.QConv" && e.backend == "int8" && CpuSupports(e.isa) && e.legal(q);
    }
    const OpKernelEntry* chosen = r.Select(q, OpDTypes(q), "");
    ASSERT_NE(chosen, nullptr) << c.label;
#if defined(__aarch64__)
    if (!tessel_serves) EXPECT_EQ(chosen->backend, "xnnpack") << c.label << ": chose " << chosen->name;
#else
    EXPECT_EQ(chosen->backend, tessel_serves ? "int8" : "xnnpack") << c.label << ": chose " << chosen->name;
#endif
    if (p.groups > 1) {
      EXPECT_EQ(chosen->backend, "xnnpack") << c.label;
    }
    xnnpack_selected += chosen->backend == "xnnpack";
  }
  std::printf("XNNPACK selected for %d of %zu QConv cases on this CPU\n", xnnpack_selected, ConvCases().size());
}

// ---- QMaxPool, QAvgPool, QGlobalAvgPool, QAdd ------------------------------------------------------------

struct PoolWindow {
  int64_t k, stride, dilation;
  std::vector<int64_t> pads;  // top, left, bottom, right
};

// A u8 NHWC pooling node; false (and no case) when the window leaves no output.
bool MakePool(const std::string& op, int64_t n, int64_t h, int64_t w, int64_t c, const PoolWindow& p,
              int64_t zero_point, std::mt19937& rng, Case* out) {
  const int64_t span = p.dilation * (p.k - 1) + 1;
  if (op != "QGlobalAvgPool" && (h + p.pads[0] + p.pads[2] < span || w + p.pads[1] + p.pads[3] < span)) return false;
  const bool padded = p.pads[0] || p.pads[1] || p.pads[2] || p.pads[3];
  out->label = absl::StrCat(op, " n", n, " ", h, "x", w, "x", c, " zp ", zero_point);
  if (op != "QGlobalAvgPool") {
    absl::StrAppend(&out->label, " k", p.k, " s", p.stride, " d", p.dilation, " pads ", p.pads[0], ",", p.pads[1], ",",
                    p.pads[2], ",", p.pads[3]);
  }
  out->data.push_back(Random(DType::kU8, {n, h, w, c}, rng, 0, 255));
  Node* node = out->graph->AddNode(op, {out->graph->AddInput("x", out->data[0].type())}, 1, "pool");
  node->set_domain(kTesselDomain);
  node->SetAttr("layout", Attribute::String("nhwc"));
  if (op != "QMaxPool") node->SetAttr("x_zero_point", Attribute::Int(zero_point));
  if (op != "QGlobalAvgPool") {
    node->SetAttr("kernel_shape", Attribute::Ints({p.k, p.k}));
    node->SetAttr("strides", Attribute::Ints({p.stride, p.stride}));
    node->SetAttr("dilations", Attribute::Ints({p.dilation, p.dilation}));
    node->SetAttr("pads", Attribute::Ints({p.pads[0], p.pads[1], p.pads[2], p.pads[3]}));
  }
  // XNNPACK's average counts the padding (see the legality check).
  if (op == "QAvgPool" && padded) node->SetAttr("count_include_pad", Attribute::Int(1));
  out->node = node;
  out->Finish();
  return true;
}

std::vector<Case> PoolCases(const std::string& op, std::mt19937& rng) {
  const std::vector<int64_t> p0 = {0, 0, 0, 0}, p1 = {1, 1, 1, 1};
  std::vector<PoolWindow> windows = {{2, 1, 1, p0}, {2, 2, 1, p0}, {3, 1, 1, p1}, {3, 2, 1, p1}, {3, 2, 1, {0, 0, 1, 1}}};
  if (op == "QMaxPool") windows.push_back({3, 1, 2, {2, 1, 2, 1}});  // dilated: XNNPACK has it for max only
  if (op == "QGlobalAvgPool") windows = {{1, 1, 1, p0}};
  const std::vector<std::array<int64_t, 2>> sizes = {{1, 1}, {3, 5}, {7, 7}, {14, 14}};
  const std::vector<int64_t> zero_points = {0, 128, 255, 37, 200};
  std::vector<Case> cases;
  int i = 0;
  for (const auto& [h, w] : sizes) {
    for (int64_t c : {1, 3, 16, 17, 64}) {
      for (const PoolWindow& win : windows) {
        cases.emplace_back();
        if (!MakePool(op, 1 + i % 2, h, w, c, win, zero_points[i % zero_points.size()], rng, &cases.back())) {
          cases.pop_back();
        }
        ++i;
      }
    }
  }
  return cases;
}

bool AlwaysLegal(const std::string&, bool) { return true; }

TEST(XnnpackInt8Test, QMaxPoolMatchesReferenceExactly) {
  std::mt19937 rng(21);
  CheckEntries("tessel.QMaxPool", PoolCases("QMaxPool", rng), AlwaysLegal, /*tolerance=*/0);
}

TEST(XnnpackInt8Test, QAvgPoolWithinOneOfReference) {
  std::mt19937 rng(22);
  CheckEntries("tessel.QAvgPool", PoolCases("QAvgPool", rng), AlwaysLegal);
}

TEST(XnnpackInt8Test, QGlobalAvgPoolWithinOneOfReference) {
  std::mt19937 rng(23);
  CheckEntries("tessel.QGlobalAvgPool", PoolCases("QGlobalAvgPool", rng), AlwaysLegal);
}

struct AddCase {
  std::vector<int64_t> shape;
  double a_scale, b_scale;
  int64_t a_zero_point, b_zero_point, y_zero_point, lo, hi;
};

void MakeAdd(const AddCase& p, std::mt19937& rng, Case* c) {
  c->label = absl::StrCat("QAdd [", absl::StrJoin(p.shape, ","), "] scales ", p.a_scale, ", ", p.b_scale, " zps ",
                          p.a_zero_point, ",", p.b_zero_point, ",", p.y_zero_point, " clamp ", p.lo, "..", p.hi);
  c->data.push_back(Random(DType::kU8, p.shape, rng, 0, 255));
  c->data.push_back(Random(DType::kU8, p.shape, rng, 0, 255));
  Node* n = c->graph->AddNode(
      "QAdd", {c->graph->AddInput("a", c->data[0].type()), c->graph->AddInput("b", c->data[1].type())}, 1, "qadd");
  n->set_domain(kTesselDomain);
  const QuantizedMultiplier a = QuantizeMultiplier(p.a_scale), b = QuantizeMultiplier(p.b_scale);
  n->SetAttr("a_multiplier", Attribute::Ints({a.multiplier}));
  n->SetAttr("a_shift", Attribute::Ints({a.shift}));
  n->SetAttr("b_multiplier", Attribute::Ints({b.multiplier}));
  n->SetAttr("b_shift", Attribute::Ints({b.shift}));
  n->SetAttr("a_zero_point", Attribute::Int(p.a_zero_point));
  n->SetAttr("b_zero_point", Attribute::Int(p.b_zero_point));
  n->SetAttr("y_zero_point", Attribute::Int(p.y_zero_point));
  n->SetAttr("act_min", Attribute::Int(p.lo));
  n->SetAttr("act_max", Attribute::Int(p.hi));
  c->node = n;
  c->Finish();
  c->inputs[1].constant = false;
}

TEST(XnnpackInt8Test, QAddWithinOneOfReference) {
  std::mt19937 rng(24);
  std::uniform_real_distribution<double> log_scale(std::log(0.25), std::log(2.0));
  std::uniform_int_distribution<int64_t> zp(0, 255);
  const std::vector<std::vector<int64_t>> shapes = {{1, 1, 1, 1}, {1, 3, 5, 17}, {2, 7, 7, 64}, {1, 14, 14, 16},
                                                    {2, 3, 5, 3},  {1, 7, 7, 1},  {5},           {2, 3, 17}};
  std::vector<Case> cases;
  for (size_t i = 0; i < shapes.size(); ++i) {
    // No clamp, a folded ReLU (act_min = y_zero_point) and a ReLU6-like range.
    const int64_t y_zp = i % 3 == 0 ? 0 : zp(rng);
    const int64_t lo = i % 3 == 1 ? y_zp : 0, hi = i % 3 == 2 ? std::min<int64_t>(255, y_zp + 90) : 255;
    cases.emplace_back();
    MakeAdd({shapes[i], std::exp(log_scale(rng)), std::exp(log_scale(rng)), zp(rng), zp(rng), y_zp, lo, hi}, rng,
            &cases.back());
  }
  // The ends of XNNPACK's scale-ratio range [2^-10, 2^8), and equal scales with equal zero points.
  cases.emplace_back();
  MakeAdd({{2, 7, 7, 16}, 0x1.1p-10, 3.0, 128, 120, 60, 0, 255}, rng, &cases.back());
  cases.emplace_back();
  MakeAdd({{1, 5, 5, 17}, 0.01, 0x1.fp+7, 131, 129, 128, 0, 255}, rng, &cases.back());
  cases.emplace_back();
  MakeAdd({{1, 14, 14, 64}, 0.5, 0.5, 128, 128, 128, 0, 255}, rng, &cases.back());
  CheckEntries("tessel.QAdd", cases, AlwaysLegal);
}

// Configurations each new entry must refuse, each beside an accepted twin: legality is false, and
// creating the kernel anyway is an InvalidArgument error naming the node, not a crash.
TEST(XnnpackInt8Test, PoolAndAddLegalityRefusesWhatXnnpackComputesDifferently) {
  std::mt19937 rng(25);
  struct Refusal {
    std::string op, why;
    Case refused, accepted;
  };
  std::vector<Refusal> all;
  auto pool = [&](const std::string& op, const std::string& why, const PoolWindow& bad, const PoolWindow& good,
                  int64_t h) {
    all.push_back({"tessel." + op, why, Case(), Case()});
    ASSERT_TRUE(MakePool(op, 1, h, h, 8, bad, 100, rng, &all.back().refused));
    ASSERT_TRUE(MakePool(op, 1, h, h, 8, good, 100, rng, &all.back().accepted));
  };
  // Stride 2 over 2 rows with 2 rows of padding after them: the second window sees padding only.
  pool("QMaxPool", "a window wholly in the padding", {2, 2, 1, {0, 0, 2, 2}}, {2, 2, 1, {0, 0, 1, 1}}, 2);
  pool("QMaxPool", "a 1x1 window", {1, 1, 1, {0, 0, 0, 0}}, {2, 1, 1, {0, 0, 0, 0}}, 5);
  pool("QAvgPool", "dilation", {2, 1, 2, {0, 0, 0, 0}}, {2, 1, 1, {0, 0, 0, 0}}, 6);
  pool("QAvgPool", "a 1x1 window", {1, 1, 1, {0, 0, 0, 0}}, {2, 1, 1, {0, 0, 0, 0}}, 5);
  pool("QAvgPool", "padding with count_include_pad=0", {3, 1, 1, {1, 1, 1, 1}}, {3, 1, 1, {1, 1, 1, 1}}, 6);
  all.back().refused.node->SetAttr("count_include_pad", Attribute::Int(0));
  all.back().refused.Finish();
  pool("QGlobalAvgPool", "nchw layout", {1, 1, 1, {0, 0, 0, 0}}, {1, 1, 1, {0, 0, 0, 0}}, 4);
  all.back().refused.node->SetAttr("layout", Attribute::String("nchw"));
  auto add = [&](const std::string& why, const AddCase& bad) {
    all.push_back({"tessel.QAdd", why, Case(), Case()});
    MakeAdd(bad, rng, &all.back().refused);
    MakeAdd({{1, 4, 4, 8}, 0.5, 0.7, 128, 128, 128, 0, 255}, rng, &all.back().accepted);
  };
  add("a scale ratio below 2^-10", {{1, 4, 4, 8}, 0x1.0p-11, 0.7, 128, 128, 128, 0, 255});
  add("a scale ratio of 256", {{1, 4, 4, 8}, 0.5, 256.0, 128, 128, 128, 0, 255});
  add("act_min == act_max", {{1, 4, 4, 8}, 0.5, 0.7, 128, 128, 128, 90, 90});
  add("i8 inputs", {{1, 4, 4, 8}, 0.5, 0.7, 128, 128, 128, 0, 255});
  all.back().refused.inputs[0].type.dtype = all.back().refused.inputs[1].type.dtype = DType::kI8;
  for (Refusal& r : all) {
    const OpKernelEntry* entry = nullptr;
    for (const OpKernelEntry* e : Int8Entries()) {
      if (e->op == r.op) entry = e;
    }
    ASSERT_NE(entry, nullptr) << r.op;
    EXPECT_TRUE(entry->legal(r.accepted.query())) << entry->name << " refused " << r.accepted.label;
    EXPECT_FALSE(entry->legal(r.refused.query())) << entry->name << " accepted " << r.refused.label << " with " << r.why;
    if (r.refused.inputs[0].type.dtype != DType::kU8) continue;  // the bound tensors are u8: nothing to create
    const std::vector<const Tensor*> bound = r.refused.bound();
    Tensor got(DType::kU8, r.refused.want.shape());
    absl::StatusOr<std::unique_ptr<OpKernel>> k =
        entry->create(OpKernelArgs{*r.refused.node, bound, absl::MakeSpan(&got, 1), nullptr, 1, false});
    EXPECT_EQ(k.status().code(), absl::StatusCode::kInvalidArgument) << entry->name << " with " << r.why;
  }
}

// Tessel's u8 max pooling stays the default where both serve the node; the other three ops have no Tessel
// int8 kernel, so XNNPACK's entries take them.
TEST(XnnpackInt8Test, SelectionKeepsTesselMaxPool) {
  OpKernelRegistry r;
  RegisterInt8OpKernels(r);
  RegisterXnnpackOpKernels(r);
  std::mt19937 rng(26);
  for (const std::string op : {"QMaxPool", "QAvgPool", "QGlobalAvgPool"}) {
    for (const Case& c : PoolCases(op, rng)) {
      const OpQuery q = c.query();
      const OpKernelEntry* chosen = r.Select(q, OpDTypes(q), "");
      ASSERT_NE(chosen, nullptr) << c.label;
      EXPECT_EQ(chosen->backend, op == "QMaxPool" ? "int8" : "xnnpack") << c.label << ": chose " << chosen->name;
    }
  }
}

}  // namespace
}  // namespace tessel
