// The runtime on random-weight models: paged vs contiguous cache, one prefill vs chunked prefill vs
// token-by-token decode, sequences sharing the pool, thread counts, tied embeddings, quantized
// weights vs their dequantized f32 copy, and errors for bad files and bad calls.
#include "llm/model/llama_runtime.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/gemv/gemv.h"
#include "llm/gguf/gguf.h"
#include "llm/matmul/row_dot.h"
#include "llm/model/llama_model.h"
#include "llm/model/testing/test_models.h"

namespace tessel::llm {
namespace {

using ::testing::HasSubstr;
using testing::SyntheticModelSpec;

std::unique_ptr<LlamaModel> Load(const std::string& path) {
  auto m = LoadModel(path);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : nullptr;
}

std::unique_ptr<LlamaRuntime> MakeRuntime(const LlamaModel& model, RuntimeOptions o) {
  auto r = LlamaRuntime::Create(model, o);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *std::move(r) : nullptr;
}

std::vector<int32_t> RandomTokens(int n, int vocab, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int32_t> t(n);
  for (int32_t& x : t) x = static_cast<int32_t>(rng() % vocab);
  return t;
}

RuntimeOptions AllLogits(int block_size = 16) {
  RuntimeOptions o;
  o.max_batch = 64;
  o.all_logits = true;
  o.kv_dtype = KvDType::kF32;
  o.kv_block_size = block_size;
  return o;
}

std::vector<float> Prefill(LlamaRuntime& r, const std::vector<int32_t>& tokens) {
  const int seq = *r.NewSequence();
  auto logits = r.Eval(seq, tokens);
  EXPECT_TRUE(logits.ok()) << logits.status();
  std::vector<float> out(logits->begin(), logits->end());
  EXPECT_TRUE(r.EndSequence(seq).ok());
  return out;
}

float MaxAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  float m = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

class RuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = testing::WriteSyntheticLlama(SyntheticModelSpec(), "synthetic.gguf");
    model_ = Load(path_);
    ASSERT_NE(model_, nullptr);
    tokens_ = RandomTokens(50, model_->config().vocab_size, 7);
  }
  std::string path_;
  std::unique_ptr<LlamaModel> model_;
  std::vector<int32_t> tokens_;
};

TEST_F(RuntimeTest, PagedCacheEqualsContiguousCache) {
  auto paged = MakeRuntime(*model_, AllLogits(16));
  auto odd = MakeRuntime(*model_, AllLogits(5));
  auto contiguous = MakeRuntime(*model_, AllLogits(128));  // one block holds the whole context
  const std::vector<float> a = Prefill(*paged, tokens_), b = Prefill(*odd, tokens_), c = Prefill(*contiguous, tokens_);
  // Only the key tiling of the online softmax differs: float rounding.
  EXPECT_LT(MaxAbsDiff(a, c), 1e-5);
  EXPECT_LT(MaxAbsDiff(b, c), 1e-5);
}

TEST_F(RuntimeTest, PrefillChunksAndDecodeAgree) {
  auto full = MakeRuntime(*model_, AllLogits());
  const std::vector<float> want = Prefill(*full, tokens_);
  const int64_t vocab = model_->config().vocab_size;
  // Chunked prefill: 7 + 13 + 30 tokens.
  auto chunked = MakeRuntime(*model_, AllLogits());
  const int seq = *chunked->NewSequence();
  std::vector<float> got;
  for (auto [begin, end] : {std::pair{0, 7}, std::pair{7, 20}, std::pair{20, 50}}) {
    auto l = chunked->Eval(seq, absl::MakeConstSpan(tokens_).subspan(begin, end - begin));
    ASSERT_TRUE(l.ok()) << l.status();
    got.insert(got.end(), l->begin(), l->end());
  }
  EXPECT_LT(MaxAbsDiff(got, want), 1e-4);
  // Token-by-token decode (GEMV path) against the prefill (GEMM path).
  RuntimeOptions o = AllLogits();
  o.all_logits = false;
  auto decode = MakeRuntime(*model_, o);
  const int s = *decode->NewSequence();
  for (size_t t = 0; t < tokens_.size(); ++t) {
    auto l = decode->Eval(s, absl::MakeConstSpan(&tokens_[t], 1));
    ASSERT_TRUE(l.ok());
    ASSERT_EQ(static_cast<int64_t>(l->size()), vocab);
    for (int64_t v = 0; v < vocab; ++v) ASSERT_NEAR((*l)[v], want[t * vocab + v], 1e-4) << "token " << t;
  }
  EXPECT_EQ(decode->SequenceLength(s), 50);
}

