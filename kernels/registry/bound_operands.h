// The operand infos of a kernel's bound tensors, so that a factory can rerun its legality check on
// what it was given (OpQuery over OpKernelArgs). No operand is marked constant; a factory that packs
// weights marks the ones it packs.
#ifndef TESSEL_KERNELS_REGISTRY_BOUND_OPERANDS_H_
#define TESSEL_KERNELS_REGISTRY_BOUND_OPERANDS_H_

#include <vector>

#include "kernels/registry/op_kernel.h"

namespace tessel {

struct BoundOperands {
  explicit BoundOperands(const OpKernelArgs& args) : node(args.node), inputs(args.inputs.size()) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (args.inputs[i] != nullptr) inputs[i] = {true, false, args.inputs[i]->type()};
    }
    for (const Tensor& t : args.outputs) outputs.push_back({true, false, t.type()});
  }
  OpQuery query() const { return OpQuery{node, inputs, outputs}; }

  const Node& node;
  std::vector<OperandInfo> inputs;
  std::vector<OperandInfo> outputs;
};

}  // namespace tessel

#endif  // TESSEL_KERNELS_REGISTRY_BOUND_OPERANDS_H_
