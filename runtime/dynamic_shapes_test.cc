// Artifacts with data-dependent shapes: NonZero, Gather by its indices, TopK with a computed k and an If
// on the count, compiled at upper bounds; each run gives the extents of its own inputs, the same values
// as the reference interpreter on the graph, and the hand-computed ones below.
#include <algorithm>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen/compiler.h"
#include "graph/op_registry.h"
#include "graph/text.h"
#include "gtest/gtest.h"
#include "kernels/reference/interpreter.h"
#include "runtime/executor.h"
#include "runtime/testing/write_and_load.h"

namespace tessel {
namespace {

// The positive elements of x, the largest three of them (fewer when fewer pass) and, through an If on
// "none passed", either [-1] or the passing elements doubled.
std::unique_ptr<Graph> MakeGraph() {
  auto graph = ParseGraph(R"(
graph @main {
  input %x : f32[2,5]
  const %zero : f32[] = [0.0]
  const %flat : i64[1] = [-1]
  const %three : i64[1] = [3]
  const %axis0 : i64[] = [0]
  const %izero : i64[] = [0]
  %mask = Greater "gt" (%x, %zero) : bool[2,5]
  %nz = NonZero "nz" (%mask) : i64[2,?a]
  %xf = Reshape "xf" (%x, %flat) : f32[10]
  %m = Reshape "mf" (%mask, %flat) : bool[10]
  %where = NonZero "nzf" (%m) : i64[1,?b]
  %rows = Reshape "rows" (%where, %flat) : i64[?b]
  %sel = Gather "sel" (%xf, %rows) {axis = 0} : f32[?b]
  %n = Shape "n" (%sel) : i64[1]
  %k = Min "k" (%n, %three) : i64[1]
  %top, %idx = TopK "top" (%sel, %k) : f32[?c], i64[?c]
  %count = Gather "count" (%n, %izero) {axis = 0} : i64[]
  %none = Equal "none" (%count, %izero) : bool[]
  output %nz, %top, %idx
}
)");
  EXPECT_TRUE(graph.ok()) << graph.status();
  Graph& g = **graph;
  auto then_branch = ParseGraph(R"(
graph @then {
  input %v : f32[?n]
  const %minus1 : f32[1] = [-1.0]
  %out = Identity "then_id" (%minus1) : f32[1]
  output %out
}
)");
  auto else_branch = ParseGraph(R"(
graph @else {
  input %v : f32[?n]
  %out = Add "twice" (%v, %v) : f32[?n]
  output %out
}
)");
  EXPECT_TRUE(then_branch.ok() && else_branch.ok());
  Node* n = g.AddNode("If", {g.FindValue("none"), g.FindValue("sel")}, 1, "if_none");
  n->SetAttr("then_branch", Attribute::GraphValue(std::shared_ptr<const Graph>(std::move(*then_branch))));
  n->SetAttr("else_branch", Attribute::GraphValue(std::shared_ptr<const Graph>(std::move(*else_branch))));
  g.AddOutput(n->output(0));
  EXPECT_TRUE(InferShapes(g).ok());
  return std::move(*graph);
}

TEST(DynamicShapesTest, CompiledRunsMatchReferenceAndHand) {
  std::unique_ptr<Graph> graph = MakeGraph();
  auto result = CompileGraph(*graph, CompileOptions());
  ASSERT_TRUE(result.ok()) << result.status();
  auto model = WriteAndLoadArtifact(*result, "dynamic_shapes");
  ASSERT_TRUE(model.ok()) << model.status();
  auto session = Session::Create(*model);
  ASSERT_TRUE(session.ok()) << session.status();

  std::unique_ptr<Graph> reference_graph = MakeGraph();
  auto interpreter = ReferenceInterpreter::Create(reference_graph.get());
  ASSERT_TRUE(interpreter.ok()) << interpreter.status();

  struct Case {
    std::vector<float> x;
    std::vector<int64_t> nz_shape;
    std::vector<float> top;
    std::vector<float> if_out;
  };
  const std::vector<Case> cases = {
      // Two positives: both kept by TopK (k = 2); doubled in the else branch.
      {{-1, 2, -3, 0, 0, 0, 0, 0, 5, -6}, {2, 2}, {5, 2}, {4, 10}},
      // None: empty NonZero and TopK; the then branch's [-1].
      {{-1, -2, -3, 0, 0, 0, 0, 0, -5, -6}, {2, 0}, {}, {-1}},
      // All ten: TopK keeps three.
      {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {2, 10}, {10, 9, 8}, {2, 4, 6, 8, 10, 12, 14, 16, 18, 20}},
      // Two again after larger runs: the extents shrink back.
      {{0, 0, 0, 0, 0, 0, 0, 3, 0, 1}, {2, 2}, {3, 1}, {6, 2}},
  };
  for (const Case& c : cases) {
    const Tensor x = Tensor::FromVector<float>({2, 5}, c.x);
    ASSERT_TRUE((*session)->Run({x}).ok());
    auto expected = interpreter->Run(std::vector<Tensor>{x});
    ASSERT_TRUE(expected.ok()) << expected.status();
    ASSERT_EQ(expected->size(), 4u);
    for (int o = 0; o < 4; ++o) {
      const Tensor& got = (*session)->output(o);
      const Tensor& want = (*expected)[o];
      ASSERT_EQ(got.shape(), want.shape()) << "output " << o;
      ASSERT_EQ(got.dtype(), want.dtype());
      for (int64_t i = 0; i < want.num_elements(); ++i) {
        EXPECT_EQ(got.GetAsDouble(i), want.GetAsDouble(i)) << "output " << o << " element " << i;
      }
    }
    EXPECT_EQ((*session)->output(0).shape(), c.nz_shape);
    EXPECT_EQ((*session)->output(1).ToFloatVector(), c.top);
    EXPECT_EQ((*session)->output(3).ToFloatVector(), c.if_out);
  }
}

// The plan records which tensors have data-dependent extents, their bounds, and runs their ops on the
// reference kernels.
TEST(DynamicShapesTest, PlanMarksBoundedTensors) {
  std::unique_ptr<Graph> graph = MakeGraph();
  auto result = CompileGraph(*graph, CompileOptions());
  ASSERT_TRUE(result.ok()) << result.status();
  int dynamic = 0;
  for (const auto& t : result->plan.tensors()) {
    if (!t.dynamic()) continue;
    ++dynamic;
    if (t.name() == "top") EXPECT_EQ(std::vector<int64_t>(t.shape().begin(), t.shape().end()), std::vector<int64_t>{3});
    if (t.name() == "nz") EXPECT_EQ(std::vector<int64_t>(t.shape().begin(), t.shape().end()), (std::vector<int64_t>{2, 10}));
  }
  EXPECT_GE(dynamic, 5);
  for (const auto& op : result->plan.ops()) {
    if (op.name() == "top" || op.name() == "if_none" || op.name() == "nz") {
      EXPECT_EQ(op.kernel().rfind("reference/", 0), 0u) << op.name() << " runs " << op.kernel();
    }
  }
}

// Rows picked by a data-dependent NonZero through a fully connected layer, an activation and a Gemm: the
// layers run their optimized kernels over the bound of rows (row-wise ops) and the outputs take each
// run's row count, within 1e-5 of the reference interpreter.
TEST(DynamicShapesTest, RowWiseOpsRunOptimizedKernelsOverTheBound) {
  std::string w, b;
  for (int i = 0; i < 8 * 16; ++i) absl::StrAppend(&w, i ? ", " : "", ((i * 7) % 11 - 5) * 0.125);
  for (int i = 0; i < 8; ++i) absl::StrAppend(&b, i ? ", " : "", (i % 3 - 1) * 0.5);
  std::string k;
  for (int i = 0; i < 3 * 2 * 3 * 3; ++i) absl::StrAppend(&k, i ? ", " : "", ((i * 5) % 7 - 3) * 0.25);
  const std::string text = absl::StrCat(R"(
graph @main {
  input %x : f32[12,8]
  const %zero : f32[] = [0.0]
  const %flat : i64[1] = [-1]
  const %first : i64[1] = [0]
  const %one : i64[1] = [1]
  const %axis1 : i64[1] = [1]
  const %w : f32[8,16] = [)", w, R"(]
  const %wt : f32[8,16] = [)", w, R"(]
  const %c : f32[8] = [)", b, R"(]
  const %nchw : i64[4] = [-1, 2, 2, 2]
  const %k : f32[3,2,3,3] = [)", k, R"(]
  const %kb : f32[3] = [0.25, -0.5, 1.0]
  %col = Slice "col" (%x, %first, %one, %axis1) : f32[12,1]
  %pos = Greater "pos" (%col, %zero) : bool[12,1]
  %nz = NonZero "nz" (%pos) : i64[2,?a]
  %rows2 = Slice "rows2" (%nz, %first, %one) : i64[1,?a]
  %rows = Reshape "rows" (%rows2, %flat) : i64[?a]
  %picked = Gather "picked" (%x, %rows) {axis = 0} : f32[?a,8]
  %h = MatMul "fc" (%picked, %w) : f32[?a,16]
  %r = Relu "relu" (%h) : f32[?a,16]
  %y = Gemm "gemm" (%r, %wt, %c) {transB = 1} : f32[?a,8]
  %img = Reshape "img" (%y, %nchw) : f32[?a,2,2,2]
  %conv = Conv "conv" (%img, %k, %kb) {pads = [1, 1, 1, 1]} : f32[?a,3,2,2]
  %cflat = Flatten "flat" (%conv) {axis = 2} : f32[?b,4]
  output %y, %conv, %cflat
}
)");
  auto graph = ParseGraph(text);
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto result = CompileGraph(**graph, CompileOptions());
  ASSERT_TRUE(result.ok()) << result.status();
  for (const auto& op : result->plan.ops()) {
    if (op.name() == "flat") EXPECT_FALSE(op.row_wise()) << "Flatten at axis 2 multiplies the rows";
    if (op.name() == "fc" || op.name() == "relu" || op.name() == "gemm" || op.name() == "conv") {
      EXPECT_TRUE(op.row_wise()) << op.name();
      EXPECT_NE(op.kernel().rfind("reference/", 0), 0u) << op.name() << " runs " << op.kernel();
    }
  }
  auto model = WriteAndLoadArtifact(*result, "dynamic_rows");
  ASSERT_TRUE(model.ok()) << model.status();
  auto session = Session::Create(*model);
  ASSERT_TRUE(session.ok()) << session.status();
  auto reference_graph = ParseGraph(text);
  ASSERT_TRUE(reference_graph.ok());
  auto interpreter = ReferenceInterpreter::Create(reference_graph->get());
  ASSERT_TRUE(interpreter.ok()) << interpreter.status();
  for (int positives : {5, 12, 0, 1, 7}) {
    std::vector<float> x(12 * 8);
    for (int i = 0; i < 12 * 8; ++i) x[i] = ((i * 5) % 13 - 6) * 0.25f;
    for (int r = 0; r < 12; ++r) x[r * 8] = (r * 5) % 12 < positives ? 1.0f + r : -1.0f - r;
    const Tensor input = Tensor::FromVector<float>({12, 8}, x);
    ASSERT_TRUE((*session)->Run({input}).ok());
    auto expected = interpreter->Run(std::vector<Tensor>{input});
    ASSERT_TRUE(expected.ok()) << expected.status();
    ASSERT_EQ((*session)->output(0).shape(), (std::vector<int64_t>{positives, 8}));
    ASSERT_EQ((*session)->output(2).shape(), (std::vector<int64_t>{positives * 3, 4}));
    for (int o = 0; o < 3; ++o) {
      const Tensor& got = (*session)->output(o);
      ASSERT_EQ(got.shape(), (*expected)[o].shape()) << "output " << o;
      for (int64_t i = 0; i < got.num_elements(); ++i) {
        EXPECT_NEAR(got.GetAsDouble(i), (*expected)[o].GetAsDouble(i), 1e-4) << "output " << o << " element " << i;
      }
    }
  }
}

// An If whose branches give the same fixed shape still decides at run time: it runs as the other
// data-dependent ops do, through the reference interpreter.
TEST(DynamicShapesTest, IfWithFixedShapesRunsItsTakenBranch) {
  auto graph = ParseGraph(R"(
graph @main {
  input %x : f32[3]
  const %zero : f32[] = [0.0]
  const %axes : i64[1] = [0]
  %s = ReduceSum "sum" (%x, %axes) {keepdims = 0} : f32[]
  %c = Greater "positive" (%s, %zero) : bool[]
  output %c
}
)");
  ASSERT_TRUE(graph.ok()) << graph.status();
  Graph& g = **graph;
  auto then_branch = ParseGraph(R"(
graph @then {
  input %v : f32[3]
  %out = Add "twice" (%v, %v) : f32[3]
  output %out
}
)");
  auto else_branch = ParseGraph(R"(
graph @else {
  input %v : f32[3]
  %out = Neg "negate" (%v) : f32[3]
  output %out
}
)");
  ASSERT_TRUE(then_branch.ok() && else_branch.ok());
  Node* n = g.AddNode("If", {g.FindValue("c"), g.inputs()[0]}, 1, "if_positive");
  n->SetAttr("then_branch", Attribute::GraphValue(std::shared_ptr<const Graph>(std::move(*then_branch))));
  n->SetAttr("else_branch", Attribute::GraphValue(std::shared_ptr<const Graph>(std::move(*else_branch))));
  g.SetOutput(0, n->output(0));
  ASSERT_TRUE(InferShapes(g).ok());
  auto result = CompileGraph(g, CompileOptions());
  ASSERT_TRUE(result.ok()) << result.status();
  auto model = WriteAndLoadArtifact(*result, "if_fixed");
  ASSERT_TRUE(model.ok()) << model.status();
  auto session = Session::Create(*model);
  ASSERT_TRUE(session.ok()) << session.status();
  ASSERT_TRUE((*session)->Run({Tensor::FromVector<float>({3}, {1, 2, -0.5f})}).ok());
  EXPECT_EQ((*session)->output(0).ToFloatVector(), (std::vector<float>{2, 4, -1}));
  ASSERT_TRUE((*session)->Run({Tensor::FromVector<float>({3}, {1, -2, -0.5f})}).ok());
  EXPECT_EQ((*session)->output(0).ToFloatVector(), (std::vector<float>{-1, 2, 0.5f}));
}

// An extent with no bound (a Reshape to extents read from an input) is allocated as its op runs: the
// tensor lives outside the arena (HEAP in the plan) and each run gives its own shape.
TEST(DynamicShapesTest, UnboundedExtentsAreAllocatedAsTheyRun) {
  const char* text = R"(
graph @main {
  input %x : f32[2,6]
  input %shape : i64[2]
  %y = Reshape "r" (%x, %shape) : f32[?a,?b]
  %z = Relu "relu" (%y) : f32[?a,?b]
  %n = Shape "n" (%z) : i64[2]
  output %z, %n
}
)";
  auto graph = ParseGraph(text);
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto result = CompileGraph(**graph, CompileOptions());
  ASSERT_TRUE(result.ok()) << result.status();
  int heap = 0;
  for (const auto& t : result->plan.tensors()) heap += t.storage() == artifact::Tensor::HEAP;
  EXPECT_EQ(heap, 2);  // y and z; n has a fixed shape
  auto model = WriteAndLoadArtifact(*result, "heap_extents");
  ASSERT_TRUE(model.ok()) << model.status();
  auto session = Session::Create(*model);
  ASSERT_TRUE(session.ok()) << session.status();
  std::vector<float> x(12);
  for (int i = 0; i < 12; ++i) x[i] = i % 3 == 0 ? -1.0f - i : 0.5f * i;
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{3, 4}, {12, -1}, {1, 12}, {6, 2}}) {
    const Tensor input = Tensor::FromVector<float>({2, 6}, x);
    ASSERT_TRUE((*session)->Run({input, Tensor::FromVector<int64_t>({2}, shape)}).ok());
    const Tensor& z = (*session)->output(0);
    const std::vector<int64_t> want = {shape[0], shape[1] < 0 ? 12 / shape[0] : shape[1]};
    EXPECT_EQ(z.shape(), want);
    EXPECT_EQ((*session)->output(1).ToInt64Vector(), want);
    for (int i = 0; i < 12; ++i) EXPECT_EQ(z.data<float>()[i], std::max(x[i], 0.0f)) << i;
  }
  // A shape that does not fit the elements is the reshape's clean error.
  EXPECT_FALSE((*session)->Run({Tensor::FromVector<float>({2, 6}, x), Tensor::FromVector<int64_t>({2}, {5, 5})}).ok());

  // Plans that misuse run-time allocated tensors are refused at load, naming what is wrong.
  auto refused = [&](const CompileResult& bad, const std::string& label, const std::string& says) {
    auto m = WriteAndLoadArtifact(bad, label);
    ASSERT_FALSE(m.ok()) << label;
    EXPECT_EQ(m.status().code(), absl::StatusCode::kDataLoss) << m.status();
    EXPECT_NE(std::string(m.status().message()).find(says), std::string::npos) << m.status();
  };
  int y_index = -1;
  for (int i = 0; i < result->plan.tensors_size(); ++i) {
    if (result->plan.tensors(i).name() == "y") y_index = i;
  }
  ASSERT_GE(y_index, 0);
  CompileResult with_bytes = *result;
  with_bytes.plan.mutable_tensors(y_index)->set_bytes(64);
  refused(with_bytes, "heap_with_bytes", "is allocated as it runs but has bytes");
  CompileResult fast_kernel = *result;
  for (auto& op : *fast_kernel.plan.mutable_ops()) {
    if (op.name() == "relu") op.set_kernel("tessel_f32_relu__autovec");
  }
  refused(fast_kernel, "heap_fast_kernel", "on an operand allocated as it runs");
  CompileResult read_first = *result;
  std::swap(*read_first.plan.mutable_ops(0), *read_first.plan.mutable_ops(1));  // relu before the reshape
  auto m = WriteAndLoadArtifact(read_first, "heap_read_first");
  ASSERT_TRUE(m.ok()) << m.status();  // well-formed, but its order reads y before any op computes it
  auto bad_session = Session::Create(*m);
  ASSERT_TRUE(bad_session.ok());
  absl::Status run = (*bad_session)->Run({Tensor::FromVector<float>({2, 6}, x), Tensor::FromVector<int64_t>({2}, {3, 4})});
  EXPECT_EQ(run.code(), absl::StatusCode::kDataLoss) << run;
}

}  // namespace
}  // namespace tessel
