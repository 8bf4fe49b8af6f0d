// Fused transformer operators (tessel.RMSNorm, tessel.Rope, tessel.Attention): each reference kernel
// against the same computation written with the standard ONNX reference operators (the decomposed
// graphs PyTorch exports) on random inputs, within 1e-5 relative + 1e-6 absolute (the fused kernels
// keep intermediates in double, the decomposed graphs round each op to f32); small hand computations;
// and type-inference errors.
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "graph/graph.h"
#include "graph/op_registry.h"
#include "graph/text.h"
#include "gtest/gtest.h"
#include "kernels/reference/interpreter.h"
#include "kernels/reference/reference.h"

namespace tessel {
namespace {

using ::testing::ElementsAre;
using ::testing::FloatNear;
using ::testing::HasSubstr;

constexpr double kAtol = 1e-6;
constexpr double kRtol = 1e-5;

Tensor Random(std::vector<int64_t> shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  Tensor t(DType::kF32, std::move(shape));
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}

absl::StatusOr<std::vector<Tensor>> RunIr(const std::string& ir, const std::vector<Tensor>& inputs) {
  absl::StatusOr<std::unique_ptr<Graph>> g = ParseGraph(ir);
  if (!g.ok()) return g.status();
  absl::Status s = InferShapes(**g);
  if (!s.ok()) return s;
  absl::StatusOr<ReferenceInterpreter> interp = ReferenceInterpreter::Create(g->get());
  if (!interp.ok()) return interp.status();
  return interp->Run(inputs);
}

// Runs the fused and the decomposed graph on the same inputs and compares their single outputs.
void ExpectSameOutputs(const std::string& fused, const std::string& decomposed, const std::vector<Tensor>& inputs) {
  absl::StatusOr<std::vector<Tensor>> got = RunIr(fused, inputs);
  ASSERT_TRUE(got.ok()) << got.status();
  absl::StatusOr<std::vector<Tensor>> want = RunIr(decomposed, inputs);
  ASSERT_TRUE(want.ok()) << want.status();
  const Tensor& g = (*got)[0];
  const Tensor& w = (*want)[0];
  ASSERT_EQ(g.shape(), w.shape());
  ASSERT_GT(w.num_elements(), 0);
  for (int64_t i = 0; i < w.num_elements(); ++i) {
    const double x = w.GetAsDouble(i), y = g.GetAsDouble(i);
    ASSERT_LE(std::abs(x - y), kAtol + kRtol * std::abs(x))
        << "element " << i << ": decomposed " << x << ", fused " << y;
  }
}

// Inference error of a one-node graph written as text.
absl::Status InferIr(const std::string& ir) {
  absl::StatusOr<std::unique_ptr<Graph>> g = ParseGraph(ir);
  if (!g.ok()) return g.status();
  return InferShapes(**g);
}

// ---- RMSNorm ----

TEST(RMSNormKernelTest, MatchesDecomposedWithGain) {
  ExpectSameOutputs(R"(
graph @main {
  input %x : f32[2,3,8]
  input %g : f32[8]
  %y = tessel.RMSNorm "n" (%x, %g) {axis = -1, epsilon = 1e-05} : f32[2,3,8]
  output %y
})",
                    R"(
graph @main {
  input %x : f32[2,3,8]
  input %g : f32[8]
  const %two : f32[] = [2.0]
  const %axes : i64[1] = [-1]
  const %eps : f32[] = [1e-05]
  const %one : f32[] = [1.0]
  %p = Pow "p" (%x, %two) : f32[2,3,8]
  %m = ReduceMean "m" (%p, %axes) {keepdims = 1} : f32[2,3,1]
  %a = Add "a" (%m, %eps) : f32[2,3,1]
  %s = Sqrt "s" (%a) : f32[2,3,1]
  %r = Div "r" (%one, %s) : f32[2,3,1]
  %n = Mul "n" (%x, %r) : f32[2,3,8]
  %y = Mul "y" (%n, %g) : f32[2,3,8]
  output %y
})",
                    {Random({2, 3, 8}, 1), Random({8}, 2)});
}

