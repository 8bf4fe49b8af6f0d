// Reference kernels: plain, obviously correct implementations of every supported operator. They are
// the oracle that every optimized kernel and every pass is checked against.
#ifndef TESSEL_KERNELS_REFERENCE_REFERENCE_H_
#define TESSEL_KERNELS_REFERENCE_REFERENCE_H_

#include <map>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "graph/graph.h"
#include "graph/tensor.h"

namespace tessel {

// Computes `node` on concrete inputs. `inputs` has one entry per node input (nullptr for an omitted
// optional input). `outputs` are preallocated by the caller with the types InferOutputTypes gives for
// these inputs. Attribute problems were rejected by inference; kernels may still return an error for
// data-dependent problems (for example a Gather index out of range).
using ReferenceKernel = absl::Status (*)(const Node& node, absl::Span<const Tensor* const> inputs,
                                         absl::Span<Tensor> outputs);

class ReferenceKernelRegistry {
 public:
  static ReferenceKernelRegistry& Global();
  void Register(const std::string& domain, const std::string& op_type, ReferenceKernel kernel);
  ReferenceKernel Find(const std::string& domain, const std::string& op_type) const;

 private:
  std::map<std::pair<std::string, std::string>, ReferenceKernel> kernels_;
};

// Whether RunReferenceNode runs the operator: a registered kernel, If (which runs its taken branch) or
// Loop (which runs its body).
bool RunsOnReference(const std::string& domain, const std::string& op_type);

// Runs one node with the reference kernels: infers output types from the concrete inputs,
// allocates the outputs and computes them (If: runs the taken branch, whose outputs become the node's).
absl::Status RunReferenceNode(const Node& node, absl::Span<const Tensor* const> inputs, std::vector<Tensor>* outputs);

// Operators whose output extent is known only by computing them (If, Loop, NonMaxSuppression, Unique):
// RunReferenceNode computes them once and allocates their outputs, rather than inferring the types
// (which would compute them too) and then running the kernel.
bool ComputesItsOwnShape(const std::string& domain, const std::string& op_type);

// NonMaxSuppression computed once into a freshly allocated [count, 3] output (RunReferenceNode's path).
absl::Status RunNonMaxSuppression(const Node& node, absl::Span<const Tensor* const> inputs,
                                  std::vector<Tensor>* outputs);

// Built-in kernel groups (called by ReferenceKernelRegistry::Global()).
void RegisterElementwiseReferenceKernels(ReferenceKernelRegistry& r);
void RegisterNnReferenceKernels(ReferenceKernelRegistry& r);
void RegisterTensorReferenceKernels(ReferenceKernelRegistry& r);
void RegisterFusedCnnReferenceKernels(ReferenceKernelRegistry& r);
void RegisterTransformerReferenceKernels(ReferenceKernelRegistry& r);
void RegisterRnnReferenceKernels(ReferenceKernelRegistry& r);
void RegisterEinsumReferenceKernels(ReferenceKernelRegistry& r);
void RegisterSpectralReferenceKernels(ReferenceKernelRegistry& r);
void RegisterDetectionReferenceKernels(ReferenceKernelRegistry& r);
void RegisterLossReferenceKernels(ReferenceKernelRegistry& r);

}  // namespace tessel

#endif  // TESSEL_KERNELS_REFERENCE_REFERENCE_H_
