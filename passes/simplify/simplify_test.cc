// simplify: each rule as text IR before/after through a pipeline string, plus numeric equivalence.
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "passes/testing/pass_test_util.h"

namespace tessel {
namespace {

using testing::NormalizeIr;
using testing::RunPipelineOnIr;

void ExpectSimplifiesTo(const char* before, const char* after) {
  auto r = RunPipelineOnIr(before, "simplify,dce");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(NormalizeIr(r->after_text), NormalizeIr(after)) << r->after_text;
  absl::Status eq = testing::CheckNumericallyEquivalent(*r->before, *r->after, 1e-6, 1e-6);
  EXPECT_TRUE(eq.ok()) << eq;
}

TEST(SimplifyTest, IdentityElementsDisappear) {
  ExpectSimplifiesTo(R"(
graph @main {
  input %x : f32[2,3]
  const %one : f32[] = [1.0]
  const %zero : f32[3] = [0.0, 0.0, 0.0]
  %a = Mul "a" (%one, %x) : f32[2,3]
  %b = Add "b" (%a, %zero) : f32[2,3]
  %c = Sub "c" (%b, %zero) : f32[2,3]
  %d = Div "d" (%c, %one) : f32[2,3]
  %e = Relu "e" (%d) : f32[2,3]
  output %e
}
)", R"(
graph @main {
  input %x : f32[2,3]
  %e = Relu "e" (%x) : f32[2,3]
  output %e
}
)");
}

TEST(SimplifyTest, KeepsBroadcastingIdentity) {
  // x + zeros[2,3] with x: f32[3] broadcasts; removing it would change the shape.
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[3]
  const %zero : f32[2,3] = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
  %b = Add "b" (%x, %zero) : f32[2,3]
  output %b
}
)", "simplify");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->after->num_nodes(), 1);
}

TEST(SimplifyTest, StrengthReduction) {
  ExpectSimplifiesTo(R"(
graph @main {
  input %x : f32[4]
  const %four : f32[] = [4.0]
  const %two : f32[] = [2.0]
  const %half : f32[] = [0.5]
  %a = Div "a" (%x, %four) : f32[4]
  %b = Pow "b" (%a, %two) : f32[4]
  %c = Pow "c" (%b, %half) : f32[4]
  output %c
}
)", R"(
graph @main {
  input %x : f32[4]
  const %four_reciprocal_0 : f32[] = [0.25]
  %a = Mul "a" (%x, %four_reciprocal_0) : f32[4]
  %b = Mul "b" (%a, %a) : f32[4]
  %c = Sqrt "c" (%b) : f32[4]
  output %c
}
)");
}

TEST(SimplifyTest, TransposePairsAndNoOps) {
  ExpectSimplifiesTo(R"(
graph @main {
  input %x : f32[2,3,4]
  const %shape : i64[3] = [2, 3, 4]
  %t1 = Transpose "t1" (%x) {perm = [0, 2, 1]} : f32[2,4,3]
  %t2 = Transpose "t2" (%t1) {perm = [0, 2, 1]} : f32[2,3,4]
  %i = Identity "i" (%t2) : f32[2,3,4]
  %r = Reshape "r" (%i, %shape) : f32[2,3,4]
  %d = Dropout "d" (%r) : f32[2,3,4]
  %y = Relu "y" (%d) : f32[2,3,4]
  output %y
}
)", R"(
graph @main {
  input %x : f32[2,3,4]
  %y = Relu "y" (%x) : f32[2,3,4]
  output %y
}
)");
}

