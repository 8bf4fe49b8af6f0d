// Fixed kernel cases for the Arm performance lab: every f32 GEMM, weight-only GEMV and vector kernel
// that this CPU runs (from the registries benchmarks/kernels measures), each on a few fixed shapes.
// The same binary times a case natively and, under qemu with tools/lab/tb_profile.c, marks it as a
// phase (lab_marks.h), so the lab's estimate and the host's time describe the same instructions:
//   - on x86-64 it validates the estimates (tools/lab/validate_x86.sh: TESSEL_AVX512=0 on both sides,
//     since qemu-x86_64 has no AVX-512);
//   - on aarch64 it gives the cycles per call behind the aarch64 cost table (tools/lab/make_cost_table.py).
//
//   kernel_cases [--filter SUBSTRING] [--reps R] [--list]
//
// One JSON line per case: {"case", "kernel", "op", "flops", "bytes", "calls", "reps", "median_ns", "min_ns"}
// (ns per call over R timed repetitions of `calls` calls, after one warm-up call). With TESSEL_LAB_MARKS=1
// every repetition of case i is phase i.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "kernels/gemm/gemm.h"
#include "kernels/gemv/gemv.h"
#include "kernels/registry/registry.h"
#include "kernels/vector/vector.h"
#include "runtime/lab_marks.h"

