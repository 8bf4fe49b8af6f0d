// The RNN step kernels (internal/rnn_step_impl.h) compiled for AVX2 + FMA.
#include "kernels/rnn/internal/rnn_step_impl.h"

namespace tessel {
namespace rnn_internal {

RnnStepKernels RnnStepAvx2() { return kStepKernels; }

}  // namespace rnn_internal
}  // namespace tessel
