// Tests of the graph text form: hand-written golden text, exact round trips of graphs built with the
// Graph API (every attribute kind, every dtype, bit patterns included), parse errors, and a fuzz
// loop over truncated and mutated text.
#include "graph/text.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "graph/graph.h"
#include "gtest/gtest.h"

namespace tessel {
namespace {

uint32_t Bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

float FromBits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

std::string Bytes(const Tensor& t) { return std::string(static_cast<const char*>(t.raw_data()), t.byte_size()); }

void ExpectSameTensor(const Tensor& a, const Tensor& b, const std::string& where) {
  EXPECT_EQ(a.dtype(), b.dtype()) << where;
  EXPECT_EQ(a.shape(), b.shape()) << where;
  EXPECT_EQ(Bytes(a), Bytes(b)) << where;
}

// Bitwise: Attribute::operator== treats float lists holding NaN as unequal and -0.0 as 0.0.
void ExpectSameAttribute(const Attribute& a, const Attribute& b, const std::string& where) {
  ASSERT_EQ(a.kind, b.kind) << where;
  switch (a.kind) {
    case Attribute::Kind::kInt: EXPECT_EQ(a.i, b.i) << where; break;
    case Attribute::Kind::kFloat: EXPECT_EQ(Bits(a.f), Bits(b.f)) << where; break;
    case Attribute::Kind::kString: EXPECT_EQ(a.s, b.s) << where; break;
    case Attribute::Kind::kInts: EXPECT_EQ(a.ints, b.ints) << where; break;
    case Attribute::Kind::kFloats:
      ASSERT_EQ(a.floats.size(), b.floats.size()) << where;
      for (size_t i = 0; i < a.floats.size(); ++i)
        EXPECT_EQ(Bits(a.floats[i]), Bits(b.floats[i])) << where << "[" << i << "]";
      break;
    case Attribute::Kind::kStrings: EXPECT_EQ(a.strings, b.strings) << where; break;
    case Attribute::Kind::kTensor:
      ASSERT_EQ(a.t == nullptr, b.t == nullptr) << where;
      if (a.t) ExpectSameTensor(*a.t, *b.t, where);
      break;
  }
}

// Structural equality, independent of the printer: names, types, domains, attributes, constant bytes.
void ExpectSameGraph(const Graph& a, const Graph& b) {
  EXPECT_EQ(a.name(), b.name());
  ASSERT_EQ(a.inputs().size(), b.inputs().size());
  for (size_t i = 0; i < a.inputs().size(); ++i) {
    EXPECT_EQ(a.inputs()[i]->name(), b.inputs()[i]->name());
    EXPECT_EQ(a.inputs()[i]->type(), b.inputs()[i]->type()) << a.inputs()[i]->name();
  }
  const std::vector<Value*> ca = a.Constants();
  const std::vector<Value*> cb = b.Constants();
  ASSERT_EQ(ca.size(), cb.size());
  for (size_t i = 0; i < ca.size(); ++i) {
    EXPECT_EQ(ca[i]->name(), cb[i]->name());
    EXPECT_EQ(ca[i]->type(), cb[i]->type()) << ca[i]->name();
    ExpectSameTensor(*ca[i]->constant(), *cb[i]->constant(), ca[i]->name());
  }
  const absl::StatusOr<std::vector<Node*>> na = a.TopologicalOrder();
  const absl::StatusOr<std::vector<Node*>> nb = b.TopologicalOrder();
  ASSERT_TRUE(na.ok() && nb.ok());
  ASSERT_EQ(na->size(), nb->size());
  for (size_t i = 0; i < na->size(); ++i) {
    const Node& x = *(*na)[i];
    const Node& y = *(*nb)[i];
    const std::string where = x.DebugName();
    EXPECT_EQ(x.op_type(), y.op_type()) << where;
    EXPECT_EQ(x.domain(), y.domain()) << where;
    EXPECT_EQ(x.name(), y.name()) << where;
    ASSERT_EQ(x.num_inputs(), y.num_inputs()) << where;
    for (int k = 0; k < x.num_inputs(); ++k) {
      ASSERT_EQ(x.input(k) == nullptr, y.input(k) == nullptr) << where << " input " << k;
      if (x.input(k)) {
        EXPECT_EQ(x.input(k)->name(), y.input(k)->name()) << where;
      }
    }
    ASSERT_EQ(x.num_outputs(), y.num_outputs()) << where;
    for (int k = 0; k < x.num_outputs(); ++k) {
      EXPECT_EQ(x.output(k)->name(), y.output(k)->name()) << where;
      EXPECT_EQ(x.output(k)->type(), y.output(k)->type()) << where;
    }
    ASSERT_EQ(x.attributes().size(), y.attributes().size()) << where;
    for (const auto& [key, attr] : x.attributes()) {
      const Attribute* other = y.FindAttr(key);
      ASSERT_NE(other, nullptr) << where << " lost attribute " << key;
      ExpectSameAttribute(attr, *other, absl::StrCat(where, " attribute ", key));
    }
  }
  ASSERT_EQ(a.outputs().size(), b.outputs().size());
  for (size_t i = 0; i < a.outputs().size(); ++i) EXPECT_EQ(a.outputs()[i]->name(), b.outputs()[i]->name());
}

// Print, parse, print again: the texts match and the parsed graph equals the original.
std::unique_ptr<Graph> RoundTrip(const Graph& g) {
  const std::string text = PrintGraph(g);
  absl::StatusOr<std::unique_ptr<Graph>> parsed = ParseGraph(text);
  EXPECT_TRUE(parsed.ok()) << parsed.status() << "\n" << text;
  if (!parsed.ok()) return nullptr;
  EXPECT_EQ(PrintGraph(**parsed), text);
  ExpectSameGraph(g, **parsed);
  EXPECT_TRUE((*parsed)->Verify(/*check_types=*/false).ok());
  return std::move(*parsed);
}

// The first line of text that starts (after indentation) with prefix.
std::string LineWith(const std::string& text, absl::string_view prefix) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::StartsWith(absl::StripLeadingAsciiWhitespace(line), prefix)) return std::string(line);
  }
  return "(no such line)";
}