namespace tessel {
namespace {

struct Case {
  std::string name;
  std::string kernel;
  std::string op;
  double flops = 0;  // arithmetic per call (multiply-add = 2)
  double bytes = 0;  // operand bytes per call
  int calls = 1;     // per repetition: enough work to time natively
  std::function<void()> run;
};

// Deterministic values in [-scale, scale): no libm, so both sides of the lab run the same code.
std::vector<float> Fill(int64_t n, float scale) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>((i * 7919) % 1000 - 500) / 500.0f;
  return v;
}

// Calls per repetition for about `target` flops of work per repetition (at least one).
int CallsFor(double flops_per_call, double target = 2e7) {
  return static_cast<int>(std::max(1.0, std::min(1000.0, std::round(target / std::max(1.0, flops_per_call)))));
}

void AddGemmCases(std::vector<Case>& cases) {
  struct Shape {
    const char* name;
    int64_t m, n, k;
  };
  // Square, then ResNet-18's 14x14 3x3 layer and MobileNetV2's 14x14 pointwise layer as GEMMs.
  static const Shape kShapes[] = {{"sq128", 128, 128, 128}, {"r18_l3_3x3", 196, 256, 2304}, {"mbv2_14_pw", 196, 96, 576}};
  for (const KernelEntry& e : GemmKernels().entries()) {
    if (e.op != "gemm" || !CpuSupports(e.isa)) continue;
    for (const Shape& s : kShapes) {
      // The plain triple loop only on the small shape: it is the oracle, not a contender.
      if (e.backend == "reference" && s.m * s.n * s.k > 128 * 128 * 128) continue;
      auto a = std::make_shared<std::vector<float>>(Fill(s.m * s.k, 1.0f));
      auto b = std::make_shared<std::vector<float>>(Fill(s.k * s.n, 0.5f));
      auto c = std::make_shared<std::vector<float>>(s.m * s.n);
      auto ws = std::make_shared<std::vector<char>>(e.workspace_bytes);
      auto fn = reinterpret_cast<GemmF32Fn>(e.fn);
      Case k;
      k.name = e.name + "/" + s.name;
      k.kernel = e.name;
      k.op = "gemm";
      k.flops = 2.0 * s.m * s.n * s.k;
      k.bytes = 4.0 * (s.m * s.k + s.k * s.n + s.m * s.n);
      k.calls = CallsFor(k.flops);
      k.run = [=] { fn(s.m, s.n, s.k, a->data(), s.k, b->data(), s.n, c->data(), s.n, ws->data()); };
      cases.push_back(std::move(k));
    }
  }
}

// Random-looking but valid ggml blocks: fp16 scale 2^-6 (0x2400), then code bytes.
std::vector<uint8_t> QuantBlocks(int64_t rows, int64_t cols, int block_bytes) {
  std::vector<uint8_t> w(rows * cols / 32 * block_bytes);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<uint8_t>((i * 2654435761u) >> 13);
  for (size_t i = 0; i < w.size(); i += block_bytes) {
    w[i] = 0x00;
    w[i + 1] = 0x24;
  }
  return w;
}

void AddGemvCases(std::vector<Case>& cases) {
  const int64_t rows = 1024, cols = 2048;  // a quarter of TinyLlama's attention output projection
  for (const KernelEntry& e : GemvKernels().entries()) {
    if (e.op != "gemv" || !CpuSupports(e.isa)) continue;
    const bool q4 = e.dtypes == "q4_0xf32", q8 = e.dtypes == "q8_0xf32";
    if (!q4 && !q8) continue;
    const int block_bytes = q4 ? 18 : 34;
    auto w = std::make_shared<std::vector<uint8_t>>(QuantBlocks(rows, cols, block_bytes));
    auto x = std::make_shared<std::vector<float>>(Fill(cols, 1.0f));
    auto y = std::make_shared<std::vector<float>>(rows);
    auto fn = reinterpret_cast<GemvFn>(e.fn);
    Case k;
    k.name = e.name + "/1024x2048";
    k.kernel = e.name;
    k.op = "gemv";
    k.flops = 2.0 * rows * cols;
    k.bytes = static_cast<double>(w->size()) + 4.0 * (cols + rows);
    k.calls = CallsFor(k.flops, 1e7);
    k.run = [=] {
      GemvArgs args;
      args.w = w->data();
      args.x = x->data();
      args.y = y->data();
      args.rows = rows;
      args.cols = cols;
      fn(args, 0, rows);
    };
    cases.push_back(std::move(k));
  }
}

void AddVectorCases(std::vector<Case>& cases) {
  const int64_t rows = 64, row = 2048, n = rows * row;  // 512 KiB per operand: L2-resident on the host
  auto a = std::make_shared<std::vector<float>>(Fill(n, 4.0f));
  auto b = std::make_shared<std::vector<float>>(Fill(n, 2.0f));
  auto gain = std::make_shared<std::vector<float>>(Fill(row, 1.0f));
  auto y = std::make_shared<std::vector<float>>(n);
  for (const KernelEntry& e : VectorKernels().entries()) {
    if (!CpuSupports(e.isa)) continue;
    Case k;
    k.name = e.name + "/64x2048";
    k.kernel = e.name;
    k.op = e.op;
    k.flops = static_cast<double>(n);
    k.bytes = 8.0 * n;
    if (e.op == "softmax") {
      auto fn = reinterpret_cast<SoftmaxFn>(e.fn);
      k.run = [=] { fn(rows, row, a->data(), y->data()); };
    } else if (e.op == "rmsnorm") {
      auto fn = reinterpret_cast<RmsNormFn>(e.fn);
      k.run = [=] { fn(rows, row, a->data(), gain->data(), 1e-5f, y->data()); };
    } else if (e.op == "clamp") {
      auto fn = reinterpret_cast<ClampFn>(e.fn);
      k.run = [=] { fn(n, a->data(), y->data(), 0.0f, 6.0f); };
    } else if (e.op == "sigmoid" || e.op == "silu" || e.op == "hardswish") {
      auto fn = reinterpret_cast<UnaryFn>(e.fn);
      k.run = [=] { fn(n, a->data(), y->data()); };
    } else if (e.op == "vadd" || e.op == "vmul") {
      auto fn = reinterpret_cast<BinaryFn>(e.fn);
      k.bytes = 12.0 * n;
      k.run = [=] { fn(n, a->data(), b->data(), y->data(), -INFINITY, INFINITY); };
    } else {
      continue;
    }
    k.calls = CallsFor(20.0 * n);
    cases.push_back(std::move(k));
  }
}

int Main(int argc, char** argv) {
  std::string filter;
  int reps = 7;
  bool list = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--filter" && i + 1 < argc) {
      filter = argv[++i];
    } else if (a == "--reps" && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
    } else if (a == "--list") {
      list = true;
    } else {
      std::fprintf(stderr, "usage: kernel_cases [--filter SUBSTRING] [--reps R] [--list]\n");
      return 2;
    }
  }
  if (reps < 1) {
    std::fprintf(stderr, "kernel_cases: --reps must be >= 1\n");
    return 2;
  }
  std::vector<Case> cases;
  AddGemmCases(cases);
  AddGemvCases(cases);
  AddVectorCases(cases);
  const bool marks = LabMarksRequested();
  int index = -1;
  for (const Case& c : cases) {
    ++index;
    if (!filter.empty() && c.name.find(filter) == std::string::npos) continue;
    if (list) {
      std::printf("%d %s\n", index, c.name.c_str());
      continue;
    }
    c.run();  // warm-up: caches, page faults, lazy initialization
    std::vector<double> ns;
    for (int r = 0; r < reps; ++r) {
      if (marks) LabMark(index);
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < c.calls; ++i) c.run();
      const auto t1 = std::chrono::steady_clock::now();
      if (marks) LabMark(-1);
      ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / c.calls);
    }
    std::sort(ns.begin(), ns.end());
    std::printf("{\"index\": %d, \"case\": \"%s\", \"kernel\": \"%s\", \"op\": \"%s\", \"flops\": %.0f, \"bytes\": %.0f, "
                "\"calls\": %d, \"reps\": %d, \"median_ns\": %.1f, \"min_ns\": %.1f}\n",
                index, c.name.c_str(), c.kernel.c_str(), c.op.c_str(), c.flops, c.bytes, c.calls, reps,
                ns[ns.size() / 2], ns.front());
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace
}  // namespace tessel

int main(int argc, char** argv) { return tessel::Main(argc, argv); }
