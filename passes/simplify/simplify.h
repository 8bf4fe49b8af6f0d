// simplify: algebraic simplification and strength reduction — x*1, x+0, x-0, x/1 → x; x/c → x*(1/c);
// pow(x,2) → x*x, pow(x,0.5) → sqrt(x), pow(x,1) → x; transpose∘transpose and reshape∘reshape
// collapse; no-op Reshape/Transpose/Cast/Expand, Identity and Dropout disappear; constants go to
// the right of commutative Add/Mul; Conv taps that read only padding (static shapes) are cut.
#ifndef TESSEL_PASSES_SIMPLIFY_SIMPLIFY_H_
#define TESSEL_PASSES_SIMPLIFY_SIMPLIFY_H_

#include "passes/core/pass.h"

namespace tessel {

PassInfo SimplifyPassInfo();

}  // namespace tessel

#endif  // TESSEL_PASSES_SIMPLIFY_SIMPLIFY_H_
