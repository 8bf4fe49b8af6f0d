// Tests for the ONNX importer. Most models are built with the onnx::ModelProto API (written to temp
// files where the file matters) and checked against the numbers put into them; PyTorch-exported models
// are checked against what the onnx Python package reads from the same files (testdata/gen_models.py).
#include "graph/onnx/onnx_importer.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "graph/dtype.h"
#include "graph/graph.h"
#include "graph/op_registry.h"
#include "gtest/gtest.h"
#include "kernels/reference/interpreter.h"
#include "onnx/onnx_pb.h"

namespace tessel {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// ---------------------------------------------------------------------------------------------
// Not an ONNX operator: a test-only op in the standard domain that carries attributes of every kind
// and every input dtype through the importer (the real operators come from graph/ops).

void RegisterAttrProbe() {
  OpRegistry& r = OpRegistry::Global();
  if (r.Find("", "TestAttrProbe") != nullptr) return;
  OpSchema s;
  s.op_type = "TestAttrProbe";
  s.infer = [](const InferenceContext& c) -> absl::StatusOr<std::vector<TensorType>> {
    return std::vector<TensorType>{c.type(0)};
  };
  s.summary = "identity, for importer tests";
  r.Register(std::move(s));
}

class OnnxImporterTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { RegisterAttrProbe(); }

  void SetUp() override {
    const char* base = std::getenv("TEST_TMPDIR");
    const std::string pattern = absl::StrCat(base ? base : "/tmp", "/onnx_importer_test_XXXXXX");
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    ASSERT_NE(mkdtemp(buf.data()), nullptr);
    dir_ = buf.data();
  }

  std::string Path(const std::string& name) const { return absl::StrCat(dir_, "/", name); }

  void WriteBytes(const std::string& path, const std::string& bytes) const {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(bytes.data(), bytes.size());
    ASSERT_TRUE(f.good()) << path;
  }

  std::string WriteModel(const onnx::ModelProto& model, const std::string& name = "model.onnx") const {
    const std::string path = Path(name);
    WriteBytes(path, model.SerializeAsString());
    return path;
  }

  std::string dir_;
};

// ---------------------------------------------------------------------------------------------
// Model-building helpers.

onnx::ModelProto NewModel(int opset) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  m.mutable_graph()->set_name("g");
  return m;
}

// dims: "3" -> dim_value, "batch" -> dim_param, "" -> no value.
void AddInput(onnx::ModelProto& m, const std::string& name, int elem_type, const std::vector<std::string>& dims) {
  auto* in = m.mutable_graph()->add_input();
  in->set_name(name);
  auto* tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem_type);
  auto* shape = tt->mutable_shape();
  for (const std::string& d : dims) {
    auto* dim = shape->add_dim();
    if (d.empty()) continue;
    if (std::isdigit(static_cast<unsigned char>(d[0]))) {
      dim->set_dim_value(std::stoll(d));
    } else {
      dim->set_dim_param(d);
    }
  }
}

void AddOutput(onnx::ModelProto& m, const std::string& name) { m.mutable_graph()->add_output()->set_name(name); }

onnx::NodeProto* AddNode(onnx::ModelProto& m, const std::string& op, const std::vector<std::string>& inputs,
                         const std::vector<std::string>& outputs, const std::string& name) {
  auto* n = m.mutable_graph()->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (const std::string& i : inputs) n->add_input(i);
  for (const std::string& o : outputs) n->add_output(o);
  return n;
}

onnx::AttributeProto* AddAttr(onnx::NodeProto* n, const std::string& name, onnx::AttributeProto::AttributeType t) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(t);
  return a;
}

