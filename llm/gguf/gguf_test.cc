// GGUF reader and writer: round trips of every value type, exact block layouts against hand-computed
// blocks, and clear errors (never crashes) for malformed files, including a random-mutation loop.
#include "llm/gguf/gguf.h"

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/fp16.h"
#include "llm/gguf/ggml_types.h"
#include "llm/gguf/gguf_writer.h"

namespace tessel::llm {
namespace {

using ::testing::HasSubstr;

absl::StatusOr<std::unique_ptr<GgufFile>> ParseBytes(const std::string& bytes) {
  return GgufFile::Parse(MappedFile::FromBytes(bytes, "test.gguf"));
}

template <typename T>
void Put(std::string* s, T v) {
  s->append(reinterpret_cast<const char*>(&v), sizeof(T));
}

void PutString(std::string* s, const std::string& v) {
  Put<uint64_t>(s, v.size());
  *s += v;
}

std::string Floats(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

// A small valid file: two metadata entries and one F32 tensor [4, 2].
std::string SmallFile() {
  GgufWriter w;
  w.SetString("general.architecture", "llama");
  w.SetUint32("llama.block_count", 2);
  EXPECT_TRUE(w.AddTensor("t", GgmlType::kF32, {4, 2}, Floats({1, 2, 3, 4, 5, 6, 7, 8})).ok());
  return w.Serialize();
}

TEST(GgufTest, MetadataRoundTripsEveryType) {
  GgufWriter w;
  w.SetString("s", "héllo");
  w.SetUint32("u32", 4000000000u);
  w.SetInt32("i32", -7);
  w.SetUint64("u64", 1ull << 40);
  w.SetFloat32("f32", 0.25f);
  w.SetBool("b", true);
  w.SetStringArray("sa", {"a", "", "ccc"});
  w.SetFloat32Array("fa", {1.5f, -2.0f});
  w.SetInt32Array("ia", {3, -4, 5});
  std::string u8 = {static_cast<char>(200)};
  w.SetRaw("u8", GgufType::kUint8, u8);
  std::string f64;
  Put<double>(&f64, 3.0);
  w.SetRaw("f64", GgufType::kFloat64, f64);
  std::string i16arr;
  Put<uint32_t>(&i16arr, static_cast<uint32_t>(GgufType::kInt16));
  Put<uint64_t>(&i16arr, 2);
  Put<int16_t>(&i16arr, -300);
  Put<int16_t>(&i16arr, 300);
  w.SetRaw("i16a", GgufType::kArray, i16arr);
  w.SetUint32("replaced", 1);
  w.SetUint32("replaced", 2);

  auto g = ParseBytes(w.Serialize());
  ASSERT_TRUE(g.ok()) << g.status();
  const GgufFile& f = **g;
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.metadata().size(), 13u);
  EXPECT_EQ(*f.GetString("s"), "héllo");
  EXPECT_EQ(*f.GetInt("u32"), 4000000000ll);
  EXPECT_EQ(*f.GetInt("i32"), -7);
  EXPECT_EQ(*f.GetInt("u64"), 1ll << 40);
  EXPECT_EQ(*f.GetFloat("f32"), 0.25);
  EXPECT_EQ(*f.GetFloat("u32"), 4e9);  // integers read as numbers
  EXPECT_TRUE(*f.GetBool("b"));
  EXPECT_THAT(*f.GetStringArray("sa"), ::testing::ElementsAre("a", "", "ccc"));
  EXPECT_THAT(*f.GetFloatArray("fa"), ::testing::ElementsAre(1.5, -2.0));
  EXPECT_THAT(*f.GetIntArray("ia"), ::testing::ElementsAre(3, -4, 5));
  EXPECT_THAT(*f.GetIntArray("i16a"), ::testing::ElementsAre(-300, 300));
  EXPECT_EQ(*f.GetInt("u8"), 200);
  EXPECT_EQ(*f.GetFloat("f64"), 3.0);
  EXPECT_EQ(*f.GetInt("replaced"), 2);
  EXPECT_EQ(*f.GetIntOr("absent", 42), 42);
  EXPECT_EQ(*f.GetStringOr("absent", "x"), "x");

  // Wrong types name the key and both types; absent keys are NotFound.
  auto bad = f.GetInt("s");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("'s' is string; expected an integer"));
  EXPECT_THAT(std::string(f.GetStringArray("fa").status().message()), HasSubstr("array of float32"));
  EXPECT_EQ(f.GetBool("absent").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(f.GetFloat("b").status().code(), absl::StatusCode::kInvalidArgument);

  // Copying raw values reproduces the file byte for byte.
  GgufWriter copy;
  copy.CopyMetadata(f);
  EXPECT_EQ(copy.Serialize(), w.Serialize());
}

TEST(GgufTest, TensorsAreAlignedZeroCopyViews) {
  for (uint32_t align : {32u, 64u, 256u}) {
    GgufWriter w;
    if (align != 32) w.SetUint32("general.alignment", align);
    std::vector<float> a(3 * 32);
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i) * 0.5f;
    std::vector<uint8_t> q(2 * sizeof(BlockQ4_0), 7);
    ASSERT_TRUE(w.AddTensor("a", GgmlType::kF32, {32, 3}, Floats(a)).ok());
    ASSERT_TRUE(w.AddTensor("q", GgmlType::kQ4_0, {64}, std::string(q.begin(), q.end())).ok());
    ASSERT_TRUE(w.AddTensor("h", GgmlType::kF16, {3}, std::string(6, '\1')).ok());
    auto g = ParseBytes(w.Serialize());
    ASSERT_TRUE(g.ok()) << g.status();
    EXPECT_EQ((*g)->alignment(), align);
    ASSERT_EQ((*g)->tensors().size(), 3u);
    const GgufTensorInfo* t = *(*g)->GetTensor("a");
    EXPECT_EQ(t->row_length(), 32);
    EXPECT_EQ(t->num_rows(), 3);
    EXPECT_EQ(t->size_bytes, 3 * 32 * 4u);
    EXPECT_EQ(std::memcmp(t->data, a.data(), t->size_bytes), 0);
    EXPECT_EQ(t->ShapeString(), "[32, 3]");
    const GgufTensorInfo* qt = *(*g)->GetTensor("q");
    EXPECT_EQ(qt->type, GgmlType::kQ4_0);
    EXPECT_EQ(qt->size_bytes, 36u);
    for (const GgufTensorInfo& ti : (*g)->tensors()) {
      EXPECT_EQ((ti.data - (*g)->file()->data()) % align, 0u) << ti.name;
    }
    auto missing = (*g)->GetTensor("nope");
    EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
    EXPECT_THAT(std::string(missing.status().message()), HasSubstr("'nope'"));
  }
}

TEST(GgufTest, WriterRejectsWrongSizes) {
  GgufWriter w;
  EXPECT_EQ(w.AddTensor("x", GgmlType::kQ8_0, {31}, std::string(34, 0)).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(w.AddTensor("x", GgmlType::kQ8_0, {32}, std::string(33, 0)).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(w.AddTensor("x", GgmlType::kQ8_0, {32}, std::string(34, 0)).ok());
  EXPECT_EQ(w.AddTensor("x", GgmlType::kQ8_0, {32}, std::string(34, 0)).code(), absl::StatusCode::kAlreadyExists);
}

// Block layouts by hand: ggml's Q4_0 keeps element j in the low nibble of qs[j] and element j + 16 in
// the high nibble; Q4_1 adds the minimum m; Q8_0 is int8 times d.
TEST(GgmlTypesTest, BlockLayoutsMatchHandComputation) {
  BlockQ4_0 q40;
  q40.d = FloatToHalf(0.5f);
  for (int j = 0; j < 16; ++j) q40.qs[j] = static_cast<uint8_t>(j | ((15 - j) << 4));
  float out[32];
  DequantizeRow(GgmlType::kQ4_0, &q40, out, 32);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(out[j], (j - 8) * 0.5f) << j;
    EXPECT_EQ(out[j + 16], (15 - j - 8) * 0.5f) << j;
  }
  BlockQ4_1 q41;
  q41.d = FloatToHalf(0.25f);
  q41.m = FloatToHalf(-1.0f);
  for (int j = 0; j < 16; ++j) q41.qs[j] = static_cast<uint8_t>((j % 4) | (j << 4));
  DequantizeRow(GgmlType::kQ4_1, &q41, out, 32);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(out[j], (j % 4) * 0.25f - 1.0f);
    EXPECT_EQ(out[j + 16], j * 0.25f - 1.0f);
  }
  BlockQ8_0 q80;
  q80.d = FloatToHalf(0.125f);
  for (int j = 0; j < 32; ++j) q80.qs[j] = static_cast<int8_t>(j * 8 - 128);
  DequantizeRow(GgmlType::kQ8_0, &q80, out, 32);
  for (int j = 0; j < 32; ++j) EXPECT_EQ(out[j], (j * 8 - 128) * 0.125f);
}

TEST(GgmlTypesTest, QuantizeFollowsGgmlRounding) {
  // Q4_0: the signed value of largest magnitude maps to -8, so d = max / -8.
  float x[32];
  for (int j = 0; j < 32; ++j) x[j] = (j - 16) * 0.5f;  // -8 .. 7.5; max magnitude -8
  BlockQ4_0 q40;
  QuantizeRow(GgmlType::kQ4_0, x, &q40, 32);
  EXPECT_EQ(HalfToFloat(q40.d), 1.0f);
  float y[32];
  DequantizeRow(GgmlType::kQ4_0, &q40, y, 32);
  for (int j = 0; j < 32; ++j) {
    // q = min(15, trunc(x / d + 8.5)): x = -8 -> 0 (value -8), x = 7.5 -> 15 (value 7).
    const float want = std::fmin(7.0f, std::floor(x[j] + 8.5f) - 8.0f);
    EXPECT_EQ(y[j], want) << j;
  }
  // Q8_0: d = amax / 127, q = round(x / d), halves away from zero.
  for (int j = 0; j < 32; ++j) x[j] = j == 0 ? 127.0f : (j - 16) + 0.5f;
  BlockQ8_0 q80;
  QuantizeRow(GgmlType::kQ8_0, x, &q80, 32);
  EXPECT_EQ(HalfToFloat(q80.d), 1.0f);
  for (int j = 1; j < 32; ++j) EXPECT_EQ(q80.qs[j], static_cast<int>(std::round(x[j]))) << j;
  // Q4_1: d = (max - min) / 15, m = min, q = trunc((x - min) / d + 0.5).
  for (int j = 0; j < 32; ++j) x[j] = 1.0f + j % 16;
  BlockQ4_1 q41;
  QuantizeRow(GgmlType::kQ4_1, x, &q41, 32);
  EXPECT_EQ(HalfToFloat(q41.d), 1.0f);
  EXPECT_EQ(HalfToFloat(q41.m), 1.0f);
  DequantizeRow(GgmlType::kQ4_1, &q41, y, 32);
  for (int j = 0; j < 32; ++j) EXPECT_EQ(y[j], x[j]);
}

TEST(GgmlTypesTest, QuantizationErrorIsWithinHalfAStep) {
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(256), y(256);
  for (float& v : x) v = dist(rng);
  for (GgmlType t : {GgmlType::kQ8_0, GgmlType::kQ4_0, GgmlType::kQ4_1, GgmlType::kF16, GgmlType::kBF16}) {
    std::vector<uint8_t> buf(GgmlRowBytes(t, 256));
    QuantizeRow(t, x.data(), buf.data(), 256);
    DequantizeRow(t, buf.data(), y.data(), 256);
    for (int b = 0; b < 8; ++b) {
      float amax = 0, lo = 1e9, hi = -1e9;
      for (int j = 0; j < 32; ++j) {
        amax = std::fmax(amax, std::fabs(x[b * 32 + j]));
        lo = std::fmin(lo, x[b * 32 + j]);
        hi = std::fmax(hi, x[b * 32 + j]);
      }
      // Block types: half a quantization step (Q4_0's step is amax / 8 but its clamp at 15 can cost a
      // whole step), plus the half-precision rounding of the scale (and of the minimum for Q4_1).
      // F16 / BF16: half a unit in the last place, relative 2^-11 / 2^-8.
      for (int j = 0; j < 32; ++j) {
        const float v = x[b * 32 + j];
        float tol = 0;
        switch (t) {
          case GgmlType::kQ8_0: tol = amax / 127 * 0.5f + amax * 1e-3f; break;
          case GgmlType::kQ4_0: tol = amax / 8 + amax * 1e-3f; break;
          case GgmlType::kQ4_1: tol = (hi - lo) / 15 * 0.5f + (std::fabs(lo) + hi - lo) * 1e-3f; break;
          case GgmlType::kF16: tol = std::fabs(v) * std::ldexp(1.0f, -11); break;
          default: tol = std::fabs(v) * std::ldexp(1.0f, -8); break;
        }
        EXPECT_NEAR(y[b * 32 + j], v, tol) << GgmlTypeName(t) << " " << j;
      }
    }
  }
}

TEST(GgmlTypesTest, NamesAndSizes) {
  EXPECT_EQ(GgmlTypeName(GgmlType::kQ4_1), "Q4_1");
  EXPECT_EQ(*ParseGgmlType("q8_0"), GgmlType::kQ8_0);
  EXPECT_EQ(*ParseGgmlType("BF16"), GgmlType::kBF16);
  EXPECT_FALSE(ParseGgmlType("iq3_s").ok());  // known to ggml, not computed by Tessel
  EXPECT_EQ(*ParseGgmlType("iq4_xs"), GgmlType::kIQ4_XS);
  EXPECT_EQ(GgmlRowBytes(GgmlType::kIQ4_XS, 512), 272u);
  EXPECT_EQ(*ParseGgmlType("q6_k"), GgmlType::kQ6_K);
  EXPECT_EQ(GgmlRowBytes(GgmlType::kQ4_0, 64), 36u);
  EXPECT_EQ(GgmlRowBytes(GgmlType::kQ6_K, 512), 420u);
  EXPECT_EQ(FindGgmlType(4), nullptr);  // Q4_2, removed from ggml
  EXPECT_FALSE(GetGgmlTypeInfo(GgmlType::kIQ3_S).supported);
}

// --- malformed files ------------------------------------------------------------------------------

// Header + one tensor info, built by hand so that each field can be corrupted.
struct RawFile {
  uint32_t magic = kGgufMagic;
  uint32_t version = 3;
  std::vector<std::string> kvs;  // encoded key-values
  std::string name = "w";
  uint32_t n_dims = 2;
  std::vector<uint64_t> dims = {32, 2};
  uint32_t type = 0;
  uint64_t offset = 0;
  uint64_t data_bytes = 256;

