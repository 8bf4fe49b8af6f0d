// Elementwise transcendental activations over one row of f32 (GELU exact and tanh form, Tanh, Erf,
// Sigmoid, SiLU, HardSwish) and LogSoftmax over rows: the row kernels of the Gelu / Tanh / Erf /
// LogSoftmax operator kernels (act_op_kernels.h), the GELU stage of the GEMM fully connected kernel and
// the non-clamp activations of the GEMM convolution (kernels/conv). One set per
// ISA, all compiled from the same portable C++ (internal/act_rows_impl.h) with that ISA's flags; they
// never allocate and never fail. Their reference twins are the double-precision Gelu, Tanh and Erf of
// kernels/reference/elementwise.cc and LogSoftmax of kernels/reference/nn.cc.
#ifndef TESSEL_KERNELS_ACTIVATION_ACT_ROWS_H_
#define TESSEL_KERNELS_ACTIVATION_ACT_ROWS_H_

#include <cstdint>

namespace tessel {

// y[i] = f(x[i]) for i < n; x == y (in place) is allowed.
using ActRowFn = void (*)(int64_t n, const float* x, float* y);
// y = log(softmax(x)) over each of `rows` contiguous rows of n >= 1 elements; x == y is allowed.
using LogSoftmaxFn = void (*)(int64_t rows, int64_t n, const float* x, float* y);

// Accuracy against the double-precision reference (act_rows_test.cc): erf by Abramowitz and Stegun
// 7.1.26 (absolute error under 1.5e-7 plus float rounding), tanh from one exp(-2|x|)
// (tsl_expf_in_range, about 2 ulp), log-softmax as (x - max) - log(sum exp(x - max)).
struct ActRowKernels {
  ActRowFn gelu_erf;   // x / 2 * (1 + erf(x / sqrt 2))
  ActRowFn gelu_tanh;  // x / 2 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3)))
  ActRowFn tanh;
  ActRowFn erf;
  LogSoftmaxFn log_softmax;
  ActRowFn sigmoid;    // 1 / (1 + exp(-x)) (tsl_sigmoidf)
  ActRowFn silu;       // x sigmoid(x)
  ActRowFn hardswish;  // x clamp(x + 3, 0, 6) / 6
};

// GCC's auto-vectorizer at the baseline ISA (SSE2, NEON), and with AVX2 or AVX-512 enabled (those two
// exist only in x86-64 builds).
ActRowKernels ActRowsAutovec();
ActRowKernels ActRowsAvx2();
ActRowKernels ActRowsAvx512();

// The widest of the three that this CPU supports (TESSEL_MAX_ISA honoured), for kernels that pick
// their row functions at creation rather than through registry entries.
ActRowKernels ActRowsForCpu();

}  // namespace tessel

#endif  // TESSEL_KERNELS_ACTIVATION_ACT_ROWS_H_