void AddIntsAttr(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = AddAttr(n, name, onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

// x: f32[2,3] -> Relu -> y.
onnx::ModelProto ReluModel(int opset = 13) {
  onnx::ModelProto m = NewModel(opset);
  AddInput(m, "x", onnx::TensorProto::FLOAT, {"2", "3"});
  AddNode(m, "Relu", {"x"}, {"y"}, "relu");
  AddOutput(m, "y");
  return m;
}

template <typename T>
std::string RawBytes(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

onnx::TensorProto* AddInitializer(onnx::ModelProto& m, const std::string& name, int dtype,
                                  const std::vector<int64_t>& dims) {
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(dtype);
  for (int64_t d : dims) t->add_dims(d);
  return t;
}

const Tensor& ConstantOf(const Graph& g, const std::string& name) {
  static const Tensor* const kEmpty = new Tensor();
  const Value* v = g.FindValue(name);
  EXPECT_NE(v, nullptr) << name;
  if (v == nullptr || !v->is_constant()) {
    ADD_FAILURE() << name << " is not a constant";
    return *kEmpty;
  }
  return *v->constant();
}

std::vector<int64_t> Int64s(const Tensor& t) { return t.ToInt64Vector(); }

// ---------------------------------------------------------------------------------------------
// Initializers

TEST_F(OnnxImporterTest, RawDataInitializersKeepTheirValues) {
  onnx::ModelProto m = ReluModel();
  AddInitializer(m, "w_f32", onnx::TensorProto::FLOAT, {2, 3})
      ->set_raw_data(RawBytes<float>({1.5f, -2.25f, 0.f, 3.0e-8f, -1e6f, 42.f}));
  AddInitializer(m, "w_i64", onnx::TensorProto::INT64, {3})->set_raw_data(RawBytes<int64_t>({-1, int64_t{1} << 40, 7}));
  // float16 bit patterns: 1.0 = 0x3C00, -2.0 = 0xC000, 0.5 = 0x3800.
  AddInitializer(m, "w_f16", onnx::TensorProto::FLOAT16, {3})
      ->set_raw_data(RawBytes<uint16_t>({0x3C00, 0xC000, 0x3800}));
  AddInitializer(m, "w_u8", onnx::TensorProto::UINT8, {2})->set_raw_data(RawBytes<uint8_t>({0, 255}));
  AddInitializer(m, "w_scalar", onnx::TensorProto::INT32, {})->set_raw_data(RawBytes<int32_t>({-9}));
  AddInitializer(m, "w_empty", onnx::TensorProto::FLOAT, {0, 4})->set_raw_data("");

  absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxModel(m, dir_);
  ASSERT_TRUE(g.ok()) << g.status();
  const Tensor& f = ConstantOf(**g, "w_f32");
  EXPECT_EQ(f.dtype(), DType::kF32);
  EXPECT_THAT(f.shape(), ElementsAre(2, 3));
  EXPECT_THAT(f.ToFloatVector(), ElementsAre(1.5f, -2.25f, 0.f, 3.0e-8f, -1e6f, 42.f));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(f.raw_data()) % kTensorAlignment, 0u);
  EXPECT_THAT(Int64s(ConstantOf(**g, "w_i64")), ElementsAre(-1, int64_t{1} << 40, 7));
  EXPECT_EQ(ConstantOf(**g, "w_f16").dtype(), DType::kF16);
  EXPECT_THAT(ConstantOf(**g, "w_f16").ToFloatVector(), ElementsAre(1.0f, -2.0f, 0.5f));
  EXPECT_THAT(Int64s(ConstantOf(**g, "w_u8")), ElementsAre(0, 255));
  EXPECT_EQ(ConstantOf(**g, "w_scalar").rank(), 0);
  EXPECT_THAT(Int64s(ConstantOf(**g, "w_scalar")), ElementsAre(-9));
  EXPECT_THAT(ConstantOf(**g, "w_empty").shape(), ElementsAre(0, 4));
  EXPECT_EQ((*g)->ConstantElements(), 6 + 3 + 3 + 2 + 1 + 0);
}

TEST_F(OnnxImporterTest, TypedFieldInitializersKeepTheirValues) {
  onnx::ModelProto m = ReluModel();
  auto* f = AddInitializer(m, "f", onnx::TensorProto::FLOAT, {2});
  f->add_float_data(0.25f);
  f->add_float_data(-7.5f);
  auto* i32 = AddInitializer(m, "i32", onnx::TensorProto::INT32, {3});
  for (int v : {-2147483647 - 1, 0, 2147483647}) i32->add_int32_data(v);
  auto* i8 = AddInitializer(m, "i8", onnx::TensorProto::INT8, {3});
  for (int v : {-128, -1, 127}) i8->add_int32_data(v);
  auto* u8 = AddInitializer(m, "u8", onnx::TensorProto::UINT8, {2});
  for (int v : {0, 200}) u8->add_int32_data(v);
  auto* b = AddInitializer(m, "b", onnx::TensorProto::BOOL, {3});
  for (int v : {1, 0, 1}) b->add_int32_data(v);
  auto* h = AddInitializer(m, "h", onnx::TensorProto::FLOAT16, {2});  // 1.0, -2.0 as float16 bits
  for (int v : {0x3C00, 0xC000}) h->add_int32_data(v);
  auto* bf = AddInitializer(m, "bf", onnx::TensorProto::BFLOAT16, {2});  // 1.0, -3.0 as bfloat16 bits
  for (int v : {0x3F80, 0xC040}) bf->add_int32_data(v);
  auto* i64 = AddInitializer(m, "i64", onnx::TensorProto::INT64, {2, 1});
  i64->add_int64_data(-5);
  i64->add_int64_data(int64_t{1} << 50);
  auto* d = AddInitializer(m, "d", onnx::TensorProto::DOUBLE, {2});  // 0.1 needs all 53 bits
  d->add_double_data(0.1);
  d->add_double_data(-1e300);
  auto* i16 = AddInitializer(m, "i16", onnx::TensorProto::INT16, {2});
  for (int v : {-32768, 32767}) i16->add_int32_data(v);
  auto* u16 = AddInitializer(m, "u16", onnx::TensorProto::UINT16, {2});
  for (int v : {0, 65535}) u16->add_int32_data(v);
  auto* u32 = AddInitializer(m, "u32", onnx::TensorProto::UINT32, {2});  // uint64_data, as onnx.proto says
  for (uint64_t v : {uint64_t{7}, uint64_t{4294967295u}}) u32->add_uint64_data(v);
  auto* u64 = AddInitializer(m, "u64", onnx::TensorProto::UINT64, {1});
  u64->add_uint64_data(~uint64_t{0});

  absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxModel(m, dir_);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_THAT(ConstantOf(**g, "f").ToFloatVector(), ElementsAre(0.25f, -7.5f));
  EXPECT_THAT(Int64s(ConstantOf(**g, "i32")), ElementsAre(-2147483648LL, 0, 2147483647));
  EXPECT_EQ(ConstantOf(**g, "i8").dtype(), DType::kI8);
  EXPECT_THAT(Int64s(ConstantOf(**g, "i8")), ElementsAre(-128, -1, 127));
  EXPECT_THAT(Int64s(ConstantOf(**g, "u8")), ElementsAre(0, 200));
  EXPECT_EQ(ConstantOf(**g, "b").dtype(), DType::kBool);
  EXPECT_THAT(Int64s(ConstantOf(**g, "b")), ElementsAre(1, 0, 1));
  EXPECT_THAT(ConstantOf(**g, "h").ToFloatVector(), ElementsAre(1.0f, -2.0f));
  EXPECT_EQ(ConstantOf(**g, "bf").dtype(), DType::kBF16);
  EXPECT_THAT(ConstantOf(**g, "bf").ToFloatVector(), ElementsAre(1.0f, -3.0f));
  EXPECT_THAT(ConstantOf(**g, "i64").shape(), ElementsAre(2, 1));
  EXPECT_THAT(Int64s(ConstantOf(**g, "i64")), ElementsAre(-5, int64_t{1} << 50));
  ASSERT_EQ(ConstantOf(**g, "d").dtype(), DType::kF64);
  EXPECT_EQ(ConstantOf(**g, "d").data<double>()[0], 0.1);
  EXPECT_EQ(ConstantOf(**g, "d").data<double>()[1], -1e300);
  EXPECT_EQ(ConstantOf(**g, "i16").dtype(), DType::kI16);
  EXPECT_THAT(Int64s(ConstantOf(**g, "i16")), ElementsAre(-32768, 32767));
  EXPECT_EQ(ConstantOf(**g, "u16").dtype(), DType::kU16);
  EXPECT_THAT(Int64s(ConstantOf(**g, "u16")), ElementsAre(0, 65535));
  EXPECT_EQ(ConstantOf(**g, "u32").dtype(), DType::kU32);
  EXPECT_THAT(Int64s(ConstantOf(**g, "u32")), ElementsAre(7, 4294967295LL));
  ASSERT_EQ(ConstantOf(**g, "u64").dtype(), DType::kU64);
  EXPECT_EQ(ConstantOf(**g, "u64").data<uint64_t>()[0], ~uint64_t{0});
}

TEST_F(OnnxImporterTest, BadInitializersAreNamedInErrors) {
  struct Case {
    std::string label;
    std::function<void(onnx::ModelProto&)> corrupt;
    absl::StatusCode code;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"raw size",
       [](onnx::ModelProto& m) {
         AddInitializer(m, "w", onnx::TensorProto::FLOAT, {2, 2})->set_raw_data(RawBytes<float>({1, 2}));
       },
       absl::StatusCode::kInvalidArgument, "initializer 'w': raw_data has 8 bytes but dims [2,2] of f32 need 16"},
      {"typed count",
       [](onnx::ModelProto& m) { AddInitializer(m, "w", onnx::TensorProto::FLOAT, {3})->add_float_data(1); },
       absl::StatusCode::kInvalidArgument, "initializer 'w': dims [3] need 3 values but float_data has 1"},
      {"int8 range",
       [](onnx::ModelProto& m) { AddInitializer(m, "q", onnx::TensorProto::INT8, {1})->add_int32_data(300); },
       absl::StatusCode::kInvalidArgument, "initializer 'q': int32_data[0] = 300 does not fit INT8"},
      {"wrong field",
       [](onnx::ModelProto& m) { AddInitializer(m, "w", onnx::TensorProto::FLOAT, {1})->add_int64_data(1); },
       absl::StatusCode::kInvalidArgument, "initializer 'w': FLOAT values belong in float_data"},
      {"no data", [](onnx::ModelProto& m) { AddInitializer(m, "w", onnx::TensorProto::FLOAT, {4}); },
       absl::StatusCode::kInvalidArgument, "initializer 'w': has no data"},
      {"negative dim",
       [](onnx::ModelProto& m) { AddInitializer(m, "w", onnx::TensorProto::FLOAT, {-1})->set_raw_data(""); },
       absl::StatusCode::kInvalidArgument, "initializer 'w': negative dimension"},
      {"huge dims",
       [](onnx::ModelProto& m) {
         AddInitializer(m, "w", onnx::TensorProto::FLOAT, {1 << 30, 1 << 30, 1 << 30})->set_raw_data("");
       },
       absl::StatusCode::kInvalidArgument, "initializer 'w': dims [1073741824,1073741824,1073741824] are too large"},
      {"string",
       [](onnx::ModelProto& m) { AddInitializer(m, "d", onnx::TensorProto::STRING, {1})->add_string_data("a"); },
       absl::StatusCode::kUnimplemented, "initializer 'd': element type STRING is not supported"},
      {"uint32 range",
       [](onnx::ModelProto& m) { AddInitializer(m, "u", onnx::TensorProto::UINT32, {1})->add_uint64_data(1ull << 32); },
       absl::StatusCode::kInvalidArgument, "initializer 'u': uint64_data value 4294967296 at 0 is out of range for UINT32"},
      {"uint16 range",
       [](onnx::ModelProto& m) { AddInitializer(m, "u", onnx::TensorProto::UINT16, {1})->add_int32_data(70000); },
       absl::StatusCode::kInvalidArgument, "initializer 'u': int32_data[0] = 70000 does not fit UINT16"},
      {"double values in float_data",
       [](onnx::ModelProto& m) { AddInitializer(m, "d", onnx::TensorProto::DOUBLE, {1})->add_float_data(1.0f); },
       absl::StatusCode::kInvalidArgument, "initializer 'd': DOUBLE values belong in double_data"},
      {"duplicate",
       [](onnx::ModelProto& m) {
         AddInitializer(m, "w", onnx::TensorProto::FLOAT, {1})->add_float_data(1);
         AddInitializer(m, "w", onnx::TensorProto::FLOAT, {1})->add_float_data(2);
       },
       absl::StatusCode::kInvalidArgument, "initializer 'w' is defined twice"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.label);
    onnx::ModelProto m = ReluModel();
    c.corrupt(m);
    absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxModel(m, dir_);
    ASSERT_FALSE(g.ok());
    EXPECT_EQ(g.status().code(), c.code) << g.status();
    EXPECT_THAT(std::string(g.status().message()), HasSubstr(c.message));
    EXPECT_THAT(std::string(g.status().message()), HasSubstr("ONNX model 'g': "));
  }
}

TEST_F(OnnxImporterTest, InitializerThatIsAlsoAnInputIsAConstant) {
  onnx::ModelProto m = NewModel(13);
  AddInput(m, "x", onnx::TensorProto::FLOAT, {"3"});
  AddInput(m, "bias", onnx::TensorProto::FLOAT, {"3"});
  auto* b = AddInitializer(m, "bias", onnx::TensorProto::FLOAT, {3});
  for (float v : {1.f, 2.f, 3.f}) b->add_float_data(v);
  AddNode(m, "Add", {"x", "bias"}, {"y"}, "add");
  AddOutput(m, "y");
  absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxModel(m, dir_);
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ((*g)->inputs().size(), 1u);
  EXPECT_EQ((*g)->inputs()[0]->name(), "x");
  EXPECT_THAT(ConstantOf(**g, "bias").ToFloatVector(), ElementsAre(1.f, 2.f, 3.f));
  EXPECT_FALSE((*g)->FindValue("bias")->is_graph_input());
}

// ---------------------------------------------------------------------------------------------
// External data

onnx::TensorProto* AddExternal(onnx::ModelProto& m, const std::string& name, const std::vector<int64_t>& dims,
                               const std::string& location, const std::string& offset, const std::string& length) {
  auto* t = AddInitializer(m, name, onnx::TensorProto::FLOAT, dims);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [t](const std::string& k, const std::string& v) {
    auto* e = t->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  add("location", location);
  if (!offset.empty()) add("offset", offset);
  if (!length.empty()) add("length", length);
  return t;
}

TEST_F(OnnxImporterTest, ExternalDataIsReadFromTheSideFile) {
  // weights.bin: 4 floats at offset 0, 16 bytes of padding, 3 floats at offset 32.
  std::vector<float> side = {1.f, -2.f, 3.5f, 4.f, 0, 0, 0, 0, 10.f, 20.f, -30.f};
  WriteBytes(Path("weights.bin"), RawBytes(side));
  onnx::ModelProto m = ReluModel();
  AddExternal(m, "a", {2, 2}, "weights.bin", "", "16");
  AddExternal(m, "b", {3}, "weights.bin", "32", "");
  const std::string path = WriteModel(m);

  absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxFile(path);
  ASSERT_TRUE(g.ok()) << g.status();
  const Tensor& a = ConstantOf(**g, "a");
  EXPECT_THAT(a.shape(), ElementsAre(2, 2));
  EXPECT_THAT(a.ToFloatVector(), ElementsAre(1.f, -2.f, 3.5f, 4.f));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.raw_data()) % kTensorAlignment, 0u);
  EXPECT_THAT(ConstantOf(**g, "b").ToFloatVector(), ElementsAre(10.f, 20.f, -30.f));
  const Tensor& b = ConstantOf(**g, "b");
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.raw_data()) % kTensorAlignment, 0u);
}