  std::string Build() const {
    std::string s;
    Put(&s, magic);
    Put(&s, version);
    Put<uint64_t>(&s, 1);
    Put<uint64_t>(&s, kvs.size());
    for (const std::string& kv : kvs) s += kv;
    PutString(&s, name);
    Put(&s, n_dims);
    for (uint64_t d : dims) Put(&s, d);
    Put(&s, type);
    Put(&s, offset);
    s.resize((s.size() + 31) / 32 * 32, '\0');
    s += std::string(data_bytes, '\0');
    return s;
  }
};

std::string Kv(const std::string& key, GgufType type, const std::string& payload) {
  std::string s;
  PutString(&s, key);
  Put<uint32_t>(&s, static_cast<uint32_t>(type));
  return s + payload;
}

absl::Status ParseStatus(const std::string& bytes) { return ParseBytes(bytes).status(); }

TEST(GgufErrorsTest, RawFileBaselineParses) {
  ASSERT_TRUE(ParseStatus(RawFile().Build()).ok()) << ParseStatus(RawFile().Build());
}

TEST(GgufErrorsTest, WrongMagic) {
  RawFile f;
  f.magic = 0x67676a74;  // legacy "ggjt"
  absl::Status s = ParseStatus(f.Build());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("not a GGUF file"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("test.gguf"));
  EXPECT_THAT(std::string(ParseStatus("{\"a\":1}").message()), HasSubstr("not a GGUF file"));
}

TEST(GgufErrorsTest, Versions) {
  RawFile f;
  f.version = 1;
  EXPECT_EQ(ParseStatus(f.Build()).code(), absl::StatusCode::kUnimplemented);
  f.version = 0x03000000;
  EXPECT_THAT(std::string(ParseStatus(f.Build()).message()), HasSubstr("big-endian"));
  f.version = 2;
  EXPECT_TRUE(ParseStatus(f.Build()).ok());
}

TEST(GgufErrorsTest, EveryTruncationIsAnError) {
  const std::string full = SmallFile();
  for (size_t n = 0; n < full.size(); ++n) {
    absl::Status s = ParseStatus(full.substr(0, n));
    ASSERT_FALSE(s.ok()) << "prefix of " << n << " bytes parsed";
    ASSERT_TRUE(s.code() == absl::StatusCode::kDataLoss || s.code() == absl::StatusCode::kOutOfRange) << s;
  }
  EXPECT_THAT(std::string(ParseStatus(full.substr(0, 10)).message()), HasSubstr("truncated"));
}

TEST(GgufErrorsTest, TensorOutOfBounds) {
  RawFile f;
  f.data_bytes = 255;  // the F32 [32, 2] tensor needs 256
  absl::Status s = ParseStatus(f.Build());
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(std::string(s.message()), HasSubstr("tensor 'w'"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("past the end"));
  f.data_bytes = 256;
  f.offset = 1ull << 62;
  EXPECT_EQ(ParseStatus(f.Build()).code(), absl::StatusCode::kOutOfRange);
  f.offset = 0;
  f.dims = {32, 1ull << 62};  // element count overflows int64 bytes
  EXPECT_FALSE(ParseStatus(f.Build()).ok());
  f.dims = {1ull << 63, 1};
  EXPECT_THAT(std::string(ParseStatus(f.Build()).message()), HasSubstr("impossibly large"));
}

TEST(GgufErrorsTest, TensorInfoProblems) {
  RawFile f;
  f.type = 4;  // removed Q4_2
  absl::Status s = ParseStatus(f.Build());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("unknown ggml type id 4"));
  f.type = 999;
  EXPECT_THAT(std::string(ParseStatus(f.Build()).message()), HasSubstr("unknown ggml type id 999"));
  f = RawFile();
  f.type = 2;  // Q4_0 needs rows in multiples of 32
  f.dims = {48, 1};
  EXPECT_THAT(std::string(ParseStatus(f.Build()).message()), HasSubstr("block size 32"));
  f = RawFile();
  f.n_dims = 5;
  f.dims = {32, 1, 1, 1, 1};
  EXPECT_THAT(std::string(ParseStatus(f.Build()).message()), HasSubstr("5 dimensions"));
  f = RawFile();
  f.offset = 8;
  EXPECT_THAT(std::string(ParseStatus(f.Build()).message()), HasSubstr("not a multiple of the alignment"));
}

TEST(GgufErrorsTest, BadMetadata) {
  std::string u32;
  Put<uint32_t>(&u32, 3);
  RawFile f;
  f.kvs = {Kv("general.alignment", GgufType::kUint32, u32)};
  EXPECT_THAT(std::string(ParseStatus(f.Build()).message()), HasSubstr("power of two"));
  f.kvs = {Kv("general.alignment", GgufType::kString, std::string(8, '\0'))};
  EXPECT_THAT(std::string(ParseStatus(f.Build()).message()), HasSubstr("must be a uint32"));
  f.kvs = {Kv("k", static_cast<GgufType>(13), u32)};
  EXPECT_THAT(std::string(ParseStatus(f.Build()).message()), HasSubstr("unknown value type 13"));
  f.kvs = {Kv("k", GgufType::kBool, std::string(1, '\2'))};
  EXPECT_THAT(std::string(ParseStatus(f.Build()).message()), HasSubstr("expected 0 or 1"));
  f.kvs = {Kv("k", GgufType::kUint32, u32), Kv("k", GgufType::kUint32, u32)};
  EXPECT_THAT(std::string(ParseStatus(f.Build()).message()), HasSubstr("appears twice"));
  std::string nested;
  Put<uint32_t>(&nested, static_cast<uint32_t>(GgufType::kArray));
  Put<uint64_t>(&nested, 1);
  f.kvs = {Kv("k", GgufType::kArray, nested)};
  EXPECT_EQ(ParseStatus(f.Build()).code(), absl::StatusCode::kUnimplemented);
  // Counts far beyond the file size fail before anything is allocated.
  std::string huge;
  Put<uint32_t>(&huge, static_cast<uint32_t>(GgufType::kString));
  Put<uint64_t>(&huge, 1ull << 60);
  f.kvs = {Kv("k", GgufType::kArray, huge)};
  EXPECT_EQ(ParseStatus(f.Build()).code(), absl::StatusCode::kDataLoss);
  std::string huge_str;
  Put<uint64_t>(&huge_str, ~0ull);
  f.kvs = {Kv("k", GgufType::kString, huge_str)};
  EXPECT_EQ(ParseStatus(f.Build()).code(), absl::StatusCode::kDataLoss);
  std::string huge_header;
  Put<uint32_t>(&huge_header, kGgufMagic);
  Put<uint32_t>(&huge_header, 3);
  Put<uint64_t>(&huge_header, 0);
  Put<uint64_t>(&huge_header, 1ull << 62);
  EXPECT_EQ(ParseStatus(huge_header).code(), absl::StatusCode::kDataLoss);
}

TEST(GgufErrorsTest, DuplicateTensorNames) {
  std::string s;
  Put<uint32_t>(&s, kGgufMagic);
  Put<uint32_t>(&s, 3);
  Put<uint64_t>(&s, 2);
  Put<uint64_t>(&s, 0);
  for (int i = 0; i < 2; ++i) {
    PutString(&s, "dup");
    Put<uint32_t>(&s, 1);
    Put<uint64_t>(&s, 8);
    Put<uint32_t>(&s, 0);
    Put<uint64_t>(&s, 0);
  }
  s.resize(128, '\0');
  EXPECT_THAT(std::string(ParseStatus(s).message()), HasSubstr("'dup' appears twice"));
}

// Random byte mutations of a valid file must parse or fail cleanly; what parses must be readable.
TEST(GgufErrorsTest, RandomMutationsNeverCrash) {
  GgufWriter w;
  w.SetString("general.architecture", "llama");
  w.SetStringArray("tokenizer.ggml.tokens", {"a", "b", "<s>"});
  w.SetFloat32Array("tokenizer.ggml.scores", {0.f, -1.f, -2.f});
  w.SetUint32("llama.block_count", 1);
  std::vector<uint8_t> q(2 * sizeof(BlockQ8_0), 3);
  ASSERT_TRUE(w.AddTensor("q", GgmlType::kQ8_0, {32, 2}, std::string(q.begin(), q.end())).ok());
  ASSERT_TRUE(w.AddTensor("f", GgmlType::kF32, {4}, Floats({1, 2, 3, 4})).ok());
  const std::string base = w.Serialize();
  std::mt19937 rng(12345);
  int parsed = 0;
  for (int iter = 0; iter < 4000; ++iter) {
    std::string m = base;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t pos = rng() % m.size();
      switch (rng() % 4) {
        case 0: m[pos] = static_cast<char>(rng()); break;
        case 1: m[pos] ^= static_cast<char>(1 << (rng() % 8)); break;
        case 2: m.resize(pos); break;
        default: m[pos] = static_cast<char>(0xFF); break;
      }
      if (m.empty()) break;
    }
    auto g = ParseBytes(m);
    if (!g.ok()) {
      ASSERT_FALSE(g.status().message().empty());
      continue;
    }
    ++parsed;
    uint64_t sum = 0;
    for (const GgufTensorInfo& t : (*g)->tensors()) {
      for (uint64_t i = 0; i < t.size_bytes; ++i) sum += t.data[i];
    }
    for (const auto& [key, v] : (*g)->metadata()) {
      (void)(*g)->GetInt(key);
      (void)(*g)->GetFloat(key);
      (void)(*g)->GetString(key);
      (void)(*g)->GetFloatArray(key);
      (void)(*g)->GetIntArray(key);
      (void)(*g)->GetStringArray(key);
    }
    (void)sum;
  }
  EXPECT_GT(parsed, 0);  // some mutations land in data bytes and still parse
}

}  // namespace
}  // namespace tessel::llm
