// Upper bounds of data-dependent shapes, against bounds worked out by hand.
#include "codegen/shape_bounds.h"

#include <set>
#include <string>

#include "gtest/gtest.h"
#include "graph/op_registry.h"
#include "graph/text.h"

namespace tessel {
namespace {

// The bound of every value of `text` (after shape inference) by name, as text.
std::map<std::string, std::string> Bounds(const char* text) {
  auto graph = ParseGraph(text);
  EXPECT_TRUE(graph.ok()) << graph.status();
  EXPECT_TRUE(InferShapes(**graph).ok());
  auto order = (*graph)->TopologicalOrder();
  EXPECT_TRUE(order.ok());
  auto bounds = BoundDataDependentShapes(**graph, *order);
  EXPECT_TRUE(bounds.ok()) << bounds.status();
  std::map<std::string, std::string> out;
  if (bounds.ok()) {
    for (const auto& [v, type] : bounds->bounds) out[v->name()] = type.ToString();
    for (const Value* v : bounds->unbounded) out[v->name()] = "unbounded";
  }
  return out;
}

TEST(ShapeBoundsTest, StaticGraphHasNoBounds) {
  EXPECT_TRUE(Bounds(R"(
graph @main {
  input %x : f32[2,3]
  %y = Relu "r" (%x) : f32[2,3]
  output %y
}
)").empty());
}

// NonZero keeps at most every element; Gather by its indices at most that many; TopK's k is the smaller of
// 4 and the count, so at most 4, however many elements pass.
TEST(ShapeBoundsTest, NonZeroGatherTopK) {
  const auto b = Bounds(R"(
graph @main {
  input %x : f32[2,6]
  const %zero : f32[] = [0.0]
  const %flat : i64[1] = [-1]
  const %four : i64[1] = [4]
  const %axis0 : i64[] = [0]
  %mask = Greater "gt" (%x, %zero) : bool[2,6]
  %nz = NonZero "nz" (%mask) : i64[2,?a]
  %xf = Reshape "xf" (%x, %flat) : f32[12]
  %rows = Gather "rows" (%nz, %axis0) {axis = 0} : i64[?a]
  %sel = Gather "sel" (%xf, %rows) {axis = 0} : f32[?a]
  %n = Shape "n" (%sel) : i64[1]
  %k = Min "k" (%n, %four) : i64[1]
  %top, %idx = TopK "top" (%sel, %k) : f32[?b], i64[?b]
  output %top, %idx
}
)");
  EXPECT_EQ(b.at("nz"), "i64[2,12]");
  EXPECT_EQ(b.at("rows"), "i64[12]");
  EXPECT_EQ(b.at("sel"), "f32[12]");
  EXPECT_EQ(b.at("top"), "f32[4]");
  EXPECT_EQ(b.at("idx"), "i64[4]");
  EXPECT_EQ(b.count("k"), 0u);  // static type; its largest value (4) is tracked, not reported
}

// NonMaxSuppression selects at most max_output_boxes_per_class boxes of each class of each batch entry.
TEST(ShapeBoundsTest, NonMaxSuppression) {
  const auto b = Bounds(R"(
graph @main {
  input %boxes : f32[1,50,4]
  input %scores : f32[1,3,50]
  const %max : i64[1] = [10]
  %sel = NonMaxSuppression "nms" (%boxes, %scores, %max) : i64[?n,3]
  output %sel
}
)");
  EXPECT_EQ(b.at("sel"), "i64[30,3]");
}

// An extent that hangs on a float value (a count computed from data) has no bound: that value and what it
// feeds are left to the runtime, and the reason names the node.
TEST(ShapeBoundsTest, ExtentFromDataHasNoBound) {
  auto graph = ParseGraph(R"(
graph @main {
  input %x : f32[4]
  %xi = Cast "c" (%x) {to = 7} : i64[4]
  %y = Reshape "r" (%x, %xi) : f32[?a,?b,?c,?d]
  %z = Relu "relu" (%y) : f32[?a,?b,?c,?d]
  %n = Shape "n" (%z) : i64[4]
  output %z, %n
}
)");
  ASSERT_TRUE(graph.ok()) << graph.status();
  ASSERT_TRUE(InferShapes(**graph).ok());
  auto order = (*graph)->TopologicalOrder();
  ASSERT_TRUE(order.ok());
  auto bounds = BoundDataDependentShapes(**graph, *order);
  ASSERT_TRUE(bounds.ok()) << bounds.status();
  EXPECT_TRUE(bounds->bounds.empty());
  std::set<std::string> unbounded;
  for (const Value* v : bounds->unbounded) unbounded.insert(v->name());
  EXPECT_EQ(unbounded, (std::set<std::string>{"y", "z"}));  // n is i64[4] whatever the run
  EXPECT_NE(bounds->first_unbounded.find("node Reshape 'r'"), std::string::npos) << bounds->first_unbounded;
}

}  // namespace
}  // namespace tessel