TEST_F(RuntimeTest, SequencesSharingThePoolDoNotInterfere) {
  RuntimeOptions o = AllLogits();
  o.all_logits = false;
  o.max_sequences = 3;
  auto r = MakeRuntime(*model_, o);
  const int total_blocks = r->kv_cache().num_blocks();
  const std::vector<int32_t> other = RandomTokens(40, model_->config().vocab_size, 8);
  // Alone.
  std::vector<std::vector<float>> alone_a, alone_b;
  using Run = std::pair<const std::vector<int32_t>*, std::vector<std::vector<float>>*>;
  for (auto [toks, out] : {Run{&tokens_, &alone_a}, Run{&other, &alone_b}}) {
    const int seq = *r->NewSequence();
    for (int32_t t : *toks) {
      auto l = r->Eval(seq, absl::MakeConstSpan(&t, 1));
      out->emplace_back(l->begin(), l->end());
    }
    ASSERT_TRUE(r->EndSequence(seq).ok());
  }
  EXPECT_EQ(r->kv_cache().free_blocks(), total_blocks);
  // Interleaved.
  const int a = *r->NewSequence();
  const int b = *r->NewSequence();
  for (size_t t = 0; t < tokens_.size(); ++t) {
    auto la = r->Eval(a, absl::MakeConstSpan(&tokens_[t], 1));
    EXPECT_EQ(std::vector<float>(la->begin(), la->end()), alone_a[t]) << t;
    if (t < other.size()) {
      auto lb = r->Eval(b, absl::MakeConstSpan(&other[t], 1));
      EXPECT_EQ(std::vector<float>(lb->begin(), lb->end()), alone_b[t]) << t;
    }
  }
  EXPECT_EQ(r->kv_cache().free_blocks(), total_blocks - 4 - 3);  // 50 and 40 tokens in blocks of 16
  ASSERT_TRUE(r->ResetSequence(a).ok());
  EXPECT_EQ(r->SequenceLength(a), 0);
  ASSERT_TRUE(r->EndSequence(b).ok());
  EXPECT_EQ(r->kv_cache().free_blocks(), total_blocks);
}

// Continuous batching: a step that runs several sequences at different positions as one forward pass
// (the matmuls see [rows, dim] like a prefill) gives each sequence the logits it gets alone, one Eval per
// sequence. Reference: single-sequence Eval calls on a second runtime. Tolerance 1e-4 relative to the
// largest logit: only the matmul path (GEMM rows vs GEMV) and its float summation order differ.
TEST_F(RuntimeTest, BatchedStepEqualsSingleSequenceSteps) {
  const int64_t vocab = model_->config().vocab_size;
  RuntimeOptions o = AllLogits();
  o.all_logits = false;
  o.max_sequences = 4;
  auto batched = MakeRuntime(*model_, o);
  auto single = MakeRuntime(*model_, o);
  ASSERT_EQ(batched->max_batch_items(), 4);
  std::vector<std::vector<int32_t>> prompts;
  for (int i = 0; i < 4; ++i) prompts.push_back(RandomTokens(3 + 7 * i, static_cast<int>(vocab), 20 + i));
  std::vector<int> bseq(4), sseq(4);
  for (int i = 0; i < 4; ++i) {
    bseq[i] = *batched->NewSequence();
    sseq[i] = *single->NewSequence();
  }
  // Step 0 mixes prefills of different lengths; later steps decode one token per sequence, and
  // sequence 3 joins only at step 2 (a request arriving while others decode).
  std::vector<int32_t> next(4);
  for (int step = 0; step < 6; ++step) {
    std::vector<SequenceTokens> items;
    std::vector<int> who;
    for (int i = 0; i < 4; ++i) {
      if (i == 3 && step < 2) continue;
      const bool prefill = (i == 3) ? step == 2 : step == 0;
      items.push_back({bseq[i], prefill ? absl::MakeConstSpan(prompts[i]) : absl::MakeConstSpan(&next[i], 1)});
      who.push_back(i);
    }
    auto got = batched->EvalBatch(items);
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(static_cast<int64_t>(got->size()), static_cast<int64_t>(items.size()) * vocab);
    const std::vector<float> rows(got->begin(), got->end());
    for (size_t r = 0; r < who.size(); ++r) {
      const int i = who[r];
      auto want = single->Eval(sseq[i], items[r].tokens);
      ASSERT_TRUE(want.ok()) << want.status();
      float scale = 0, diff = 0;
      for (int64_t v = 0; v < vocab; ++v) {
        scale = std::max(scale, std::fabs((*want)[v]));
        diff = std::max(diff, std::fabs((*want)[v] - rows[r * vocab + v]));
      }
      EXPECT_LE(diff, 1e-4f * scale) << "step " << step << " sequence " << i;
      next[i] = static_cast<int32_t>(std::max_element(want->begin(), want->end()) - want->begin());
      EXPECT_EQ(batched->SequenceLength(bseq[i]), single->SequenceLength(sseq[i]));
    }
  }
}

