// A plan's ops as Nodes of a Graph, one Node per op carrying its attributes, so that what reads an
// artifact (the runtime, the C emitter) decodes attributes exactly as the reference kernels and the
// compiler do (ResolveConvParams, ResolvePoolParams, ...). The one decoder of plans into graph form.
#ifndef TESSEL_ARTIFACT_PLAN_GRAPH_H_
#define TESSEL_ARTIFACT_PLAN_GRAPH_H_

#include <functional>
#include <memory>
#include <vector>

#include "artifact/artifact.pb.h"
#include "graph/graph.h"
#include "graph/tensor.h"

namespace tessel {

// Tensor attributes and weight tensors point into the weights section; the caller says how to view
// them. Null: tensor attributes are left out and weight tensors decode as inputs of their static type.
using PlanTensorResolver = std::function<std::shared_ptr<const Tensor>(const artifact::TensorRef&)>;

// Fills `graph` (empty) with one Value per plan tensor (a constant for weights, given `resolve`; else
// an input of its static type) and one Node per plan op, in order. values[i] is tensor i's Value,
// nodes[j] op j's Node. Operand indices outside the plan become missing operands; the caller validates
// the plan.
void DecodePlanGraph(const artifact::Plan& plan, const PlanTensorResolver& resolve, Graph& graph,
                     std::vector<Value*>* values, std::vector<Node*>* nodes);

}  // namespace tessel

#endif  // TESSEL_ARTIFACT_PLAN_GRAPH_H_
