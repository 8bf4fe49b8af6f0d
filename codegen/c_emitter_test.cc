// The C emitter end to end: emit C for the digits CNN (ONNX from cnn/digits/train_digits.py) and a small
// model covering the plain ONNX ops, compile it with host gcc and with aarch64-linux-gnu-gcc (NEON and
// SVE, run under qemu-aarch64), and compare the outputs with the reference interpreter on the original
// graph. Tolerance: |C - reference| <= 1e-4 * (1 + max |reference|) per model (float GEMM order vs the
// reference kernels' double accumulation; measured errors are printed).
#include "codegen/c_emitter.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "codegen/compiler.h"
#include "graph/npy.h"
#include "graph/onnx/onnx_importer.h"
#include "graph/op_registry.h"
#include "gtest/gtest.h"
#include "kernels/reference/interpreter.h"

namespace tessel {
namespace {

const char kFlags[] = "-std=c99 -O3 -fopenmp-simd -fno-trapping-math -ffp-contract=fast -Wall -Werror";
const char kKernels[] = "kernels/portable";

std::string TempDir(const std::string& leaf) {
  const char* base = std::getenv("TEST_TMPDIR");
  const std::string dir = absl::StrCat(base ? base : "/tmp", "/", leaf);
  EXPECT_EQ(std::system(("mkdir -p " + dir).c_str()), 0);
  return dir;
}

// Runs a shell command; returns its exit status and appends its output to *log.
int Shell(const std::string& cmd, std::string* log) {
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (p == nullptr) return -1;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) log->append(buf, n);
  return pclose(p);
}

void WriteFloats(const std::string& path, const std::vector<float>& v) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

std::vector<float> ReadFloats(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string s = ss.str();
  std::vector<float> v(s.size() / sizeof(float));
  std::memcpy(v.data(), s.data(), v.size() * sizeof(float));
  return v;
}

// How one build of the generated C is made and run.
struct Toolchain {
  std::string label;
  std::string compile;  // compiler and target flags
  std::string run;      // prefix for running the binary
  std::string kernels;  // the portable kernels built by the same compiler (kernels/portable:archive_*)
};

std::vector<Toolchain> Toolchains() {
  const std::string archives = "kernels/portable/";
  return {
      {"host x86-64", "gcc -march=x86-64-v3", "", archives + "x86_64_v3/libtessel_portable.a"},
      {"aarch64 NEON (qemu)", "aarch64-linux-gnu-gcc -march=armv8.2-a -static", "qemu-aarch64 -cpu max ",
       archives + "armv8.2-a/libtessel_portable.a"},
      {"aarch64 SVE 128 (qemu)", "aarch64-linux-gnu-gcc -march=armv8.2-a+sve -static",
       "qemu-aarch64 -cpu max,sve128=on ", archives + "armv8.2-a+sve/libtessel_portable.a"},
      {"aarch64 SVE 512 (qemu)", "aarch64-linux-gnu-gcc -march=armv8.2-a+sve -static",
       "qemu-aarch64 -cpu max,sve512=on ", archives + "armv8.2-a+sve/libtessel_portable.a"},
  };
}

// The model's one input and one output as the generated header names them.
struct Io {
  std::string input, output;
};

// Builds `dir/name` with a driver that runs every input record of a file, runs it on `inputs` and
// returns the outputs.
std::vector<float> BuildAndRun(const std::string& dir, const std::string& name, const Io& io, const Toolchain& tc,
                               const std::string& weights_src, const std::vector<float>& inputs) {
  std::string upper = name;
  for (char& c : upper) c = static_cast<char>(std::toupper(c));
  const std::string in_n = absl::StrCat(upper, "_", io.input, "_ELEMENTS");
  const std::string out_n = absl::StrCat(upper, "_", io.output, "_ELEMENTS");
  std::ofstream(dir + "/driver.c") << "#include <stdio.h>\n#include \"" << name << ".h\"\n"
                                   << "static float in[" << in_n << "], out[" << out_n << "];\n"
                                   << "int main(int argc, char** argv) {\n"
                                   << "  FILE* fi = fopen(argv[1], \"rb\");\n  FILE* fo = fopen(argv[2], \"wb\");\n"
                                   << "  if (!fi || !fo) return 2;\n"
                                   << "  while (fread(in, sizeof(float), " << in_n << ", fi) == " << in_n << ") {\n"
                                   << "    if (" << name << "_run(in, out) != 0) return 3;\n"
                                   << "    fwrite(out, sizeof(float), " << out_n << ", fo);\n  }\n"
                                   << "  fclose(fi);\n  fclose(fo);\n  return 0;\n}\n";
  const std::string bin = dir + "/" + name + "_bin";
  std::string log;
  const std::string cmd = absl::StrCat(tc.compile, " ", kFlags, " -I", dir, " -I", kKernels, " ", dir, "/", name, ".c ",
                                       dir, "/", weights_src, " ", dir, "/driver.c ", tc.kernels, " -Wa,-I,", dir,
                                       " -lm -o ", bin);
  if (Shell(cmd, &log) != 0) {
    ADD_FAILURE() << tc.label << ": " << cmd << "\n" << log.substr(0, 4000);
    return {};
  }
  WriteFloats(dir + "/in.bin", inputs);
  std::remove((dir + "/out.bin").c_str());
  EXPECT_EQ(Shell(absl::StrCat(tc.run, bin, " ", dir, "/in.bin ", dir, "/out.bin"), &log), 0) << log;
  return ReadFloats(dir + "/out.bin");
}

struct Error {
  double max_abs = 0;
  double ref_max = 0;
};

Error Compare(const std::vector<float>& got, const std::vector<float>& want) {
  EXPECT_EQ(got.size(), want.size());
  Error e;
  for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
    e.max_abs = std::max(e.max_abs, std::fabs(double(got[i]) - want[i]));
    e.ref_max = std::max(e.ref_max, std::fabs(double(want[i])));
  }
  if (got.size() != want.size()) e.max_abs = INFINITY;
  return e;
}

