// End to end: the Llama decoder block exported from PyTorch (tools/frontend/export_models.py, opsets 13
// and 17: RMSNorm, grouped-query attention with 4 query and 2 key/value heads, RoPE, an additive causal mask,
// SwiGLU) through the transformer passes ends with both RMSNorms fused (gains folded into the weights),
// Q/K/V packed into one MatMul, RoPE fused on Q and K and one tessel.Attention taking the unrepeated K/V,
// and the optimized graph still matches PyTorch: max |error| <= 1e-4 * max |PyTorch output|. Node
// counts, operator histograms, pass timings and statistics go to the test log.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/graph.h"
#include "graph/npy.h"
#include "graph/onnx/onnx_importer.h"
#include "gtest/gtest.h"
#include "kernels/reference/interpreter.h"
#include "passes/pass_manager.h"

namespace tessel {
namespace {

constexpr char kDir[] = "tools/frontend/models/";

std::map<std::string, int> Counts(const Graph& g) {
  std::map<std::string, int> counts;
  for (const auto& n : g.nodes()) ++counts[n->domain().empty() ? n->op_type() : n->domain() + "." + n->op_type()];
  return counts;
}

std::string Histogram(const Graph& g) {
  std::string out;
  for (const auto& [op, n] : Counts(g)) absl::StrAppend(&out, "  ", op, " ", n, "\n");
  return out;
}

struct PipelineCase {
  int opset;
  // The explicit pipeline, or the named `llm` one (which adds simplify, whose rewrites such as x/c ->
  // x*(1/c) and pow(x,2) -> x*x the fusions must see through).
  const char* pipeline;
  const char* label;
};

class TransformerPipelineTest : public ::testing::TestWithParam<PipelineCase> {};

TEST_P(TransformerPipelineTest, FusesTheDecoderBlockAndMatchesPyTorch) {
  const PipelineCase& c = GetParam();
  absl::StatusOr<std::unique_ptr<Graph>> graph =
      ImportOnnxFile(absl::StrCat(kDir, "transformer_block_op", c.opset, ".onnx"));
  ASSERT_TRUE(graph.ok()) << graph.status();
  Graph& g = **graph;
  const int before = g.num_nodes();
  const std::string histogram_before = Histogram(g);

  PassManagerOptions options;
  options.verify_each = true;
  options.explain = true;
  absl::StatusOr<PassManager> pm = PassManager::Create(c.pipeline, options);
  ASSERT_TRUE(pm.ok()) << pm.status();
  absl::Status s = pm->Run(g);
  ASSERT_TRUE(s.ok()) << s;
  std::printf("transformer_block opset %d, pipeline '%s': %d nodes before, %d after\nbefore:\n%safter:\n%s%s",
              c.opset, c.pipeline, before, g.num_nodes(), histogram_before.c_str(), Histogram(g).c_str(),
              pm->Report().c_str());
  if (!pm->explanations().empty()) {
    std::printf("declined:\n  %s\n", absl::StrJoin(pm->explanations(), "\n  ").c_str());
  }

  std::map<std::string, int> counts = Counts(g);
  EXPECT_EQ(counts["tessel.RMSNorm"], 2);
  EXPECT_EQ(counts["tessel.Rope"], 2);
  EXPECT_EQ(counts["tessel.Attention"], 1);
  for (const char* op : {"Pow", "ReduceMean", "Sqrt", "Softmax", "Neg", "Slice", "Concat", "Unsqueeze", "Expand",
                         "Where", "ConstantOfShape", "Equal"}) {
    EXPECT_EQ(counts[op], 0) << op << " is left:\n" << Histogram(g);
  }
  // wq/wk/wv are one MatMul split three ways; the gains went into its weight and into w1/w3's.
  int packed_qkv = 0;
  for (const auto& n : g.nodes()) {
    if (n->op_type() == "RMSNorm") {
      EXPECT_EQ(n->num_inputs(), 1) << n->DebugName() << " kept its gain";
    }
    if (n->op_type() != "Split" || n->num_outputs() != 3) continue;
    const Node* mm = n->input(0)->producer();
    ASSERT_NE(mm, nullptr);
    EXPECT_EQ(mm->op_type(), "MatMul");
    EXPECT_EQ(mm->input(0)->producer()->op_type(), "RMSNorm");
    EXPECT_EQ(mm->input(1)->type().ToString(), "f32[64,128]");  // 64 + 32 + 32 columns
    ++packed_qkv;
  }
  EXPECT_EQ(packed_qkv, 1);
  // Attention reads K and V with their own two heads, and knows the mask is causal.
  for (const auto& n : g.nodes()) {
    if (n->op_type() != "Attention") continue;
    EXPECT_EQ(n->num_inputs(), 3);
    EXPECT_EQ(n->GetInt("causal", 0), 1);
    EXPECT_FLOAT_EQ(n->GetFloat("scale", 0), 0.25f);
    EXPECT_EQ(n->input(0)->type().ToString(), "f32[1,4,16,16]");
    EXPECT_EQ(n->input(1)->type().ToString(), "f32[1,2,16,16]");
    EXPECT_EQ(n->input(2)->type().ToString(), "f32[1,2,16,16]");
  }

  absl::StatusOr<Tensor> input = ReadNpy(absl::StrCat(kDir, "transformer_block.input.npy"));
  absl::StatusOr<Tensor> want = ReadNpy(absl::StrCat(kDir, "transformer_block.output.npy"));
  ASSERT_TRUE(input.ok() && want.ok());
  absl::StatusOr<ReferenceInterpreter> interp = ReferenceInterpreter::Create(&g);
  ASSERT_TRUE(interp.ok()) << interp.status();
  absl::StatusOr<std::vector<Tensor>> out = interp->Run({*input});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 1u);
  const Tensor& got = (*out)[0];
  ASSERT_EQ(got.shape(), want->shape());
  double max_ref = 0, max_err = 0;
  for (int64_t i = 0; i < got.num_elements(); ++i) {
    max_ref = std::max(max_ref, std::abs(want->GetAsDouble(i)));
    max_err = std::max(max_err, std::abs(got.GetAsDouble(i) - want->GetAsDouble(i)));
  }
  std::printf("max |err| %.3g, max |out| %.3g, ratio %.3g\n", max_err, max_ref, max_err / max_ref);
  EXPECT_GT(max_ref, 0.0);
  EXPECT_LE(max_err, 1e-4 * max_ref);
}

constexpr char kExplicit[] = "fold-shape-ops,fold-constants,cse,transformer,dce";

INSTANTIATE_TEST_SUITE_P(Pipelines, TransformerPipelineTest,
                         ::testing::Values(PipelineCase{17, kExplicit, "op17_explicit"},
                                           PipelineCase{17, "llm", "op17_llm"},
                                           PipelineCase{13, kExplicit, "op13_explicit"}),
                         [](const ::testing::TestParamInfo<PipelineCase>& info) { return info.param.label; });

}  // namespace
}  // namespace tessel