TEST_F(RuntimeTest, EvalBatchErrorsChangeNothing) {
  RuntimeOptions o = AllLogits();
  o.all_logits = false;
  o.max_sequences = 2;
  o.max_context = 60;
  o.max_batch = 20;
  auto r = MakeRuntime(*model_, o);
  const int a = *r->NewSequence();
  const int b = *r->NewSequence();
  const int32_t one[] = {5};
  EXPECT_EQ(r->EvalBatch({}).status().code(), absl::StatusCode::kInvalidArgument);
  const SequenceTokens twice[] = {{a, one}, {a, one}};
  EXPECT_THAT(std::string(r->EvalBatch(twice).status().message()), HasSubstr("appears twice"));
  const SequenceTokens three[] = {{a, one}, {b, one}, {b + 1, one}};
  EXPECT_THAT(std::string(r->EvalBatch(three).status().message()), HasSubstr("rows of logits"));
  const SequenceTokens too_many[] = {{a, absl::MakeConstSpan(tokens_).subspan(0, 15)},
                                     {b, absl::MakeConstSpan(tokens_).subspan(0, 15)}};
  EXPECT_THAT(std::string(r->EvalBatch(too_many).status().message()), HasSubstr("exceed the batch"));
  const int32_t bad[] = {100000};
  const SequenceTokens bad_token[] = {{a, one}, {b, bad}};
  EXPECT_THAT(std::string(r->EvalBatch(bad_token).status().message()), HasSubstr("outside the vocabulary"));
  EXPECT_EQ(r->SequenceLength(a), 0);
  EXPECT_EQ(r->SequenceLength(b), 0);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(r->Eval(b, absl::MakeConstSpan(tokens_).subspan(0, 20)).ok());
  const SequenceTokens full[] = {{a, one}, {b, one}};
  EXPECT_EQ(r->EvalBatch(full).status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(r->SequenceLength(a), 0);
}

TEST_F(RuntimeTest, ThreadCountDoesNotChangeResults) {
  RuntimeOptions o = AllLogits();
  const std::vector<float> one = Prefill(*MakeRuntime(*model_, o), tokens_);
  o.threads = 3;
  EXPECT_EQ(Prefill(*MakeRuntime(*model_, o), tokens_), one);
}

TEST_F(RuntimeTest, F16CacheIsCloseToF32) {
  RuntimeOptions o = AllLogits();
  const std::vector<float> f32 = Prefill(*MakeRuntime(*model_, o), tokens_);
  o.kv_dtype = KvDType::kF16;
  EXPECT_LT(MaxAbsDiff(Prefill(*MakeRuntime(*model_, o), tokens_), f32), 2e-2);
}

TEST_F(RuntimeTest, EvalErrors) {
  RuntimeOptions o = AllLogits();
  o.max_context = 60;
  o.max_batch = 20;
  auto r = MakeRuntime(*model_, o);
  const int seq = *r->NewSequence();
  EXPECT_EQ(r->Eval(seq, tokens_).status().code(), absl::StatusCode::kInvalidArgument);  // 50 > batch of 20
  EXPECT_EQ(r->Eval(seq, {}).status().code(), absl::StatusCode::kInvalidArgument);
  const int32_t bad[] = {5, 100000};
  EXPECT_THAT(std::string(r->Eval(seq, bad).status().message()), HasSubstr("outside the vocabulary"));
  EXPECT_EQ(r->Eval(seq + 1, absl::MakeConstSpan(tokens_).subspan(0, 5)).status().code(),
            absl::StatusCode::kInvalidArgument);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(r->Eval(seq, absl::MakeConstSpan(tokens_).subspan(0, 20)).ok());
  auto full = r->Eval(seq, absl::MakeConstSpan(tokens_).subspan(0, 1));
  EXPECT_EQ(full.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(std::string(full.status().message()), HasSubstr("context is full"));
  o.threads = 0;
  EXPECT_EQ(LlamaRuntime::Create(*model_, o).status().code(), absl::StatusCode::kInvalidArgument);
}

// Sizes from the file and the caller are checked before anything is allocated: a context length past
// kMaxContextLength is a load error naming the key, and a plan larger than the memory ceiling (or than
// 64 bits) is refused by Create. The plans below ask for terabytes; nothing of them is allocated.
TEST(SizeLimitsTest, ContextLengthBeyondTheBoundIsALoadError) {
  GgufWriter w = testing::MakeSyntheticLlama(SyntheticModelSpec());
  w.SetUint32("llama.context_length", 0xffffffffu);
  const std::string path = testing::TempPath("huge_context.gguf");
  ASSERT_TRUE(w.WriteFile(path).ok());
  auto model = LoadModel(path);
  EXPECT_EQ(model.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(model.status().message()),
              HasSubstr("llama.context_length is 4294967295, more than the 16777216 tokens Tessel accepts"));
  w.SetUint32("llama.context_length", 128);
  w.SetUint32("llama.attention.sliding_window", 0xffffffffu);
  ASSERT_TRUE(w.WriteFile(path).ok());
  EXPECT_THAT(std::string(LoadModel(path).status().message()), HasSubstr("llama.attention.sliding_window is 4294967295"));
}

TEST(SizeLimitsTest, CreateRefusesPlansBeyondMemoryBeforeAllocating) {
  SyntheticModelSpec spec;
  spec.context = 1 << 24;  // the longest a file may declare: 4.3 GB of f16 KV cache for this model
  auto model = Load(testing::WriteSyntheticLlama(spec, "long_context.gguf"));
  ASSERT_NE(model, nullptr);
  RuntimeOptions o;
  ::setenv("TESSEL_MEMORY_LIMIT", "1000000000", 1);
  auto r = LlamaRuntime::Create(*model, o);
  ::unsetenv("TESSEL_MEMORY_LIMIT");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(r.status().message(),
            "a context of 16777216 tokens (KV cache 4.29 GB in f16, activations 1.07 GB) needs 5.37 GB; "
            "TESSEL_MEMORY_LIMIT is 1.00 GB");
  // 2^20 sequences of 2^24 tokens: 4.5 PB, beyond any machine.
  o.max_sequences = 1 << 20;
  r = LlamaRuntime::Create(*model, o);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("this machine has"));
  // 2^31 - 1 sequences of 2^24 tokens of 512 bytes (f32): the KV cache's size overflows 64 bits.
  o.max_sequences = std::numeric_limits<int>::max();
  o.kv_dtype = KvDType::kF32;
  r = LlamaRuntime::Create(*model, o);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("overflow 64-bit sizes"));
}