// Reference outputs, record by record, from the reference interpreter on a freshly built graph.
std::vector<float> Reference(Graph& graph, const std::vector<int64_t>& shape, const std::vector<float>& inputs) {
  auto interp = ReferenceInterpreter::Create(&graph);
  EXPECT_TRUE(interp.ok()) << interp.status();
  int64_t per = 1;
  for (int64_t d : shape) per *= d;
  std::vector<float> out;
  for (size_t at = 0; at + per <= inputs.size(); at += per) {
    Tensor x(DType::kF32, shape);
    std::copy(inputs.begin() + at, inputs.begin() + at + per, x.data<float>());
    auto y = interp->Run(std::vector<Tensor>{x});
    EXPECT_TRUE(y.ok()) << y.status();
    if (!y.ok()) return {};
    out.insert(out.end(), (*y)[0].data<float>(), (*y)[0].data<float>() + (*y)[0].num_elements());
  }
  return out;
}

// Compiles `graph` with `pipeline`, emits C and checks every toolchain against `want`.
void EmitBuildCompare(Graph& graph, const std::string& pipeline, const std::string& name, const Io& io,
                      EmitCOptions::Weights weights, const std::vector<float>& inputs, const std::vector<float>& want,
                      std::string* out_dir = nullptr) {
  CompileOptions options;
  options.pipeline = pipeline;
  options.dim_values["batch"] = 1;
  auto compiled = CompileGraph(graph, options);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  const std::string dir = TempDir(name + "_" + pipeline);
  EmitCOptions eo;
  eo.weights = weights;
  absl::Status s = EmitC(compiled->plan, compiled->weights, dir, name, eo);
  ASSERT_TRUE(s.ok()) << s;
  const std::string wsrc = name + (weights == EmitCOptions::Weights::kIncbin ? "_weights.S" : "_weights.c");
  for (const Toolchain& tc : Toolchains()) {
    const std::vector<float> got = BuildAndRun(dir, name, io, tc, wsrc, inputs);
    const Error e = Compare(got, want);
    std::printf("%s, pipeline %s, %s: %zu outputs, max |C - reference| %.3g (max |reference| %.3g)\n", name.c_str(),
                pipeline.c_str(), tc.label.c_str(), want.size(), e.max_abs, e.ref_max);
    EXPECT_LE(e.max_abs, 1e-4 * (1 + e.ref_max)) << tc.label;
  }
  if (out_dir) *out_dir = dir;
}

std::vector<float> DigitsInputs(int count) {
  auto images = ReadNpy("cnn/digits/test_images.npy");
  EXPECT_TRUE(images.ok()) << images.status();
  if (!images.ok()) return {};
  return std::vector<float>(images->data<float>(), images->data<float>() + count * 64);
}