std::string ErrorOf(absl::string_view text) {
  absl::StatusOr<std::unique_ptr<Graph>> parsed = ParseGraph(text);
  if (parsed.ok()) return "(parsed)";
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(parsed.status().message());
}

Tensor Halves(DType dtype, const std::vector<uint16_t>& bits) {
  Tensor t(dtype, {static_cast<int64_t>(bits.size())});
  std::memcpy(t.raw_data(), bits.data(), 2 * bits.size());
  return t;
}

// The small CNN-like graph of the golden test.
std::unique_ptr<Graph> GoldenGraph() {
  auto g = std::make_unique<Graph>();
  Value* x = g->AddInput("x", TensorType(DType::kF32, {Dim::Symbol("N"), 3, 8, 8}));
  Value* w = g->AddConstant("w", Tensor::FromVector<float>({2, 3, 1, 1}, {0.5f, -1.25f, 0.1f, 3.0f, 1e-5f, -0.0f}));
  Node* conv = g->AddNode("Conv", {x, w, nullptr}, 1, "conv_0", {"y"});
  conv->SetAttr("strides", Attribute::Ints({1, 1}));
  conv->SetAttr("pads", Attribute::Ints({0, 0, 0, 0}));
  conv->SetAttr("group", Attribute::Int(1));
  conv->output(0)->set_type(TensorType(DType::kF32, {Dim::Symbol("N"), 2, 8, 8}));
  Node* split = g->AddNode("Split", {conv->output(0)}, 2, "split_0", {"a", "onnx::Split_7"});
  split->SetAttr("axis", Attribute::Int(1));
  for (int i = 0; i < 2; ++i) split->output(i)->set_type(TensorType(DType::kF32, {Dim::Symbol("N"), 1, 8, 8}));
  Node* fused = g->AddNode("FusedRelu", {split->output(0)}, 1, "f", {"relu out"});
  fused->set_domain("tessel");
  fused->SetAttr("mode", Attribute::String("fast"));
  fused->SetAttr("alpha", Attribute::Float(0.25f));
  fused->output(0)->set_type(TensorType(DType::kF32, {Dim::Symbol("N"), 1, 8, 8}, Layout::kNHWC));
  g->AddOutput(split->output(1));
  g->AddOutput(fused->output(0));
  return g;
}

TEST(TextTest, GoldenPrint) {
  const std::string expected =
      "graph @main {\n"
      "  input %x : f32[N,3,8,8]\n"
      "  const %w : f32[2,3,1,1] = [0.5, -1.25, 0.1, 3.0, 1e-05, -0.0]\n"
      "  %y = Conv \"conv_0\" (%x, %w, _) {group = 1, pads = [0, 0, 0, 0], strides = [1, 1]} : f32[N,2,8,8]\n"
      "  %a, %onnx::Split_7 = Split \"split_0\" (%y) {axis = 1} : f32[N,1,8,8], f32[N,1,8,8]\n"
      "  %\"relu out\" = tessel.FusedRelu \"f\" (%a) {alpha = 0.25, mode = \"fast\"} : f32[N,1,8,8]@nhwc\n"
      "  output %onnx::Split_7, %\"relu out\"\n"
      "}\n";
  std::unique_ptr<Graph> g = GoldenGraph();
  EXPECT_EQ(PrintGraph(*g), expected);
  RoundTrip(*g);
}

TEST(TextTest, EmptyGraph) {
  Graph g;
  EXPECT_EQ(PrintGraph(g), "graph @main {\n}\n");
  RoundTrip(g);
  g.set_name("");
  EXPECT_EQ(PrintGraph(g), "graph @\"\" {\n}\n");
  RoundTrip(g);
}

TEST(TextTest, ElidedConstantsPrintButDoNotParse) {
  Graph g;
  g.AddConstant("big", Tensor(DType::kF32, {4, 5}));
  g.AddConstant("small", Tensor::FromVector<float>({2}, {1.0f, 2.0f}));
  PrintOptions options;
  options.elide_large_constants = true;
  options.max_inline_elements = 16;
  const std::string text = PrintGraph(g, options);
  EXPECT_EQ(text,
            "graph @main {\n"
            "  const %big : f32[4,5] = <elided 20 elements>\n"
            "  const %small : f32[2] = [1.0, 2.0]\n"
            "}\n");
  EXPECT_EQ(ErrorOf(text),
            "line 2, column 27: the data of constant %big was elided when printing; print without "
            "elide_large_constants to get text that parses");
}