TEST_F(OnnxImporterTest, ExternalDataInASubdirectoryOrBehindASymlink) {
  ASSERT_EQ(mkdir(Path("data").c_str(), 0755), 0);
  WriteBytes(Path("data/w.bin"), RawBytes<float>({6.f, 7.f}));
  // Model stores such as the Hugging Face cache link each file to a blob stored elsewhere.
  const std::string blob = dir_ + "_blob.bin";
  WriteBytes(blob, RawBytes<float>({-1.f, 8.f, 9.f}));
  ASSERT_EQ(symlink(blob.c_str(), Path("linked.bin").c_str()), 0);
  onnx::ModelProto m = ReluModel();
  AddExternal(m, "w", {2}, "data/w.bin", "0", "8");
  AddExternal(m, "v", {2}, "linked.bin", "4", "8");
  absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxFile(WriteModel(m));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_THAT(ConstantOf(**g, "w").ToFloatVector(), ElementsAre(6.f, 7.f));
  EXPECT_THAT(ConstantOf(**g, "v").ToFloatVector(), ElementsAre(8.f, 9.f));
}

TEST_F(OnnxImporterTest, BadExternalDataIsReported) {
  WriteBytes(Path("weights.bin"), RawBytes<float>({1, 2, 3, 4}));  // 16 bytes
  struct Case {
    std::string location, offset, length;
    absl::StatusCode code;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"weights.bin", "8", "", absl::StatusCode::kOutOfRange,
       "initializer 'w': external data of 16 bytes at offset 8 runs past the end of '"},
      {"weights.bin", "17", "", absl::StatusCode::kOutOfRange, "runs past the end"},
      {"weights.bin", "9223372036854775807", "", absl::StatusCode::kOutOfRange, "(16 bytes)"},
      {"weights.bin", "-4", "", absl::StatusCode::kInvalidArgument, "external data 'offset' is '-4'"},
      {"weights.bin", "0", "12", absl::StatusCode::kInvalidArgument,
       "external data length is 12 bytes but dims [4] of f32 need 16"},
      {"missing.bin", "", "", absl::StatusCode::kNotFound, "missing.bin"},
      {"/etc/passwd", "", "", absl::StatusCode::kInvalidArgument, "is an absolute path"},
      {"../weights.bin", "", "", absl::StatusCode::kInvalidArgument, "leaves the model's directory through '..'"},
      {"data/../../x.bin", "", "", absl::StatusCode::kInvalidArgument, "through '..'"},
      {"", "", "", absl::StatusCode::kInvalidArgument, "external data has no 'location' entry"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.location + " offset=" + c.offset);
    onnx::ModelProto m = ReluModel();
    AddExternal(m, "w", {4}, c.location, c.offset, c.length);
    const std::string path = WriteModel(m);
    absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxFile(path);
    ASSERT_FALSE(g.ok());
    EXPECT_EQ(g.status().code(), c.code) << g.status();
    EXPECT_THAT(std::string(g.status().message()), HasSubstr(c.message));
    EXPECT_TRUE(absl::StartsWith(g.status().message(), path + ": ")) << g.status();
  }
}

// ---------------------------------------------------------------------------------------------
// Constant nodes

TEST_F(OnnxImporterTest, ConstantNodesBecomeConstants) {
  onnx::ModelProto m = ReluModel();
  auto* c0 = AddNode(m, "Constant", {}, {"c_tensor"}, "c0");
  auto* t = AddAttr(c0, "value", onnx::AttributeProto::TENSOR)->mutable_t();
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(2);
  t->add_int64_data(4);
  t->add_int64_data(-8);
  AddAttr(AddNode(m, "Constant", {}, {"c_float"}, "c1"), "value_float", onnx::AttributeProto::FLOAT)->set_f(2.5f);
  auto* fl = AddAttr(AddNode(m, "Constant", {}, {"c_floats"}, "c2"), "value_floats", onnx::AttributeProto::FLOATS);
  fl->add_floats(1.f);
  fl->add_floats(-1.f);
  AddAttr(AddNode(m, "Constant", {}, {"c_int"}, "c3"), "value_int", onnx::AttributeProto::INT)->set_i(-3);
  AddIntsAttr(AddNode(m, "Constant", {}, {"c_ints"}, "c4"), "value_ints", {5, 6, 7});
  AddNode(m, "Add", {"y", "y"}, {"z"}, "add");
  m.mutable_graph()->mutable_output(0)->set_name("z");
  AddOutput(m, "c_int");  // a constant may be a graph output

  absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxModel(m, dir_);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->num_nodes(), 2);  // Relu and Add; the Constant nodes left no node behind
  EXPECT_EQ((*g)->FindNode("c0"), nullptr);
  EXPECT_THAT(Int64s(ConstantOf(**g, "c_tensor")), ElementsAre(4, -8));
  EXPECT_EQ(ConstantOf(**g, "c_float").rank(), 0);
  EXPECT_THAT(ConstantOf(**g, "c_float").ToFloatVector(), ElementsAre(2.5f));
  EXPECT_THAT(ConstantOf(**g, "c_floats").shape(), ElementsAre(2));
  EXPECT_THAT(ConstantOf(**g, "c_floats").ToFloatVector(), ElementsAre(1.f, -1.f));
  EXPECT_EQ(ConstantOf(**g, "c_int").dtype(), DType::kI64);
  EXPECT_EQ(ConstantOf(**g, "c_int").rank(), 0);
  EXPECT_THAT(Int64s(ConstantOf(**g, "c_int")), ElementsAre(-3));
  EXPECT_THAT(Int64s(ConstantOf(**g, "c_ints")), ElementsAre(5, 6, 7));
  ASSERT_EQ((*g)->outputs().size(), 2u);
  EXPECT_EQ((*g)->outputs()[1]->name(), "c_int");
}

TEST_F(OnnxImporterTest, BadConstantNodesAreRejected) {
  {
    onnx::ModelProto m = ReluModel();
    AddAttr(AddNode(m, "Constant", {}, {"c"}, "c0"), "value_string", onnx::AttributeProto::STRING)->set_s("hi");
    absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxModel(m, dir_);
    EXPECT_EQ(g.status().code(), absl::StatusCode::kUnimplemented) << g.status();
    EXPECT_THAT(std::string(g.status().message()), HasSubstr("Constant 'c0'"));
  }
  {
    onnx::ModelProto m = ReluModel();
    AddAttr(AddNode(m, "Constant", {}, {"c"}, "c0"), "value_float", onnx::AttributeProto::INT)->set_i(1);
    absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxModel(m, dir_);
    EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument) << g.status();
    EXPECT_THAT(std::string(g.status().message()),
                HasSubstr("attribute 'value_float' of node Constant 'c0' has type INT, expected FLOAT"));
  }
  {
    onnx::ModelProto m = ReluModel();
    AddNode(m, "Constant", {}, {"c"}, "c0");
    absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxModel(m, dir_);
    EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument) << g.status();
    EXPECT_THAT(std::string(g.status().message()), HasSubstr("it has 0 attributes"));
  }
}

// ---------------------------------------------------------------------------------------------
// Inputs, outputs and names

TEST_F(OnnxImporterTest, SymbolicStaticAndMissingDims) {
  onnx::ModelProto m = NewModel(13);
  AddInput(m, "x", onnx::TensorProto::FLOAT, {"batch", "3", "", "seq"});
  AddNode(m, "Relu", {"x"}, {"y"}, "relu");
  AddOutput(m, "y");

  absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxModel(m, dir_);
  ASSERT_TRUE(g.ok()) << g.status();
  const TensorType& t = (*g)->inputs()[0]->type();
  EXPECT_EQ(t.dtype, DType::kF32);
  ASSERT_EQ(t.rank(), 4);
  EXPECT_EQ(t.dims[0], Dim::Symbol("batch"));
  EXPECT_EQ(t.dims[1], Dim(3));
  EXPECT_FALSE(t.dims[2].is_static());
  EXPECT_EQ(t.dims[2].symbol()[0], '?');  // a fresh UnknownDim()
  EXPECT_EQ(t.dims[3], Dim::Symbol("seq"));
  EXPECT_EQ((*g)->FindValue("y")->type().dims[0], Dim::Symbol("batch"));

  OnnxImportOptions options;
  options.dim_values = {{"batch", 4}, {"unused_symbol", 9}};
  g = ImportOnnxModel(m, dir_, options);
  ASSERT_TRUE(g.ok()) << g.status();
  const TensorType& t2 = (*g)->inputs()[0]->type();
  EXPECT_EQ(t2.dims[0], Dim(4));
  EXPECT_EQ(t2.dims[3], Dim::Symbol("seq"));

  options.dim_values = {{"seq", -2}};
  g = ImportOnnxModel(m, dir_, options);
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(g.status().message()), HasSubstr("symbol 'seq' the negative value -2"));
}

