// The RNN step kernels (internal/rnn_step_impl.h) compiled for AVX-512 (F/BW/VL/DQ) + FMA.
#include "kernels/rnn/internal/rnn_step_impl.h"

namespace tessel {
namespace rnn_internal {

RnnStepKernels RnnStepAvx512() { return kStepKernels; }

}  // namespace rnn_internal
}  // namespace tessel
