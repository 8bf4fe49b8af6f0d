// The per-time-step microkernels of the LSTM and GRU operator kernels: the recurrent GEMV over weights
// packed once at load, and the gate nonlinearities fused with the state update. One set per ISA, all
// compiled from the same portable C++ (rnn_step_impl.h) with that ISA's flags; they never allocate and
// never fail (the operator kernel validates shapes once, at creation).
#ifndef TESSEL_KERNELS_RNN_INTERNAL_RNN_STEP_H_
#define TESSEL_KERNELS_RNN_INTERNAL_RNN_STEP_H_

#include <cstdint>

namespace tessel {
namespace rnn_internal {

// Columns per packed panel of the recurrent weights; the packed width and every buffer a GEMV reads
// or writes are padded to a multiple of it.
inline constexpr int64_t kPanel = 32;

// y[j] = init[j] + sum_p h[p] * R[j][p] for j < n (a multiple of kPanel), with R^T packed as n / kPanel
// panels of k rows of kPanel columns (panel q holds columns [q kPanel, (q + 1) kPanel)).
using RnnGemvFn = void (*)(int64_t n, int64_t k, const float* packed, const float* h, const float* init,
                           float* y);

// One LSTM step for j < hidden, default activations (sigmoid, tanh, tanh), gate pre-activations in
// ONNX order i, o, f, c (pre[g * hidden + j]), clipped to [-clip, clip] (clip = inf: no clip):
// c = f c + i g, h = o tanh(c).
using LstmGatesFn = void (*)(int64_t hidden, const float* pre, float clip, float* c, float* h);

// The first half of a GRU step: z = sigmoid(pre_z), r = sigmoid(pre_r) from pre[0, 2 hidden) (order z,
// r), and rh = r * h.
using GruResetFn = void (*)(int64_t hidden, const float* pre, float clip, const float* h, float* z, float* r,
                            float* rh);

// The second half: n = tanh(xn + (r ? r * yn : yn)), h = (1 - z) n + z h. With linear_before_reset, yn
// is R_n h + Rb_n and r is given; without, yn is R_n (r h) + Rb_n and r is null.
using GruUpdateFn = void (*)(int64_t hidden, const float* xn, const float* yn, const float* z, const float* r,
                             float clip, float* h);

struct RnnStepKernels {
  RnnGemvFn gemv;
  LstmGatesFn lstm_gates;
  GruResetFn gru_reset;
  GruUpdateFn gru_update;
};

// The step kernels of one ISA: GCC's auto-vectorizer at the baseline ISA (SSE2, NEON), and with AVX2 or
// AVX-512 enabled on x86-64 (the latter two exist only in x86-64 builds).
RnnStepKernels RnnStepAutovec();
RnnStepKernels RnnStepAvx2();
RnnStepKernels RnnStepAvx512();

}  // namespace rnn_internal
}  // namespace tessel

#endif  // TESSEL_KERNELS_RNN_INTERNAL_RNN_STEP_H_