TEST_F(OnnxImporterTest, InputElementTypesMapToTesselDTypes) {
  const std::vector<std::pair<int, DType>> types = {
      {onnx::TensorProto::FLOAT, DType::kF32},     {onnx::TensorProto::FLOAT16, DType::kF16},
      {onnx::TensorProto::BFLOAT16, DType::kBF16}, {onnx::TensorProto::INT8, DType::kI8},
      {onnx::TensorProto::UINT8, DType::kU8},      {onnx::TensorProto::INT32, DType::kI32},
      {onnx::TensorProto::INT64, DType::kI64},     {onnx::TensorProto::BOOL, DType::kBool},
      {onnx::TensorProto::DOUBLE, DType::kF64},    {onnx::TensorProto::INT16, DType::kI16},
      {onnx::TensorProto::UINT16, DType::kU16},    {onnx::TensorProto::UINT32, DType::kU32},
      {onnx::TensorProto::UINT64, DType::kU64},
  };
  for (const auto& [onnx_type, dtype] : types) {
    onnx::ModelProto m = NewModel(13);
    AddInput(m, "x", onnx_type, {"2"});
    AddNode(m, "TestAttrProbe", {"x"}, {"y"}, "probe");
    AddOutput(m, "y");
    absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxModel(m, dir_);
    ASSERT_TRUE(g.ok()) << g.status();
    EXPECT_EQ((*g)->inputs()[0]->type().dtype, dtype) << onnx_type;
  }
  onnx::ModelProto m = NewModel(13);
  AddInput(m, "x", onnx::TensorProto::COMPLEX64, {"2"});
  AddNode(m, "Relu", {"x"}, {"y"}, "relu");
  AddOutput(m, "y");
  absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxModel(m, dir_);
  EXPECT_EQ(g.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(g.status().message()), HasSubstr("graph input 'x': element type COMPLEX64"));
}

TEST_F(OnnxImporterTest, NamesAreKeptAndMissingOrRepeatedNodeNamesGenerated) {
  onnx::ModelProto m = NewModel(13);
  AddInput(m, "input/0", onnx::TensorProto::FLOAT, {"4"});
  AddNode(m, "Relu", {"input/0"}, {"/a/Relu_output_0"}, "");
  AddNode(m, "Relu", {"/a/Relu_output_0"}, {"b"}, "dup");
  AddNode(m, "Relu", {"b"}, {"c"}, "dup");
  AddNode(m, "Relu", {"c"}, {"d"}, "Relu_4");  // takes the name node 4 would have been given
  AddNode(m, "Relu", {"d"}, {"e"}, "");
  AddOutput(m, "e");
  absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxModel(m, dir_);
  ASSERT_TRUE(g.ok()) << g.status();
  std::vector<std::string> names;
  for (const auto& n : (*g)->nodes()) names.push_back(n->name());
  EXPECT_THAT(names, ElementsAre("Relu_0", "dup", "Relu_2", "Relu_4", "Relu_4_1"));
  EXPECT_NE((*g)->FindValue("/a/Relu_output_0"), nullptr);
  EXPECT_EQ((*g)->FindValue("b")->producer()->name(), "dup");
  EXPECT_EQ((*g)->outputs()[0]->name(), "e");
  EXPECT_EQ((*g)->inputs()[0]->name(), "input/0");
}

TEST_F(OnnxImporterTest, StructuralErrorsNameTheProblem) {
  struct Case {
    std::string label;
    std::function<void(onnx::ModelProto&)> corrupt;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"undefined input", [](onnx::ModelProto& m) { m.mutable_graph()->mutable_node(0)->set_input(0, "nope"); },
       "node Relu 'relu' reads 'nope', which no node, initializer or graph input defines"},
      {"unsorted",
       [](onnx::ModelProto& m) {
         AddNode(m, "Relu", {"y2"}, {"y3"}, "late");
         AddNode(m, "Relu", {"y"}, {"y2"}, "early");
       },
       "node Relu 'late' reads 'y2', which node Relu 'early' defines later"},
      {"output defined twice", [](onnx::ModelProto& m) { AddNode(m, "Relu", {"x"}, {"y"}, "again"); },
       "value 'y' is produced by node Relu 'again' but is already defined by node Relu 'relu'"},
      {"output shadows input", [](onnx::ModelProto& m) { AddNode(m, "Relu", {"y"}, {"x"}, "shadow"); },
       "value 'x' is produced by node Relu 'shadow' but is already defined by graph input 'x'"},
      {"undefined graph output", [](onnx::ModelProto& m) { AddOutput(m, "ghost"); },
       "graph output 'ghost' is not defined"},
      {"no outputs", [](onnx::ModelProto& m) { m.mutable_graph()->clear_output(); }, "the graph has no outputs"},
      {"no graph", [](onnx::ModelProto& m) { m.clear_graph(); }, "not a valid ONNX model (it has no graph)"},
      {"no opset", [](onnx::ModelProto& m) { m.clear_opset_import(); }, "no opset_import for the default domain"},
      {"input without shape",
       [](onnx::ModelProto& m) {
         m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->clear_shape();
       },
       "graph input 'x' has no shape"},
      {"input not a tensor",
       [](onnx::ModelProto& m) { m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_sequence_type(); },
       "graph input 'x' is not a tensor"},
      {"duplicate attribute",
       [](onnx::ModelProto& m) {
         auto* n = m.mutable_graph()->mutable_node(0);
         AddAttr(n, "k", onnx::AttributeProto::INT);
         AddAttr(n, "k", onnx::AttributeProto::INT);
       },
       "node Relu 'relu' has attribute 'k' twice"},
      {"untyped attribute",
       [](onnx::ModelProto& m) { AddAttr(m.mutable_graph()->mutable_node(0), "k", onnx::AttributeProto::UNDEFINED); },
       "attribute 'k' of node Relu 'relu' has no type"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.label);
    onnx::ModelProto m = ReluModel();
    c.corrupt(m);
    const std::string path = WriteModel(m);
    absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxFile(path);
    ASSERT_FALSE(g.ok());
    EXPECT_NE(g.status().code(), absl::StatusCode::kInternal);
    EXPECT_THAT(std::string(g.status().message()), HasSubstr(c.message));
    EXPECT_TRUE(absl::StartsWith(g.status().message(), path + ": ")) << g.status();
  }
}

// ---------------------------------------------------------------------------------------------
// Attributes

TEST_F(OnnxImporterTest, AttributesOfEveryKind) {
  onnx::ModelProto m = NewModel(13);
  AddInput(m, "x", onnx::TensorProto::FLOAT, {"2"});
  auto* n = AddNode(m, "TestAttrProbe", {"x"}, {"y"}, "probe");
  AddOutput(m, "y");
  AddAttr(n, "i", onnx::AttributeProto::INT)->set_i(-42);
  AddAttr(n, "f", onnx::AttributeProto::FLOAT)->set_f(0.125f);
  AddAttr(n, "s", onnx::AttributeProto::STRING)->set_s("half_pixel");
  AddIntsAttr(n, "ints", {1, -2, int64_t{1} << 40});
  auto* fs = AddAttr(n, "floats", onnx::AttributeProto::FLOATS);
  fs->add_floats(1.5f);
  fs->add_floats(-0.f);
  auto* ss = AddAttr(n, "strings", onnx::AttributeProto::STRINGS);
  ss->add_strings("a");
  ss->add_strings("");
  auto* t = AddAttr(n, "t", onnx::AttributeProto::TENSOR)->mutable_t();
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(1);
  t->add_dims(2);
  t->set_raw_data(RawBytes<float>({3.f, -4.f}));
  AddAttr(n, "empty_ints", onnx::AttributeProto::INTS);

  absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxModel(m, dir_);
  ASSERT_TRUE(g.ok()) << g.status();
  const Node* p = (*g)->FindNode("probe");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->attributes().size(), 8u);
  EXPECT_EQ(*p->FindAttr("i"), Attribute::Int(-42));
  EXPECT_EQ(*p->FindAttr("f"), Attribute::Float(0.125f));
  EXPECT_EQ(*p->FindAttr("s"), Attribute::String("half_pixel"));
  EXPECT_EQ(*p->FindAttr("ints"), Attribute::Ints({1, -2, int64_t{1} << 40}));
  EXPECT_EQ(*p->FindAttr("floats"), Attribute::Floats({1.5f, -0.f}));
  EXPECT_EQ(*p->FindAttr("strings"), Attribute::Strings({"a", ""}));
  EXPECT_EQ(*p->FindAttr("t"), Attribute::TensorValue(Tensor::FromVector<float>({1, 2}, {3.f, -4.f})));
  EXPECT_EQ(*p->FindAttr("empty_ints"), Attribute::Ints({}));
}

TEST_F(OnnxImporterTest, GraphAttributesAreUnsupported) {
  onnx::ModelProto m = ReluModel();
  AddAttr(m.mutable_graph()->mutable_node(0), "body", onnx::AttributeProto::GRAPH)->mutable_g()->set_name("b");
  absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxModel(m, dir_);
  EXPECT_EQ(g.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(g.status().message()),
              HasSubstr("attribute 'body' of node Relu 'relu': subgraph attributes are not supported here (If and "
                        "Loop import theirs; Scan's body does not)"));
}

// ---------------------------------------------------------------------------------------------
// Opsets and upgrades to the opset-18 operator forms

// The version converter trusts its input; a malformed old model is refused before it gets there (a graph
// output no node defines crashed it; kept as a fuzzing seed).
TEST_F(OnnxImporterTest, MalformedOldModelsAreRefusedBeforeConversion) {
  onnx::ModelProto undefined_output = ReluModel(10);
  AddOutput(undefined_output, "nowhere");
  absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxModel(undefined_output, dir_);
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(g.status().message()), HasSubstr("opset 10 model: graph output 'nowhere' is not defined"));

  onnx::ModelProto undefined_input = NewModel(9);
  AddInput(undefined_input, "x", onnx::TensorProto::FLOAT, {"2"});
  AddNode(undefined_input, "Add", {"x", "ghost"}, {"y"}, "add");
  AddOutput(undefined_input, "y");
  g = ImportOnnxModel(undefined_input, dir_);
  EXPECT_THAT(std::string(g.status().message()), HasSubstr("reads 'ghost', which no earlier node"));

  onnx::ModelProto short_data = ReluModel(8);
  onnx::TensorProto* w = short_data.mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(4);
  w->add_float_data(1.0f);
  g = ImportOnnxModel(short_data, dir_);
  EXPECT_THAT(std::string(g.status().message()), HasSubstr("initializer 'w' holds data that does not match its dims"));
}

