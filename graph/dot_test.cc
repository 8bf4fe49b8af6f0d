// Tests of the Graphviz export: the expected node and edge statements, written by hand, and balanced
// braces and quotes.
#include "graph/dot.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "graph/graph.h"
#include "gtest/gtest.h"

namespace tessel {
namespace {

std::unique_ptr<Graph> SmallGraph() {
  auto g = std::make_unique<Graph>();
  g->set_name("net");
  Value* x = g->AddInput("x", TensorType(DType::kF32, {Dim::Symbol("N"), 3}));
  Value* w = g->AddConstant("w", Tensor::FromVector<float>({3, 2}, {1, 2, 3, 4, 5, 6}));
  Node* mm = g->AddNode("MatMul", {x, w}, 1, "mm", {"y"});
  mm->output(0)->set_type(TensorType(DType::kF32, {Dim::Symbol("N"), 2}));
  Node* act = g->AddNode("FusedGelu", {mm->output(0), nullptr}, 1, "act \"1\"", {"z"});
  act->set_domain("tessel");
  act->output(0)->set_type(TensorType(DType::kF32, {Dim::Symbol("N"), 2}, Layout::kNHWC));
  g->AddOutput(act->output(0));
  g->AddOutput(mm->output(0));
  return g;
}

// Braces and brackets balance outside quoted strings, and every quote closes.
bool WellFormed(const std::string& dot) {
  int braces = 0;
  int brackets = 0;
  bool in_string = false;
  for (size_t i = 0; i < dot.size(); ++i) {
    const char c = dot[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      } else if (c == '\n') {
        return false;
      }
      continue;
    }
    if (c == '"') in_string = true;
    if (c == '{') ++braces;
    if (c == '}') --braces;
    if (c == '[') ++brackets;
    if (c == ']') --brackets;
    if (braces < 0 || brackets < 0) return false;
  }
  return !in_string && braces == 0 && brackets == 0;
}

TEST(DotTest, NodesAndEdges) {
  const std::string dot = ToDot(*SmallGraph());
  const std::vector<std::string> lines = absl::StrSplit(dot, '\n');
  const std::vector<std::string> expected = {
      "digraph \"net\" {",
      "  in0 [shape=invhouse, style=filled, fillcolor=\"#cfe2ff\", label=\"x\\nf32[N,3]\"];",
      "  c0 [shape=ellipse, style=filled, fillcolor=\"#eeeeee\", fontsize=8, label=\"w\\nf32[3,2]\"];",
      "  n0 [shape=box, label=\"MatMul\\nmm\"];",
      "  n1 [shape=box, style=filled, fillcolor=\"#ffe5b4\", label=\"tessel.FusedGelu\\nact \\\"1\\\"\"];",
      "  out0 [shape=house, style=filled, fillcolor=\"#d1f2d1\", label=\"z\\nf32[N,2]@nhwc\"];",
      "  out1 [shape=house, style=filled, fillcolor=\"#d1f2d1\", label=\"y\\nf32[N,2]\"];",
      "  in0 -> n0 [label=\"f32[N,3]\"];",
      "  c0 -> n0 [label=\"f32[3,2]\"];",
      "  n0 -> n1 [label=\"f32[N,2]\"];",
      "  n1 -> out0 [label=\"f32[N,2]@nhwc\"];",
      "  n0 -> out1 [label=\"f32[N,2]\"];",
  };
  for (const std::string& line : expected) {
    EXPECT_NE(std::find(lines.begin(), lines.end(), line), lines.end()) << line << "\n" << dot;
  }
  // Exactly the five edges above: the omitted input of n1 draws none.
  int edges = 0;
  for (const std::string& line : lines) edges += absl::StrContains(line, " -> ");
  EXPECT_EQ(edges, 5);
  EXPECT_TRUE(WellFormed(dot)) << dot;
  EXPECT_EQ(lines.back(), "");
  EXPECT_EQ(lines[lines.size() - 2], "}");
}

TEST(DotTest, EscapesNamesAndDrawsEmptyGraph) {
  Graph g;
  g.set_name("a\\b\nc");
  g.AddInput("in\"put\x01", TensorType::Static(DType::kI8, {1}));
  const std::string dot = ToDot(g);
  EXPECT_TRUE(absl::StartsWith(dot, "digraph \"a\\\\b\\nc\" {\n")) << dot;
  EXPECT_TRUE(absl::StrContains(dot, "label=\"in\\\"put \\ni8[1]\"")) << dot;
  EXPECT_TRUE(WellFormed(dot)) << dot;
  Graph empty;
  EXPECT_EQ(ToDot(empty),
            "digraph \"main\" {\n"
            "  rankdir=TB;\n"
            "  node [fontname=\"Helvetica\", fontsize=10];\n"
            "  edge [fontname=\"Helvetica\", fontsize=8];\n"
            "}\n");
}

TEST(DotTest, WellFormedCheckCatchesBrokenText) {
  EXPECT_FALSE(WellFormed("digraph \"g\" {\n"));
  EXPECT_FALSE(WellFormed("digraph \"g {}\n"));
  EXPECT_TRUE(WellFormed("digraph \"g}\" {}\n"));
}

}  // namespace
}  // namespace tessel
