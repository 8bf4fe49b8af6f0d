// Quantized operator schemas (QuantizeLinear, DequantizeLinear and tessel.Q*); see quant_ops.cc.
#ifndef TESSEL_GRAPH_OPS_QUANT_OPS_H_
#define TESSEL_GRAPH_OPS_QUANT_OPS_H_

#include "graph/op_registry.h"

namespace tessel {

// Adds the quantized operators to `r` (the //graph:quant_ops library does so for the global registry
// when it is linked).
void RegisterQuantOps(OpRegistry& r);

}  // namespace tessel

#endif  // TESSEL_GRAPH_OPS_QUANT_OPS_H_