TEST(SlidingWindowTest, ComesFromMetadataOrOptions) {
  SyntheticModelSpec spec;
  spec.sliding_window = 8;
  auto windowed = Load(testing::WriteSyntheticLlama(spec, "window.gguf"));
  ASSERT_EQ(windowed->config().sliding_window, 8);
  spec.sliding_window = 0;
  auto plain = Load(testing::WriteSyntheticLlama(spec, "plain.gguf"));
  ASSERT_EQ(plain->config().sliding_window, 0);
  const std::vector<int32_t> tokens = RandomTokens(40, spec.vocab, 11);
  RuntimeOptions o = AllLogits();
  const std::vector<float> from_metadata = Prefill(*MakeRuntime(*windowed, o), tokens);
  const std::vector<float> full = Prefill(*MakeRuntime(*plain, o), tokens);
  o.sliding_window = 8;
  EXPECT_EQ(Prefill(*MakeRuntime(*plain, o), tokens), from_metadata);
  EXPECT_GT(MaxAbsDiff(full, from_metadata), 1e-3);  // positions past the window differ
  // The first 8 positions see the same keys either way.
  const int64_t vocab = spec.vocab;
  EXPECT_LT(MaxAbsDiff(std::vector<float>(full.begin(), full.begin() + 8 * vocab),
                       std::vector<float>(from_metadata.begin(), from_metadata.begin() + 8 * vocab)),
            1e-6);
}