// Opset 9 forms whose meaning the converter rewrites: Upsample (nearest, scales as an input) becomes
// Resize and Slice's attributes become inputs; the values are checked by hand.
TEST_F(OnnxImporterTest, Opset9UpsampleAndSliceAreConverted) {
  onnx::ModelProto m = NewModel(9);
  AddInput(m, "x", onnx::TensorProto::FLOAT, {"1", "1", "2", "3"});
  onnx::TensorProto* scales = m.mutable_graph()->add_initializer();
  scales->set_name("scales");
  scales->set_data_type(onnx::TensorProto::FLOAT);
  scales->add_dims(4);
  for (float v : {1.f, 1.f, 2.f, 2.f}) scales->add_float_data(v);
  AddNode(m, "Upsample", {"x", "scales"}, {"u"}, "up")->add_attribute()->CopyFrom([] {
    onnx::AttributeProto a;
    a.set_name("mode");
    a.set_type(onnx::AttributeProto::STRING);
    a.set_s("nearest");
    return a;
  }());
  onnx::NodeProto* slice = AddNode(m, "Slice", {"u"}, {"y"}, "slice");
  for (const auto& [name, values] : std::vector<std::pair<std::string, std::vector<int64_t>>>{
           {"axes", {3}}, {"starts", {1}}, {"ends", {5}}}) {
    onnx::AttributeProto* a = slice->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t v : values) a->add_ints(v);
  }
  AddOutput(m, "y");
  absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxModel(m, dir_);
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ((*g)->outputs().size(), 1u);
  EXPECT_EQ((*g)->outputs()[0]->type().ToString(), "f32[1,1,4,4]");
  bool resize = false;
  for (const auto& n : (*g)->nodes()) resize |= n->op_type() == "Resize";
  EXPECT_TRUE(resize);
}

// OnnxImportOptions::fold_node sees every node once its types are known; a node it cannot fold
// (an error) stays, so that folding never makes a model fail to import.
TEST_F(OnnxImporterTest, FoldNodeSeesTypedNodesAndItsErrorsLeaveThem) {
  std::vector<std::string> seen;
  OnnxImportOptions options;
  options.fold_node = [&seen](Graph&, Node* n) -> absl::StatusOr<bool> {
    seen.push_back(absl::StrCat(n->op_type(), " ", n->output(0)->type().ToString()));
    return absl::InternalError("no kernel for this");
  };
  absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxModel(ReluModel(21), dir_, options);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->num_nodes(), 1);
  EXPECT_THAT(seen, ::testing::ElementsAre("Relu f32[2,3]"));
}

TEST_F(OnnxImporterTest, OpsetsOutside1To21AreRejected) {
  for (int opset : {22, 23}) {
    absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxFile(WriteModel(ReluModel(opset)));
    EXPECT_EQ(g.status().code(), absl::StatusCode::kUnimplemented) << opset;
    EXPECT_THAT(std::string(g.status().message()),
                HasSubstr(absl::StrCat("default-domain opset ", opset,
                                       " is not supported; Tessel imports opsets 1 to 21 (1 to 10 converted to 11)")));
  }
  // 1 to 10 go through the ONNX version converter (//graph/onnx:legacy_opset_test runs PyTorch's
  // exports at opsets 7 to 10).
  for (int opset : {1, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21}) {
    EXPECT_TRUE(ImportOnnxModel(ReluModel(opset), dir_).ok()) << opset;
  }
  onnx::ModelProto m = ReluModel(13);
  auto* ai = m.add_opset_import();
  ai->set_domain("ai.onnx");
  ai->set_version(15);
  absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxModel(m, dir_);
  EXPECT_THAT(std::string(g.status().message()), HasSubstr("imported twice, at opsets 13 and 15"));
}

TEST_F(OnnxImporterTest, UnsqueezeAxesAttributeBecomesAnInputBeforeOpset13) {
  onnx::ModelProto m = NewModel(11);
  AddInput(m, "x", onnx::TensorProto::FLOAT, {"2", "3"});
  AddIntsAttr(AddNode(m, "Unsqueeze", {"x"}, {"y"}, "unsq"), "axes", {0, 3});
  AddOutput(m, "y");
  absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxModel(m, dir_);
  ASSERT_TRUE(g.ok()) << g.status();
  const Node* n = (*g)->FindNode("unsq");
  ASSERT_NE(n, nullptr);
  EXPECT_FALSE(n->HasAttr("axes"));
  ASSERT_EQ(n->num_inputs(), 2);
  ASSERT_TRUE(n->input(1)->is_constant());
  EXPECT_EQ(n->input(1)->constant()->dtype(), DType::kI64);
  EXPECT_THAT(n->input(1)->constant()->shape(), ElementsAre(2));
  EXPECT_THAT(Int64s(*n->input(1)->constant()), ElementsAre(0, 3));
  EXPECT_EQ((*g)->FindValue("y")->type(), TensorType::Static(DType::kF32, {1, 2, 3, 1}));

  // At opset 11 the axes come only as an attribute; an input there is malformed.
  onnx::ModelProto bad = NewModel(11);
  AddInput(bad, "x", onnx::TensorProto::FLOAT, {"2", "3"});
  AddInput(bad, "axes", onnx::TensorProto::INT64, {"1"});
  AddNode(bad, "Unsqueeze", {"x", "axes"}, {"y"}, "unsq");
  AddOutput(bad, "y");
  g = ImportOnnxModel(bad, dir_);
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(g.status().message()), HasSubstr("at opset 11, Unsqueeze takes 'axes' as an attribute"));
}

TEST_F(OnnxImporterTest, UnsqueezeAtOpset13IsAlreadyInInputForm) {
  onnx::ModelProto m = NewModel(13);
  AddInput(m, "x", onnx::TensorProto::FLOAT, {"2", "3"});
  auto* axes = AddInitializer(m, "axes", onnx::TensorProto::INT64, {1});
  axes->add_int64_data(1);
  AddNode(m, "Unsqueeze", {"x", "axes"}, {"y"}, "unsq");
  AddOutput(m, "y");
  absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxModel(m, dir_);
  ASSERT_TRUE(g.ok()) << g.status();
  const Node* n = (*g)->FindNode("unsq");
  EXPECT_EQ(n->input(1)->name(), "axes");
  EXPECT_EQ((*g)->FindValue("y")->type(), TensorType::Static(DType::kF32, {2, 1, 3}));
  EXPECT_EQ((*g)->Constants().size(), 1u);
}

TEST_F(OnnxImporterTest, ReduceMeanAxesAttributeBecomesAnInputBeforeOpset18) {
  for (int opset : {13, 17}) {
    onnx::ModelProto m = NewModel(opset);
    AddInput(m, "x", onnx::TensorProto::FLOAT, {"2", "3", "4"});
    auto* n = AddNode(m, "ReduceMean", {"x"}, {"y"}, "mean");
    AddIntsAttr(n, "axes", {-1, 1});
    AddAttr(n, "keepdims", onnx::AttributeProto::INT)->set_i(0);
    AddOutput(m, "y");
    absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxModel(m, dir_);
    ASSERT_TRUE(g.ok()) << g.status();
    const Node* mean = (*g)->FindNode("mean");
    EXPECT_FALSE(mean->HasAttr("axes"));
    EXPECT_EQ(mean->GetInt("keepdims", 1), 0);
    ASSERT_EQ(mean->num_inputs(), 2);
    EXPECT_THAT(Int64s(*mean->input(1)->constant()), ElementsAre(-1, 1));
    EXPECT_EQ((*g)->FindValue("y")->type(), TensorType::Static(DType::kF32, {2}));
  }
  // ReduceSum moved its axes to an input already at opset 13.
  onnx::ModelProto m = NewModel(12);
  AddInput(m, "x", onnx::TensorProto::FLOAT, {"2", "3"});
  AddIntsAttr(AddNode(m, "ReduceSum", {"x"}, {"y"}, "sum"), "axes", {0});
  AddOutput(m, "y");
  absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxModel(m, dir_);
  ASSERT_TRUE(g.ok()) << g.status();
  const Node* sum = (*g)->FindNode("sum");
  EXPECT_FALSE(sum->HasAttr("axes"));
  ASSERT_EQ(sum->num_inputs(), 2);
  EXPECT_THAT(Int64s(*sum->input(1)->constant()), ElementsAre(0));
  EXPECT_EQ((*g)->FindValue("y")->type(), TensorType::Static(DType::kF32, {1, 3}));
}

// Opset 18's GroupNormalization has one scale and bias per group; the per-channel form is opset 21's.
TEST_F(OnnxImporterTest, GroupNormalizationBeforeOpset21TakesPerGroupScale) {
  for (const int scale_length : {2, 6}) {
    onnx::ModelProto m = NewModel(18);
    AddInput(m, "x", onnx::TensorProto::FLOAT, {"1", "6", "4"});
    AddInput(m, "scale", onnx::TensorProto::FLOAT, {std::to_string(scale_length)});
    AddInput(m, "bias", onnx::TensorProto::FLOAT, {std::to_string(scale_length)});
    AddAttr(AddNode(m, "GroupNormalization", {"x", "scale", "bias"}, {"y"}, "gn"), "num_groups",
            onnx::AttributeProto::INT)
        ->set_i(2);
    AddOutput(m, "y");
    absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxModel(m, dir_);
    if (scale_length == 2) {
      EXPECT_TRUE(g.ok()) << g.status();
    } else {
      EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_THAT(g.status().message(),
                  HasSubstr("node GroupNormalization 'gn': at opset 18, GroupNormalization takes one scale and bias "
                            "per group (num_groups = 2), but scale has 6 (the per-channel form is opset 21)"));
    }
  }
}

