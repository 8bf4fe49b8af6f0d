// pack-qkv: MatMuls with constant weights that share their input (the Q, K and V projections) become
// one MatMul with the weights concatenated, followed by a Split; the results are bit-identical.
#ifndef TESSEL_PASSES_PACK_QKV_PACK_QKV_H_
#define TESSEL_PASSES_PACK_QKV_PACK_QKV_H_

#include "passes/core/pass.h"

namespace tessel {

PassInfo PackQkvPassInfo();

}  // namespace tessel

#endif  // TESSEL_PASSES_PACK_QKV_PACK_QKV_H_