TEST(TiedEmbeddingsTest, MissingOutputUsesTheEmbedding) {
  SyntheticModelSpec spec;
  spec.tied = true;
  const std::string tied = testing::WriteSyntheticLlama(spec, "tied.gguf");
  // The same model with output.weight spelled out as a copy of the embedding.
  auto f = GgufFile::Open(tied);
  ASSERT_TRUE(f.ok());
  const GgufTensorInfo* emb = (*f)->FindTensor("token_embd.weight");
  GgufWriter w = testing::MakeSyntheticLlama(spec);
  ASSERT_TRUE(w.AddTensor("output.weight", emb->type, emb->dims,
                          absl::string_view(reinterpret_cast<const char*>(emb->data), emb->size_bytes))
                  .ok());
  const std::string untied = testing::TempPath("untied.gguf");
  ASSERT_TRUE(w.WriteFile(untied).ok());
  auto a = Load(tied);
  auto b = Load(untied);
  ASSERT_TRUE(a->config().tied_embeddings);
  ASSERT_FALSE(b->config().tied_embeddings);
  const std::vector<int32_t> tokens = RandomTokens(20, spec.vocab, 3);
  EXPECT_EQ(Prefill(*MakeRuntime(*a, AllLogits()), tokens), Prefill(*MakeRuntime(*b, AllLogits()), tokens));
}

