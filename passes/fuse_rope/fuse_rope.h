// fuse-rope: recognizes rotary position embedding as exported, x * cos + rotate_half(x) * sin with
// rotate_half = Concat(Neg(x[..., D/2:]), x[..., :D/2]), and replaces it by one tessel.Rope.
#ifndef TESSEL_PASSES_FUSE_ROPE_FUSE_ROPE_H_
#define TESSEL_PASSES_FUSE_ROPE_FUSE_ROPE_H_

#include "passes/core/pass.h"

namespace tessel {

PassInfo FuseRopePassInfo();

}  // namespace tessel

#endif  // TESSEL_PASSES_FUSE_ROPE_FUSE_ROPE_H_
