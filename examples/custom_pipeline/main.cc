// Registers the out-of-tree pass and runs a pipeline mixing it with Tessel's passes on a small graph;
// checks that the result computes the same as before.
#include <cmath>
#include <cstdio>

#include "fold_mul_chain.h"
#include "graph/op_registry.h"
#include "graph/text.h"
#include "kernels/reference/interpreter.h"
#include "passes/pass_manager.h"

int main() {
  absl::Status s = tessel::PassRegistry::Global().Register(example::FoldMulChainPassInfo());
  if (!s.ok()) return std::fprintf(stderr, "%s\n", std::string(s.message()).c_str()), 1;
  const char* ir = R"(
graph @main {
  input %x : f32[4]
  const %a : f32[] = [2.0]
  const %b : f32[] = [3.0]
  const %one : f32[] = [1.0]
  %m1 = Mul "m1" (%x, %a) : f32[4]
  %m2 = Mul "m2" (%m1, %b) : f32[4]
  %m3 = Mul "m3" (%m2, %one) : f32[4]
  %y = Relu "y" (%m3) : f32[4]
  output %y
}
)";
  auto before = tessel::ParseGraph(ir);
  auto graph = tessel::ParseGraph(ir);
  if (!graph.ok() || !before.ok()) return std::fprintf(stderr, "parse failed\n"), 1;
  const std::string pipeline = "simplify,fold-mul-chain,dce";
  auto pm = tessel::PassManager::Create(pipeline, {.verify_each = true});
  if (!pm.ok()) return std::fprintf(stderr, "%s\n", std::string(pm.status().message()).c_str()), 1;
  s = pm->Run(**graph);
  if (!s.ok()) return std::fprintf(stderr, "%s\n", std::string(s.message()).c_str()), 1;
  std::printf("%s%s", pm->Report().c_str(), tessel::PrintGraph(**graph).c_str());

  tessel::Tensor x = tessel::Tensor::FromVector<float>({4}, {-1.0f, 0.5f, 2.0f, 3.0f});
  auto a = tessel::ReferenceInterpreter::Create(before->get());
  auto b = tessel::ReferenceInterpreter::Create(graph->get());
  auto ya = a->Run(std::vector<tessel::Tensor>{x});
  auto yb = b->Run(std::vector<tessel::Tensor>{x});
  if (!ya.ok() || !yb.ok()) return std::fprintf(stderr, "run failed\n"), 1;
  for (int i = 0; i < 4; ++i) {
    const float want = std::max(0.0f, x.data<float>()[i] * 6.0f);  // by hand: relu(6x)
    if ((*ya)[0].data<float>()[i] != want || (*yb)[0].data<float>()[i] != want) {
      std::fprintf(stderr, "mismatch at %d\n", i);
      return 1;
    }
  }
  if ((*graph)->num_nodes() != 2) return std::fprintf(stderr, "expected 2 nodes after the pipeline\n"), 1;
  std::printf("custom pipeline OK: %d nodes, outputs match relu(6x)\n", (*graph)->num_nodes());
  return 0;
}