// Quantized weights against an f32 file holding exactly their dequantized values: the kernels may
// only differ by float rounding (summation order).
TEST(QuantizedWeightsTest, MatchTheirDequantizedCopy) {
  for (GgmlType type : {GgmlType::kF16, GgmlType::kBF16, GgmlType::kQ8_0, GgmlType::kQ4_0, GgmlType::kQ4_1}) {
    SyntheticModelSpec spec;
    spec.type = type;
    const std::string name(GgmlTypeName(type));
    const std::string q = testing::WriteSyntheticLlama(spec, name + ".gguf");
    const std::string f = testing::TempPath(name + "-dequantized.gguf");
    ASSERT_TRUE(testing::ConvertGguf(q, f, GgmlType::kF32).ok());
    auto qm = Load(q);
    auto fm = Load(f);
    ASSERT_EQ(qm->WeightTypeSummary(), name);
    ASSERT_EQ(fm->WeightTypeSummary(), "F32");
    const std::vector<int32_t> tokens = RandomTokens(33, spec.vocab, 5);
    RuntimeOptions o = AllLogits();
    // Q4_0 / Q8_0 prefill quantizes activations to int8 too where the CPU has the multi-token int8
    // kernels (kernels/gemv GemmQ8Kernels), and Q4_1 where it is repacked for the group Panel16
    // kernels: the same bound as decode below.
    // Q4_0 / Q8_0 repacked for the Panel16 kernels (AVX2 or AVX-512 VNNI) quantize x as well.
    const bool q4_1_int8 = type == GgmlType::kQ4_1 && Panel16Available(type);
    const bool panel16_int8 = (type == GgmlType::kQ8_0 || type == GgmlType::kQ4_0) && Panel16Available(type);
    const bool int8_prefill = (type == GgmlType::kQ8_0 && FastGemmQ8Kernel(GemvFormat::kQ8_0)) ||
                              (type == GgmlType::kQ4_0 && FastGemmQ8Kernel(GemvFormat::kQ4_0)) || q4_1_int8 ||
                              panel16_int8;
    const std::vector<float> pq = Prefill(*MakeRuntime(*qm, o), tokens), pf = Prefill(*MakeRuntime(*fm, o), tokens);
    float prange = 0;
    for (float v : pf) prange = std::max(prange, std::fabs(v));
    EXPECT_LT(MaxAbsDiff(pq, pf), int8_prefill ? 2e-2f * prange : 2e-5f) << name << ", logits up to " << prange;
    o.all_logits = false;  // decode: the GEMV kernels that read quantized blocks directly
    auto qr = MakeRuntime(*qm, o);
    auto fr = MakeRuntime(*fm, o);
    const int qs = *qr->NewSequence(), fs = *fr->NewSequence();
    // Q4_0 / Q8_0 decode quantizes activations to int8 per 32-block where the CPU has int8 dot
    // products (kernels/gemv): each activation moves by up to 1/254 of its block's maximum, so the
    // logits may differ by about a percent of their range, not just by float rounding.
    const bool int8_x = (type == GgmlType::kQ8_0 && FastGemvQ8Kernel(GemvFormat::kQ8_0)) ||
                        (type == GgmlType::kQ4_0 && FastGemvQ8Kernel(GemvFormat::kQ4_0)) || q4_1_int8 ||
                        panel16_int8;
    for (int32_t t : tokens) {
      auto lq = qr->Eval(qs, absl::MakeConstSpan(&t, 1));
      std::vector<float> vq(lq->begin(), lq->end());
      auto lf = fr->Eval(fs, absl::MakeConstSpan(&t, 1));
      std::vector<float> vf(lf->begin(), lf->end());
      float range = 0;
      for (float v : vf) range = std::max(range, std::fabs(v));
      // Q4_1's mins also meet the rounding of each block's sum of x: 2.1% of the range measured here.
      const float int8_bound = type == GgmlType::kQ4_1 ? 3e-2f : 2e-2f;
      ASSERT_LT(MaxAbsDiff(vq, vf), int8_x ? int8_bound * range : 2e-5f) << name << ", logits up to " << range;
    }
  }
}

// Logits of `packed` against `mapped` (the same file in two layouts) over `tokens`: the whole prompt at
// once (prefill), then token by token (decode), each within `tolerance` x the largest prefill logit.
void ExpectSameLogits(const LlamaModel& packed, const LlamaModel& mapped, const std::vector<int32_t>& tokens,
                      float tolerance, const std::string& name) {
  const std::vector<float> pp = Prefill(*MakeRuntime(packed, AllLogits()), tokens);
  const std::vector<float> pm = Prefill(*MakeRuntime(mapped, AllLogits()), tokens);
  float range = 0;
  for (float v : pm) range = std::max(range, std::fabs(v));
  EXPECT_LT(MaxAbsDiff(pp, pm), tolerance * range) << name << " prefill, logits up to " << range;
  RuntimeOptions o = AllLogits();
  o.all_logits = false;
  auto rp = MakeRuntime(packed, o);
  auto rm = MakeRuntime(mapped, o);
  const int sp = *rp->NewSequence(), sm = *rm->NewSequence();
  for (int32_t t : tokens) {
    auto lp = rp->Eval(sp, absl::MakeConstSpan(&t, 1));
    std::vector<float> vp(lp->begin(), lp->end());
    auto lm = rm->Eval(sm, absl::MakeConstSpan(&t, 1));
    std::vector<float> vm(lm->begin(), lm->end());
    ASSERT_LT(MaxAbsDiff(vp, vm), tolerance * range) << name << " decode";
  }
}

