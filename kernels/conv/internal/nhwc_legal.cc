// The shared legality check of the channels-last f32 FusedConv kernels (nhwc_legal.h).
#include "kernels/conv/internal/nhwc_legal.h"

#include "absl/status/statusor.h"

namespace tessel {
namespace conv_internal {

bool LegalF32FusedConvNhwc(const OpQuery& q, bool (*predicate)(const Conv2dGeometry& g)) {
  for (const OperandInfo& o : q.inputs) {
    if (o.present && o.type.dtype != DType::kF32) return false;
  }
  if (q.outputs.empty() || q.output(0).dtype != DType::kF32 || !q.output(0).is_static()) return false;
  if (!q.has_input(1) || !q.inputs[1].constant || (q.has_input(2) && !q.inputs[2].constant)) return false;
  if (!ReadClampActivation(q.node, "").is_clamp) return false;
  absl::StatusOr<Conv2dGeometry> g = ResolveConv2dNhwc(q.node, q.input(0), q.input(1));
  return g.ok() && predicate(*g);
}

}  // namespace conv_internal
}  // namespace tessel