TEST(TextTest, EveryAttributeKindRoundTrips) {
  Graph g;
  Value* x = g.AddInput("x", TensorType::Static(DType::kF32, {2}));
  Node* n = g.AddNode("Custom", {x}, 1, "attrs", {"y"});
  n->output(0)->set_type(TensorType::Static(DType::kF32, {2}));
  n->SetAttr("i_pos", Attribute::Int(3));
  n->SetAttr("i_min", Attribute::Int(std::numeric_limits<int64_t>::min()));
  n->SetAttr("i_max", Attribute::Int(std::numeric_limits<int64_t>::max()));
  n->SetAttr("f_tenth", Attribute::Float(0.1f));
  n->SetAttr("f_whole", Attribute::Float(2.0f));
  n->SetAttr("f_negzero", Attribute::Float(-0.0f));
  n->SetAttr("f_denorm", Attribute::Float(std::numeric_limits<float>::denorm_min()));
  n->SetAttr("f_max", Attribute::Float(std::numeric_limits<float>::max()));
  n->SetAttr("f_big", Attribute::Float(1e20f));
  n->SetAttr("f_inf", Attribute::Float(-std::numeric_limits<float>::infinity()));
  n->SetAttr("f_nan", Attribute::Float(FromBits(0x7fc00000u)));
  n->SetAttr("f_nan_bits", Attribute::Float(FromBits(0xff800001u)));
  n->SetAttr("s", Attribute::String("quote \" back \\ nl \n tab \t nul " + std::string(1, '\0') + " del \x7f ü"));
  n->SetAttr("s_empty", Attribute::String(""));
  n->SetAttr("ints", Attribute::Ints({-1, 0, 7}));
  n->SetAttr("ints_empty", Attribute::Ints({}));
  n->SetAttr("floats", Attribute::Floats({1.0f, -2.5f, 1e-7f, std::numeric_limits<float>::infinity()}));
  n->SetAttr("floats_empty", Attribute::Floats({}));
  n->SetAttr("strings", Attribute::Strings({"a", "", "c d"}));
  n->SetAttr("strings_empty", Attribute::Strings({}));
  n->SetAttr("t_f32", Attribute::TensorValue(Tensor::FromVector<float>({2, 2}, {1.0f, 2.0f, 3.5f, -4.0f})));
  n->SetAttr("t_i64", Attribute::TensorValue(Tensor::FromVector<int64_t>({}, {42})));
  n->SetAttr("t_f16", Attribute::TensorValue(Halves(DType::kF16, {0x3c00, 0x7e00})));
  n->SetAttr("t_empty", Attribute::TensorValue(Tensor(DType::kI32, {0})));
  Attribute null_tensor;
  null_tensor.kind = Attribute::Kind::kTensor;
  n->SetAttr("t_null", null_tensor);
  n->SetAttr("weird name", Attribute::Int(1));
  g.AddOutput(n->output(0));
  const std::string text = PrintGraph(g);
  // Spot checks against hand-written forms; RoundTrip checks every bit.
  for (const char* piece : {"f_big = 1e+20",
                            "f_denorm = 1e-45",
                            "f_inf = -inf",
                            "f_max = 3.4028235e+38",
                            "f_nan = nan",
                            "f_nan_bits = nan(0xff800001)",
                            "f_negzero = -0.0",
                            "f_tenth = 0.1",
                            "f_whole = 2.0",
                            "floats = [1.0, -2.5, 1e-07, inf]",
                            "floats_empty = floats[]",
                            "i_min = -9223372036854775808",
                            "i_max = 9223372036854775807",
                            "ints = [-1, 0, 7]",
                            "ints_empty = ints[]",
                            "s = \"quote \\\" back \\\\ nl \\n tab \\t nul \\x00 del \\x7f ü\"",
                            "s_empty = \"\"",
                            "strings = [\"a\", \"\", \"c d\"]",
                            "strings_empty = strings[]",
                            "t_f32 = tensor<f32[2,2] [1.0, 2.0, 3.5, -4.0]>",
                            "t_i64 = tensor<i64[] [42]>",
                            "t_f16 = tensor<f16[2] [1.0, nan]>",
                            "t_empty = tensor<i32[0] []>",
                            "t_null = tensor<null>",
                            "\"weird name\" = 1"}) {
    EXPECT_TRUE(absl::StrContains(text, piece)) << piece << "\n" << text;
  }
  RoundTrip(g);
}