TEST_F(OnnxImporterTest, SplitAttributeBecomesAnInputAndEqualSplitsGetNumOutputs) {
  onnx::ModelProto m = NewModel(11);
  AddInput(m, "x", onnx::TensorProto::FLOAT, {"2", "6"});
  auto* n = AddNode(m, "Split", {"x"}, {"a", "b"}, "split");
  AddAttr(n, "axis", onnx::AttributeProto::INT)->set_i(1);
  AddIntsAttr(n, "split", {2, 4});
  AddNode(m, "Split", {"x"}, {"c", "d", "e"}, "split3");
  AddOutput(m, "a");
  AddOutput(m, "b");
  AddOutput(m, "e");
  absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxModel(m, dir_);
  ASSERT_TRUE(g.ok()) << g.status();
  const Node* split = (*g)->FindNode("split");
  EXPECT_FALSE(split->HasAttr("split"));
  EXPECT_THAT(Int64s(*split->input(1)->constant()), ElementsAre(2, 4));
  EXPECT_EQ((*g)->FindValue("b")->type(), TensorType::Static(DType::kF32, {2, 4}));
  const Node* split3 = (*g)->FindNode("split3");
  EXPECT_EQ(split3->num_inputs(), 1);
  EXPECT_EQ(split3->GetInt("num_outputs", 0), 3);
}

TEST_F(OnnxImporterTest, DropoutRatioAttributeBecomesAnInputBeforeOpset12) {
  onnx::ModelProto m = NewModel(11);
  AddInput(m, "x", onnx::TensorProto::FLOAT, {"2", "3"});
  AddAttr(AddNode(m, "Dropout", {"x"}, {"y"}, "drop"), "ratio", onnx::AttributeProto::FLOAT)->set_f(0.25f);
  AddOutput(m, "y");
  absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxModel(m, dir_);
  ASSERT_TRUE(g.ok()) << g.status();
  const Node* drop = (*g)->FindNode("drop");
  EXPECT_FALSE(drop->HasAttr("ratio"));
  ASSERT_EQ(drop->num_inputs(), 2);
  const Tensor& ratio = *drop->input(1)->constant();
  EXPECT_EQ(ratio.dtype(), DType::kF32);
  EXPECT_EQ(ratio.rank(), 0);
  EXPECT_THAT(ratio.ToFloatVector(), ElementsAre(0.25f));
}

TEST_F(OnnxImporterTest, LegacySoftmaxOnANonLastAxisIsFlattenedAndReshaped) {
  onnx::ModelProto m = NewModel(11);
  AddInput(m, "x", onnx::TensorProto::FLOAT, {"2", "3", "4", "5"});
  AddNode(m, "Softmax", {"x"}, {"y"}, "sm");  // default axis 1: normalize over 3*4*5 values per row
  AddOutput(m, "y");
  absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxModel(m, dir_);
  ASSERT_TRUE(g.ok()) << g.status();
  std::vector<std::string> ops;
  for (const auto& n : (*g)->nodes()) ops.push_back(n->op_type());
  EXPECT_THAT(ops, ElementsAre("Flatten", "Softmax", "Reshape"));
  const Node* sm = (*g)->FindNode("sm");
  ASSERT_NE(sm, nullptr);
  EXPECT_EQ(sm->GetInt("axis", 0), -1);
  const Node* flatten = sm->input(0)->producer();
  ASSERT_NE(flatten, nullptr);
  EXPECT_EQ(flatten->GetInt("axis", 0), 1);
  EXPECT_EQ(flatten->input(0)->name(), "x");
  EXPECT_EQ(sm->output(0)->type(), TensorType::Static(DType::kF32, {2, 60}));
  const Value* y = (*g)->FindValue("y");
  EXPECT_EQ(y->producer()->op_type(), "Reshape");
  EXPECT_THAT(Int64s(*y->producer()->input(1)->constant()), ElementsAre(2, 3, 4, 5));
  EXPECT_EQ(y->type(), TensorType::Static(DType::kF32, {2, 3, 4, 5}));
  EXPECT_EQ((*g)->outputs()[0], y);
}

TEST_F(OnnxImporterTest, LegacySoftmaxWithSymbolicShapeReshapesThroughShape) {
  onnx::ModelProto m = NewModel(12);
  AddInput(m, "x", onnx::TensorProto::FLOAT, {"batch", "3", "4"});
  AddAttr(AddNode(m, "Softmax", {"x"}, {"y"}, "sm"), "axis", onnx::AttributeProto::INT)->set_i(-2);
  AddOutput(m, "y");
  absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxModel(m, dir_);
  ASSERT_TRUE(g.ok()) << g.status();
  const Value* y = (*g)->FindValue("y");
  ASSERT_EQ(y->producer()->op_type(), "Reshape");
  const Node* shape = y->producer()->input(1)->producer();
  ASSERT_NE(shape, nullptr);
  EXPECT_EQ(shape->op_type(), "Shape");
  EXPECT_EQ(shape->input(0)->name(), "x");
  EXPECT_EQ(y->type().rank(), 3);
  EXPECT_EQ((*g)->FindNode("sm")->input(0)->producer()->GetInt("axis", 0), 1);
}

TEST_F(OnnxImporterTest, LegacySoftmaxOnTheLastAxisStaysOneNode) {
  onnx::ModelProto m = NewModel(11);
  AddInput(m, "x", onnx::TensorProto::FLOAT, {"2", "5"});
  AddNode(m, "Softmax", {"x"}, {"y"}, "sm");  // default axis 1 is the last axis of a matrix
  AddOutput(m, "y");
  absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxModel(m, dir_);
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ((*g)->num_nodes(), 1);
  EXPECT_EQ((*g)->FindNode("sm")->GetInt("axis", 0), -1);
  EXPECT_EQ((*g)->FindValue("y")->producer()->name(), "sm");

  // At opset 13 the attribute is taken as it is.
  onnx::ModelProto m13 = NewModel(13);
  AddInput(m13, "x", onnx::TensorProto::FLOAT, {"2", "3", "4"});
  AddAttr(AddNode(m13, "Softmax", {"x"}, {"y"}, "sm"), "axis", onnx::AttributeProto::INT)->set_i(1);
  AddOutput(m13, "y");
  g = ImportOnnxModel(m13, dir_);
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ((*g)->num_nodes(), 1);
  EXPECT_EQ((*g)->FindNode("sm")->GetInt("axis", 0), 1);

  onnx::ModelProto bad = NewModel(11);
  AddInput(bad, "x", onnx::TensorProto::FLOAT, {"5"});
  AddNode(bad, "Softmax", {"x"}, {"y"}, "sm");  // default axis 1 does not exist in a vector
  AddOutput(bad, "y");
  g = ImportOnnxModel(bad, dir_);
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(g.status().message()), HasSubstr("node Softmax 'sm': axis 1 is out of range"));
}

// ---------------------------------------------------------------------------------------------
// Unsupported operators

