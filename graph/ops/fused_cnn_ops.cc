// (being written)
#include "graph/op_registry.h"
namespace tessel {
void RegisterFusedCnnOps(OpRegistry& r) {}
}  // namespace tessel
