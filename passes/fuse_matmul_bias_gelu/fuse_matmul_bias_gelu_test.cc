// fuse-matmul-bias-gelu: GELU as PyTorch exports it (every multiplication order, Div or Mul scaling,
// the tanh approximation) recognized, MatMul/Gemm + bias + GELU fused, declines with their reasons.
// Numeric equivalence with the reference interpreter: the written-out GELU rounds each step to f32,
// the Gelu kernel rounds once, so |error| <= 1e-6 + 1e-5 * |before|.
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "passes/testing/pass_test_util.h"

namespace tessel {
namespace {

using ::testing::ElementsAre;
using testing::NormalizeIr;
using testing::RunPipelineOnIr;

void ExpectEquivalent(const testing::PipelineResult& r) {
  absl::Status eq = testing::CheckNumericallyEquivalent(*r.before, *r.after, 1e-6, 1e-5);
  EXPECT_TRUE(eq.ok()) << eq;
}

constexpr char kConstants[] = R"(
  const %w : f32[4,3] = [1.0, -2.0, 0.5, 3.0, 0.25, -1.0, 2.0, 1.5, -0.5, 0.75, -3.0, 1.0]
  const %b : f32[3] = [0.5, -0.25, 1.0]
  const %sqrt2 : f32[] = [1.4142135]
  const %rsqrt2 : f32[] = [0.70710677]
  const %one : f32[] = [1.0]
  const %half : f32[] = [0.5]
  const %beta : f32[] = [0.7978846]
  const %kappa : f32[] = [0.044715]
  const %three : f32[] = [3.0]
)";

// `body` computes %z from %a (a [2, 5, 3] tensor).
std::string WithGeluBody(const std::string& body) {
  return absl::StrCat("graph @main {\n  input %a : f32[2,5,3]\n", kConstants, body, "\n  output %z\n}\n");
}

struct GeluCase {
  std::string name;
  std::string body;
  std::string approximate;
};

class WrittenOutGelu : public ::testing::TestWithParam<GeluCase> {};

TEST_P(WrittenOutGelu, BecomesOneGeluNode) {
  auto r = RunPipelineOnIr(WithGeluBody(GetParam().body), "fuse-matmul-bias-gelu");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->after->num_nodes(), 1) << r->after_text;
  const Node* g = r->after->FindValue("z")->producer();
  EXPECT_EQ(g->op_type(), "Gelu");
  EXPECT_EQ(g->input(0)->name(), "a");
  EXPECT_EQ(g->GetString("approximate", "none"), GetParam().approximate);
  EXPECT_EQ(r->stats["gelus-recognized"], 1);
  ExpectEquivalent(*r);
}

INSTANTIATE_TEST_SUITE_P(
    Forms, WrittenOutGelu,
    ::testing::Values(
        // torch.onnx (opset 9+): (x * (erf(x / sqrt2) + 1)) * 0.5.
        GeluCase{"pytorch", R"(
  %d = Div "d" (%a, %sqrt2) : f32[2,5,3]
  %e = Erf "e" (%d) : f32[2,5,3]
  %p = Add "p" (%e, %one) : f32[2,5,3]
  %q = Mul "q" (%a, %p) : f32[2,5,3]
  %z = Mul "z" (%q, %half) : f32[2,5,3])",
                 "none"},
        GeluCase{"half_first", R"(
  %d = Mul "d" (%rsqrt2, %a) : f32[2,5,3]
  %e = Erf "e" (%d) : f32[2,5,3]
  %p = Add "p" (%one, %e) : f32[2,5,3]
  %h = Mul "h" (%half, %a) : f32[2,5,3]
  %z = Mul "z" (%p, %h) : f32[2,5,3])",
                 "none"},
        GeluCase{"half_on_sum", R"(
  %d = Div "d" (%a, %sqrt2) : f32[2,5,3]
  %e = Erf "e" (%d) : f32[2,5,3]
  %p = Add "p" (%e, %one) : f32[2,5,3]
  %q = Mul "q" (%p, %half) : f32[2,5,3]
  %z = Mul "z" (%a, %q) : f32[2,5,3])",
                 "none"},
        // torch.onnx gelu(approximate='tanh'): 0.5 * (x * (1 + tanh(beta * (x + kappa * (x * (x * x)))))).
        GeluCase{"tanh", R"(
  %sq = Mul "sq" (%a, %a) : f32[2,5,3]
  %cu = Mul "cu" (%a, %sq) : f32[2,5,3]
  %k = Mul "k" (%kappa, %cu) : f32[2,5,3]
  %s = Add "s" (%a, %k) : f32[2,5,3]
  %i = Mul "i" (%beta, %s) : f32[2,5,3]
  %t = Tanh "t" (%i) : f32[2,5,3]
  %p = Add "p" (%one, %t) : f32[2,5,3]
  %q = Mul "q" (%a, %p) : f32[2,5,3]
  %z = Mul "z" (%half, %q) : f32[2,5,3])",
                 "tanh"},
        GeluCase{"tanh_pow", R"(
  %cu = Pow "cu" (%a, %three) : f32[2,5,3]
  %k = Mul "k" (%cu, %kappa) : f32[2,5,3]
  %s = Add "s" (%k, %a) : f32[2,5,3]
  %i = Mul "i" (%s, %beta) : f32[2,5,3]
  %t = Tanh "t" (%i) : f32[2,5,3]
  %p = Add "p" (%t, %one) : f32[2,5,3]
  %q = Mul "q" (%p, %a) : f32[2,5,3]
  %z = Mul "z" (%q, %half) : f32[2,5,3])",
                 "tanh"}),
    [](const ::testing::TestParamInfo<GeluCase>& info) { return info.param.name; });

