// (being written)
#include "kernels/reference/reference.h"
namespace tessel {
void RegisterTransformerReferenceKernels(ReferenceKernelRegistry& r) {}
}  // namespace tessel
