// Compiled artifacts end to end: ONNX from PyTorch -> compile -> artifact file -> executor; outputs
// match PyTorch with the optimized kernels the compiler chose (and with the reference kernels), several
// sessions on one model run concurrently, and Run allocates nothing on the heap after the first call
// (counted by interposing the C allocator, which operator new and XNNPACK both go through).
#include "runtime/executor.h"

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "codegen/compiler.h"
#include "graph/onnx/onnx_exporter.h"
#include "graph/onnx/onnx_importer.h"
#include "graph/text.h"
#include "gtest/gtest.h"
#include "graph/npy.h"
#include "runtime/testing/write_and_load.h"
#include "support/testing/allocation_counter.h"

namespace tessel {
namespace {

constexpr char kDir[] = "tools/frontend/models/";

std::shared_ptr<const CompiledModel> CompileModel(const std::string& model, const std::string& pipeline) {
  auto graph = ImportOnnxFile(absl::StrCat(kDir, model, "_op17.onnx"));
  EXPECT_TRUE(graph.ok()) << graph.status();
  CompileOptions options;
  options.pipeline = pipeline;
  options.force_backend = "";
  auto result = CompileGraph(**graph, options);
  EXPECT_TRUE(result.ok()) << result.status();
  auto compiled = WriteAndLoadArtifact(*result, absl::StrCat(model, "_", pipeline));
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  return *compiled;
}

int CountOptimizedOps(const CompiledModel& model) {
  int n = 0;
  for (const auto& op : model.plan().ops()) n += !absl::StartsWith(op.kernel(), "reference/");
  return n;
}

SessionOptions Options(int threads, bool force_reference = false) {
  SessionOptions options;
  options.num_threads = threads;
  options.force_reference = force_reference;
  return options;
}

double RelativeError(const Tensor& got, const Tensor& want) {
  double max_ref = 0, max_err = 0;
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    max_ref = std::max(max_ref, std::abs(want.GetAsDouble(i)));
    max_err = std::max(max_err, std::abs(got.GetAsDouble(i) - want.GetAsDouble(i)));
  }
  return max_err / max_ref;
}

struct ModelCase {
  std::string model;
  std::string pipeline;
  int threads;
};

class ExecutorModelTest : public ::testing::TestWithParam<ModelCase> {};

// Max error relative to the largest |expected| value, against PyTorch's output: at most 1e-4 (the
// issue's bound; fp32 with another summation order lands near 1e-6).
TEST_P(ExecutorModelTest, MatchesPyTorch) {
  const ModelCase& c = GetParam();
  auto model = CompileModel(c.model, c.pipeline);
  auto input = ReadNpy(absl::StrCat(kDir, c.model, ".input.npy"));
  auto want = ReadNpy(absl::StrCat(kDir, c.model, ".output.npy"));
  ASSERT_TRUE(input.ok() && want.ok());
  auto session = Session::Create(model, Options(c.threads));
  ASSERT_TRUE(session.ok()) << session.status();
  ASSERT_TRUE((*session)->Run({*input}).ok());
  ASSERT_EQ((*session)->output(0).shape(), want->shape());
  const double error = RelativeError((*session)->output(0), *want);
  std::printf("%s %s, %d thread(s), %d of %d ops optimized: max relative error vs PyTorch %.3g\n", c.model.c_str(),
              c.pipeline.c_str(), c.threads, CountOptimizedOps(*model), model->plan().ops_size(), error);
  EXPECT_LE(error, 1e-4);
  // The CNN pipeline's fused ops all have optimized kernels.
  if (c.pipeline == "cnn") EXPECT_EQ(CountOptimizedOps(*model), model->plan().ops_size());
}

INSTANTIATE_TEST_SUITE_P(Models, ExecutorModelTest,
                         ::testing::Values(ModelCase{"resnet18", "O2", 1}, ModelCase{"mobilenet_v2", "O2", 1},
                                           // Unfused Clips and shapes left symbolic by the pipeline compile
                                           // and run too.
                                           ModelCase{"mobilenet_v2", "O0", 1}, ModelCase{"mobilenet_v2", "O1", 1},
                                           ModelCase{"transformer_block", "O0", 1},
                                           ModelCase{"transformer_block", "O2", 1}, ModelCase{"resnet18", "O3", 2},
                                           ModelCase{"mobilenet_v2", "O3", 2}, ModelCase{"resnet18", "cnn", 1},
                                           ModelCase{"resnet18", "cnn", 2}, ModelCase{"mobilenet_v2", "cnn", 1},
                                           ModelCase{"mobilenet_v2", "cnn", 2}),
                         [](const ::testing::TestParamInfo<ModelCase>& info) {
                           return absl::StrCat(info.param.model, "_", info.param.pipeline, "_", info.param.threads,
                                               "t");
                         });

// `tessel opt -o` output (Tessel's own tessel.* operators, NHWC layout) imports again, compiles and runs,
// within the same 1e-4 of PyTorch.
TEST(ExecutorTest, OptimizedOnnxRoundTrips) {
  for (const std::string model : {"resnet18", "mobilenet_v2", "transformer_block"}) {
    SCOPED_TRACE(model);
    auto graph = ImportOnnxFile(absl::StrCat(kDir, model, "_op17.onnx"));
    ASSERT_TRUE(graph.ok()) << graph.status();
    CompileOptions options;
    options.pipeline = "O3";
    ASSERT_TRUE(CompileGraph(**graph, options).ok());  // leaves the optimized graph in place
    absl::StatusOr<onnx::ModelProto> proto = ExportOnnxModel(**graph, 17);
    ASSERT_TRUE(proto.ok()) << proto.status();
    int tessel_nodes = 0;
    for (const onnx::NodeProto& n : proto->graph().node()) tessel_nodes += n.domain() == "tessel";
    EXPECT_GT(tessel_nodes, 0);
    auto reread = ImportOnnxModel(*proto, "");
    ASSERT_TRUE(reread.ok()) << reread.status();
    auto result = CompileGraph(**reread, options);
    ASSERT_TRUE(result.ok()) << result.status();
    auto compiled = WriteAndLoadArtifact(*result, absl::StrCat(model, "_roundtrip"));
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    auto input = ReadNpy(absl::StrCat(kDir, model, ".input.npy"));
    auto want = ReadNpy(absl::StrCat(kDir, model, ".output.npy"));
    ASSERT_TRUE(input.ok() && want.ok());
    auto session = Session::Create(*compiled, Options(1));
    ASSERT_TRUE(session.ok()) << session.status();
    ASSERT_TRUE((*session)->Run({*input}).ok());
    EXPECT_LE(RelativeError((*session)->output(0), *want), 1e-4);
  }
}

// NaN and Inf: the reference interpreter propagates a NaN input to every logit of ResNet-18 (as
// PyTorch does), the compiled kernels need not (XNNPACK's clamps drop NaN). With check_finite the
// session refuses such an input, naming it and the first bad index, and reports a non-finite output.
TEST(ExecutorTest, CheckFiniteNamesNonFiniteInputsAndOutputs) {
  auto model = CompileModel("resnet18", "cnn");
  auto input = ReadNpy(absl::StrCat(kDir, "resnet18.input.npy"));
  ASSERT_TRUE(input.ok());
  Tensor bad = input->Clone();
  bad.data<float>()[22500] = std::nanf("");
  SessionOptions checked = Options(1);
  checked.check_finite = true;
  auto session = Session::Create(model, checked);
  ASSERT_TRUE(session.ok()) << session.status();
  EXPECT_TRUE((*session)->Run({*input}).ok());
  absl::Status s = (*session)->Run({bad});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "input 'input' has 1 non-finite value (first: NaN at flat index 22500)");
  auto unchecked = Session::Create(model, Options(1));
  ASSERT_TRUE(unchecked.ok());
  EXPECT_TRUE((*unchecked)->Run({bad}).ok());

