// ONNX LSTM and GRU as operator-level kernels (kernels/registry/op_kernel.h), f32, for streaming
// inference at small batch: the input projection of every time step as one prepacked GEMM (the f32 GEMM
// kernels of kernels/gemm), then per step and batch row the recurrent GEMV on weights packed once at
// load and the gate nonlinearities fused with the state update (kernels/rnn/internal/rnn_step.h). One
// entry per ISA of the step kernels (portable auto-vectorized, AVX2, AVX-512). What they serve: default
// activations, any clip, both layouts, forward / reverse / bidirectional, sequence_lens, initial states,
// linear_before_reset either way; peepholes and other activations stay on the reference kernel.
#ifndef TESSEL_KERNELS_RNN_RNN_OP_KERNELS_H_
#define TESSEL_KERNELS_RNN_RNN_OP_KERNELS_H_

#include "kernels/registry/op_kernel.h"

namespace tessel {

void RegisterRnnOpKernels(OpKernelRegistry& registry);

}  // namespace tessel

#endif  // TESSEL_KERNELS_RNN_RNN_OP_KERNELS_H_