// The model at `path` loaded for decode (a huge-page copy, repacked where this CPU has the kernels, then
// `packed_layout`) against the same files used as mapped (the file's rows): same bytes per token up
// to Panel16's padding, and the same logits within `tolerance` of their range (ExpectSameLogits).
void ExpectRepackedMatchesMapped(const std::string& path, bool has_kernels, const std::string& packed_layout,
                                 float tolerance, const SyntheticModelSpec& spec, uint32_t seed,
                                 const std::string& name) {
  auto packed = LoadModel(path, FileLoad::kHugePageCopy);
  auto mapped = LoadModel(path, FileLoad::kMap);
  ASSERT_TRUE(packed.ok() && mapped.ok()) << packed.status() << mapped.status();
  ASSERT_EQ((*mapped)->WeightLayoutSummary(), "ggml rows");
  ASSERT_EQ((*packed)->WeightLayoutSummary(), has_kernels ? packed_layout : "ggml rows") << name;
  if (!has_kernels) GTEST_SKIP() << name << ": this CPU has no kernels for the repacked layout";
  EXPECT_GE((*packed)->WeightBytesPerToken(), (*mapped)->WeightBytesPerToken());  // padding only
  ExpectSameLogits(**packed, **mapped, RandomTokens(29, spec.vocab, seed), tolerance, name);
}

// Q4_0 / Q8_0 repacked at load (Panel16) against the mapped ggml rows. Where the rows have int8-input
// kernels too (AVX-512 VNNI): the same int8 activations and integer dot products, so the logits may
// differ by float summation order only. Where only the Panel16 kernels quantize x (AVX2), the mapped
// rows run the f32-input kernels: within 2% of the range, as the group layouts below.
TEST(QuantizedWeightsTest, Panel16LayoutMatchesMappedRows) {
  for (GgmlType type : {GgmlType::kQ8_0, GgmlType::kQ4_0}) {
    SyntheticModelSpec spec;
    spec.type = type;
    const std::string name(GgmlTypeName(type));
    const std::string path = testing::WriteSyntheticLlama(spec, name + "-layouts.gguf");
    const GemvFormat format = type == GgmlType::kQ8_0 ? GemvFormat::kQ8_0 : GemvFormat::kQ4_0;
    const float tolerance = FastGemvQ8Kernel(format) != nullptr ? 1e-4f : 2e-2f;
    ExpectRepackedMatchesMapped(path, Panel16Available(type), "Panel16", tolerance, spec, 11, name);
  }
}

// The load-time repack on one thread (`tessel --threads 1`) and on several lays out the same bytes: the
// same kernels then give bit-identical logits.
TEST(QuantizedWeightsTest, RepackThreadCountDoesNotChangeTheModel) {
  SyntheticModelSpec spec;
  spec.type = GgmlType::kQ4_0;
  const std::string path = testing::WriteSyntheticLlama(spec, "q4_0-repack-threads.gguf");
  auto one = LoadModel(path, FileLoad::kHugePageCopy, 1);
  auto three = LoadModel(path, FileLoad::kHugePageCopy, 3);
  ASSERT_TRUE(one.ok() && three.ok()) << one.status() << three.status();
  EXPECT_EQ((*one)->WeightLayoutSummary(), (*three)->WeightLayoutSummary());
  const std::vector<int32_t> tokens = RandomTokens(17, spec.vocab, 5);
  const std::vector<float> a = Prefill(*MakeRuntime(**one, AllLogits()), tokens);
  const std::vector<float> b = Prefill(*MakeRuntime(**three, AllLogits()), tokens);
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(MaxAbsDiff(a, b), 0.0f);
}

// Tessel's INT4 / INT3 group types and ggml's Q4_1 repacked at load (the group Panel16 layout) against
// the mapped rows (f32-input kernels). The packed kernels quantize x to int8 per 32-block (llama.cpp's q8_0
// activations), the mapped ones do not, so the logits differ by that rounding: within 2% of their
// range (1.1-1.5% measured), against 120-200% for a packed load whose zero points were replaced by 8.
// Widths: dim 128 (half a 256-column unit), ffn 384 (a unit and a half).
TEST(QuantizedWeightsTest, GroupPanel16LayoutMatchesMappedRows) {
  for (GgmlType type : {GgmlType::kTesselI4G128, GgmlType::kTesselI4G64A, GgmlType::kTesselI4G32,
                        GgmlType::kTesselI3G128, GgmlType::kTesselI3G32A, GgmlType::kQ4_1}) {
    SyntheticModelSpec spec;
    spec.type = type;
    spec.dim = 128;
    spec.ffn = 384;
    const std::string name(GgmlTypeName(type));
    const std::string path = testing::WriteSyntheticLlama(spec, name + "-layouts.gguf");
    ExpectRepackedMatchesMapped(path, Panel16Available(type), "Panel16", 2e-2f, spec, 11, name);
  }
}