  auto graph = ParseGraph(R"(
graph @main {
  input %x : f32[4]
  %y = Exp "exp" (%x) : f32[4]
  output %y
}
)");
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto result = CompileGraph(**graph, CompileOptions());
  ASSERT_TRUE(result.ok()) << result.status();
  auto exp_model = WriteAndLoadArtifact(*result, "exp_overflow");
  ASSERT_TRUE(exp_model.ok()) << exp_model.status();
  auto exp_session = Session::Create(*exp_model, checked);
  ASSERT_TRUE(exp_session.ok());
  const Tensor x = Tensor::FromVector<float>({4}, {0.f, 1.f, 100.f, 1000.f});  // e^100 and e^1000 overflow
  s = (*exp_session)->Run({x});
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(s.message(), "output 'y' has 2 non-finite values (first: Inf at flat index 2)");
}

// The same artifact with every op on its reference kernel (TESSEL_FORCE_BACKEND=reference at run
// time) agrees with the optimized run.
TEST(ExecutorTest, ForcedReferenceMatchesOptimized) {
  auto model = CompileModel("mobilenet_v2", "cnn");
  auto input = ReadNpy(absl::StrCat(kDir, "mobilenet_v2.input.npy"));
  ASSERT_TRUE(input.ok());
  auto fast = Session::Create(model, Options(1));
  auto slow = Session::Create(model, Options(1, /*force_reference=*/true));
  ASSERT_TRUE(fast.ok() && slow.ok());
  EXPECT_FALSE(absl::StartsWith((*fast)->kernel_name(1), "reference/")) << (*fast)->kernel_name(1);
  EXPECT_TRUE(absl::StartsWith((*slow)->kernel_name(1), "reference/")) << (*slow)->kernel_name(1);
  ASSERT_TRUE((*fast)->Run({*input}).ok());
  ASSERT_TRUE((*slow)->Run({*input}).ok());
  EXPECT_LE(RelativeError((*fast)->output(0), (*slow)->output(0)), 1e-5);
}