TEST(CEmitterTest, DigitsCnnMatchesReferenceOnHostAndQemu) {
  const std::vector<float> inputs = DigitsInputs(100);
  auto ref_graph = ImportOnnxFile("cnn/digits/digits_cnn.onnx");
  ASSERT_TRUE(ref_graph.ok()) << ref_graph.status();
  const std::vector<float> want = Reference(**ref_graph, {1, 1, 8, 8}, inputs);
  // cnn: fused channels-last convolutions; O2: fused channels-first ones.
  for (const char* pipeline : {"cnn", "O2"}) {
    auto graph = ImportOnnxFile("cnn/digits/digits_cnn.onnx");
    ASSERT_TRUE(graph.ok()) << graph.status();
    EmitBuildCompare(**graph, pipeline, "digits", {"IMAGE", "LOGITS"},
                     pipeline == std::string("cnn") ? EmitCOptions::Weights::kIncbin : EmitCOptions::Weights::kCArray,
                     inputs, want);
  }
}

Tensor RandomTensor(std::vector<int64_t> shape, uint32_t seed, float scale = 0.5f) {
  Tensor t(DType::kF32, std::move(shape));
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = dist(gen);
  return t;
}

// x[1,3,11,9] -> Conv 3x3/2 (+bias) -> Relu -> depthwise Conv 3x3 -> Add(relu output) -> Mul per-channel
// -> Clip -> AveragePool 3x3 (count_include_pad) -> MaxPool 2x2 -> Sigmoid -> Flatten -> Gemm (transB)
// -> Softmax: every plain ONNX op the emitter generates inline or calls a kernel for.
std::unique_ptr<Graph> SmallModel() {
  auto g = std::make_unique<Graph>();
  g->set_name("small");
  Value* x = g->AddInput("x", TensorType::Static(DType::kF32, {1, 3, 11, 9}));
  Node* conv = g->AddNode("Conv", {x, g->AddConstant("w1", RandomTensor({8, 3, 3, 3}, 1)),
                                   g->AddConstant("b1", RandomTensor({8}, 2))}, 1, "conv1");
  conv->SetAttr("kernel_shape", Attribute::Ints({3, 3}));
  conv->SetAttr("strides", Attribute::Ints({2, 2}));
  conv->SetAttr("pads", Attribute::Ints({1, 1, 1, 1}));
  Node* relu = g->AddNode("Relu", {conv->output(0)}, 1, "relu1");
  Node* dw = g->AddNode("Conv", {relu->output(0), g->AddConstant("w2", RandomTensor({8, 1, 3, 3}, 3))}, 1, "dw");
  dw->SetAttr("group", Attribute::Int(8));
  dw->SetAttr("pads", Attribute::Ints({1, 1, 1, 1}));
  Node* add = g->AddNode("Add", {dw->output(0), relu->output(0)}, 1, "residual");
  Node* mul = g->AddNode("Mul", {add->output(0), g->AddConstant("scale", RandomTensor({1, 8, 1, 1}, 4))}, 1, "scale");
  Tensor lo(DType::kF32, {}), hi(DType::kF32, {});
  lo.data<float>()[0] = -0.5f;
  hi.data<float>()[0] = 1.5f;
  Node* clip = g->AddNode("Clip", {mul->output(0), g->AddConstant("lo", lo), g->AddConstant("hi", hi)}, 1, "clip");
  Node* avg = g->AddNode("AveragePool", {clip->output(0)}, 1, "avg");
  avg->SetAttr("kernel_shape", Attribute::Ints({3, 3}));
  avg->SetAttr("pads", Attribute::Ints({1, 1, 1, 1}));
  avg->SetAttr("count_include_pad", Attribute::Int(1));
  Node* mp = g->AddNode("MaxPool", {avg->output(0)}, 1, "max");
  mp->SetAttr("kernel_shape", Attribute::Ints({2, 2}));
  mp->SetAttr("strides", Attribute::Ints({2, 2}));
  Node* sig = g->AddNode("Sigmoid", {mp->output(0)}, 1, "sigmoid");
  Node* flat = g->AddNode("Flatten", {sig->output(0)}, 1, "flatten");
  Node* fc = g->AddNode("Gemm", {flat->output(0), g->AddConstant("w3", RandomTensor({5, 48}, 5)),
                                 g->AddConstant("b3", RandomTensor({5}, 6))}, 1, "fc");
  fc->SetAttr("transB", Attribute::Int(1));
  Node* sm = g->AddNode("Softmax", {fc->output(0)}, 1, "softmax");
  g->AddOutput(sm->output(0));
  EXPECT_TRUE(InferShapes(*g).ok());
  return g;
}