TEST_F(OnnxImporterTest, UnsupportedOperatorsAreListedTogether) {
  onnx::ModelProto m = NewModel(13);
  AddInput(m, "x", onnx::TensorProto::FLOAT, {"4"});
  AddNode(m, "TfIdfVectorizer", {"x"}, {"a"}, "tfidf_0");
  AddNode(m, "Relu", {"a"}, {"b"}, "relu_1");
  AddNode(m, "FusedConv", {"b"}, {"c"}, "fused_2")->set_domain("com.microsoft");
  AddNode(m, "TfIdfVectorizer", {"c"}, {"d"}, "tfidf_3");
  AddNode(m, "StringNormalizer", {"d"}, {"e"}, "");
  AddOutput(m, "e");
  const std::string path = WriteModel(m);
  absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxFile(path);
  EXPECT_EQ(g.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(g.status().message(),
            path +
                ": 3 unsupported operator types: TfIdfVectorizer (first at node 'tfidf_0'), "
                "com.microsoft.FusedConv (first at node 'fused_2'), StringNormalizer (first at node "
                "'StringNormalizer_4') (at default-domain opset 13)");

  // The check runs before anything is built: a bad tensor later in the model is not reached.
  onnx::ModelProto one = NewModel(13);
  AddInput(one, "x", onnx::TensorProto::FLOAT, {"4"});
  AddInitializer(one, "w", onnx::TensorProto::FLOAT, {4});  // no data
  AddNode(one, "Relu", {"x"}, {"y"}, "r")->set_domain("ai.onnx");
  AddNode(one, "TfIdfVectorizer", {"y"}, {"z"}, "t");
  AddOutput(one, "z");
  g = ImportOnnxModel(one, dir_);
  EXPECT_EQ(g.status().message(), "ONNX model 'g': 1 unsupported operator type: TfIdfVectorizer (first at node 't') (at "
            "default-domain opset 13)");
}

// ---------------------------------------------------------------------------------------------
// If

// cond -> If: then y = x + x, else y = x * x (each branch reads x from the outer graph).
onnx::ModelProto IfModel() {
  onnx::ModelProto m = NewModel(13);
  AddInput(m, "x", onnx::TensorProto::FLOAT, {"2", "3"});
  onnx::NodeProto* n = AddNode(m, "If", {"cond"}, {"y"}, "branch");
  for (const auto& [attr, op] : {std::pair<std::string, std::string>{"then_branch", "Add"}, {"else_branch", "Mul"}}) {
    onnx::GraphProto* g = AddAttr(n, attr, onnx::AttributeProto::GRAPH)->mutable_g();
    g->set_name(attr);
    onnx::NodeProto* inner = g->add_node();
    inner->set_op_type(op);
    inner->add_input("x");
    inner->add_input("x");
    inner->add_output(attr + "_y");
    g->add_output()->set_name(attr + "_y");
  }
  AddOutput(m, "y");
  return m;
}

// An If whose condition is a constant at import is replaced by the branch it takes.
TEST_F(OnnxImporterTest, IfWithAConstantConditionInlinesItsBranch) {
  for (const bool cond : {true, false}) {
    onnx::ModelProto m = IfModel();
    AddInitializer(m, "cond", onnx::TensorProto::BOOL, {})->set_raw_data(std::string(1, cond ? '\1' : '\0'));
    absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxModel(m, dir_);
    ASSERT_TRUE(g.ok()) << g.status();
    std::vector<std::string> ops;
    for (const auto& node : (*g)->nodes()) ops.push_back(node->op_type());
    EXPECT_THAT(ops, ElementsAre(cond ? "Add" : "Mul", "Identity"));
    EXPECT_EQ((*g)->FindValue("y")->type(), TensorType::Static(DType::kF32, {2, 3}));
  }
}

Tensor Floats(std::vector<int64_t> shape, std::vector<float> v) { return Tensor::FromVector<float>(std::move(shape), v); }

Tensor Bool(bool b) {
  Tensor t(DType::kBool, {});
  t.data<bool>()[0] = b;
  return t;
}

// A condition known only at run time keeps the If, with both branches as subgraphs that read x from
// the enclosing graph through the node's second input; the interpreter runs the taken one (checked
// against the hand-computed x + x and x * x).
TEST_F(OnnxImporterTest, IfWithARuntimeConditionRunsTheTakenBranch) {
  onnx::ModelProto m = IfModel();
  AddInput(m, "cond", onnx::TensorProto::BOOL, {});
  absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxModel(m, dir_);
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ((*g)->num_nodes(), 1);
  const Node& n = *(*g)->nodes().front();
  EXPECT_EQ(n.op_type(), "If");
  ASSERT_EQ(n.num_inputs(), 2);
  EXPECT_EQ(n.input(0)->name(), "cond");
  EXPECT_EQ(n.input(1)->name(), "x");
  EXPECT_EQ((*g)->FindValue("y")->type(), TensorType::Static(DType::kF32, {2, 3}));
  auto interp = ReferenceInterpreter::Create(g->get());
  ASSERT_TRUE(interp.ok()) << interp.status();
  const Tensor x = Floats({2, 3}, {1, -2, 3, 0.5f, 5, -6});
  for (const bool cond : {true, false}) {
    absl::StatusOr<std::vector<Tensor>> y = interp->Run(std::map<std::string, Tensor>{{"x", x}, {"cond", Bool(cond)}});
    ASSERT_TRUE(y.ok()) << y.status();
    ASSERT_EQ((*y)[0].shape(), (std::vector<int64_t>{2, 3}));
    for (int i = 0; i < 6; ++i) {
      const float v = x.data<float>()[i];
      EXPECT_EQ((*y)[0].data<float>()[i], cond ? v + v : v * v) << i;
    }
  }
}

// torchvision's batched NMS: if the box tensor is empty, an empty result, else a computed one. The
// output's extent differs between the branches, so it is unknown until run time; the condition is
// computed from the input's values in the graph, and an If nested in a branch stays control flow too.
TEST_F(OnnxImporterTest, IfBranchesMayDisagreeOnExtentsAndNest) {
  onnx::ModelProto m = NewModel(17);
  AddInput(m, "x", onnx::TensorProto::FLOAT, {"4"});
  AddNode(m, "ReduceSum", {"x"}, {"sum"}, "sum");
  AddInitializer(m, "zero", onnx::TensorProto::FLOAT, {})->add_float_data(0);
  AddNode(m, "Greater", {"sum", "zero"}, {"positive"}, "positive");
  onnx::NodeProto* n = AddNode(m, "If", {"positive"}, {"y"}, "outer");
  // then: Relu(x) if x's max > 2 (a nested If), else -x; else: an empty tensor.
  onnx::GraphProto* then_g = AddAttr(n, "then_branch", onnx::AttributeProto::GRAPH)->mutable_g();
  then_g->set_name("then");
  onnx::NodeProto* max = then_g->add_node();
  max->set_op_type("ReduceMax");
  max->add_input("x");
  max->add_output("max");
  onnx::TensorProto* two = then_g->add_initializer();
  two->set_name("two");
  two->set_data_type(onnx::TensorProto::FLOAT);
  two->add_float_data(2);
  onnx::NodeProto* big = then_g->add_node();
  big->set_op_type("Greater");
  big->add_input("max");
  big->add_input("two");
  big->add_output("big");
  onnx::NodeProto* inner = then_g->add_node();
  inner->set_op_type("If");
  inner->set_name("inner");
  inner->add_input("big");
  inner->add_output("inner_y");
  for (const auto& [attr, op] : {std::pair<std::string, std::string>{"then_branch", "Relu"}, {"else_branch", "Neg"}}) {
    onnx::AttributeProto* a = inner->add_attribute();
    a->set_name(attr);
    a->set_type(onnx::AttributeProto::GRAPH);
    a->mutable_g()->set_name(attr);
    onnx::NodeProto* op_node = a->mutable_g()->add_node();
    op_node->set_op_type(op);
    op_node->add_input("x");
    op_node->add_output(attr + "_out");
    a->mutable_g()->add_output()->set_name(attr + "_out");
  }
  then_g->add_output()->set_name("inner_y");
  onnx::GraphProto* else_g = AddAttr(n, "else_branch", onnx::AttributeProto::GRAPH)->mutable_g();
  else_g->set_name("else");
  onnx::NodeProto* empty = else_g->add_node();
  empty->set_op_type("Constant");
  empty->add_output("empty");
  onnx::AttributeProto* value = empty->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  value->mutable_t()->add_dims(0);
  else_g->add_output()->set_name("empty");
  AddOutput(m, "y");
  absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxModel(m, dir_);
  ASSERT_TRUE(g.ok()) << g.status();
  const TensorType& y = (*g)->FindValue("y")->type();
  ASSERT_EQ(y.rank(), 1);
  EXPECT_FALSE(y.dims[0].is_static()) << y.ToString();
  auto interp = ReferenceInterpreter::Create(g->get());
  ASSERT_TRUE(interp.ok()) << interp.status();
  struct Case {
    std::vector<float> x, want;
  };
  for (const Case& c : {Case{{1, -1, 3, 0}, {1, 0, 3, 0}}, Case{{1, -1, 2, 0}, {-1, 1, -2, 0}},
                        Case{{1, -5, 2, 0}, {}}}) {
    absl::StatusOr<std::vector<Tensor>> out = interp->Run(std::vector<Tensor>{Floats({4}, c.x)});
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ((*out)[0].num_elements(), static_cast<int64_t>(c.want.size()));
    for (size_t i = 0; i < c.want.size(); ++i) EXPECT_EQ((*out)[0].data<float>()[i], c.want[i]) << i;
  }
}

// A branch that reads a value nobody defines names the If and the branch.
TEST_F(OnnxImporterTest, IfBranchReadingAnUndefinedValueIsAnError) {
  onnx::ModelProto m = IfModel();
  AddInput(m, "cond", onnx::TensorProto::BOOL, {});
  m.mutable_graph()->mutable_node(0)->mutable_attribute(1)->mutable_g()->mutable_node(0)->set_input(1, "nowhere");
  absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxModel(m, dir_);
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(g.status().message(), HasSubstr("node If 'branch' reads 'nowhere', which no node, initializer or graph "
                                              "input defines"));
}

// A graph output declared with another element type, rank or extent than the graph computes is an
// inconsistent model: an error naming the output, not an artifact whose output means something else.
TEST_F(OnnxImporterTest, DeclaredOutputTypesMustMatchTheGraph) {
  struct Case {
    int elem_type;
    std::vector<std::string> dims;
    std::string message;  // empty: imports
  };
  const std::vector<Case> cases = {
      {onnx::TensorProto::FLOAT, {"2", "3"}, ""},
      {onnx::TensorProto::FLOAT, {"N", ""}, ""},  // symbolic and unknown extents are not compared
      {onnx::TensorProto::UNDEFINED, {"2", "3"}, ""},
      {onnx::TensorProto::INT64, {"2", "3"}, "graph output 'y' is declared i64 but the graph computes f32[2,3]"},
      {onnx::TensorProto::FLOAT, {"2"}, "graph output 'y' is declared with rank 1 but the graph computes f32[2,3]"},
      {onnx::TensorProto::FLOAT, {"2", "4"},
       "graph output 'y' is declared with extent 4 on axis 1 but the graph computes f32[2,3]"},
  };
  for (const Case& c : cases) {
    onnx::ModelProto m = NewModel(17);
    AddInput(m, "x", onnx::TensorProto::FLOAT, {"2", "3"});
    AddNode(m, "Relu", {"x"}, {"y"}, "r");
    AddInput(m, "y", c.elem_type, c.dims);  // built as an input, then moved to the outputs
    *m.mutable_graph()->add_output() = m.graph().input(1);
    m.mutable_graph()->mutable_input()->RemoveLast();
    absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxModel(m, dir_);
    if (c.message.empty()) {
      EXPECT_TRUE(g.ok()) << g.status();
    } else {
      EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_EQ(g.status().message(), "ONNX model 'g': " + c.message);
    }
  }
}

TEST_F(OnnxImporterTest, AiOnnxDomainIsTheStandardDomain) {
  onnx::ModelProto m = ReluModel();
  m.mutable_graph()->mutable_node(0)->set_domain("ai.onnx");
  absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxModel(m, dir_);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->FindNode("relu")->domain(), "");
}

// ---------------------------------------------------------------------------------------------
// Files: missing, empty, malformed, truncated