TEST(TextTest, EveryDTypeRoundTripsBitExact) {
  Graph g;
  const std::vector<uint32_t> f32_bits = {Bits(0.0f),
                                          Bits(-0.0f),
                                          Bits(1.0f),
                                          Bits(-1.5f),
                                          Bits(0.1f),
                                          Bits(1.0f / 3.0f),
                                          Bits(std::numeric_limits<float>::min()),
                                          Bits(std::numeric_limits<float>::denorm_min()),
                                          Bits(std::numeric_limits<float>::max()),
                                          Bits(-std::numeric_limits<float>::max()),
                                          0x7f800000u,
                                          0xff800000u,
                                          0x7fc00000u,
                                          0xffc00000u,
                                          0x7fc00001u,
                                          0x7f800001u,
                                          0xffc12345u,
                                          Bits(123456792.0f),
                                          Bits(1e-40f)};
  Tensor f32(DType::kF32, {static_cast<int64_t>(f32_bits.size())});
  std::memcpy(f32.raw_data(), f32_bits.data(), 4 * f32_bits.size());
  g.AddConstant("f32", f32);
  // Every 16-bit pattern: finite values, subnormals, both zeros, infinities and every NaN payload.
  std::vector<uint16_t> all16(65536);
  for (int i = 0; i < 65536; ++i) all16[i] = static_cast<uint16_t>(i);
  g.AddConstant("f16", Halves(DType::kF16, all16));
  g.AddConstant("bf16", Halves(DType::kBF16, all16));
  std::vector<int8_t> i8;
  for (int v = -128; v <= 127; ++v) i8.push_back(static_cast<int8_t>(v));
  g.AddConstant("i8", Tensor::FromVector<int8_t>({256}, i8));
  std::vector<uint8_t> u8;
  for (int v = 0; v <= 255; ++v) u8.push_back(static_cast<uint8_t>(v));
  g.AddConstant("u8", Tensor::FromVector<uint8_t>({16, 16}, u8));
  g.AddConstant("i32", Tensor::FromVector<int32_t>({5}, {std::numeric_limits<int32_t>::min(),
                                                         std::numeric_limits<int32_t>::max(), 0, -1, 123456789}));
  g.AddConstant(
      "i64", Tensor::FromVector<int64_t>({5}, {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(),
                                               0, -1, (int64_t{1} << 53) + 1}));
  g.AddConstant("i16", Tensor::FromVector<int16_t>({3}, {-32768, 32767, -1}));
  g.AddConstant("u16", Tensor::FromVector<uint16_t>({2}, {0, 65535}));
  g.AddConstant("u32", Tensor::FromVector<uint32_t>({2}, {0, 4294967295u}));
  g.AddConstant("u64", Tensor::FromVector<uint64_t>({3}, {0, uint64_t{1} << 63, ~uint64_t{0}}));
  Tensor b(DType::kBool, {3});
  b.data<uint8_t>()[0] = 1;
  b.data<uint8_t>()[2] = 2;  // not a canonical bool, but the bytes must survive
  g.AddConstant("bool", b);
  // i4: every value -8..7 plus one more, so the count is odd and the last byte half-filled.
  Tensor i4(DType::kI4, {17});
  for (int i = 0; i < 17; ++i) {
    const int v = i < 16 ? i - 8 : 5;
    i4.data<uint8_t>()[i / 2] |= static_cast<uint8_t>((v & 0xf) << (4 * (i % 2)));
  }
  g.AddConstant("i4", i4);
  g.AddConstant("scalar", Tensor::FromVector<int64_t>({}, {-7}));
  g.AddConstant("empty", Tensor(DType::kF32, {0, 3}));
  // f64: shortest round-trip decimals (0.1 needs all 17 digits' worth only as a double), extremes, NaNs.
  const std::vector<uint64_t> f64_bits = {0x0000000000000000ull, 0x8000000000000000ull, 0x3fb999999999999aull,
                                          0x3fd5555555555555ull, 0x7fefffffffffffffull, 0x0000000000000001ull,
                                          0x7ff0000000000000ull, 0xfff0000000000000ull, 0x7ff8000000000000ull,
                                          0x7ff0000000000001ull, 0x4340000000000001ull};
  Tensor f64(DType::kF64, {static_cast<int64_t>(f64_bits.size())});
  std::memcpy(f64.raw_data(), f64_bits.data(), 8 * f64_bits.size());
  g.AddConstant("f64", f64);
  const std::string text = PrintGraph(g);
  EXPECT_EQ(LineWith(text, "const %f64 "),
            "  const %f64 : f64[11] = [0.0, -0.0, 0.1, 0.3333333333333333, 1.7976931348623157e+308, 5e-324, inf, "
            "-inf, nan, nan(0x7ff0000000000001), 9007199254740994.0]");
  EXPECT_EQ(LineWith(text, "const %f32 "),
            "  const %f32 : f32[19] = [0.0, -0.0, 1.0, -1.5, 0.1, 0.33333334, 1.1754944e-38, 1e-45, 3.4028235e+38, "
            "-3.4028235e+38, inf, -inf, nan, -nan, nan(0x7fc00001), nan(0x7f800001), nan(0xffc12345), 123456792.0, "
            "1e-40]");
  EXPECT_EQ(LineWith(text, "const %i8 "), "  const %i8 : i8[256] = [-128, -127, " +
                                              absl::StrJoin(std::vector<int>(i8.begin() + 2, i8.end()), ", ") + "]");
  EXPECT_EQ(LineWith(text, "const %i32 "), "  const %i32 : i32[5] = [-2147483648, 2147483647, 0, -1, 123456789]");
  EXPECT_EQ(LineWith(text, "const %i64 "),
            "  const %i64 : i64[5] = [-9223372036854775808, 9223372036854775807, 0, -1, 9007199254740993]");
  EXPECT_EQ(LineWith(text, "const %bool "), "  const %bool : bool[3] = [true, false, 2]");
  EXPECT_EQ(LineWith(text, "const %i16 "), "  const %i16 : i16[3] = [-32768, 32767, -1]");
  EXPECT_EQ(LineWith(text, "const %u16 "), "  const %u16 : u16[2] = [0, 65535]");
  EXPECT_EQ(LineWith(text, "const %u32 "), "  const %u32 : u32[2] = [0, 4294967295]");
  EXPECT_EQ(LineWith(text, "const %u64 "), "  const %u64 : u64[3] = [0, 9223372036854775808, 18446744073709551615]");
  EXPECT_EQ(LineWith(text, "const %i4 "),
            "  const %i4 : i4[17] = [-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 5]");
  EXPECT_EQ(LineWith(text, "const %scalar "), "  const %scalar : i64[] = [-7]");
  EXPECT_EQ(LineWith(text, "const %empty "), "  const %empty : f32[0,3] = []");
  std::unique_ptr<Graph> parsed = RoundTrip(g);
  ASSERT_NE(parsed, nullptr);
  // The i4 data read back by nibble, against the values written above.
  const Tensor& back = *parsed->FindValue("i4")->constant();
  for (int i = 0; i < 17; ++i) EXPECT_EQ(back.GetAsInt64(i), i < 16 ? i - 8 : 5) << i;
  // f64 bits survive the text exactly, NaN payloads included.
  const Tensor& back64 = *parsed->FindValue("f64")->constant();
  ASSERT_EQ(back64.dtype(), DType::kF64);
  EXPECT_EQ(0, std::memcmp(back64.raw_data(), f64_bits.data(), 8 * f64_bits.size()));
  for (const char* name : {"i16", "u16", "u32", "u64"}) {
    const Tensor& want = *g.FindValue(name)->constant();
    const Tensor& got = *parsed->FindValue(name)->constant();
    ASSERT_EQ(got.dtype(), want.dtype()) << name;
    EXPECT_EQ(0, std::memcmp(got.raw_data(), want.raw_data(), want.byte_size())) << name;
  }
}

