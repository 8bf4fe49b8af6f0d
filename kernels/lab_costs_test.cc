// The Arm lab's cost table: consistent as generated, and used by aarch64 selection as documented.
#include "kernels/registry/lab_costs.h"

#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "graph/graph.h"
#include "kernels/gemm/gemm.h"
#include "kernels/op_kernels.h"
#include "kernels/registry/registry.h"

namespace tessel {
namespace {

constexpr LabCost kRows[] = {
#include "kernels/registry/lab_costs_aarch64.inc"
};

// Every group has its anchor at ratio 1 for every core, ratios are positive, and no row repeats.
TEST(LabCostsTest, TableIsConsistent) {
  std::set<std::string> seen;
  std::map<std::string, double> anchors;
  for (const LabCost& r : kRows) {
    const std::string key = std::string(r.core) + "|" + r.group + "|" + r.kernel;
    EXPECT_TRUE(seen.insert(key).second) << "repeated row " << key;
    EXPECT_GT(r.ratio, 0.0) << key;
    EXPECT_GE(r.cases, 1) << key;
    if (std::string(r.anchor) == r.kernel) anchors[std::string(r.core) + "|" + r.group] = r.ratio;
  }
  for (const LabCost& r : kRows) {
    auto it = anchors.find(std::string(r.core) + "|" + r.group);
    ASSERT_NE(it, anchors.end()) << r.core << " " << r.group << " lacks its anchor " << r.anchor;
    EXPECT_DOUBLE_EQ(it->second, 1.0) << r.core << " " << r.group;
  }
}

TEST(LabCostsTest, GroupsOfMicrokernels) {
  EXPECT_EQ(LabCostGroup("gemm", "f32"), "gemm");
  EXPECT_EQ(LabCostGroup("gemm_prepacked", "f32"), "gemm");
  EXPECT_EQ(LabCostGroup("gemv", "q4_0xf32"), "gemv/q4_0");
  EXPECT_EQ(LabCostGroup("gemv", "q4_0xq8"), "");
  EXPECT_EQ(LabCostGroup("softmax", "f32"), "vector/softmax");
  EXPECT_EQ(LabCostGroup("conv", "f32"), "");
}

// One operator node with its operand descriptions, the query selection sees.
struct OpNode {
  Graph graph;
  Node* node = nullptr;
  std::vector<OperandInfo> inputs, outputs;
  OpQuery query() const { return OpQuery{*node, inputs, outputs}; }
};

// `op` over an activation of `x` (input 0) and constants of the other shapes, all of `dtype` but the
// int8 bias (i32), with output `y`.
std::unique_ptr<OpNode> MakeNode(const char* op, DType dtype, const std::vector<int64_t>& x,
                                 const std::vector<std::vector<int64_t>>& constants, const std::vector<int64_t>& y) {
  auto n = std::make_unique<OpNode>();
  std::vector<Value*> values = {n->graph.AddInput("x", TensorType::Static(dtype, x))};
  n->inputs.push_back({true, false, TensorType::Static(dtype, x)});
  for (size_t i = 0; i < constants.size(); ++i) {
    const bool bias = dtype != DType::kF32 && i == 1;
    Tensor t(bias ? DType::kI32 : dtype == DType::kU8 ? DType::kI8 : dtype, constants[i]);
    n->inputs.push_back({true, true, t.type()});
    values.push_back(n->graph.AddConstant("c" + std::to_string(i), std::move(t)));
  }
  n->node = n->graph.AddNode(op, values, 1, "n");
  n->node->set_domain("tessel");
  n->outputs.push_back({true, false, TensorType::Static(dtype, y)});
  return n;
}

// A MobileNetV2 block's tail (depthwise 3x3 ReLU6, linear 1x1 projection), an int8 ResNet-18 3x3 layer,
// an int8 MobileNetV2 1x1 expansion, an int8 classifier and two f32 convolutions (a stem and a dense
// layer), with the group each belongs to.
std::vector<std::pair<std::string, std::unique_ptr<OpNode>>> NewGroupNodes() {
  std::vector<std::pair<std::string, std::unique_ptr<OpNode>>> nodes;
  auto dwpw = MakeNode("DwPwConv", DType::kF32, {1, 28, 28, 144}, {{144, 3, 3, 1}, {144}, {24, 1, 1, 144}, {24}},
                       {1, 28, 28, 24});
  dwpw->node->SetAttr("layout", Attribute::String("nhwc"));
  dwpw->node->SetAttr("group", Attribute::Int(144));
  dwpw->node->SetAttr("strides", Attribute::Ints({1, 1}));
  dwpw->node->SetAttr("pads", Attribute::Ints({1, 1, 1, 1}));
  dwpw->node->SetAttr("dw_activation", Attribute::String("clip"));
  dwpw->node->SetAttr("dw_clip_min", Attribute::Float(0.0f));
  dwpw->node->SetAttr("dw_clip_max", Attribute::Float(6.0f));
  nodes.emplace_back("dwpw", std::move(dwpw));
  auto int8 = [](std::unique_ptr<OpNode> n) {
    // One multiplier for every channel (2^-11), so that XNNPACK's per-tensor operators take the node too.
    n->node->SetAttr("multiplier", Attribute::Ints({int64_t{1} << 30}));
    n->node->SetAttr("shift", Attribute::Ints({-10}));
    n->node->SetAttr("x_zero_point", Attribute::Int(128));
    n->node->SetAttr("y_zero_point", Attribute::Int(100));
    n->node->SetAttr("act_min", Attribute::Int(100));
    n->node->SetAttr("act_max", Attribute::Int(255));
    return n;
  };
  auto conv = [&int8](int64_t h, int64_t c, int64_t m, int64_t k, int64_t group = 1) {
    auto n = int8(MakeNode("QConv", DType::kU8, {1, h, h, c}, {{m, k, k, c / group}, {m}}, {1, h, h, m}));
    n->node->SetAttr("layout", Attribute::String("nhwc"));
    n->node->SetAttr("group", Attribute::Int(group));
    n->node->SetAttr("kernel_shape", Attribute::Ints({k, k}));
    n->node->SetAttr("strides", Attribute::Ints({1, 1}));
    n->node->SetAttr("pads", Attribute::Ints({k / 2, k / 2, k / 2, k / 2}));
    return n;
  };
  nodes.emplace_back("qconv/dense", conv(28, 128, 128, 3));
  nodes.emplace_back("qconv/pointwise", conv(28, 32, 192, 1));
  nodes.emplace_back("qconv/depthwise", conv(28, 96, 96, 3, 96));
  nodes.emplace_back("qgemm", int8(MakeNode("QGemm", DType::kU8, {1, 512}, {{1000, 512}, {1000}}, {1, 1000})));
  // f32 3x3 convolutions: MobileNetV2's stem over the RGB image, and a ResNet-18 layer.
  auto fconv = [](int64_t h, int64_t c, int64_t m, int64_t s) {
    auto n = MakeNode("FusedConv", DType::kF32, {1, h, h, c}, {{m, 3, 3, c}, {m}}, {1, h / s, h / s, m});
    n->node->SetAttr("layout", Attribute::String("nhwc"));
    n->node->SetAttr("group", Attribute::Int(1));
    n->node->SetAttr("kernel_shape", Attribute::Ints({3, 3}));
    n->node->SetAttr("strides", Attribute::Ints({s, s}));
    n->node->SetAttr("pads", Attribute::Ints({1, 1, 1, 1}));
    return n;
  };
  nodes.emplace_back("conv/stem", fconv(224, 3, 32, 2));
  nodes.emplace_back("conv/dense", fconv(56, 64, 64, 1));
  return nodes;
}

TEST(LabCostsTest, GroupsOfOperatorNodes) {
  for (const auto& [group, n] : NewGroupNodes()) {
    EXPECT_EQ(LabOpGroup(n->query(), OpDTypes(n->query())), group);
  }
  const auto nodes = NewGroupNodes();
  EXPECT_EQ(LabOpGroup(nodes[1].second->query(), "f32"), "");  // a QConv's group is for u8 kernels only
}

// The fused depthwise + pointwise op and the int8 convolutions and classifiers are priced on every core
// model: each group has its anchor, an XNNPACK kernel and a Tessel kernel of the op, all registered, and
// a seconds scale.
TEST(LabCostsTest, FusedAndInt8GroupsAreCovered) {
  const std::map<std::string, std::string> op_of = {
      {"dwpw", "tessel.DwPwConv"}, {"qconv/dense", "tessel.QConv"}, {"qconv/pointwise", "tessel.QConv"},
      {"qconv/depthwise", "tessel.QConv"}, {"qgemm", "tessel.QGemm"}};
  for (const char* core : {"cortex-a55", "cortex-a76", "neoverse-v1"}) {
    for (const auto& [group, op] : op_of) {
      bool xnnpack = false, tessel = false, anchor = false;
      bool scale = false;
      for (const LabCost& r : kRows) {
        if (core != std::string(r.core) || group != r.group) continue;
        if (std::string(r.kernel) == kLabSecondsScale) {
          scale = r.ratio > 0;
          continue;
        }
        const OpKernelEntry* e = OpKernels().FindByName(r.kernel);
        ASSERT_NE(e, nullptr) << r.kernel;
        EXPECT_EQ(e->op, op) << r.kernel;
        xnnpack = xnnpack || e->backend == "xnnpack";
        tessel = tessel || e->backend != "xnnpack";
        anchor = anchor || std::string(r.kernel) == r.anchor;
      }
      EXPECT_TRUE(xnnpack && tessel && anchor && scale) << core << " " << group << ": xnnpack " << xnnpack
                                                        << ", tessel " << tessel << ", anchor " << anchor
                                                        << ", seconds scale " << scale;
    }
  }
}

// The column follows TESSEL_COST_CORE (lab_costs_core_test sets cortex-a55).
TEST(LabCostsTest, CoreFromEnvironment) {
  const char* env = std::getenv("TESSEL_COST_CORE");
  if (env == nullptr) GTEST_SKIP() << "TESSEL_COST_CORE not set";
  EXPECT_EQ(LabCostCore(), env);
  const LabCost* row = FindLabCost("conv/dense", "xnn_f32_conv2d_nhwc__xnnpack");
  ASSERT_NE(row, nullptr);
  EXPECT_EQ(std::string(row->core), env);
}

#if defined(__aarch64__)
// Every kernel the table names exists in this build, and Select ranks listed kernels by anchor x ratio.
TEST(LabCostsTest, Aarch64SelectionUsesTheTable) {
  for (const LabCost& r : kRows) {
    const std::string group = r.group;
    if (group.rfind("conv/", 0) == 0 && std::string(r.kernel) != kLabSecondsScale) {
      EXPECT_NE(OpKernels().FindByName(r.kernel), nullptr) << r.kernel;
    }
  }
  const ProblemShape shape{128, 128, 128, 0};
  for (const GemmKernel& e : GemmKernels().entries()) {
    if (e.op != "gemm") continue;
    const LabCost* row = FindLabCost("gemm", e.name);
    if (row == nullptr) continue;
    double anchor = 0;
    for (const GemmKernel& a : GemmKernels().entries()) {
      if (a.name == row->anchor && a.op == "gemm") anchor = a.cost(shape);
    }
    EXPECT_DOUBLE_EQ(GemmKernels().Cost(e, shape), anchor * row->ratio) << e.name;
  }
}

// For the fused depthwise + pointwise op and the int8 QConv / QGemm, every legal kernel the table lists
// costs anchor x ratio x the group's seconds scale, and Select takes the legal kernel of the lowest ratio. (Under qemu the CPU may
// have kernels a forced column's core lacks, e.g. i8mm and SVE with TESSEL_COST_CORE=cortex-a55: those
// keep their own estimates, so the choice is checked only when the column lists every legal kernel.)
TEST(LabCostsTest, Aarch64FusedAndInt8ChoiceFollowsTheTable) {
  for (const auto& [group, n] : NewGroupNodes()) {
    const OpQuery q = n->query();
    const std::string dtypes = OpDTypes(q);
    const OpKernelEntry* best = nullptr;
    double best_ratio = 0;
    int legal = 0, listed = 0;
    for (const OpKernelEntry& e : OpKernels().entries()) {
      if (e.op != q.op() || e.dtypes != dtypes || !CpuSupports(e.isa) || (e.legal && !e.legal(q))) continue;
      ++legal;
      const LabCost* row = FindLabCost(group, e.name);
      if (row == nullptr) continue;
      ++listed;
      const OpKernelEntry* anchor = OpKernels().FindByName(row->anchor);
      ASSERT_NE(anchor, nullptr) << row->anchor;
      EXPECT_DOUBLE_EQ(OpKernels().Cost(e, q), anchor->cost(q) * row->ratio * LabSecondsScale(group)) << e.name;
      if (best == nullptr || row->ratio < best_ratio) {
        best = &e;
        best_ratio = row->ratio;
      }
    }
    EXPECT_GE(listed, 2) << group << ": nothing to choose between on " << LabCostCore();
    ASSERT_NE(best, nullptr) << group;
    if (listed < legal) continue;
    const OpKernelEntry* chosen = OpKernels().Select(q, dtypes, "");
    ASSERT_NE(chosen, nullptr) << group;
    EXPECT_EQ(chosen->name, best->name) << group << " on " << LabCostCore();
  }
}
#endif

}  // namespace
}  // namespace tessel
