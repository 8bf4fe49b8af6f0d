// Attribute decoding shared by type inference and kernels (so both read ONNX attributes the same way).
#ifndef TESSEL_GRAPH_OPS_OP_PARAMS_H_
#define TESSEL_GRAPH_OPS_OP_PARAMS_H_

#include "graph/graph.h"

#endif  // TESSEL_GRAPH_OPS_OP_PARAMS_H_