TEST(TextTest, HalfPrecisionPrintsShortestText) {
  // Expected texts worked out by hand: the shortest decimal that reads back to the same 16 bits.
  Graph g;
  g.AddConstant("h", Halves(DType::kF16,
                            {0x3c00, 0x2e66, 0x3555, 0x7bff, 0x0001, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0xfe00, 0x7c01}));
  g.AddConstant("b", Halves(DType::kBF16, {0x3f80, 0x3dcd, 0x7f7f, 0x0001, 0x7fc0, 0xffc1}));
  const std::string text = PrintGraph(g);
  EXPECT_TRUE(absl::StrContains(
      text, "const %h : f16[11] = [1.0, 0.1, 0.3333, 65504.0, 6e-08, -0.0, inf, -inf, nan, -nan, nan(0x7c01)]"))
      << text;
  EXPECT_TRUE(absl::StrContains(text, "const %b : bf16[6] = [1.0, 0.1, 3.39e+38, 9e-41, nan, nan(0xffc1)]")) << text;
  RoundTrip(g);
}

TEST(TextTest, NamesTypesDomainsAndStructureRoundTrip) {
  Graph g;
  g.set_name("model v2");
  Value* a = g.AddInput("onnx::Conv_193", TensorType(DType::kF32, {Dim::Symbol("batch"), Dim::Symbol("?3"), 4}));
  Value* b =
      g.AddInput("input.1", TensorType(DType::kF16, {Dim::Symbol("seq len"), Dim::Symbol("3x"), 2}, Layout::kNCHW8c));
  Value* c = g.AddInput("/layer1/Relu_output_0", TensorType(DType::kBool, {}));
  Value* d = g.AddInput("x:", TensorType(DType::kI4, {-1, 0}, Layout::kNCHW));
  Value* e = g.AddInput("we\"ird\nname", TensorType(DType::kU8, {1}));
  Value* f = g.AddInput("_", TensorType(DType::kI8, {1}));
  Value* k = g.AddConstant("k", Tensor::FromVector<float>({1}, {1.0f}));
  // Outputs named like ONNX does it, omitted inputs in the middle and at the end, several results.
  Node* n1 = g.AddNode("Split", {a, nullptr, k, nullptr}, 3, "split one", {"s0", "s1", "s2"});
  for (int i = 0; i < 3; ++i) n1->output(i)->set_type(TensorType(DType::kF32, {Dim::Symbol("batch"), 1, 4}));
  Node* n2 = g.AddNode("FusedConv", {n1->output(0), b}, 1, "fused", {"fused_out"});
  n2->set_domain("tessel");
  Node* n3 = g.AddNode("Gelu", {n1->output(1)}, 1, "", {"gelu"});
  n3->set_name("");
  n3->set_domain("com.microsoft");
  Node* n4 = g.AddNode("my op", {n1->output(2), c, d, e, f}, 1, "n4", {"n4_out"});
  n4->set_domain("odd domain!");
  g.AddNode("input", {n2->output(0)}, 0, "sink");  // no results and an op type that is a keyword
  Node* n6 = g.AddNode("NoInputs", {}, 2, "gen", {"g0", "g1"});
  n6->output(1)->set_type(TensorType(DType::kI64, {}));
  g.AddOutput(n3->output(0));
  g.AddOutput(n4->output(0));
  g.AddOutput(a);  // a graph input that is also an output
  g.AddOutput(n3->output(0));
  const std::string text = PrintGraph(g);
  for (const char* piece :
       {"graph @\"model v2\" {", "input %onnx::Conv_193 : f32[batch,?3,4]",
        "input %input.1 : f16[\"seq len\",\"3x\",2]@nchw8c", "input %/layer1/Relu_output_0 : bool[]",
        "input %\"x:\" : i4[-1,0]@nchw", "input %\"we\\\"ird\\nname\" : u8[1]", "input %_ : i8[1]",
        "%s0, %s1, %s2 = Split \"split one\" (%onnx::Conv_193, _, %k, _) : ",
        "%fused_out = tessel.FusedConv \"fused\" (%s0, %input.1) : f32[]",
        "%gelu = com.microsoft.Gelu \"\" (%s1) : f32[]",
        "%n4_out = \"odd domain!\".\"my op\" \"n4\" (%s2, %/layer1/Relu_output_0, %\"x:\", %\"we\\\"ird\\nname\", %_)",
        "  \"input\" \"sink\" (%fused_out)\n", "%g0, %g1 = NoInputs \"gen\" () : f32[], i64[]",
        "output %gelu, %n4_out, %onnx::Conv_193, %gelu"}) {
    EXPECT_TRUE(absl::StrContains(text, piece)) << piece << "\n" << text;
  }
  std::unique_ptr<Graph> parsed = RoundTrip(g);
  ASSERT_NE(parsed, nullptr);
  EXPECT_EQ(parsed->FindNode("sink")->num_outputs(), 0);
  EXPECT_EQ(parsed->FindNode("sink")->op_type(), "input");
}

