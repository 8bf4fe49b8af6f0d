// cse: merges nodes that compute the same operation on the same inputs, and identical constants.
#ifndef TESSEL_PASSES_CSE_CSE_H_
#define TESSEL_PASSES_CSE_CSE_H_

#include "passes/core/pass.h"

namespace tessel {

PassInfo CsePassInfo();

}  // namespace tessel

#endif  // TESSEL_PASSES_CSE_CSE_H_