// A model exercising every part of the format the importer reads.
onnx::ModelProto RichModel() {
  onnx::ModelProto m = NewModel(11);
  m.set_producer_name("onnx_importer_test");
  AddInput(m, "x", onnx::TensorProto::FLOAT, {"batch", "3"});
  auto* w = AddInitializer(m, "w", onnx::TensorProto::FLOAT, {3});
  for (float v : {0.5f, -1.f, 2.f}) w->add_float_data(v);
  AddInitializer(m, "r", onnx::TensorProto::INT64, {2})->set_raw_data(RawBytes<int64_t>({1, 2}));
  AddAttr(AddNode(m, "Constant", {}, {"k"}, "const"), "value_float", onnx::AttributeProto::FLOAT)->set_f(3.f);
  AddNode(m, "Add", {"x", "w"}, {"s"}, "add");
  AddNode(m, "Relu", {"s"}, {"r1"}, "relu");
  AddIntsAttr(AddNode(m, "Unsqueeze", {"r1"}, {"u"}, "unsq"), "axes", {0});
  AddNode(m, "Softmax", {"u"}, {"y"}, "sm");
  AddOutput(m, "y");
  AddOutput(m, "k");
  return m;
}

TEST_F(OnnxImporterTest, RichModelImportsFromAFile) {
  absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxFile(WriteModel(RichModel()));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->name(), "g");
  EXPECT_EQ((*g)->FindValue("u")->type(), TensorType(DType::kF32, {1, Dim::Symbol("batch"), 3}));
  EXPECT_EQ((*g)->FindValue("y")->type().rank(), 3);
  EXPECT_EQ((*g)->FindValue("y")->producer()->op_type(), "Reshape");
}

TEST_F(OnnxImporterTest, MissingFileIsNotFound) {
  const std::string path = Path("does_not_exist.onnx");
  absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxFile(path);
  EXPECT_EQ(g.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(g.status().message(), path + ": no such file");
}

TEST_F(OnnxImporterTest, DirectoryIsRejected) {
  absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxFile(dir_);
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(g.status().message()), HasSubstr("not a regular file"));
}

TEST_F(OnnxImporterTest, EmptyFileIsInvalid) {
  WriteBytes(Path("empty.onnx"), "");
  absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxFile(Path("empty.onnx"));
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(g.status().message(), Path("empty.onnx") + ": not a valid ONNX model (the file is empty)");
}

TEST_F(OnnxImporterTest, MalformedBytesAreInvalid) {
  // Field 1 as a length-delimited field running past the end, then arbitrary bytes.
  for (const std::string& bytes : {std::string("\x0a\x7f\x01", 3), std::string("not an onnx model at all\n"),
                                   std::string("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", 11)}) {
    WriteBytes(Path("bad.onnx"), bytes);
    absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxFile(Path("bad.onnx"));
    ASSERT_FALSE(g.ok());
    EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument) << g.status();
    EXPECT_TRUE(absl::StartsWith(g.status().message(), Path("bad.onnx") + ": not a valid ONNX model (")) << g.status();
  }
}

TEST_F(OnnxImporterTest, EveryTruncationIsAnErrorOrAValidGraph) {
  const std::string bytes = RichModel().SerializeAsString();
  ASSERT_GT(bytes.size(), 100u);
  int errors = 0;
  for (size_t len = 0; len < bytes.size(); ++len) {
    WriteBytes(Path("cut.onnx"), bytes.substr(0, len));
    absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxFile(Path("cut.onnx"));
    if (g.ok()) {
      EXPECT_TRUE((*g)->Verify().ok()) << "truncated at " << len;
    } else {
      ++errors;
      EXPECT_NE(g.status().code(), absl::StatusCode::kInternal) << "truncated at " << len << ": " << g.status();
      EXPECT_TRUE(absl::StartsWith(g.status().message(), Path("cut.onnx") + ": ")) << g.status();
    }
  }
  // The graph comes before opset_import on the wire, so no proper prefix is a complete model.
  EXPECT_EQ(errors, static_cast<int>(bytes.size()));
}

TEST_F(OnnxImporterTest, CorruptedBytesNeverCrash) {
  const std::string bytes = RichModel().SerializeAsString();
  std::mt19937 rng(1234);
  int ok = 0;
  for (size_t pos = 0; pos < bytes.size(); ++pos) {
    for (uint8_t mask : {uint8_t{0xff}, static_cast<uint8_t>(1u << (rng() % 8))}) {
      std::string bad = bytes;
      bad[pos] = static_cast<char>(bad[pos] ^ mask);
      onnx::ModelProto m;
      if (!m.ParseFromString(bad)) continue;
      absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxModel(m, dir_);
      if (g.ok()) {
        ++ok;
        EXPECT_TRUE((*g)->Verify().ok()) << "byte " << pos;
      }
    }
  }
  // Random overwrites of a few bytes, including ones that keep the wire format parseable.
  for (int iter = 0; iter < 3000; ++iter) {
    std::string bad = bytes;
    for (int k = 0, n = 1 + rng() % 4; k < n; ++k) bad[rng() % bad.size()] = static_cast<char>(rng());
    onnx::ModelProto m;
    if (!m.ParseFromString(bad)) continue;
    absl::StatusOr<std::unique_ptr<Graph>> g = ImportOnnxModel(m, dir_);
    if (g.ok()) {
      ++ok;
      EXPECT_TRUE((*g)->Verify().ok()) << "iteration " << iter;
    } else {
      EXPECT_NE(g.status().code(), absl::StatusCode::kInternal) << g.status();
    }
  }
  // Flips inside names, the producer string or float values leave a valid model.
  EXPECT_GT(ok, 0);
}

// ---------------------------------------------------------------------------------------------
// Models exported by PyTorch (testdata/gen_models.py), checked against what the onnx package reads
// back from the same files.

constexpr char kModelDir[] = "graph/onnx/testdata/models";

std::vector<Dim> ParseDims(const std::string& text) {
  std::vector<Dim> dims;
  if (text.empty()) return dims;
  for (absl::string_view d : absl::StrSplit(text, ',')) {
    int64_t v = 0;
    dims.push_back(absl::SimpleAtoi(d, &v) ? Dim(v) : Dim::Symbol(std::string(d)));
  }
  return dims;
}

class ExportedModelTest : public OnnxImporterTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(ExportedModelTest, MatchesTheOnnxPackage) {
  const std::string stem = absl::StrCat(kModelDir, "/", GetParam());
  absl::StatusOr<std::unique_ptr<Graph>> imported = ImportOnnxFile(stem + ".onnx");
  ASSERT_TRUE(imported.ok()) << imported.status();
  const Graph& g = **imported;

  std::ifstream expected(stem + ".expected.txt");
  ASSERT_TRUE(expected.good()) << stem;
  std::string line;
  int inputs = 0, outputs = 0;
  std::set<std::string> values;
  while (std::getline(expected, line)) {
    const std::vector<std::string> f = absl::StrSplit(line, '\t');
    SCOPED_TRACE(line.substr(0, 120));
    if (f[0] == "input") {
      ASSERT_LT(inputs, static_cast<int>(g.inputs().size()));
      const Value* in = g.inputs()[inputs++];
      EXPECT_EQ(in->name(), f[1]);
      EXPECT_EQ(f[2], "1");  // FLOAT
      EXPECT_EQ(in->type(), TensorType(DType::kF32, ParseDims(f[3])));
    } else if (f[0] == "output") {
      ASSERT_LT(outputs, static_cast<int>(g.outputs().size()));
      const Value* out = g.outputs()[outputs++];
      EXPECT_EQ(out->name(), f[1]);
      EXPECT_EQ(out->type().dims, ParseDims(f[2])) << out->type().ToString();
    } else if (f[0] == "nodes") {
      EXPECT_EQ(absl::StrCat(g.num_nodes()), f[1]);
    } else if (f[0] == "value") {
      values.insert(f[1]);
      const Tensor& t = ConstantOf(g, f[1]);
      std::vector<int64_t> shape;
      for (const Dim& d : ParseDims(f[2])) shape.push_back(d.value());
      ASSERT_EQ(t.shape(), shape);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw_data()) % kTensorAlignment, 0u);
      const std::vector<std::string> numbers = f[3].empty() ? std::vector<std::string>() : absl::StrSplit(f[3], ' ');
      ASSERT_EQ(static_cast<int64_t>(numbers.size()), t.num_elements());
      for (int64_t i = 0; i < t.num_elements(); ++i) {
        double v = 0;
        ASSERT_TRUE(absl::SimpleAtod(numbers[i], &v)) << numbers[i];
        // float32 values printed with Python's shortest round-trip repr: equality is exact.
        ASSERT_EQ(t.GetAsDouble(i), v) << f[1] << "[" << i << "]";
      }
    }
  }
  EXPECT_EQ(inputs, static_cast<int>(g.inputs().size()));
  EXPECT_EQ(outputs, static_cast<int>(g.outputs().size()));
  // Every other constant holds an attribute that older opsets had and opset 18 takes as input 1.
  for (const Value* c : g.Constants()) {
    if (values.count(c->name())) continue;
    ASSERT_EQ(c->uses().size(), 1u) << c->name();
    const Node* user = c->uses()[0].node;
    EXPECT_EQ(c->uses()[0].input_index, 1) << c->name();
    EXPECT_TRUE(c->name() == user->name() + "_axes" || c->name() == user->name() + "_split") << c->name();
  }
}

INSTANTIATE_TEST_SUITE_P(Models, ExportedModelTest,
                         ::testing::Values("cnn_opset11", "cnn_opset13", "cnn_opset17", "cnn_external/model",
                                           "axes_opset11", "axes_opset13", "axes_opset17"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

}  // namespace
}  // namespace tessel