TEST(RMSNormKernelTest, MatchesDecomposedOverTwoAxesWithoutGain) {
  ExpectSameOutputs(R"(
graph @main {
  input %x : f32[2,3,4]
  %y = tessel.RMSNorm "n" (%x) {axis = 1, epsilon = 0.5} : f32[2,3,4]
  output %y
})",
                    R"(
graph @main {
  input %x : f32[2,3,4]
  const %axes : i64[2] = [1, 2]
  const %eps : f32[] = [0.5]
  %p = Mul "p" (%x, %x) : f32[2,3,4]
  %m = ReduceMean "m" (%p, %axes) {keepdims = 1} : f32[2,1,1]
  %a = Add "a" (%m, %eps) : f32[2,1,1]
  %s = Sqrt "s" (%a) : f32[2,1,1]
  %y = Div "y" (%x, %s) : f32[2,3,4]
  output %y
})",
                    {Random({2, 3, 4}, 3)});
}

TEST(RMSNormKernelTest, HandComputed) {
  // x = [3, 4]: mean(x^2) = 12.5, rms = 3.5355339; gain [1, 2] -> [0.8485281, 2.2627417].
  absl::StatusOr<std::vector<Tensor>> y = RunIr(R"(
graph @main {
  input %x : f32[1,2]
  const %g : f32[2] = [1.0, 2.0]
  %y = tessel.RMSNorm "n" (%x, %g) {epsilon = 0} : f32[1,2]
  output %y
})",
                                                {Tensor::FromVector<float>({1, 2}, {3, 4})});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT((*y)[0].ToFloatVector(), ElementsAre(FloatNear(0.8485281f, 1e-6f), FloatNear(2.2627417f, 1e-6f)));
}

TEST(RMSNormInferTest, RejectsBadGainAndAttributes) {
  EXPECT_THAT(InferIr(R"(graph @main {
  input %x : f32[2,8]
  input %g : f32[4]
  %y = tessel.RMSNorm "n" (%x, %g) : f32[2,8]
  output %y })")
                  .message(),
              HasSubstr("input gain ('g') has type f32[4], which does not broadcast to [8]"));
  EXPECT_THAT(InferIr(R"(graph @main {
  input %x : f32[2,8]
  %y = tessel.RMSNorm "n" (%x) {eps = 0.1} : f32[2,8]
  output %y })")
                  .message(),
              HasSubstr("unknown attribute 'eps'"));
  EXPECT_THAT(InferIr(R"(graph @main {
  input %x : f32[2,8]
  %y = tessel.RMSNorm "n" (%x) {epsilon = -1.0} : f32[2,8]
  output %y })")
                  .message(),
              HasSubstr("must be finite and >= 0"));
}

// ---- Rope ----

TEST(RopeKernelTest, HalfMatchesDecomposedRotateHalf) {
  ExpectSameOutputs(R"(
graph @main {
  input %x : f32[1,2,5,8]
  input %cos : f32[5,8]
  input %sin : f32[5,8]
  %y = tessel.Rope "r" (%x, %cos, %sin) {style = "half"} : f32[1,2,5,8]
  output %y
})",
                    R"(
graph @main {
  input %x : f32[1,2,5,8]
  input %cos : f32[5,8]
  input %sin : f32[5,8]
  const %axis : i64[1] = [3]
  const %zero : i64[1] = [0]
  const %four : i64[1] = [4]
  const %end : i64[1] = [9223372036854775807]
  %hi = Slice "hi" (%x, %four, %end, %axis) : f32[1,2,5,4]
  %lo = Slice "lo" (%x, %zero, %four, %axis) : f32[1,2,5,4]
  %neg = Neg "neg" (%hi) : f32[1,2,5,4]
  %rot = Concat "rot" (%neg, %lo) {axis = -1} : f32[1,2,5,8]
  %xc = Mul "xc" (%x, %cos) : f32[1,2,5,8]
  %rs = Mul "rs" (%rot, %sin) : f32[1,2,5,8]
  %y = Add "y" (%xc, %rs) : f32[1,2,5,8]
  output %y
})",
                    {Random({1, 2, 5, 8}, 4), Random({5, 8}, 5), Random({5, 8}, 6)});
}