TEST(SimplifyTest, ComposesTransposesAndReshapes) {
  ExpectSimplifiesTo(R"(
graph @main {
  input %x : f32[2,3,4]
  const %s1 : i64[2] = [6, 4]
  const %s2 : i64[3] = [4, 3, 2]
  %t1 = Transpose "t1" (%x) {perm = [1, 0, 2]} : f32[3,2,4]
  %t2 = Transpose "t2" (%t1) {perm = [2, 0, 1]} : f32[4,3,2]
  %r1 = Reshape "r1" (%t2, %s1) : f32[6,4]
  %r2 = Reshape "r2" (%r1, %s2) : f32[4,3,2]
  output %r2
}
)", R"(
graph @main {
  input %x : f32[2,3,4]
  %r2 = Transpose "t2" (%x) {perm = [2, 1, 0]} : f32[4,3,2]
  output %r2
}
)");  // the merged reshape became a no-op; the output keeps its name
}

TEST(SimplifyTest, PutsConstantsOnTheRight) {
  auto r = RunPipelineOnIr(R"(
graph @main {
  input %x : f32[3]
  const %c : f32[] = [3.0]
  %a = Add "a" (%c, %x) : f32[3]
  output %a
}
)", "simplify");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_NE(r->after_text.find("Add \"a\" (%x, %c)"), std::string::npos) << r->after_text;
  EXPECT_EQ(r->stats["operands-reordered"], 1);
}

// "[v0, v1, ...]": n distinct weights, so that a wrongly cut tap changes the result.
std::string Weights(int n) {
  std::vector<std::string> v;
  for (int i = 0; i < n; ++i) v.push_back(absl::StrCat((i * 37 % 19) - 9, ".5"));
  return absl::StrCat("[", absl::StrJoin(v, ", "), "]");
}

// Taps that read only padding for every output are cut (DeepLabV3's atrous pyramid on a small map):
// a 3x3 convolution of dilation 4 on a 3x3 map is its centre tap; with dilation 2 on 2 rows only the
// middle kernel row reads data, the columns all do. The results are the same (the reference
// interpreter on random inputs).
TEST(SimplifyTest, ConvTapsReadingOnlyPaddingAreCut) {
  auto r = RunPipelineOnIr(absl::StrCat(R"(
graph @main {
  input %x : f32[1,2,3,3]
  input %z : f32[1,1,2,5]
  const %w : f32[2,2,3,3] = )", Weights(36), R"(
  const %v : f32[1,1,3,3] = )", Weights(9), R"(
  %y = Conv "atrous" (%x, %w) {dilations = [4, 4], pads = [4, 4, 4, 4]} : f32[1,2,3,3]
  %u = Conv "rows" (%z, %v) {dilations = [2, 1], pads = [2, 1, 2, 1]} : f32[1,1,2,5]
  output %y, %u
}
)"), "simplify");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->stats["conv-padding-taps-dropped"], 2);
  const Node* atrous = r->after->FindNode("atrous");
  const Node* rows = r->after->FindNode("rows");
  ASSERT_TRUE(atrous != nullptr && rows != nullptr);
  EXPECT_EQ(atrous->input(1)->type().ToString(), "f32[2,2,1,1]");
  EXPECT_EQ(atrous->FindAttr("pads")->ints, (std::vector<int64_t>{0, 0, 0, 0}));
  EXPECT_EQ(rows->input(1)->type().ToString(), "f32[1,1,1,3]");
  EXPECT_EQ(rows->FindAttr("pads")->ints, (std::vector<int64_t>{0, 1, 0, 1}));
  absl::Status same = testing::CheckNumericallyEquivalent(*r->before, *r->after, 1e-5, 1e-5);
  EXPECT_TRUE(same.ok()) << same;
}

// Every tap reads data somewhere: nothing changes.
TEST(SimplifyTest, ConvWithLiveTapsStays) {
  auto r = RunPipelineOnIr(absl::StrCat(R"(
graph @main {
  input %x : f32[1,1,4,4]
  const %w : f32[1,1,3,3] = )", Weights(9), R"(
  %y = Conv "c" (%x, %w) {dilations = [2, 2], pads = [2, 2, 2, 2]} : f32[1,1,4,4]
  output %y
}
)"), "simplify");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->stats["conv-padding-taps-dropped"], 0);
}

}  // namespace
}  // namespace tessel