TEST(TextTest, NodesPrintInTopologicalOrder) {
  Graph g;
  Value* x = g.AddInput("x", TensorType::Static(DType::kF32, {1}));
  // The consumer is created first and wired to its producer afterwards.
  Node* consumer = g.AddNode("Relu", {x}, 1, "second", {"z"});
  Node* producer = g.AddNode("Neg", {x}, 1, "first", {"y"});
  consumer->SetInput(0, producer->output(0));
  g.AddOutput(consumer->output(0));
  EXPECT_EQ(PrintGraph(g),
            "graph @main {\n"
            "  input %x : f32[1]\n"
            "  %y = Neg \"first\" (%x) : f32[]\n"
            "  %z = Relu \"second\" (%y) : f32[]\n"
            "  output %z\n"
            "}\n");
  RoundTrip(g);
}

TEST(TextTest, ParsesHandWrittenText) {
  const char* text = R"(# a comment before the graph
graph @g{   # and after the brace
  input %x: f32[N , 4]   # a space after the colon: "x:f32" would be one name
  const %h : f16[3] = [0.1, -2, 65504]   # integers are fine where the dtype is known
  const %bf : bf16[1] = [0.1]
  const %flags : bool[2] = [true, 0]
  %y = Mul "m" ( %x , %h , _ ) { alpha = 1 , beta = [1, 2.5] , "odd key" = "v" } : f32[N,4]
  output %y
})";
  absl::StatusOr<std::unique_ptr<Graph>> parsed = ParseGraph(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const Graph& g = **parsed;
  const Tensor& h = *g.FindValue("h")->constant();
  // f16 bits by hand: 0.1 -> 0x2e66, -2 -> 0xc000, 65504 -> 0x7bff (the largest half).
  EXPECT_EQ(h.data<uint16_t>()[0], 0x2e66);
  EXPECT_EQ(h.data<uint16_t>()[1], 0xc000);
  EXPECT_EQ(h.data<uint16_t>()[2], 0x7bff);
  EXPECT_EQ(g.FindValue("bf")->constant()->data<uint16_t>()[0], 0x3dcd);  // 0x3dcccccd rounded to nearest even
  const Node* m = g.FindNode("m");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->GetInt("alpha", 0), 1);
  // A list with one float element is a float list.
  EXPECT_EQ(m->GetFloats("beta"), std::vector<float>({1.0f, 2.5f}));
  EXPECT_EQ(m->GetString("odd key", ""), "v");
  EXPECT_EQ(m->input(2), nullptr);
  EXPECT_EQ(PrintGraph(g),
            "graph @g {\n"
            "  input %x : f32[N,4]\n"
            "  const %h : f16[3] = [0.1, -2.0, 65504.0]\n"
            "  const %bf : bf16[1] = [0.1]\n"
            "  const %flags : bool[2] = [true, false]\n"
            "  %y = Mul \"m\" (%x, %h, _) {alpha = 1, beta = [1.0, 2.5], \"odd key\" = \"v\"} : f32[N,4]\n"
            "  output %y\n"
            "}\n");
}