TEST(RopeKernelTest, InterleavedMatchesDecomposedPairs) {
  // Pairs (2i, 2i+1) rotate as (-x[2i+1], x[2i]): reshape to [..., 4, 2], swap with a negation, reshape back.
  ExpectSameOutputs(R"(
graph @main {
  input %x : f32[2,3,8]
  input %cos : f32[3,8]
  input %sin : f32[3,8]
  %y = tessel.Rope "r" (%x, %cos, %sin) {style = "interleaved"} : f32[2,3,8]
  output %y
})",
                    R"(
graph @main {
  input %x : f32[2,3,8]
  input %cos : f32[3,8]
  input %sin : f32[3,8]
  const %pairs : i64[4] = [2, 3, 4, 2]
  const %flat : i64[3] = [2, 3, 8]
  const %axis : i64[1] = [3]
  const %zero : i64[1] = [0]
  const %one : i64[1] = [1]
  const %two : i64[1] = [2]
  %xp = Reshape "xp" (%x, %pairs) : f32[2,3,4,2]
  %even = Slice "even" (%xp, %zero, %one, %axis) : f32[2,3,4,1]
  %odd = Slice "odd" (%xp, %one, %two, %axis) : f32[2,3,4,1]
  %neg = Neg "neg" (%odd) : f32[2,3,4,1]
  %rp = Concat "rp" (%neg, %even) {axis = -1} : f32[2,3,4,2]
  %rot = Reshape "rot" (%rp, %flat) : f32[2,3,8]
  %xc = Mul "xc" (%x, %cos) : f32[2,3,8]
  %rs = Mul "rs" (%rot, %sin) : f32[2,3,8]
  %y = Add "y" (%xc, %rs) : f32[2,3,8]
  output %y
})",
                    {Random({2, 3, 8}, 7), Random({3, 8}, 8), Random({3, 8}, 9)});
}

TEST(RopeKernelTest, HandComputedQuarterTurn) {
  // cos = 0, sin = 1 rotates each pair by 90 degrees: half style [1, 2, 3, 4] -> [-3, -4, 1, 2].
  absl::StatusOr<std::vector<Tensor>> y = RunIr(R"(
graph @main {
  input %x : f32[4]
  const %c : f32[] = [0.0]
  const %s : f32[] = [1.0]
  %y = tessel.Rope "r" (%x, %c, %s) : f32[4]
  output %y
})",
                                                {Tensor::FromVector<float>({4}, {1, 2, 3, 4})});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT((*y)[0].ToFloatVector(), ElementsAre(-3, -4, 1, 2));
}

TEST(RopeInferTest, RejectsOddWidthAndUnknownStyle) {
  EXPECT_THAT(InferIr(R"(graph @main {
  input %x : f32[2,5]
  input %c : f32[5]
  %y = tessel.Rope "r" (%x, %c, %c) : f32[2,5]
  output %y })")
                  .message(),
              HasSubstr("the last dimension must be even"));
  EXPECT_THAT(InferIr(R"(graph @main {
  input %x : f32[2,4]
  input %c : f32[4]
  %y = tessel.Rope "r" (%x, %c, %c) {style = "neox"} : f32[2,4]
  output %y })")
                  .message(),
              HasSubstr("style 'neox' is not one of"));
  EXPECT_THAT(InferIr(R"(graph @main {
  input %x : f32[2,4]
  input %c : f32[3,4]
  %y = tessel.Rope "r" (%x, %c, %c) : f32[2,4]
  output %y })")
                  .message(),
              HasSubstr("does not broadcast to [2,4]"));
}

// ---- Attention ----

