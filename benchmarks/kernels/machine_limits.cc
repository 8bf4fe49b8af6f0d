// Clock, FMA peak and read bandwidth probes. The x86 probes use per-function target attributes so
// the rest of the benchmark binary keeps the baseline ISA.
#include "benchmarks/kernels/machine_limits.h"

#include <time.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "kernels/cpu/cpu_features.h"

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

__attribute__((target("avx2"))) uint64_t SumBytes(const uint8_t* p, size_t bytes) {
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  for (size_t i = 0; i + 128 <= bytes; i += 128) {
    a0 = _mm256_add_epi64(a0, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i)));
    a1 = _mm256_add_epi64(a1, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 32)));
    a2 = _mm256_add_epi64(a2, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 64)));
    a3 = _mm256_add_epi64(a3, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 96)));
  }
  const __m256i s = _mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(a2, a3));
  uint64_t out[4];
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), s);
  return out[0] + out[1] + out[2] + out[3];
}
#else
uint64_t SumBytes(const uint8_t* p, size_t bytes) {
  const uint64_t* q = reinterpret_cast<const uint64_t*>(p);
  uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  for (size_t i = 0; i + 4 <= bytes / 8; i += 4) {
    a0 += q[i];
    a1 += q[i + 1];
    a2 += q[i + 2];
    a3 += q[i + 3];
  }
  return a0 + a1 + a2 + a3;
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

double MeasureReadBandwidthGBs(size_t bytes, int repeats) {
  bytes = bytes / 128 * 128;
  auto* p = static_cast<uint8_t*>(std::aligned_alloc(64, bytes));
  std::memset(p, 1, bytes);
  double best = 0;
  volatile uint64_t sink = 0;
  for (int rep = 0; rep < repeats; ++rep) {
    const double t0 = ThreadSeconds();
    sink = sink + SumBytes(p, bytes);
    const double gbs = bytes / (ThreadSeconds() - t0) / 1e9;
    if (gbs > best) best = gbs;
  }
  std::free(p);
  return best;
}

}  // namespace tessel
