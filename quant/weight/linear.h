// y = x w^T for the weight quantizers' f32 work (calibration forward, AWQ's searches): Tessel's f32
// GEMM (AVX-512 / AVX2 / NEON microkernels picked at run time; Eigen in these libraries is built for
// the baseline ISA) on fixed blocks of 256 output columns, so the sums never depend on the thread count.
#ifndef TESSEL_QUANT_WEIGHT_LINEAR_H_
#define TESSEL_QUANT_WEIGHT_LINEAR_H_

#include <cstdint>

namespace tessel::quant {

// y [t, rows] = x [t, cols] w^T for w [rows, cols], the column blocks on QuantThreadPool's threads
// (quant/weight/parallel.h: not from inside one of its tasks).
void LinearF32(const float* x, int64_t t, const float* w, int64_t rows, int64_t cols, float* y);

// The same sums on the calling thread only (inside a ParallelFor task).
void LinearF32OneThread(const float* x, int64_t t, const float* w, int64_t rows, int64_t cols, float* y);

}  // namespace tessel::quant

#endif  // TESSEL_QUANT_WEIGHT_LINEAR_H_