// The decomposed attention of PyTorch's export: Q K^T, Div by sqrt(d), Add mask, Softmax, times V.
// K and V are repeated from KVH to H heads with Unsqueeze -> Expand -> Reshape (repeat_kv).
std::string DecomposedAttention(int64_t b, int64_t h, int64_t kvh, int64_t sq, int64_t sk, int64_t d,
                                const std::string& mask_decl) {
  const int64_t rep = h / kvh;
  std::string ir = R"(
graph @main {
  input %q : f32[$B$,$H$,$SQ$,$D$]
  input %k : f32[$B$,$KVH$,$SK$,$D$]
  input %v : f32[$B$,$KVH$,$SK$,$D$]
  $MASK$
  const %ax : i64[1] = [2]
  const %rep5 : i64[5] = [$B$, $KVH$, $REP$, $SK$, $D$]
  const %flat : i64[4] = [$B$, $H$, $SK$, $D$]
  const %sqrt_d : f32[] = [$SQRTD$]
  %k5 = Unsqueeze "k5" (%k, %ax) : f32[$B$,$KVH$,1,$SK$,$D$]
  %ke = Expand "ke" (%k5, %rep5) : f32[$B$,$KVH$,$REP$,$SK$,$D$]
  %kr = Reshape "kr" (%ke, %flat) : f32[$B$,$H$,$SK$,$D$]
  %v5 = Unsqueeze "v5" (%v, %ax) : f32[$B$,$KVH$,1,$SK$,$D$]
  %ve = Expand "ve" (%v5, %rep5) : f32[$B$,$KVH$,$REP$,$SK$,$D$]
  %vr = Reshape "vr" (%ve, %flat) : f32[$B$,$H$,$SK$,$D$]
  %kt = Transpose "kt" (%kr) {perm = [0, 1, 3, 2]} : f32[$B$,$H$,$D$,$SK$]
  %s = MatMul "s" (%q, %kt) : f32[$B$,$H$,$SQ$,$SK$]
  %sc = Div "sc" (%s, %sqrt_d) : f32[$B$,$H$,$SQ$,$SK$]
  %m = Add "m" (%sc, %mask) : f32[$B$,$H$,$SQ$,$SK$]
  %p = Softmax "p" (%m) {axis = -1} : f32[$B$,$H$,$SQ$,$SK$]
  %y = MatMul "y" (%p, %vr) : f32[$B$,$H$,$SQ$,$D$]
  output %y
})";
  return absl::StrReplaceAll(ir, {{"$MASK$", mask_decl},
                                  {"$SQRTD$", absl::StrFormat("%.9g", std::sqrt(static_cast<double>(d)))},
                                  {"$KVH$", absl::StrCat(kvh)},
                                  {"$REP$", absl::StrCat(rep)},
                                  {"$SQ$", absl::StrCat(sq)},
                                  {"$SK$", absl::StrCat(sk)},
                                  {"$B$", absl::StrCat(b)},
                                  {"$H$", absl::StrCat(h)},
                                  {"$D$", absl::StrCat(d)}});
}

// A constant causal mask [SQ, SK]: -inf where key j lies after query i + SK - SQ.
std::string CausalMaskDecl(int64_t sq, int64_t sk) {
  std::string data;
  for (int64_t i = 0; i < sq; ++i) {
    for (int64_t j = 0; j < sk; ++j) absl::StrAppend(&data, data.empty() ? "" : ", ", j > i + sk - sq ? "-inf" : "0.0");
  }
  return absl::StrCat("const %mask : f32[", sq, ",", sk, "] = [", data, "]");
}

TEST(AttentionKernelTest, GroupedQueryWithMaskMatchesDecomposed) {
  const std::string fused = R"(
graph @main {
  input %q : f32[2,4,3,8]
  input %k : f32[2,2,5,8]
  input %v : f32[2,2,5,8]
  input %mask : f32[3,5]
  %y = tessel.Attention "a" (%q, %k, %v, %mask) {causal = 0, scale = 0.35355339} : f32[2,4,3,8]
  output %y
})";
  ExpectSameOutputs(fused, DecomposedAttention(2, 4, 2, 3, 5, 8, "input %mask : f32[3,5]"),
                    {Random({2, 4, 3, 8}, 10), Random({2, 2, 5, 8}, 11), Random({2, 2, 5, 8}, 12),
                     Random({3, 5}, 13)});
}

TEST(AttentionKernelTest, CausalMatchesConstantMaskWithKeyOffset) {
  // Three queries over five keys (as after two cached tokens): query i sees keys 0..i+2.
  const std::string fused = R"(
graph @main {
  input %q : f32[1,3,3,4]
  input %k : f32[1,1,5,4]
  input %v : f32[1,1,5,4]
  %y = tessel.Attention "a" (%q, %k, %v) {causal = 1, scale = 0.5} : f32[1,3,3,4]
  output %y
})";
  ExpectSameOutputs(fused, DecomposedAttention(1, 3, 1, 3, 5, 4, CausalMaskDecl(3, 5)),
                    {Random({1, 3, 3, 4}, 14), Random({1, 1, 5, 4}, 15), Random({1, 1, 5, 4}, 16)});
}

