// Clock, FMA peak and read bandwidth probes. The x86 probes use per-function target attributes so
// the rest of the benchmark binary keeps the baseline ISA.
#include "benchmarks/kernels/machine_limits.h"

#include <time.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

#include "kernels/cpu/cpu_features.h"
#include "support/memory.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace tessel {
namespace {

// This thread's CPU time: on a shared machine a probe that is preempted must not read as a slow CPU.
double ThreadSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

#if defined(__x86_64__)
__attribute__((target("avx512f,fma"))) double FmaLoopAvx512(int64_t iters) {
  __m512 acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm512_set1_ps(0.001f * i);
  const __m512 m = _mm512_set1_ps(0.999999f), add = _mm512_set1_ps(1e-7f);
  for (int64_t it = 0; it < iters; ++it) {
#pragma GCC unroll 12
    for (int i = 0; i < 12; ++i) acc[i] = _mm512_fmadd_ps(acc[i], m, add);
  }
  __m512 s = acc[0];
  for (int i = 1; i < 12; ++i) s = _mm512_add_ps(s, acc[i]);
  float out[16];
  _mm512_storeu_ps(out, s);
  return out[0];
}

__attribute__((target("avx2,fma"))) double FmaLoopAvx2(int64_t iters) {
  __m256 acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm256_set1_ps(0.001f * i);
  const __m256 m = _mm256_set1_ps(0.999999f), add = _mm256_set1_ps(1e-7f);
  for (int64_t it = 0; it < iters; ++it) {
#pragma GCC unroll 12
    for (int i = 0; i < 12; ++i) acc[i] = _mm256_fmadd_ps(acc[i], m, add);
  }
  float out[8];
  __m256 s = acc[0];
  for (int i = 1; i < 12; ++i) s = _mm256_add_ps(s, acc[i]);
  _mm256_storeu_ps(out, s);
  return out[0];
}

#endif

}  // namespace

double MeasureClockGhz() {
#if defined(__x86_64__)
  const int64_t iters = 50'000'000;
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    uint64_t x = 0;
    int64_t n = iters;
    const double t0 = ThreadSeconds();
    // 10 dependent adds per iteration; the loop counter runs in parallel on another ALU.
    __asm__ volatile(
        "1:\n"
        "add $1, %0\n add $1, %0\n add $1, %0\n add $1, %0\n add $1, %0\n"
        "add $1, %0\n add $1, %0\n add $1, %0\n add $1, %0\n add $1, %0\n"
        "dec %1\n jnz 1b\n"
        : "+r"(x), "+r"(n));
    const double ghz = 10.0 * iters / (ThreadSeconds() - t0) / 1e9;
    if (ghz > best) best = ghz;
  }
  return best;
#else
  return 0;
#endif
}

int F32LanesPerFma() {
  const CpuFeatures& f = GetCpuFeatures();
  if (f.avx512f) return 16;
  if (f.avx2 && f.fma) return 8;
  if (f.sve) return f.sve_vector_bits / 32;
  return 4;
}

double TheoreticalPeakGflops(double clock_ghz) { return 2.0 * F32LanesPerFma() * 2.0 * clock_ghz; }

double MeasurePeakGflops() {
#if defined(__x86_64__)
  const bool avx512 = GetCpuFeatures().avx512f;
  const int64_t iters = 20'000'000;
  double best = 0;
  volatile double sink = 0;
  for (int rep = 0; rep < 5; ++rep) {
    const double t0 = ThreadSeconds();
    sink = sink + (avx512 ? FmaLoopAvx512(iters) : FmaLoopAvx2(iters));
    const double gflops = 12.0 * iters * F32LanesPerFma() * 2.0 / (ThreadSeconds() - t0) / 1e9;
    if (gflops > best) best = gflops;
  }
  return best;
#else
  return 0;
#endif
}

#if defined(__x86_64__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
uint64_t SumStreams(const void* p, size_t bytes, int streams) {
  const auto* w = static_cast<const uint64_t*>(p);
  const size_t per = bytes / 8 / streams / 32 * 32;  // words per stream, whole 256-byte steps
  uint64_t acc[32] = {};
  for (size_t off = 0; off < per; off += 32) {
    for (int s = 0; s < streams; ++s) {
      const uint64_t* q = w + s * per + off;
      for (int j = 0; j < 32; ++j) acc[j] += q[j];
    }
  }
  uint64_t total = 0;
  for (uint64_t a : acc) total += a;
  return total;
}

double MeasureReadBandwidthGBs(size_t bytes, int repeats, int* streams_used) {
  bytes = bytes / 2048 * 2048;
  auto* p = static_cast<uint8_t*>(MapHugePages(bytes));
  if (p == nullptr) return 0;
  std::memset(p, 1, bytes);
  double best = 0;
  volatile uint64_t sink = 0;
  for (int streams : {1, 2, 4, 8}) {
    for (int rep = 0; rep < repeats; ++rep) {
      const double t0 = ThreadSeconds();
      sink = sink + SumStreams(p, bytes, streams);
      const double gbs = bytes / (ThreadSeconds() - t0) / 1e9;
      if (gbs > best) {
        best = gbs;
        if (streams_used != nullptr) *streams_used = streams;
      }
    }
  }
  UnmapHugePages(p, bytes);
  return best;
}

}  // namespace tessel
