// f32 vector kernels: GB/s for every registered kernel this CPU runs (the reference aside), at n = 2048
// (TinyLlama's hidden size: one RMSNorm row, one activation row) and n = 32000 (Llama's vocabulary: one
// softmax over the logits), beside XNNPACK's operator for the same op where it has one (softmax,
// sigmoid, hardswish, clamp, add, multiply). Bytes counted are the op's minimum traffic (x and y, plus
// b or the gain), so a kernel that makes extra passes shows as slower; rows stay in L1/L2, so these are
// in-cache rates, which is where these ops run between matmuls. Rates are per CPU second of the
// benchmark thread. Run with --benchmark_repetitions=5 --benchmark_report_aggregates_only=true on a
// noisy machine and read the medians.
#include <cmath>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "kernels/registry/registry.h"
#include "kernels/vector/vector.h"
#include "xnnpack.h"

namespace tessel {
namespace {

constexpr int64_t kSizes[] = {2048, 32000};
constexpr float kLo = 0.0f, kHi = 6.0f;  // Relu6: a clamp that binds

// Minimum bytes per element: x and y, plus a second input (b, or RMSNorm's gain).
int BytesPerElement(const std::string& op) { return op == "vadd" || op == "vmul" || op == "rmsnorm" ? 12 : 8; }

std::vector<float> Inputs(int64_t n, float scale) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>((i * 7919) % 1000 - 500) / 500.0f;
  return v;
}

void SetRate(benchmark::State& state, const std::string& op, int64_t n) {
  state.counters["GBs"] =
      benchmark::Counter(static_cast<double>(BytesPerElement(op)) * n / 1e9 * state.iterations(), benchmark::Counter::kIsRate);
}

void BM_Tessel(benchmark::State& state, const VectorKernel* e, int64_t n) {
  const std::vector<float> x = Inputs(n, 8.0f), b = Inputs(n, 1.0f);
  std::vector<float> y(n);
  for (auto _ : state) {
    if (e->op == "softmax") {
      std::get<SoftmaxFn>(e->fn)(1, n, x.data(), y.data());
    } else if (e->op == "rmsnorm") {
      std::get<RmsNormFn>(e->fn)(1, n, x.data(), b.data(), 1e-5f, y.data());
    } else if (e->op == "clamp") {
      std::get<ClampFn>(e->fn)(n, x.data(), y.data(), kLo, kHi);
    } else if (e->op == "vadd" || e->op == "vmul") {
      std::get<BinaryFn>(e->fn)(n, x.data(), b.data(), y.data(), kLo, kHi);
    } else {
      std::get<UnaryFn>(e->fn)(n, x.data(), y.data());
    }
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  SetRate(state, e->op, n);
}

// XNNPACK's operator for `op` on one row of n elements (created and set up once, as a session does).
void BM_Xnnpack(benchmark::State& state, const std::string& op, int64_t n) {
  if (xnn_initialize(nullptr) != xnn_status_success) {
    state.SkipWithError("xnn_initialize failed");
    return;
  }
  const std::vector<float> x = Inputs(n, 8.0f), b = Inputs(n, 1.0f);
  std::vector<float> y(n);
  const size_t shape[1] = {static_cast<size_t>(n)};
  xnn_operator_t xop = nullptr;
  xnn_status s = xnn_status_unsupported_parameter;
  if (op == "softmax" && xnn_create_softmax_nc_f32(n, n, n, 0, &xop) == xnn_status_success) {
    s = xnn_setup_softmax_nc_f32(xop, 1, x.data(), y.data(), nullptr);
  } else if (op == "sigmoid" && xnn_create_sigmoid_nc_f32(1, 1, 1, 0, &xop) == xnn_status_success) {
    s = xnn_setup_sigmoid_nc_f32(xop, n, x.data(), y.data(), nullptr);
  } else if (op == "hardswish" && xnn_create_hardswish_nc_f32(1, 1, 1, 0, &xop) == xnn_status_success) {
    s = xnn_setup_hardswish_nc_f32(xop, n, x.data(), y.data(), nullptr);
  } else if (op == "clamp" && xnn_create_clamp_nc_f32(1, 1, 1, kLo, kHi, 0, &xop) == xnn_status_success) {
    s = xnn_setup_clamp_nc_f32(xop, n, x.data(), y.data(), nullptr);
  } else if (op == "vadd" && xnn_create_add_nd_f32(kLo, kHi, 0, &xop) == xnn_status_success) {
    s = xnn_setup_add_nd_f32(xop, 1, shape, 1, shape, x.data(), b.data(), y.data(), nullptr);
  } else if (op == "vmul" && xnn_create_multiply_nd_f32(kLo, kHi, 0, &xop) == xnn_status_success) {
    s = xnn_setup_multiply_nd_f32(xop, 1, shape, 1, shape, x.data(), b.data(), y.data(), nullptr);
  }
  if (s != xnn_status_success) {
    state.SkipWithError(("XNNPACK " + op + " operator could not be created").c_str());
    if (xop) xnn_delete_operator(xop);
    return;
  }
  for (auto _ : state) {
    xnn_run_operator(xop, nullptr);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  xnn_delete_operator(xop);
  SetRate(state, op, n);
}

const bool kRegistered = [] {
  const char* xnn_names[][2] = {{"softmax", "xnn_f32_softmax_nc__xnnpack"}, {"sigmoid", "xnn_f32_sigmoid_nc__xnnpack"},
                                {"hardswish", "xnn_f32_hardswish_nc__xnnpack"}, {"clamp", "xnn_f32_clamp_nc__xnnpack"},
                                {"vadd", "xnn_f32_add_nd__xnnpack"}, {"vmul", "xnn_f32_multiply_nd__xnnpack"}};
  for (const char* op : {"softmax", "rmsnorm", "clamp", "sigmoid", "silu", "hardswish", "vadd", "vmul"}) {
    for (int64_t n : kSizes) {
      const std::string prefix = std::string("vector/") + op + "/n:" + std::to_string(n) + "/";
      for (const VectorKernel* e : VectorKernels().Find(op, "f32", "contiguous")) {
        if (e->backend == "reference" || !CpuSupports(e->isa)) continue;
        benchmark::RegisterBenchmark((prefix + e->name).c_str(), BM_Tessel, e, n);
      }
      for (const auto& xnn : xnn_names) {
        if (op == std::string(xnn[0])) benchmark::RegisterBenchmark((prefix + xnn[1]).c_str(), BM_Xnnpack, op, n);
      }
    }
  }
  return true;
}();

}  // namespace
}  // namespace tessel