TEST(AttentionKernelTest, DefaultScaleIsInverseSqrtHeadSize) {
  const std::string fused = R"(
graph @main {
  input %q : f32[1,2,4,16]
  input %k : f32[1,2,4,16]
  input %v : f32[1,2,4,16]
  input %mask : f32[1,2,4,4]
  %y = tessel.Attention "a" (%q, %k, %v, %mask) : f32[1,2,4,16]
  output %y
})";
  ExpectSameOutputs(fused, DecomposedAttention(1, 2, 2, 4, 4, 16, "input %mask : f32[1,2,4,4]"),
                    {Random({1, 2, 4, 16}, 17), Random({1, 2, 4, 16}, 18), Random({1, 2, 4, 16}, 19),
                     Random({1, 2, 4, 4}, 20)});
}

TEST(AttentionKernelTest, HandComputed) {
  // One query [1, 0] against keys [1, 0] and [0, 1] at scale ln(3): scores ln 3 and 0, so the weights are
  // 3/4 and 1/4 and the output is 0.75 * [2, 0] + 0.25 * [0, 4] = [1.5, 1].
  absl::StatusOr<std::vector<Tensor>> y = RunIr(absl::StrCat(R"(
graph @main {
  input %q : f32[1,1,1,2]
  const %k : f32[1,1,2,2] = [1.0, 0.0, 0.0, 1.0]
  const %v : f32[1,1,2,2] = [2.0, 0.0, 0.0, 4.0]
  %y = tessel.Attention "a" (%q, %k, %v) {scale = )",
                                                             absl::StrFormat("%.9g", std::log(3.0)), R"(} : f32[1,1,1,2]
  output %y
})"),
                                                {Tensor::FromVector<float>({1, 1, 1, 2}, {1, 0})});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT((*y)[0].ToFloatVector(), ElementsAre(FloatNear(1.5f, 1e-6f), FloatNear(1.0f, 1e-6f)));
}

TEST(AttentionInferTest, RejectsMismatchedShapes) {
  EXPECT_THAT(InferIr(R"(graph @main {
  input %q : f32[1,4,3,8]
  input %k : f32[1,3,3,8]
  %y = tessel.Attention "a" (%q, %k, %k) : f32[1,4,3,8]
  output %y })")
                  .message(),
              HasSubstr("the query head count is not a multiple of the key/value head count"));
  EXPECT_THAT(InferIr(R"(graph @main {
  input %q : f32[1,4,3,8]
  input %k : f32[1,2,3,4]
  %y = tessel.Attention "a" (%q, %k, %k) : f32[1,4,3,8]
  output %y })")
                  .message(),
              HasSubstr("Q and K have different head sizes"));
  EXPECT_THAT(InferIr(R"(graph @main {
  input %q : f32[4,3,8]
  %y = tessel.Attention "a" (%q, %q, %q) : f32[4,3,8]
  output %y })")
                  .message(),
              HasSubstr("expected rank 4"));
  EXPECT_THAT(InferIr(R"(graph @main {
  input %q : f32[1,4,3,8]
  input %m : f32[3,4]
  %y = tessel.Attention "a" (%q, %q, %q, %m) : f32[1,4,3,8]
  output %y })")
                  .message(),
              HasSubstr("input mask ('m') has type f32[3,4], which does not broadcast to [1,4,3,3]"));
  EXPECT_THAT(InferIr(R"(graph @main {
  input %q : f32[1,4,3,8]
  %y = tessel.Attention "a" (%q, %q, %q) {causal = 2} : f32[1,4,3,8]
  output %y })")
                  .message(),
              HasSubstr("causal is 2; expected 0 or 1"));
}

TEST(AttentionInferTest, KeepsSymbolicDims) {
  absl::StatusOr<std::unique_ptr<Graph>> g = ParseGraph(R"(graph @main {
  input %q : f32[B,8,S,64]
  input %k : f32[B,2,T,64]
  input %v : f32[B,2,T,32]
  %y = tessel.Attention "a" (%q, %k, %v) : f32[B,8,S,32]
  output %y })");
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_TRUE(InferShapes(**g).ok());
  EXPECT_EQ((*g)->outputs()[0]->type().ToString(), "f32[B,8,S,32]");
}

}  // namespace
}  // namespace tessel