TEST(FuseMatMulBiasGeluTest, MatMulBiasErfGeluBecomesOneNode) {
  auto r = RunPipelineOnIr(absl::StrCat("graph @main {\n  input %x : f32[2,5,4]\n", kConstants, R"(
  %m = MatMul "mm" (%x, %w) : f32[2,5,3]
  %a = Add "bias" (%b, %m) : f32[2,5,3]
  %d = Div "d" (%a, %sqrt2) : f32[2,5,3]
  %e = Erf "e" (%d) : f32[2,5,3]
  %p = Add "p" (%e, %one) : f32[2,5,3]
  %q = Mul "q" (%a, %p) : f32[2,5,3]
  %z = Mul "z" (%q, %half) : f32[2,5,3]
  output %z
}
)"),
                           "fuse-matmul-bias-gelu");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(NormalizeIr(r->after_text), NormalizeIr(R"(
graph @main {
  input %x : f32[2,5,4]
  const %w : f32[4,3] = [1.0, -2.0, 0.5, 3.0, 0.25, -1.0, 2.0, 1.5, -0.5, 0.75, -3.0, 1.0]
  const %b : f32[3] = [0.5, -0.25, 1.0]
  %z = tessel.MatMulBiasGelu "mm" (%x, %w, %b) {approximate = "none"} : f32[2,5,3]
  output %z
}
)")) << r->after_text;
  EXPECT_EQ(r->stats["matmul-bias-gelu-fused"], 1);
  ExpectEquivalent(*r);
}

TEST(FuseMatMulBiasGeluTest, GemmTransBAndPlainMatMulBias) {
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[2,4]
  const %wt : f32[3,4] = [1.0, -2.0, 0.5, 3.0, 0.25, -1.0, 2.0, 1.5, -0.5, 0.75, -3.0, 1.0]
  const %c : f32[1,3] = [0.5, -0.25, 1.0]
  const %w2 : f32[3,2] = [1.0, 0.5, -1.0, 2.0, 0.25, -0.5]
  const %b2 : f32[1,2] = [0.1, 0.2]
  %g = Gemm "fc1" (%x, %wt, %c) {alpha = 0.5, beta = 2.0, transB = 1} : f32[2,3]
  %h = Gelu "act" (%g) {approximate = "tanh"} : f32[2,3]
  %m = MatMul "fc2" (%h, %w2) : f32[2,2]
  %z = Add "bias2" (%m, %b2) : f32[2,2]
  output %z
}
)", "fuse-matmul-bias-gelu");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->after->num_nodes(), 2) << r->after_text;
  EXPECT_EQ(r->after->FindValue("h")->producer()->op_type(), "MatMulBiasGelu");
  EXPECT_EQ(r->after->FindValue("z")->producer()->op_type(), "MatMulBias");
  // alpha * B^T, column by column: [[0.5 * 1, 0.5 * 0.25, 0.5 * -0.5], ...].
  EXPECT_THAT(r->after->FindValue("wt_kn")->constant()->ToFloatVector(),
              ElementsAre(0.5f, 0.125f, -0.25f, -1.0f, -0.5f, 0.375f, 0.25f, 1.0f, -1.5f, 1.5f, 0.75f, 0.5f));
  EXPECT_THAT(r->after->FindValue("c_n")->constant()->ToFloatVector(), ElementsAre(1.0f, -0.5f, 2.0f));
  EXPECT_EQ(r->stats["matmul-bias-gelu-fused"], 1);
  EXPECT_EQ(r->stats["matmul-bias-fused"], 1);
  ExpectEquivalent(*r);
}

TEST(FuseMatMulBiasGeluTest, DeclinesWithReasons) {
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[2,4]
  input %wv : f32[4,3]
  const %w : f32[4,3] = [1.0, -2.0, 0.5, 3.0, 0.25, -1.0, 2.0, 1.5, -0.5, 0.75, -3.0, 1.0]
  const %rows : f32[2,1] = [0.5, -0.25]
  %m = MatMul "variable_w" (%x, %wv) : f32[2,3]
  %a = Add "a" (%m, %m) : f32[2,3]
  %m2 = MatMul "per_row" (%x, %w) : f32[2,3]
  %a2 = Add "a2" (%m2, %rows) : f32[2,3]
  %z = Add "z" (%a, %a2) : f32[2,3]
  output %z
}
)", "fuse-matmul-bias-gelu", /*explain=*/true);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->after->num_nodes(), 5);
  EXPECT_THAT(r->explanations,
              ElementsAre("per_row not fused with Add 'a2': bias of shape [2,1] is not one value per column"));

  r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[2,4]
  input %wv : f32[4,3]
  const %b : f32[3] = [0.5, -0.25, 1.0]
  %m = MatMul "variable_w" (%x, %wv) : f32[2,3]
  %z = Add "a" (%m, %b) : f32[2,3]
  output %z
}
)", "fuse-matmul-bias-gelu", /*explain=*/true);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->explanations, ElementsAre("variable_w not fused with Add 'a': weight is not a 2-D f32 constant"));
}

}  // namespace
}  // namespace tessel
