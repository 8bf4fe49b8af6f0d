// The hardware limits the kernel benchmarks report fractions of, measured in the benchmark process:
// the core clock (a chain of dependent 1-cycle adds), f32 FMA peak (independent FMA chains on the
// widest vectors this CPU has) and single-thread streaming read bandwidth.
#ifndef TESSEL_BENCHMARKS_KERNELS_MACHINE_LIMITS_H_
#define TESSEL_BENCHMARKS_KERNELS_MACHINE_LIMITS_H_

#include <cstddef>

namespace tessel {

// Core clock in GHz: dependent integer adds retire one per cycle.
double MeasureClockGhz();

// f32 lanes per FMA instruction on the widest vector this CPU has (16 with AVX-512, 8 with AVX2).
int F32LanesPerFma();

// Theoretical single-thread f32 peak in GFLOP/s: 2 FMA pipes x lanes x 2 flops x clock.
double TheoreticalPeakGflops(double clock_ghz);

// Measured single-thread f32 peak in GFLOP/s: 12 independent FMA chains on the widest vectors.
double MeasurePeakGflops();

// Best of `repeats` single-thread passes summing a freshly written `bytes`-long buffer, in GB/s.
double MeasureReadBandwidthGBs(size_t bytes, int repeats);

}  // namespace tessel

#endif  // TESSEL_BENCHMARKS_KERNELS_MACHINE_LIMITS_H_