TEST(CEmitterTest, SmallModelMatchesReferenceAndItsLoopsVectorize) {
  std::vector<float> inputs;
  for (int i = 0; i < 5; ++i) {
    const Tensor t = RandomTensor({1, 3, 11, 9}, 100 + i, 1.0f);
    inputs.insert(inputs.end(), t.data<float>(), t.data<float>() + t.num_elements());
  }
  auto ref = SmallModel();
  const std::vector<float> want = Reference(*ref, {1, 3, 11, 9}, inputs);
  std::string o0_dir;
  for (const char* pipeline : {"O0", "cnn"}) {
    auto graph = SmallModel();
    EmitBuildCompare(*graph, pipeline, "small", {"X", "SOFTMAX"}, EmitCOptions::Weights::kIncbin, inputs, want,
                     pipeline == std::string("O0") ? &o0_dir : nullptr);
  }
  // The unfused model's Add, Mul, Relu and Clip are inline loops in the generated C: each is marked
  // hot and must vectorize for x86-64, NEON and SVE.
  std::string log;
  const int rc = Shell(absl::StrCat("/usr/bin/python3 kernels/portable/check_vectorized.py -I ", kKernels, " -I ",
                                    o0_dir, " ", o0_dir, "/small.c"),
                       &log);
  std::printf("%s", log.c_str());
  EXPECT_EQ(rc, 0) << log;
  EXPECT_NE(log.find("12 hot loop(s) checked, 0 missed"), std::string::npos) << log;
}

// torchvision ResNet-18 and MobileNetV2 (seeded weights, tools/frontend/export_models.py) after the cnn
// pipeline (fused channels-last convolutions, residuals, depthwise+pointwise blocks, pools, Gemm),
// built for the host, against PyTorch's output: |C - PyTorch| <= 1e-4 * max |PyTorch|.
TEST(CEmitterTest, ResNet18AndMobileNetV2MatchPyTorch) {
  for (const char* model : {"resnet18", "mobilenet_v2"}) {
    const std::string base = std::string("tools/frontend/models/") + model;
    auto graph = ImportOnnxFile(base + "_op17.onnx");
    ASSERT_TRUE(graph.ok()) << graph.status();
    auto input = ReadNpy(base + ".input.npy");
    auto output = ReadNpy(base + ".output.npy");
    ASSERT_TRUE(input.ok() && output.ok());
    CompileOptions options;
    options.pipeline = "cnn";
    auto compiled = CompileGraph(**graph, options);
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    const std::string dir = TempDir(model);
    absl::Status s = EmitC(compiled->plan, compiled->weights, dir, model);
    ASSERT_TRUE(s.ok()) << s;
    const std::vector<float> got =
        BuildAndRun(dir, model, {"INPUT", "OUTPUT"}, Toolchains()[0], std::string(model) + "_weights.S",
                    std::vector<float>(input->data<float>(), input->data<float>() + input->num_elements()));
    const Error e = Compare(got, std::vector<float>(output->data<float>(),
                                                    output->data<float>() + output->num_elements()));
    std::printf("%s, pipeline cnn, host x86-64: max |C - PyTorch| %.3g (%.2g of max |PyTorch| %.3g)\n", model,
                e.max_abs, e.max_abs / e.ref_max, e.ref_max);
    EXPECT_LE(e.max_abs, 1e-4 * e.ref_max) << model;
  }
}

TEST(CEmitterTest, UnsupportedOpsAndBadNamesAreClearErrors) {
  auto graph = SmallModel();
  CompileOptions options;
  options.pipeline = "O0";
  auto compiled = CompileGraph(*graph, options);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  const std::string dir = TempDir("errors");
  artifact::Plan plan = compiled->plan;
  plan.mutable_ops(1)->set_op_type("LRN");
  absl::Status s = EmitC(plan, compiled->weights, dir, "m");
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_NE(s.message().find("op 1 'relu1' (LRN)"), std::string::npos) << s;
  s = EmitC(compiled->plan, compiled->weights, dir, "1model");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  s = EmitC(compiled->plan, compiled->weights, dir + "/missing/folder", "m");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  // A weights section shorter than the plan says is refused, not read past.
  s = EmitC(compiled->plan, absl::string_view(compiled->weights).substr(0, 64), dir, "m");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
}

}  // namespace
}  // namespace tessel
