// (being written)
#include "graph/op_registry.h"
namespace tessel {
void RegisterTransformerOps(OpRegistry& r) {}
}  // namespace tessel
