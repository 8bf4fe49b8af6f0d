// The RNN step kernels (internal/rnn_step_impl.h) compiled for the baseline ISA of the target (SSE2 on x86-64, NEON on aarch64).
#include "kernels/rnn/internal/rnn_step_impl.h"

namespace tessel {
namespace rnn_internal {

RnnStepKernels RnnStepAutovec() { return kStepKernels; }

}  // namespace rnn_internal
}  // namespace tessel