class ConcurrentSessionsTest : public ::testing::TestWithParam<ModelCase> {};

TEST_P(ConcurrentSessionsTest, SessionsRunConcurrentlyOnOneModel) {
  const ModelCase& c = GetParam();
  auto model = CompileModel(c.model, c.pipeline);
  auto input = ReadNpy(absl::StrCat(kDir, c.model, ".input.npy"));
  auto want = ReadNpy(absl::StrCat(kDir, c.model, ".output.npy"));
  ASSERT_TRUE(input.ok() && want.ok());
  // Each thread feeds a differently scaled input and checks against its own single-threaded result,
  // so sessions sharing an arena, scratch or operator state by mistake would show.
  constexpr int kThreads = 4;
  std::vector<Tensor> inputs, expected;
  for (int t = 0; t < kThreads; ++t) {
    Tensor x = input->Clone();
    for (int64_t i = 0; i < x.num_elements(); ++i) x.data<float>()[i] *= 1.0f + 0.5f * t;
    Session reference(model, Options(1));
    ASSERT_TRUE(reference.Run({x}).ok());
    expected.push_back(reference.output(0).Clone());
    inputs.push_back(std::move(x));
  }
  EXPECT_LE(RelativeError(expected[0], *want), 1e-4);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Session session(model, Options(c.threads));
      for (int iter = 0; iter < 12; ++iter) {
        if (!session.Run({inputs[t]}).ok() || RelativeError(session.output(0), expected[t]) > 1e-6) failures++;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(Models, ConcurrentSessionsTest,
                         ::testing::Values(ModelCase{"transformer_block", "O2", 1},
                                           ModelCase{"mobilenet_v2", "cnn", 2}),
                         [](const ::testing::TestParamInfo<ModelCase>& info) {
                           return absl::StrCat(info.param.model, "_", info.param.pipeline, "_", info.param.threads,
                                               "t");
                         });

// With every op on an optimized kernel, a run after the first allocates nothing: kernels were created,
// weights packed and pointers bound when the session was made.
TEST(ExecutorTest, RunAllocatesNothingAfterWarmUp) {
  // ResNet-18 runs the prepacked GEMM and Winograd kernels, MobileNetV2 the fused depthwise+pointwise one
  // (which sets up an XNNPACK operator per pixel block).
  for (const char* name : {"resnet18", "mobilenet_v2"}) {
    auto model = CompileModel(name, "cnn");
    ASSERT_EQ(CountOptimizedOps(*model), model->plan().ops_size());
    auto input = ReadNpy(absl::StrCat(kDir, name, ".input.npy"));
    ASSERT_TRUE(input.ok());
    std::vector<Tensor> inputs = {*input};
    for (int threads : {1, 2}) {
      auto session = Session::Create(model, Options(threads));
      ASSERT_TRUE(session.ok()) << session.status();
      ASSERT_TRUE((*session)->Run(inputs).ok());
      const long before = tessel::testing::AllocationCount();
      for (int i = 0; i < 5; ++i) ASSERT_TRUE((*session)->Run(inputs).ok());
      const long allocations = tessel::testing::AllocationCount() - before;
      std::printf("%s (cnn), %d thread(s): %ld heap allocations in 5 runs after warm-up\n", name, threads,
                  allocations);
      EXPECT_EQ(allocations, 0) << name;
    }
  }
}

// The counter sees allocations: the reference kernels allocate temporaries on every run.
TEST(ExecutorTest, AllocationCounterSeesReferenceKernels) {
  auto model = CompileModel("transformer_block", "O2");
  auto input = ReadNpy(absl::StrCat(kDir, "transformer_block.input.npy"));
  ASSERT_TRUE(input.ok());
  Session session(model, Options(1, /*force_reference=*/true));
  std::vector<Tensor> inputs = {*input};
  ASSERT_TRUE(session.Run(inputs).ok());
  const long before = tessel::testing::AllocationCount();
  ASSERT_TRUE(session.Run(inputs).ok());
  EXPECT_GT(tessel::testing::AllocationCount() - before, 0);
}

// Tuning times the legal kernels of each op and caches the choices; compiling again with that cache
// times nothing and yields the same kernels, and the tuned artifact still matches PyTorch.
TEST(ExecutorTest, TuningCacheMakesCompilationDeterministic) {
  const std::string cache = absl::StrCat(::testing::TempDir(), "/tune.tsv");
  std::remove(cache.c_str());
  std::vector<std::string> kernels[2];
  for (int pass = 0; pass < 2; ++pass) {
    auto graph = ImportOnnxFile(absl::StrCat(kDir, "mobilenet_v2_op17.onnx"));
    ASSERT_TRUE(graph.ok());
    CompileOptions options;
    options.pipeline = "cnn";
    options.force_backend = "";
    options.tune = true;
    options.tune_cache = cache;
    options.tune_seconds_per_candidate = 0.005;
    auto result = CompileGraph(**graph, options);
    ASSERT_TRUE(result.ok()) << result.status();
    for (const auto& op : result->plan.ops()) kernels[pass].push_back(op.kernel());
    if (pass == 0) {
      EXPECT_GT(result->tuned_ops, 0);
    } else {
      EXPECT_EQ(result->tuned_ops, 0);
      EXPECT_GT(result->cached_ops, 0);
      absl::StatusOr<std::string> bytes = SerializeArtifact(result->plan, result->weights);
      ASSERT_TRUE(bytes.ok()) << bytes.status();
      EXPECT_TRUE(Artifact::FromBytes(*bytes).ok());
    }
  }
  EXPECT_EQ(kernels[0], kernels[1]);
  FILE* f = std::fopen(cache.c_str(), "a");
  ASSERT_NE(f, nullptr);
  std::fputs("a line without a tab\n", f);
  std::fclose(f);
  auto graph = ImportOnnxFile(absl::StrCat(kDir, "mobilenet_v2_op17.onnx"));
  ASSERT_TRUE(graph.ok());
  CompileOptions options;
  options.pipeline = "cnn";
  options.tune = true;
  options.tune_cache = cache;
  EXPECT_EQ(CompileGraph(**graph, options).status().code(), absl::StatusCode::kDataLoss);
}

TEST(ExecutorTest, RejectsWrongInputs) {
  auto model = CompileModel("transformer_block", "O1");
  Session session(model);
  Tensor wrong(DType::kF32, {1, 8, 64});
  absl::Status s = session.Run({wrong});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("expects f32[1,16,64]"), std::string::npos) << s;
  EXPECT_FALSE(session.Run({}).ok());
}

// Shapes from the model file are held to the machine's memory when compiling (the error names the input
// and its shape) and again when an artifact is loaded (it may come from a larger machine, or be crafted),
// before any arena is allocated: 4 PB and 1 PB here, beyond any machine, so nothing is allocated.
TEST(ExecutorTest, CompileRefusesActivationsBeyondMemory) {
  auto graph = ParseGraph(R"(
graph @main {
  input %x : f32[1000000000000,1000]
  %y = Relu "relu" (%x) : f32[1000000000000,1000]
  output %y
}
)");
  ASSERT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<CompileResult> result = CompileGraph(**graph, CompileOptions());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(absl::StartsWith(result.status().message(),
                               "input 'x' f32[1000000000000,1000] needs 4000000.00 GB; this machine has "))
      << result.status();
}

// A plan whose op attributes no longer fit its planned shapes (a renamed or changed attribute, the
// checksum made right again) is refused at load with an error naming the op, for every kernel family:
// MaxPool, convolution, Gemm and elementwise, on their optimized and reference kernels. Once such a
// plan ran, and a MaxPool with its kernel_shape renamed corrupted the heap.
TEST(ExecutorTest, LoadRefusesAttributesThatDisagreeWithThePlan) {
  std::string weights;
  for (int i = 0; i < 4 * 4 * 3 * 3; ++i) absl::StrAppend(&weights, i ? ", " : "", (i % 7 - 3) * 0.125);
  auto graph = ParseGraph(absl::StrCat(R"(
graph @main {
  input %x : f32[1,4,8,8]
  const %w : f32[4,4,3,3] = [)", weights, R"(]
  const %b : f32[4] = [0.5, -0.25, 0.0, 1.0]
  %c = Conv "conv" (%x, %w, %b) {pads = [1, 1, 1, 1]} : f32[1,4,8,8]
  %p = MaxPool "pool" (%c) {kernel_shape = [2, 2], strides = [2, 2]} : f32[1,4,4,4]
  %f = Flatten "flat" (%p) {axis = 1} : f32[1,64]
  %s = Softmax "soft" (%f) {axis = 1} : f32[1,64]
  output %s
}
)"));
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto result = CompileGraph(**graph, CompileOptions());
  ASSERT_TRUE(result.ok()) << result.status();
  struct Mutation {
    std::string op, attr;
    std::function<void(artifact::Attribute*)> apply;
  };
  const std::vector<Mutation> mutations = {
      {"pool", "kernel_shape", [](artifact::Attribute* a) { a->set_name("kernel_shapf"); }},
      {"pool", "strides", [](artifact::Attribute* a) { a->mutable_ints()->set_values(0, 1); }},
      {"pool", "kernel_shape", [](artifact::Attribute* a) { a->mutable_ints()->set_values(1, 9); }},
      {"conv", "pads", [](artifact::Attribute* a) { a->mutable_ints()->set_values(0, 3); }},
      {"flat", "axis", [](artifact::Attribute* a) { a->set_i(2); }},
      {"soft", "axis", [](artifact::Attribute* a) { a->set_i(7); }},
  };
  int found = 0;
  for (const Mutation& m : mutations) {
    SCOPED_TRACE(m.op + "." + m.attr);
    artifact::Plan plan = result->plan;
    for (artifact::Op& op : *plan.mutable_ops()) {
      if (op.name() != m.op) continue;
      for (artifact::Attribute& a : *op.mutable_attributes()) {
        if (a.name() == m.attr) {
          m.apply(&a);
          ++found;
        }
      }
    }
    absl::StatusOr<std::string> bytes = SerializeArtifact(plan, result->weights);
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    absl::StatusOr<std::shared_ptr<Artifact>> artifact = Artifact::FromBytes(*bytes);
    ASSERT_TRUE(artifact.ok()) << artifact.status();
    absl::StatusOr<std::shared_ptr<const CompiledModel>> model = CompiledModel::FromArtifact(*artifact);
    EXPECT_EQ(model.status().code(), absl::StatusCode::kDataLoss) << model.status();
    EXPECT_TRUE(absl::StrContains(model.status().message(), absl::StrCat("op '", m.op, "'"))) << model.status();
  }
  EXPECT_EQ(found, static_cast<int>(mutations.size()));
  // Unchanged, the same plan loads and runs.
  absl::StatusOr<std::string> bytes = SerializeArtifact(result->plan, result->weights);
  ASSERT_TRUE(bytes.ok());
  absl::StatusOr<std::shared_ptr<Artifact>> artifact = Artifact::FromBytes(*bytes);
  ASSERT_TRUE(artifact.ok());
  EXPECT_TRUE(CompiledModel::FromArtifact(*artifact).ok());
}

TEST(ExecutorTest, LoadRefusesAnArenaBeyondMemory) {
  artifact::Plan plan;
  plan.set_target(std::string(RuntimeTargetFamily()));
  artifact::Tensor* x = plan.add_tensors();
  x->set_name("x");
  x->set_dtype(static_cast<int>(DType::kI64));
  x->add_shape(int64_t{1} << 20);
  x->add_shape(int64_t{1} << 20);
  x->set_bytes(uint64_t{8} << 40);
  plan.add_inputs(0);
  plan.add_outputs(0);
  plan.set_arena_bytes(uint64_t{1} << 50);
  absl::StatusOr<std::string> bytes = SerializeArtifact(plan, "");
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  absl::StatusOr<std::shared_ptr<Artifact>> artifact = Artifact::FromBytes(*bytes);
  ASSERT_TRUE(artifact.ok()) << artifact.status();
  absl::StatusOr<std::shared_ptr<const CompiledModel>> model = CompiledModel::FromArtifact(*artifact);
  EXPECT_EQ(model.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(absl::StartsWith(model.status().message(),
                               "the plan's activation arena (largest tensor: input 'x' i64[1048576,1048576], "
                               "8796.09 GB) needs 1125899.91 GB; this machine has "))
      << model.status();
}

}  // namespace
}  // namespace tessel