TEST(TextTest, HeaderExampleParses) {
  // The example at the top of text.h, less its elided constant, so the documentation stays true.
  const char* text = R"(
    graph @main {
      input %x : f32[N,3,32,32]
      const %w : f32[2,3,1,1] = [0.5, -1.25, 1e-05, inf, -nan, nan(0x7fc00001)]
      %y = Conv "conv_0" (%x, %w, _) {group = 1, pads = [0, 0, 0, 0]} : f32[N,2,32,32]
      %a, %b = Split "split_0" (%y) {axis = 1} : f32[N,1,32,32], f32[N,1,32,32]
      %z = tessel.FusedConv "f" (%a) {activation = "relu"} : f32[N,1,32,32]@nhwc
      output %b, %z
    })";
  absl::StatusOr<std::unique_ptr<Graph>> parsed = ParseGraph(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE((*parsed)->Verify(/*check_types=*/false).ok());
  EXPECT_EQ((*parsed)->num_nodes(), 3);
  EXPECT_EQ((*parsed)->FindNode("f")->domain(), "tessel");
  EXPECT_EQ(Bits((*parsed)->FindValue("w")->constant()->data<float>()[4]), 0xffc00000u);
  EXPECT_EQ(Bits((*parsed)->FindValue("w")->constant()->data<float>()[5]), 0x7fc00001u);
}

TEST(TextTest, ParseErrorsSayWhereAndWhat) {
  const std::string x = "graph @g {\n  input %x : f32[1]\n";
  struct Case {
    std::string text;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"", "line 1, column 1: expected 'graph' at the start of the text, found end of input"},
      {"graph main {}", "line 1, column 7: expected '@' and the graph name after 'graph', found 'main'"},
      {"graph @g {\n  input %x f32[1]\n}", "line 2, column 12: expected ':' and the type after input %x, found 'f32'"},
      {"graph @g {\n  %y = Relu \"r\" (%x) : f32[1]\n}",
       "line 2, column 18: unknown value %x (a value is defined before its uses)"},
      {x + "  input %x : f32[2]\n}", "line 3, column 9: redefinition of value %x (first defined on line 2)"},
      {x + "  %x = Relu \"r\" (%x) : f32[1]\n}",
       "line 3, column 3: redefinition of value %x (first defined on line 2)"},
      {"graph @g {\n  input %x : f31[1]\n}",
       "line 2, column 14: unknown dtype 'f31' (expected f32, f16, bf16, f64, i8, u8, i16, u16, i32, u32, i64, u64, bool or i4)"},
      {"graph @g {\n  input %x : f32[1]@nwhc\n}",
       "line 2, column 21: unknown layout 'nwhc' (expected nchw, nhwc or nchw8c)"},
      {"graph @g {\n  const %c : f32[2] = [1.5, 2.5e]\n}", "line 2, column 29: malformed number '2.5e'"},
      {"graph @g {\n  const %c : f32[2,2] = [1.0, 2.0, 3.0]\n}",
       "line 2, column 25: constant %c has type f32[2,2] (4 elements) but 3 elements are given"},
      {"graph @g {\n  const %c : f32[N] = [1.0]\n}",
       "line 2, column 14: constant %c needs a static type; dimension 'N' is symbolic"},
      {"graph @g {\n  const %c : i8[1] = [200]\n}",
       "line 2, column 23: element 200 is out of range for i8 (-128..127)"},
      {"graph @g {\n  const %c : i32[1] = [1.5]\n}",
       "line 2, column 24: expected an integer for the i32 data of constant %c, found '1.5'"},
      {"graph @g {\n  const %c : f16[1] = [70000.0]\n}", "line 2, column 24: '70000.0' is out of range for f16"},
      {"graph @g {\n  const %c : f32[1] = [1e39]\n}", "line 2, column 24: '1e39' is out of range for f32"},
      {"graph @g {\n  const %c : f32[1] = [nan(0x7f800000)]\n}",
       "line 2, column 24: 'nan(0x7f800000)' is not the bit pattern of a f32 NaN"},
      {"graph @g {\n  const %c : f32[1] = [1.0 2.0]\n}",
       "line 2, column 28: expected ',' or ']' between the elements of constant %c, found '2'"},
      {x + "  %y = Relu \"r\" (%x {alpha = 1.0} : f32[1]\n}",
       "line 3, column 21: expected ',' or ')' after an input of node \"r\", found '{'"},
      {x + "  %y = Relu \"r\" (%x) {axes = []} : f32[1]\n}",
       "line 3, column 30: the empty list of attribute 'axes' of node \"r\" needs its element type: write ints[], "
       "floats[] or strings[]"},
      {x + "  %y = Relu \"r\" (%x) {a = 1, a = 2} : f32[1]\n}",
       "line 3, column 30: attribute 'a' of node \"r\" is given twice"},
      {x + "  %y = Relu \"r\" (%x) {a = 1} f32[1]\n}",
       "line 3, column 30: expected ':' and the output types of node \"r\", found 'f32'"},
      {x + "  %a, %b = Split \"s\" (%x) : f32[1]\n}",
       "line 4, column 1: expected ',' and another output type (node \"s\" has 2 results), found '}'"},
      {x + "  %a = Split \"s\" (%x) : f32[1], f32[1]\n}",
       "line 3, column 31: more output types than results (1) for node \"s\""},
      {x + "  %y = Relu \"r (%x) : f32[1]\n}",
       "line 3, column 13: unterminated string (a string ends on its own line)"},
      {x + "  %y = Relu \"a\\q\" (%x) : f32[1]\n}",
       "line 3, column 15: unknown escape in string (use \\\\, \\\", \\n, \\t, \\r or \\xHH)"},
      {x + "  %y = Relu (%x) : f32[1]\n}",
       "line 3, column 13: expected the node name after op type Relu as a quoted string, found '('"},
      {x + "  %y = tessel. \"r\" (%x) : f32[1]\n}", "line 3, column 16: expected an op type after '.', found '\"'"},
      {x + "  output %x\n  output %x\n}",
       "line 4, column 3: a second output line (one line lists every graph output; the first is on line 3)"},
      {x + "  output %x, %nope\n}", "line 3, column 14: unknown value %nope (a value is defined before its uses)"},
      {x + "  = Relu\n}", "line 3, column 3: expected a statement (input, const, output or a node), found '='"},
      {x, "line 3, column 1: expected '}' to close the graph body, found end of input"},
      {x + "}\nx", "line 4, column 1: expected end of input after the graph's closing '}', found 'x'"},
      {"graph @g {\n  input %\"\" : f32[1]\n}", "line 2, column 9: a value name must not be empty"},
      {"graph @g {\n  input %x : f32[99999999999999999999]\n}",
       "line 2, column 18: integer '99999999999999999999' does not fit in 64 bits"},
      {"graph @g {\n  const %c : u8[4294967296,4294967296] = []\n}",
       "line 2, column 14: constant %c has more elements than fit in 64 bits"},
  };
  for (const Case& c : cases) EXPECT_EQ(ErrorOf(c.text), c.message) << c.text;
}

