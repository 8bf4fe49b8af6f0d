// Each sampling stage on hand-computed examples, the chain's order, greedy, seeded determinism and
// the draw's frequencies.
#include "llm/sampling/sampler.h"

#include <cmath>
#include <map>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessel::llm {
namespace {

using ::testing::ElementsAre;

std::vector<int32_t> Ids(const Candidates& c) {
  std::vector<int32_t> out;
  for (size_t i = 0; i < c.size(); ++i) out.push_back(c[i].id);
  return out;
}

// Logits log(p) for p = {0.1, 0.4, 0.05, 0.3, 0.15}: probabilities by hand.
std::vector<float> Example() {
  return {std::log(0.1f), std::log(0.4f), std::log(0.05f), std::log(0.3f), std::log(0.15f)};
}

TEST(SamplerStagesTest, TopK) {
  Candidates c(5);
  c.Reset(Example());
  MakeTopK(3)->Apply(c, {});
  EXPECT_THAT(Ids(c), ElementsAre(1, 3, 4));
  c.Reset(Example());
  MakeTopK(10)->Apply(c, {});  // k beyond the vocabulary keeps everything, sorted
  EXPECT_THAT(Ids(c), ElementsAre(1, 3, 4, 0, 2));
}

TEST(SamplerStagesTest, TopP) {
  Candidates c(5);
  c.Reset(Example());
  // Sorted: 0.4, 0.3, 0.15, 0.1, 0.05. Cumulative 0.4, 0.7, 0.85: p = 0.8 keeps three.
  MakeTopP(0.8f)->Apply(c, {});
  EXPECT_THAT(Ids(c), ElementsAre(1, 3, 4));
  EXPECT_NEAR(c[0].p, 0.4f, 1e-6);
  c.Reset(Example());
  MakeTopP(0.7f)->Apply(c, {});  // reaching p exactly stops there (0.4 + 0.3 = 0.7)
  EXPECT_THAT(Ids(c), ElementsAre(1, 3));
  c.Reset(Example());
  MakeTopP(0.1f)->Apply(c, {});  // at least one token
  EXPECT_THAT(Ids(c), ElementsAre(1));
}

TEST(SamplerStagesTest, MinP) {
  Candidates c(5);
  c.Reset(Example());
  // Threshold 0.3 * 0.4 = 0.12: 0.4, 0.3, 0.15 stay.
  MakeMinP(0.3f)->Apply(c, {});
  EXPECT_THAT(Ids(c), ElementsAre(1, 3, 4));
  c.Reset(Example());
  MakeMinP(0.125f)->Apply(c, {});  // threshold 0.05: everything stays
  EXPECT_EQ(c.size(), 5u);
  c.Reset(Example());
  MakeMinP(1.0f)->Apply(c, {});
  EXPECT_THAT(Ids(c), ElementsAre(1));
}

TEST(SamplerStagesTest, Temperature) {
  Candidates c(5);
  c.Reset({1.0f, -2.0f, 0.0f, 4.0f, 0.5f});
  MakeTemperature(0.5f)->Apply(c, {});
  EXPECT_EQ(c[0].logit, 2.0f);
  EXPECT_EQ(c[1].logit, -4.0f);
  EXPECT_EQ(c[3].logit, 8.0f);
  // Softmax at temperature 2 of logits {0, ln 4}: probabilities 1/3 and 2/3.
  Candidates d(2);
  d.Reset({0.0f, std::log(4.0f)});
  MakeTemperature(2.0f)->Apply(d, {});
  d.Softmax();
  EXPECT_NEAR(d[0].p, 1.0f / 3, 1e-6);
  EXPECT_NEAR(d[1].p, 2.0f / 3, 1e-6);
}

TEST(SamplerStagesTest, RepetitionPenalty) {
  Candidates c(5);
  c.Reset({2.0f, -1.0f, 3.0f, 0.5f, -0.5f});
  // Tokens 0, 1 and 3 are recent (0 twice: still one penalty); token 2 is older than last_n = 4.
  const int32_t history[] = {2, 0, 1, 0, 3};
  MakeRepetitionPenalty(2.0f, 4, 5)->Apply(c, history);
  EXPECT_EQ(c[0].logit, 1.0f);   // positive: divided
  EXPECT_EQ(c[1].logit, -2.0f);  // negative: multiplied
  EXPECT_EQ(c[2].logit, 3.0f);   // outside the window
  EXPECT_EQ(c[3].logit, 0.25f);
  EXPECT_EQ(c[4].logit, -0.5f);  // never seen
}

TEST(SamplerChainTest, GreedyAndDescription) {
  SamplingParams p;
  p.temperature = 0;
  p.repeat_penalty = 1.5f;
  auto chain = SamplerChain::Create(p, 5);
  ASSERT_TRUE(chain.ok());
  const std::vector<float> logits = {1.0f, 3.0f, 2.9f, 0.0f, 3.0f};
  EXPECT_EQ((*chain)->Sample(logits, {}), 1);  // ties go to the lower id
  const int32_t recent[] = {1, 4};
  EXPECT_EQ((*chain)->Sample(logits, recent), 2);  // 3 / 1.5 = 2 < 2.9
  EXPECT_EQ((*chain)->Describe(), "repeat-penalty 1.5 (last 64) -> greedy");
  p.temperature = 0.7f;
  p.seed = 9;
  chain = SamplerChain::Create(p, 100);
  EXPECT_EQ((*chain)->Describe(),
            "repeat-penalty 1.5 (last 64) -> top-k 40 -> top-p 0.95 -> min-p 0.05 -> temperature 0.7 -> draw (seed 9)");
}

TEST(SamplerChainTest, ChainLeavesTheExpectedCandidates) {
  SamplingParams p;
  p.temperature = 1.0f;
  p.top_k = 4;     // drops id 2 (0.05)
  p.top_p = 0.8f;  // of the renormalized 0.4/0.95, 0.3/0.95, 0.15/0.95, 0.1/0.95: 0.42, 0.74, 0.89 -> three
  p.min_p = 0.4f;  // threshold 0.4 * (0.4/0.85) = 0.188; 0.15/0.85 = 0.176 drops
  auto chain = SamplerChain::Create(p, 5);
  ASSERT_TRUE(chain.ok());
  const int32_t t = (*chain)->Sample(Example(), {});
  EXPECT_THAT(Ids((*chain)->candidates()), ElementsAre(1, 3));
  EXPECT_TRUE(t == 1 || t == 3);
}

TEST(SamplerChainTest, SeededDrawsAreDeterministicAndFollowTheProbabilities) {
  SamplingParams p;
  p.temperature = 1.0f;
  p.top_k = 0;
  p.top_p = 1.0f;
  p.min_p = 0.0f;
  p.seed = 1234;
  auto a = SamplerChain::Create(p, 5);
  auto b = SamplerChain::Create(p, 5);
  p.seed = 1235;
  auto c = SamplerChain::Create(p, 5);
  std::map<int32_t, int> counts;
  bool differs = false;
  const int n = 40000;
  for (int i = 0; i < n; ++i) {
    const int32_t x = (*a)->Sample(Example(), {});
    ASSERT_EQ(x, (*b)->Sample(Example(), {}));
    differs |= x != (*c)->Sample(Example(), {});
    ++counts[x];
  }
  EXPECT_TRUE(differs);
  const float want[] = {0.1f, 0.4f, 0.05f, 0.3f, 0.15f};
  for (int id = 0; id < 5; ++id) {
    const double f = static_cast<double>(counts[id]) / n;
    const double sigma = std::sqrt(want[id] * (1 - want[id]) / n);
    EXPECT_NEAR(f, want[id], 5 * sigma) << id;
  }
}

TEST(SamplerChainTest, RejectsBadParameters) {
  SamplingParams p;
  p.top_p = 0;
  EXPECT_FALSE(SamplerChain::Create(p, 5).ok());
  p = SamplingParams();
  p.min_p = 1.5f;
  EXPECT_FALSE(SamplerChain::Create(p, 5).ok());
  p = SamplingParams();
  p.repeat_penalty = 0;
  EXPECT_FALSE(SamplerChain::Create(p, 5).ok());
}

}  // namespace
}  // namespace tessel::llm