// F16 / BF16 loaded for decode (a huge-page copy; the FFN down projections, 2112 columns, in column
// blocks where the AVX-512 row kernels read them) against the same weights used as mapped (rows): the
// same products, summed block by block, so the logits differ by float summation order only. From a GGUF
// file, and from a Hugging Face directory (safetensors), which loads the same way: mapped first, then
// repacked and the mapped pages released.
TEST(HalfWeightsTest, ColumnBlocksMatchMappedRows) {
  for (GgmlType type : {GgmlType::kF16, GgmlType::kBF16}) {
    SyntheticModelSpec spec;
    spec.type = type;
    spec.ffn = static_cast<int>(kColumnBlockCols) + 64;
    const std::string name(GgmlTypeName(type));
    const std::string layout = "ggml rows, column blocks for 2 wide matrices";
    ExpectRepackedMatchesMapped(testing::WriteSyntheticLlama(spec, name + "-blocks.gguf"), ColumnBlocksAvailable(type),
                                layout, 1e-5f, spec, 5, name);
    ExpectRepackedMatchesMapped(testing::WriteSyntheticHuggingFace(spec, name + "-hf"), ColumnBlocksAvailable(type),
                                layout, 1e-5f, spec, 5, name + " (Hugging Face)");
  }
}

// --- bad model files ------------------------------------------------------------------------------

absl::Status LoadStatus(GgufWriter& w, const std::string& name) {
  const std::string path = testing::TempPath(name);
  EXPECT_TRUE(w.WriteFile(path).ok());
  return LoadModel(path).status();
}

TEST(ModelLoadErrorsTest, ClearErrors) {
  SyntheticModelSpec spec;
  GgufWriter w = testing::MakeSyntheticLlama(spec);
  w.RemoveTensor("blk.1.ffn_up.weight");
  absl::Status s = LoadStatus(w, "missing.gguf");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(s.message()), HasSubstr("'blk.1.ffn_up.weight' is missing"));

  w = testing::MakeSyntheticLlama(spec);
  w.RemoveTensor("blk.0.attn_k.weight");
  ASSERT_TRUE(w.AddTensor("blk.0.attn_k.weight", GgmlType::kF32, {64, 64}, std::string(64 * 64 * 4, '\0')).ok());
  s = LoadStatus(w, "shape.gguf");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("'blk.0.attn_k.weight' is 64 x 64"));

  w = testing::MakeSyntheticLlama(spec);
  w.RemoveTensor("blk.0.ffn_down.weight");
  ASSERT_TRUE(w.AddTensor("blk.0.ffn_down.weight", GgmlType::kIQ3_S, {256, 64}, std::string(64 * 110, '\0')).ok());
  s = LoadStatus(w, "iq4xs.gguf");
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(s.message()), HasSubstr("type IQ3_S"));

  w = testing::MakeSyntheticLlama(spec);
  w.Remove("llama.block_count");
  s = LoadStatus(w, "nometa.gguf");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(s.message()), HasSubstr("llama.block_count"));

  w = testing::MakeSyntheticLlama(spec);
  w.SetUint32("llama.attention.head_count", 3);
  EXPECT_THAT(std::string(LoadStatus(w, "heads.gguf").message()), HasSubstr("is not 3 heads"));

  w = testing::MakeSyntheticLlama(spec);
  w.SetString("llama.embedding_length", "64");
  EXPECT_THAT(std::string(LoadStatus(w, "type.gguf").message()), HasSubstr("is string; expected an integer"));

  w = testing::MakeSyntheticLlama(spec);
  w.SetString("general.architecture", "gpt2");
  EXPECT_EQ(LoadStatus(w, "arch.gguf").code(), absl::StatusCode::kUnimplemented);

  w = testing::MakeSyntheticLlama(spec);
  w.SetString("llama.rope.scaling.type", "yarn");
  EXPECT_EQ(LoadStatus(w, "yarn.gguf").code(), absl::StatusCode::kUnimplemented);

  EXPECT_EQ(LoadModel("/nonexistent.gguf").status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace tessel::llm
