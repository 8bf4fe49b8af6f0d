// Pipeline text: parse/print round trips, error messages, named pipelines, external registration.
#include "passes/core/pipeline.h"

#include "gtest/gtest.h"
#include "graph/op_registry.h"
#include "passes/pass_manager.h"

namespace tessel {
namespace {

TEST(PipelineTest, RoundTrips) {
  for (const char* text : {"fold-constants,dce,cse,fold-batchnorm,fuse-conv-activation",
                           "fuse-conv-activation{activations=relu,relu6}",
                           "a{x=1,y=2,3},b,c{k=v}", "dce", ""}) {
    auto specs = ParsePipeline(text);
    ASSERT_TRUE(specs.ok()) << text << ": " << specs.status();
    EXPECT_EQ(PrintPipeline(*specs), text);
  }
}

TEST(PipelineTest, ParsesOptionLists) {
  auto specs = ParsePipeline(" fuse-conv-activation{ activations=relu, relu6 ,max=3} , dce ");
  ASSERT_TRUE(specs.ok()) << specs.status();
  ASSERT_EQ(specs->size(), 2u);
  EXPECT_EQ((*specs)[0].name, "fuse-conv-activation");
  EXPECT_EQ((*specs)[0].options.GetList("activations", {}), (std::vector<std::string>{"relu", "relu6"}));
  EXPECT_EQ(*(*specs)[0].options.GetInt("max", 0), 3);
  EXPECT_EQ(PrintPipeline(*specs), "fuse-conv-activation{activations=relu,relu6,max=3},dce");
}

TEST(PipelineTest, ReportsSyntaxErrorsWithOffset) {
  EXPECT_EQ(ParsePipeline("dce,,cse").status().message(),
            "pipeline 'dce,,cse': expected a pass name at offset 4 (',')");
  EXPECT_EQ(ParsePipeline("a{x=1").status().message(), "pipeline 'a{x=1': expected ',' or '}' in options at offset 5 (end of text)");
  EXPECT_FALSE(ParsePipeline("a{}").ok());
  EXPECT_FALSE(ParsePipeline("a{1}").ok());
  EXPECT_FALSE(ParsePipeline("a{x=1,x=2}").ok());
  EXPECT_FALSE(ParsePipeline("a b").ok());
}

TEST(PipelineTest, ExpandsNamedPipelinesAndRejectsUnknownPasses) {
  RegisterBuiltinPasses();
  auto specs = ParsePipeline("dce,cse");
  ASSERT_TRUE(ExpandPipeline(*specs).ok());
  auto unknown = ExpandPipeline(*ParsePipeline("dce,no-such-pass"));
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("unknown pass 'no-such-pass'"), std::string::npos);
  auto bad_option = PassManager::Create("dce{foo=1}");
  ASSERT_FALSE(bad_option.ok());
  EXPECT_NE(bad_option.status().message().find("has no option 'foo'"), std::string::npos);
}

class CountingPass : public Pass {
 public:
  absl::Status Run(Graph& graph, PassContext& ctx) override {
    ctx.stat("nodes-seen") += graph.num_nodes();
    return absl::OkStatus();
  }
};

TEST(PipelineTest, ExternallyRegisteredPassRunsInPipeline) {
  ASSERT_TRUE(PassRegistry::Global().Register(SimplePassInfo<CountingPass>("count-nodes", "counts nodes")).ok());
  EXPECT_EQ(PassRegistry::Global().Register(SimplePassInfo<CountingPass>("count-nodes", "again")).code(),
            absl::StatusCode::kAlreadyExists);
  auto pm = PassManager::Create("count-nodes,dce,count-nodes");
  ASSERT_TRUE(pm.ok()) << pm.status();
  Graph g;
  Value* x = g.AddInput("x", TensorType::Static(DType::kF32, {2}));
  Node* used = g.AddNode("Relu", {x}, 1, "used");
  g.AddNode("Relu", {x}, 1, "dead");
  g.AddOutput(used->output(0));
  ASSERT_TRUE(InferShapes(g).ok());
  ASSERT_TRUE(pm->Run(g).ok());
  ASSERT_EQ(pm->records().size(), 3u);
  EXPECT_EQ(pm->records()[0].stats.at("nodes-seen"), 2);
  EXPECT_EQ(pm->records()[1].stats.at("nodes-removed"), 1);
  EXPECT_EQ(pm->records()[2].stats.at("nodes-seen"), 1);
  EXPECT_NE(pm->Report().find("count-nodes"), std::string::npos);
}

}  // namespace
}  // namespace tessel