// Text that exercises most of the grammar, for the fuzz loop.
std::string FuzzSeed() {
  Graph g;
  Value* x = g.AddInput("x", TensorType(DType::kF32, {Dim::Symbol("N"), Dim::Symbol("?1"), 2}, Layout::kNHWC));
  Value* w = g.AddConstant("w", Tensor::FromVector<float>({2}, {0.5f, -1e-5f}));
  g.AddConstant("h", Halves(DType::kF16, {0x3c00, 0x7e00}));
  g.AddConstant("q", Tensor(DType::kI4, {3}));
  g.AddConstant("b", Tensor::FromVector<bool>({2}, {true, false}));
  Node* n = g.AddNode("Conv", {x, w, nullptr}, 2, "c\"1", {"a", "onnx::b 2"});
  n->set_domain("tessel");
  n->SetAttr("i", Attribute::Int(-3));
  n->SetAttr("f", Attribute::Float(2.5f));
  n->SetAttr("s", Attribute::String("x\ty"));
  n->SetAttr("is", Attribute::Ints({1, 2}));
  n->SetAttr("fs", Attribute::Floats({}));
  n->SetAttr("ss", Attribute::Strings({"p", "q"}));
  n->SetAttr("t", Attribute::TensorValue(Tensor::FromVector<int64_t>({2}, {3, -4})));
  n->output(1)->set_type(TensorType(DType::kI64, {3}));
  g.AddNode("Sink", {n->output(1)}, 0, "sink");
  g.AddOutput(n->output(0));
  return PrintGraph(g);
}

void ExpectParseIsSafe(const std::string& text) {
  absl::StatusOr<std::unique_ptr<Graph>> parsed = ParseGraph(text);
  if (!parsed.ok()) {
    EXPECT_TRUE(absl::StartsWith(parsed.status().message(), "line ")) << parsed.status();
    return;
  }
  // Whatever parses prints to text that parses back to the same text.
  const std::string printed = PrintGraph(**parsed);
  absl::StatusOr<std::unique_ptr<Graph>> again = ParseGraph(printed);
  ASSERT_TRUE(again.ok()) << again.status() << "\n" << printed;
  EXPECT_EQ(PrintGraph(**again), printed);
}

TEST(TextTest, TruncatedTextNeverCrashes) {
  const std::string seed = FuzzSeed();
  ASSERT_TRUE(ParseGraph(seed).ok());
  const size_t closing = seed.rfind('}');
  for (size_t len = 0; len < seed.size(); ++len) {
    const std::string prefix = seed.substr(0, len);
    if (len <= closing) {
      EXPECT_FALSE(ParseGraph(prefix).ok()) << prefix;
    }
    ExpectParseIsSafe(prefix);
  }
}

TEST(TextTest, MutatedTextNeverCrashes) {
  const std::string seed = FuzzSeed();
  const std::string interesting = "%\"[]{}(),:=_.-+0123456789eExnaif#\n\\<>@? ";
  std::mt19937 rng(12345);
  int parsed_ok = 0;
  for (int iter = 0; iter < 4000; ++iter) {
    std::string text = seed;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !text.empty(); ++e) {
      const size_t at = rng() % text.size();
      const char c = (rng() % 4 == 0) ? static_cast<char>(rng() % 256) : interesting[rng() % interesting.size()];
      switch (rng() % 4) {
        case 0: text[at] = c; break;
        case 1: text.erase(at, 1); break;
        case 2: text.insert(at, 1, c); break;
        default: {
          const size_t from = rng() % text.size();
          text.insert(at, text.substr(from, 1 + rng() % 12));
        }
      }
    }
    ExpectParseIsSafe(text);
    parsed_ok += ParseGraph(text).ok();
  }
  // Some mutations (inside strings, digits for digits) still parse; all of them failing would mean
  // the loop only ever exercised the first error path.
  EXPECT_GT(parsed_ok, 0);
}

}  // namespace
}  // namespace tessel
