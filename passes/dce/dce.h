// dce: removes nodes whose results nobody uses, and constants left without uses.
#ifndef TESSEL_PASSES_DCE_DCE_H_
#define TESSEL_PASSES_DCE_DCE_H_

#include "passes/core/pass.h"

namespace tessel {

PassInfo DcePassInfo();

}  // namespace tessel

#endif  // TESSEL_PASSES_DCE_DCE_H_
