// The hardware limits the kernel benchmarks report fractions of, measured in the benchmark process:
// the core clock (a chain of dependent 1-cycle adds), f32 FMA peak (independent FMA chains on the
// widest vectors this CPU has) and single-thread streaming read bandwidth.
#ifndef TESSEL_BENCHMARKS_KERNELS_MACHINE_LIMITS_H_
#define TESSEL_BENCHMARKS_KERNELS_MACHINE_LIMITS_H_

#include <cstddef>
#include <cstdint>

namespace tessel {

// Core clock in GHz: dependent integer adds retire one per cycle.
double MeasureClockGhz();

// f32 lanes per FMA instruction on the widest vector this CPU has (16 with AVX-512, 8 with AVX2).
int F32LanesPerFma();

// Theoretical single-thread f32 peak in GFLOP/s: 2 FMA pipes x lanes x 2 flops x clock.
double TheoreticalPeakGflops(double clock_ghz);

// Measured single-thread f32 peak in GFLOP/s: 12 independent FMA chains on the widest vectors.
double MeasurePeakGflops();

// The most a single thread streams from memory, in GB/s: best of `repeats` passes over a freshly
// written `bytes`-long buffer on huge pages (where the kernel gives them, like the LLM runtime's
// weights), for each of 1, 2, 4 and 8 interleaved streams (one core keeps more requests in flight
// with several streams: on Zen 5, 1 stream ~28 GB/s, 4 streams ~34-38). The stream count used
// goes to *streams when non-null.
double MeasureReadBandwidthGBs(size_t bytes, int repeats, int* streams = nullptr);

// Sums `bytes` at p (64-byte aligned, a multiple of 256 * streams is read) as `streams` equal slices
// read in lockstep, 256 bytes of each per step.
uint64_t SumStreams(const void* p, size_t bytes, int streams);

}  // namespace tessel

#endif  // TESSEL_BENCHMARKS_KERNELS_MACHINE_LIMITS_H_
